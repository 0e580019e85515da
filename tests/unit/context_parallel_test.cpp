// Context parallelism: the ring's K/V blocks and how much of them attention hides, Ulysses'
// all-to-alls, causal load balancing, the activation-memory effect and the prediction's
// cp_comm_exposed component.
#include <doctest/doctest.h>

#include "model/activation_memory.h"
#include "model/alpha_beta_collective.h"
#include "model/context_parallel.h"
#include "model/flops.h"
#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "simulator/catalog.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"

using namespace stepcast;

namespace {

const TransformerSpec& llama3_405b() {
  const TransformerSpec* m = Catalog::builtin().find_model("llama3-405b");
  REQUIRE(m != nullptr);
  return *m;
}

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

GroupLayout pair_on_nvlink() {
  GroupLayout g;
  g.size = 2;
  g.ranks_per_node = 2;
  g.nodes = 1;
  return g;
}

}  // namespace

TEST_CASE("a ring step sends one chunk's K and V: b (s/cp) 2 g/t d elements at 2 bytes") {
  // Llama 3 405B at 128K context, TP 8, CP 16 (Llama 3 Table 4): 8 KV heads / 8 = 1 per rank,
  // d = 128, s/cp = 8192 tokens: 8192 x 2 x 128 x 2 bytes = 4 MiB.
  const LayerShape s = shape_of(8, 16, 131072);
  CHECK(s.seq == 8192);
  CHECK(s.context == 131072);
  CHECK(ring_block_bytes(s).value() == doctest::Approx(8192.0 * 2 * 128 * 2));
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
  GroupLayout ring = hop;
  ring.size = 4;
  ring.ranks_per_node = 4;
  const Seconds step = net.time(CollectiveOp::send_recv, ring_block_bytes(s), hop);
  const Seconds back = net.time(CollectiveOp::send_recv, ring_block_bytes(s) * 2.0, hop);
  REQUIRE(step.value() > 0.0);
  // Attention long enough: nothing is exposed.
  ContextParallelTime t = context_parallel_time(s, step * 4.0 * 10.0, back * 4.0 * 10.0, net, ring, hop);
  CHECK(t.forward_exposed.value() == 0.0);
  CHECK(t.backward_exposed.value() == 0.0);
  // Attention shorter than the transfers: (cp - 1) x (transfer - attention / cp), the backward
  // moving K, V and their gradients (twice the bytes).
  const Seconds short_forward = step * 2.0;  // half a transfer per step over 4 steps
  const Seconds short_backward = back * 2.0;
  t = context_parallel_time(s, short_forward, short_backward, net, ring, hop);
  CHECK(t.forward_exposed.value() == doctest::Approx(3.0 * (step.value() - short_forward.value() / 4)));
  CHECK(t.backward_exposed.value() == doctest::Approx(3.0 * (back.value() - short_backward.value() / 4)));
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
