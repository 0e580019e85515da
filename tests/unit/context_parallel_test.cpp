// Context parallelism: the ring's K/V blocks and how much of them attention hides, Ulysses'
// all-to-alls, causal load balancing, the activation-memory effect and the prediction's
// cp_comm_exposed component.
#include <doctest/doctest.h>

#include <algorithm>

#include "model/activation_memory.h"
#include "model/alpha_beta_collective.h"
#include "model/context_parallel.h"
#include "model/flops.h"
#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "simulator/catalog.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/catalog_model.h"

using namespace stepcast;

namespace {

const TransformerSpec& llama3_405b() { return test::catalog_model("llama3-405b"); }

LayerShape shape_of(int tp, int cp, int seq, ContextParallelKind kind = ContextParallelKind::ring) {
  TrainingWorkload w;
  w.seq_len = seq;
  w.micro_batch = 1;
  w.global_batch = 1;
  ParallelConfig p;
  p.tp = tp;
  p.cp = cp;
  p.cp_kind = kind;
  p.sequence_parallel = tp > 1;
  return make_layer_shape(llama3_405b(), w, p, PrecisionConfig{});
}

double flash_flops(const OpList& ops) {
  for (const Op& op : ops) {
    if (op.kind == OpKind::flash_forward) return op.flops.value();
  }
  return 0.0;
}

// The plain alpha-beta collective model on a DGX H100: the expected exposures below are written in
// terms of its send/recv and all-to-all times, so they check the overlap rule, not the network.
AlphaBetaCollectiveModel dgx_h100_net() {
  const SystemSpec* system = Catalog::builtin().find_system("dgx-h100");
  REQUIRE(system != nullptr);
  return AlphaBetaCollectiveModel(*system, CostParameters{});
}

// `ranks` GPUs of one node over NVLink.
GroupLayout on_nvlink(int ranks) {
  GroupLayout g;
  g.size = ranks;
  g.ranks_per_node = ranks;
  g.nodes = 1;
  return g;
}

GroupLayout pair_on_nvlink() { return on_nvlink(2); }

}  // namespace

TEST_CASE("a ring step sends one chunk's K and V: b (s/cp) 2 g/t d elements at 2 bytes") {
  // Llama 3 405B at 128K context, TP 8, CP 16 (Llama 3 Table 4): 8 KV heads / 8 = 1 per rank,
  // d = 128, s/cp = 8192 tokens: 8192 x 2 x 128 x 2 bytes = 4 MiB.
  const LayerShape s = shape_of(8, 16, 131072);
  CHECK(s.seq == 8192);
  CHECK(s.context == 131072);
  CHECK(ring_block_bytes(s).value() == doctest::Approx(8192.0 * 2 * 128 * 2));
}

TEST_CASE("under repeat_kv a ring block carries every query head's K and V copy") {
  // torchtitan's repeat_kv runs before SDPA, so PyTorch's CP moves the copies: Llama 3 405B at TP 8
  // holds 128 / 8 = 16 query heads a rank, 16x the one shared KV head.
  LayerShape s = shape_of(8, 16, 131072, ContextParallelKind::ring_allgather);
  const double shared = ring_block_bytes(s).value();
  s.repeat_kv = true;
  CHECK(ring_block_bytes(s).value() == doctest::Approx(8192.0 * 2 * 16 * 128 * 2));
  CHECK(ring_block_bytes(s).value() == doctest::Approx(16.0 * shared));
}

TEST_CASE("causal load balancing gives every CP rank 1/cp of the causal attention work") {
  // Each rank holds chunks r and 2cp-1-r, so its queries' causal work is the total over cp:
  // (1/cp) x 0.5 x 4 s^2 (a/t) d.
  const LayerShape whole = shape_of(8, 1, 131072);
  const LayerShape split = shape_of(8, 16, 131072);
  const double total = flash_flops(layer_forward_ops(whole));
  CHECK(total == doctest::Approx(0.5 * 4.0 * 131072.0 * 131072.0 * (128 / 8) * 128));
  CHECK(flash_flops(layer_forward_ops(split)) == doctest::Approx(total / 16));
}

TEST_CASE("ring attention hides a transfer behind each step's attention and exposes only the excess") {
  const LayerShape s = shape_of(8, 4, 32768);
  const AlphaBetaCollectiveModel net = dgx_h100_net();
  const GroupLayout hop = pair_on_nvlink();
  const GroupLayout ring = on_nvlink(4);
  const Seconds step = net.time(CollectiveOp::send_recv, ring_block_bytes(s), hop);
  // The backward moves K and V (2 bytes) and their FP32 gradients (4 bytes): three blocks' bytes;
  // the accumulated dK/dV make one more hop after the last step (PyTorch
  // _templated_ring_attention_backward: dkv_rotater.next_buffer() after the loop).
  const Seconds back = net.time(CollectiveOp::send_recv, ring_block_bytes(s) * 3.0, hop);
  const Seconds last_hop = net.time(CollectiveOp::send_recv, ring_block_bytes(s) * 2.0, hop);
  REQUIRE(step.value() > 0.0);
  // Attention long enough: nothing is exposed but the gradients' last hop.
  ContextParallelTime t = context_parallel_time(s, step * 4.0 * 10.0, back * 4.0 * 10.0, net, ring, hop);
  CHECK(t.forward_exposed.value() == 0.0);
  CHECK(t.backward_exposed.value() == doctest::Approx(last_hop.value()));
  // Attention shorter than the transfers: (cp - 1) x (transfer - attention / cp).
  const Seconds short_forward = step * 2.0;  // half a transfer per step over 4 steps
  const Seconds short_backward = back * 2.0;
  t = context_parallel_time(s, short_forward, short_backward, net, ring, hop);
  CHECK(t.forward_exposed.value() == doctest::Approx(3.0 * (step.value() - short_forward.value() / 4)));
  CHECK(t.backward_exposed.value() ==
        doctest::Approx(3.0 * (back.value() - short_backward.value() / 4) + last_hop.value()));
}

TEST_CASE("PyTorch's all-gather rotater: one K/V all-gather under the first step, the FP32 dK/dV still hop by hop") {
  // pytorch/pytorch @0123248a torch/distributed/tensor/experimental/_attention.py: _AllGatherRotater
  // gathers every rank's block once (exchange_buffers at step 0, next_buffer waits at step 1);
  // the backward gathers K/V again the same way and sends dK/dV with _RotateMethod.ALL_TO_ALL,
  // each hop waited one step later, the last after the loop.
  // Eager PyTorch (AsyncCollectiveTensor: each wait deferred to the first use).
  LayerShape s = shape_of(8, 4, 32768, ContextParallelKind::ring_allgather);
  s.kernels = KernelFusion::eager;
  REQUIRE_FALSE(ring_allgather_waits_at_issue(s));
  const AlphaBetaCollectiveModel net = dgx_h100_net();
  const GroupLayout hop = pair_on_nvlink();
  const GroupLayout group = on_nvlink(4);
  const Seconds gather = net.time(CollectiveOp::all_gather, ring_block_bytes(s) * 4.0, group);
  const Seconds grad_hop = net.time(CollectiveOp::send_recv, ring_block_bytes(s) * 2.0, hop);  // FP32 over BF16
  const RingAllGatherTimes r = ring_allgather_times(s, net, group, hop);
  CHECK(r.gather.value() == doctest::Approx(gather.value()));
  CHECK(r.gradient_hop.value() == doctest::Approx(grad_hop.value()));
  REQUIRE(gather.value() > 0.0);
  // Attention long enough: only the gradients' last hop is exposed.
  ContextParallelTime t = context_parallel_time(s, gather * 40.0, (gather + grad_hop) * 40.0, net, group, hop);
  CHECK(t.forward_exposed.value() == 0.0);
  CHECK(t.backward_exposed.value() == doctest::Approx(grad_hop.value()));
  // Short attention: the all-gather hides behind ONE step (1/cp of the attention), each gradient
  // hop behind one step, the last hop whole.
  const Seconds fwd = gather * 2.0;  // a step of half the all-gather
  const Seconds bwd = grad_hop * 2.0;  // a step of half a gradient hop
  t = context_parallel_time(s, fwd, bwd, net, group, hop);
  CHECK(t.forward_exposed.value() == doctest::Approx(gather.value() - fwd.value() / 4));
  CHECK(t.backward_exposed.value() == doctest::Approx(std::max(gather.value() - bwd.value() / 4, 0.0) +
                                                      3.0 * (grad_hop.value() - bwd.value() / 4) + grad_hop.value()));
  // The p2p ring sends cp - 1 blocks of K/V, each under its own step: with the same short forward
  // it exposes 3 x (hop - step), the all-gather (gather - step) once.
  const LayerShape p2p = shape_of(8, 4, 32768, ContextParallelKind::ring);
  const Seconds kv_hop = net.time(CollectiveOp::send_recv, ring_block_bytes(p2p), hop);
  const Seconds short_step = kv_hop * 2.0;  // per-step time kv_hop / 2 over 4 steps
  CHECK(context_parallel_time(p2p, short_step, bwd, net, group, hop).forward_exposed.value() ==
        doctest::Approx(3.0 * (kv_hop.value() - short_step.value() / 4)));
}

TEST_CASE("under torch.compile the all-gather rotater's collectives are waited where issued: all exposed") {
  // torch/distributed/_functional_collectives.py _maybe_wrap_tensor: traced, a collective is
  // followed by wait_tensor at once; Inductor's reorder_for_compute_comm_overlap is off by default.
  const LayerShape s = shape_of(8, 4, 32768, ContextParallelKind::ring_allgather);
  REQUIRE(s.kernels == KernelFusion::fused);
  CHECK(ring_allgather_waits_at_issue(s));
  const AlphaBetaCollectiveModel net = dgx_h100_net();
  const GroupLayout hop = pair_on_nvlink();
  const GroupLayout group = on_nvlink(4);
  const RingAllGatherTimes r = ring_allgather_times(s, net, group, hop);
  REQUIRE(r.gather.value() > 0.0);
  // However long the attention: the all-gather whole forward; the all-gather and cp dK/dV hops
  // backward (one after each of the cp steps, the last included).
  for (double scale : {0.1, 100.0}) {
    const ContextParallelTime t =
        context_parallel_time(s, r.gather * scale, r.gradient_hop * scale, net, group, hop);
    CHECK(t.forward_exposed.value() == doctest::Approx(r.gather.value()));
    CHECK(t.backward_exposed.value() == doctest::Approx(r.gather.value() + 4.0 * r.gradient_hop.value()));
  }
  // The p2p ring (Transformer Engine's, not traced) keeps its overlap under fused kernels.
  const LayerShape p2p = shape_of(8, 4, 32768, ContextParallelKind::ring);
  CHECK(context_parallel_time(p2p, r.gather * 100.0, r.gradient_hop * 100.0, net, group, hop).forward_exposed.value() ==
        0.0);
}

TEST_CASE("the all-gather rotater runs the ring's kernels and merges; the ring stays the default") {
  const LayerShape ring = shape_of(8, 16, 131072);
  const LayerShape gathered = shape_of(8, 16, 131072, ContextParallelKind::ring_allgather);
  CHECK(ring.cp_kind == ContextParallelKind::ring);
  CHECK(ParallelConfig{}.cp_kind == ContextParallelKind::ring);
  for (bool backward : {false, true}) {
    const OpList a = backward ? layer_backward_ops(ring) : layer_forward_ops(ring);
    const OpList b = backward ? layer_backward_ops(gathered) : layer_forward_ops(gathered);
    REQUIRE(a.size() == b.size());
    for (int i = 0; i < a.size(); ++i) {
      CAPTURE(a[i].name);
      CHECK(a[i].name == b[i].name);
      CHECK(a[i].launches == b[i].launches);
      CHECK(a[i].flops.value() == doctest::Approx(b[i].flops.value()));
      CHECK(a[i].bytes.value() == doctest::Approx(b[i].bytes.value()));
    }
  }
}

TEST_CASE("the ring runs one attention kernel per step over (s/cp) x s/(2cp) pairs; all-gather CP one kernel") {
  // Llama 3 405B, TP 8, CP 16 at 128K: 8192 queries a rank; each step pairs them with one received
  // 4096-token chunk (PyTorch _templated_ring_attention: key.chunk(2)[0] while i <= rank), the
  // first step's own two chunks under the causal mask the same work.
  const LayerShape s = shape_of(8, 16, 131072);
  for (const OpList& ops : {layer_forward_ops(s), layer_backward_ops(s)}) {
    int flash = 0;
    for (const Op& op : ops) {
      if (op.kind != OpKind::flash_forward && op.kind != OpKind::flash_backward) continue;
      ++flash;
      CHECK(op.launches == 16);
      CHECK(op.attention.seq_q == 8192);
      CHECK(op.attention.seq_kv == 4096);
      CHECK_FALSE(op.attention.causal);
      // cp kernels of seq_q x seq_kv pairs are the rank's causal share, s^2 / (2 cp).
      CHECK(op.attention.seq_q * op.attention.seq_kv * op.launches == doctest::Approx(131072.0 * 131072 / 32));
    }
    CHECK(flash == 1);
  }
  for (const Op& op : layer_forward_ops(shape_of(8, 16, 131072, ContextParallelKind::all_gather))) {
    if (op.kind == OpKind::flash_forward) CHECK(op.launches == 1);
  }
}

TEST_CASE("ring merges: each step's partial output into the FP32 running output, dQ and dK/dV into FP32") {
  // Llama 3 405B, TP 8, CP 16 at 128K, BF16: per rank 8192 queries x 16 heads x d 128 = O output
  // (and dQ) elements, 8192 x 16 log-sum-exps, and a K/V block of 8192 x 2 x 128 elements.
  const LayerShape s = shape_of(8, 16, 131072);
  const double o = 8192.0 * 16 * 128;
  const double lse = 8192.0 * 16;
  const double kv = 8192.0 * 2 * 128;
  // Forward: 15 merges (read the step's output at 2 bytes, read and write the FP32 one; three LSE
  // passes at 4 bytes), a cast up and a cast down (2 + 4 bytes each).
  CHECK(ring_merge_forward_bytes(s).value() == doctest::Approx(15 * (o * (2 + 8) + lse * 12) + 2 * o * 6));
  // Backward: 16 dQ accumulations and one cast; dK/dV on the whole block once and on half of it
  // the 15 other steps (rank 15 computes with the first chunk of each received block), one cast.
  CHECK(ring_merge_backward_bytes(s).value() == doctest::Approx(o * (16 * 10 + 6) + kv * ((1 + 7.5) * 10 + 6)));
  CHECK(ring_merge_forward_launches(s) == 17);
  CHECK(ring_merge_backward_launches(s) == 34);
  // The layer's ops carry them after the attention kernels, only for the ring.
  auto merge_bytes = [](const OpList& ops, std::string_view name) {
    double b = 0.0;
    for (const Op& op : ops) {
      if (op.name == name) b += op.bytes.value();
    }
    return b;
  };
  CHECK(merge_bytes(layer_forward_ops(s), "cp_ring_merge") == doctest::Approx(ring_merge_forward_bytes(s).value()));
  CHECK(merge_bytes(layer_backward_ops(s), "cp_ring_merge.backward") ==
        doctest::Approx(ring_merge_backward_bytes(s).value()));
  const LayerShape gathered = shape_of(8, 16, 131072, ContextParallelKind::all_gather);
  CHECK(merge_bytes(layer_forward_ops(gathered), "cp_ring_merge") == 0.0);
  CHECK(ring_merge_forward_bytes(shape_of(8, 1, 8192)).value() == 0.0);
}

TEST_CASE("Ulysses moves Q, K, V and the output by all-to-all, KV heads repeated up to cp") {
  // TP 1, CP 16: 128 query heads, 8 KV heads repeated to 16 so each rank gets one.
  const LayerShape s = shape_of(1, 16, 65536, ContextParallelKind::ulysses);
  const UlyssesBytes b = ulysses_bytes(s);
  CHECK(b.query.value() == doctest::Approx(4096.0 * 128 * 128 * 2));
  CHECK(b.key.value() == doctest::Approx(4096.0 * 16 * 128 * 2));
  const AlphaBetaCollectiveModel net = dgx_h100_net();
  GroupLayout g = pair_on_nvlink();
  g.size = 16;
  g.ranks_per_node = 8;
  g.nodes = 2;
  const ContextParallelTime t = context_parallel_time(s, Seconds(1.0), Seconds(1.0), net, g, g);
  const Seconds q = net.time(CollectiveOp::all_to_all, b.query, g);
  const Seconds kv = net.time(CollectiveOp::all_to_all, b.key, g);
  // Not overlapped: Q and the output, K and V, each way.
  CHECK(t.forward_exposed.value() == doctest::Approx(2.0 * q.value() + 2.0 * kv.value()));
  CHECK(t.backward_exposed.value() == doctest::Approx(t.forward_exposed.value()));
}

TEST_CASE("context parallelism divides a layer's activations by cp") {
  // Every stored activation is per token; with flash attention there is no s x s term, so
  // cp ranks each keep 1/cp of the layer's activations (Korthikanti et al. Table 2 with s/cp).
  const double one = layer_activation_bytes(shape_of(8, 1, 131072), Recompute::none).stored.value();
  const double sixteen = layer_activation_bytes(shape_of(8, 16, 131072), Recompute::none).stored.value();
  CHECK(sixteen == doctest::Approx(one / 16));
}

TEST_CASE("a CP run reports its exchange as cp_comm_exposed and places the cp group") {
  // Llama 3 70B on 64 H100s at 32K context: TP 8, PP 4 (vpp 5), CP 2, DP 1.
  const Override overrides[] = {{"training.seq_len", "32768"}, {"parallel.cp", "2"}, {"training.global_batch", "32"},
                                {"parallel.cp_kind", "ulysses"}};
  Scenario sc = load_scenario("llama3-70b-h100", overrides);
  REQUIRE(sc.parallel.dp == 1);
  TrainingPredictor predictor;
  TrainingPredictorOptions options;
  options.describe_placement = true;
  const TrainingPrediction ulysses = predictor.predict(sc, options);
  CHECK(ulysses.time.cp_comm_exposed.value() > 0.0);
  CHECK(ulysses.time.total().value() == doctest::Approx(ulysses.step_time.value()).epsilon(1e-9));
  bool cp_listed = false;
  for (const auto& g : ulysses.placement) cp_listed = cp_listed || g.group == "cp";
  CHECK(cp_listed);
  // The ring hides its K/V blocks behind long-context attention better than Ulysses' unhidden
  // all-to-alls.
  sc.parallel.cp_kind = ContextParallelKind::ring;
  CHECK(predictor.predict(sc).time.cp_comm_exposed < ulysses.time.cp_comm_exposed);
}
