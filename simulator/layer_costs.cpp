#include "simulator/layer_costs.h"

#include <algorithm>
#include <cassert>

#include "model/layer_ops.h"
#include "model/moe_ops.h"
#include "model/op_time.h"
#include "simulator/layer_kernels.h"
#include "simulator/parallel_traffic.h"
#include "simulator/userbuffers_overlap.h"

namespace stepcast {
namespace {

// The GEMM names a block's TP collectives pair with (model/layer_ops.cpp, mla_ops.cpp, moe_ops.cpp).
struct BlockGemms {
  std::string_view in, out, in_dgrad, out_dgrad, in_wgrad;
};
BlockGemms attention_block_gemms(const LayerShape& s) {
  if (!s.mla) return {"qkv_proj", "out_proj", "qkv_proj.dgrad", "out_proj.dgrad", "qkv_proj.wgrad"};
  if (s.mla->q_lora_rank > 0) {
    return {"q_down_proj", "out_proj", "q_down_proj.dgrad", "out_proj.dgrad", "q_down_proj.wgrad"};
  }
  return {"q_proj", "out_proj", "q_proj.dgrad", "out_proj.dgrad", "q_proj.wgrad"};
}
BlockGemms mlp_block_gemms(const LayerShape& s) {
  if (s.moe_layer) return {"shared_fc1", "shared_fc2", "shared_fc1.dgrad", "shared_fc2.dgrad", "shared_fc1.wgrad"};
  return {"fc1", "fc2", "fc1.dgrad", "fc2.dgrad", "fc1.wgrad"};
}

// Exposed part of a collective that --tp-comm-overlap pipelines with `gemm` in `chunks` steps
// (the TP size, unless the overlap method says otherwise: simulator/userbuffers_overlap.h).
Seconds overlapped(Seconds comm, Seconds gemm, const LayerCostInputs& in, int chunks) {
  const Seconds chunk = comm * (in.params->tp_overlap_exposed_chunks / std::max(chunks, 1));
  return max(comm - gemm, chunk);
}
Seconds overlapped(Seconds comm, Seconds gemm, const LayerCostInputs& in) {
  return overlapped(comm, gemm, in, in.tp_group.size);
}

// Transformer Engine's userbuffers overlap of one GEMM with its collective (simulator/
// userbuffers_overlap.h): what it adds to the pass beyond the GEMM's own time in the kernel list.
// A pipelined or ring-exchanged collective: the GEMM's slowdown plus the part of the collective
// the slowed GEMM does not hide, at least its last chunk's share.
Seconds userbuffers_exposed(const KernelPass& pass, std::string_view name, Seconds comm, const UbGemmConfig& cfg,
                            const LayerCostInputs& in) {
  const int i = pass.index_named(name);
  if (i < 0) return overlapped(comm, Seconds(0.0), in);
  const int tp = in.tp_group.size;
  // The pass priced the GEMM alone already (op_time on the same GPU and parameters).
  const Seconds gemm = pass.op_time(i);
  const Seconds slowdown = userbuffers_overlap_gemm_time(pass.ops[i], comm, cfg, tp, *in.gpu, *in.params) - gemm;
  const Seconds slowed = gemm + slowdown;
  if (cfg.method == UbMethod::bulk) return slowdown + max(comm - slowed, Seconds(0.0));  // one kernel beside the GEMM
  return slowdown + overlapped(comm, slowed, in, userbuffers_gemm_chunks(cfg, tp));
}

// The amax bytes one layer adds to its chunk's delayed-scaling reduction (layer_costs.h).
Bytes fp8_delayed_amax_bytes(const OpList& forward_ops, bool forward) {
  // FP32 amaxes per FP8 GEMM (layer_costs.h): input, weight, output forward; the two gradients backward.
  const double per_gemm = forward ? 3.0 : 2.0;
  double gemms = 0.0;
  for (const Op& op : forward_ops) {
    if (op.kind == OpKind::gemm && op.dtype == DataType::fp8) gemms += op.launches;
  }
  return Bytes(gemms * per_gemm * 4.0);
}

// Whether the layer's quantizers all-reduce their amax over TP before a sequence-parallel gather.
bool reduces_amax_over_tp(const LayerShape& shape) {
  const bool per_tensor_current = shape.compute == DataType::fp8 && shape.fp8_scaling == Fp8Scaling::current;
  return shape.tp > 1 && shape.sequence_parallel && (per_tensor_current || shape.compute == DataType::nvfp4);
}

}  // namespace

LayerCosts layer_costs(const LayerCostInputs& in) {
  const LayerShape& s = *in.shape;
  const CollectiveModel& net = *in.collectives;
  // The kernels and their times (simulator/layer_kernels.h; `stepcast explain --ops` prints them).
  const LayerKernels kernels = layer_kernels(in);
  // The expert and context traffic pairs its exchanges with the layer's own kernels (no ZeRO-3 cast).
  const OpList forward = layer_forward_ops(s);
  const OpList backward = layer_backward_ops(s);

  LayerCosts c;
  c.layer_forward.compute = kernels.forward.time();
  c.layer_backward.compute = kernels.backward.time();
  c.layer_backward.weight_gradient = min(kernels.backward.weight_gradient_time(), kernels.backward.bounded_time());
  c.layer_backward.recompute = kernels.recompute.bounded_time();

  const Bytes activation(s.tokens() * s.hidden * s.activation_bytes);  // b s h
  if (s.tp > 1) {
    // The GEMMs each block's TP collectives sit next to: the attention block's first projection
    // (QKV, or MLA's down-projections) and its output projection; the MLP's FC1 and FC2 — a MoE
    // layer's shared experts (its routed experts reach their tokens through the all-to-all, on the
    // sequence-parallel shard, with no TP collective), none without shared experts.
    const BlockGemms attention = attention_block_gemms(s);
    const BlockGemms mlp = mlp_block_gemms(s);
    const bool mlp_collectives = !s.moe_layer || s.moe.shared_experts > 0;
    const double blocks = mlp_collectives ? 2.0 : 1.0;
    Seconds forward_comm(0.0);
    Seconds backward_comm(0.0);
    Seconds mlp_forward_comm(0.0);  // the MLP block's share of forward_comm
    // What torchtitan's per-op checkpointing (recompute: selective_op) re-runs: the collectives
    // outside its save list, i.e. the all-gathers (SP) or all-reduces; it keeps reduce-scatter
    // outputs (model/op_checkpoint.h). Priced unoverlapped: the replay has no GEMM to hide behind.
    Seconds op_policy_comm(0.0);
    if (s.sequence_parallel) {
      const Seconds gather = net.time(CollectiveOp::all_gather, activation, in.tp_group);
      const Seconds scatter = net.time(CollectiveOp::reduce_scatter, activation, in.tp_group);
      op_policy_comm = gather * blocks;
      const Seconds regather_attention = max(gather - kernels.backward.time_named(attention.in_dgrad), Seconds(0.0));
      const Seconds regather_mlp =
          mlp_collectives ? max(gather - kernels.backward.time_named(mlp.in_dgrad), Seconds(0.0)) : Seconds(0.0);
      if (in.tp_comm_overlap) {
        // Transformer Engine's userbuffers, per GEMM as the recipe's config assigns
        // (simulator/userbuffers_overlap.h): forward, the all-gather ring-exchanged through the
        // first projection and the reduce-scatter pipelined (or ring-exchanged) through the
        // second; backward, the gradient's all-gather ring-exchanged through the second
        // projection's data gradient, the input's re-gather beside the first projection's data
        // gradient and the data gradient's reduce-scatter beside its weight gradient (bulk).
        const UbLayerConfig ub = userbuffers_config(in.gpu->architecture, s.hidden, is_quantized_training_format(s.compute));
        const KernelPass& fw = kernels.forward;
        const KernelPass& bw = kernels.backward;
        forward_comm = userbuffers_exposed(fw, attention.in, gather, ub.qkv_fprop, in) +
                       userbuffers_exposed(fw, attention.out, scatter, ub.proj_fprop, in);
        backward_comm = userbuffers_exposed(bw, attention.out_dgrad, gather, ub.proj_dgrad, in) +
                        userbuffers_exposed(bw, attention.in_dgrad, gather, ub.qkv_dgrad, in) +
                        userbuffers_exposed(bw, attention.in_wgrad, scatter, ub.qkv_wgrad, in);
        if (mlp_collectives) {
          mlp_forward_comm = userbuffers_exposed(fw, mlp.in, gather, ub.fc1_fprop, in) +
                             userbuffers_exposed(fw, mlp.out, scatter, ub.fc2_fprop, in);
          forward_comm += mlp_forward_comm;
          backward_comm += userbuffers_exposed(bw, mlp.out_dgrad, gather, ub.fc2_dgrad, in) +
                           userbuffers_exposed(bw, mlp.in_dgrad, gather, ub.fc1_dgrad, in) +
                           userbuffers_exposed(bw, mlp.in_wgrad, scatter, ub.fc1_wgrad, in);
        }
      } else {
        forward_comm = (gather + scatter) * blocks;
        if (mlp_collectives) mlp_forward_comm = gather + scatter;
        backward_comm = (gather + scatter) * blocks + regather_attention + regather_mlp;
      }
      if (reduces_amax_over_tp(s)) {
        // Per-tensor scales shared by the TP ranks before each quantized all-gather (layer_costs.h):
        // one per block and pass, in the stream ahead of the collective it scales.
        const Seconds amax = net.time(CollectiveOp::all_reduce, Bytes(4.0), in.tp_group);
        forward_comm += amax * blocks;
        backward_comm += amax * blocks;
        if (mlp_collectives) mlp_forward_comm += amax;
        op_policy_comm += amax * blocks;
      }
    } else {
      const Seconds reduce = net.time(CollectiveOp::all_reduce, activation, in.tp_group);
      op_policy_comm = reduce * blocks;
      if (in.tp_comm_overlap) {
        forward_comm = overlapped(reduce, kernels.forward.time_named(attention.out), in);
        backward_comm = overlapped(reduce, kernels.backward.time_named(attention.in_wgrad), in);
        if (mlp_collectives) {
          mlp_forward_comm = overlapped(reduce, kernels.forward.time_named(mlp.out), in);
          forward_comm += mlp_forward_comm;
          backward_comm += overlapped(reduce, kernels.backward.time_named(mlp.in_wgrad), in);
        }
      } else {
        forward_comm = reduce * blocks;
        if (mlp_collectives) mlp_forward_comm = reduce;
        backward_comm = reduce * blocks;
      }
    }
    c.layer_forward.tp_exposed = forward_comm;
    // Recomputation re-runs the forward collectives of what it re-runs: all of them (full), or the
    // MLP block's when its recomputed region holds them (a dense MLP; a MoE layer's shared experts).
    using RM = RecomputeModule;
    const auto module = [&](RM m) { return recomputes_module(in.recompute, in.recompute_modules, m); };
    const bool mlp_block_recomputed = s.moe_layer ? module(RM::moe) || module(RM::shared_experts) : module(RM::mlp);
    c.layer_backward.tp_exposed = backward_comm + (in.recompute == Recompute::full           ? forward_comm
                                                   : in.recompute == Recompute::selective_op ? op_policy_comm
                                                   : mlp_block_recomputed                    ? mlp_forward_comm
                                                                                             : Seconds(0.0));

    // Embedding output: all-reduce of the vocab-parallel lookup (reduce-scatter with SP; its
    // backward is then an all-gather).
    if (s.sequence_parallel) {
      c.embedding_forward.tp_exposed = net.time(CollectiveOp::reduce_scatter, activation, in.tp_group);
      c.embedding_backward.tp_exposed = net.time(CollectiveOp::all_gather, activation, in.tp_group);
      c.output_forward.tp_exposed = net.time(CollectiveOp::all_gather, activation, in.tp_group);
      c.output_backward.tp_exposed = net.time(CollectiveOp::reduce_scatter, activation, in.tp_group);
    } else {
      c.embedding_forward.tp_exposed = net.time(CollectiveOp::all_reduce, activation, in.tp_group);
      c.output_backward.tp_exposed = net.time(CollectiveOp::all_reduce, activation, in.tp_group);
    }
    // Vocab-parallel cross-entropy: all-reduces of the max, the sum of exponentials and the
    // target logit, one FP32 value per token each.
    const Bytes per_token(s.tokens() * 4.0);
    c.output_forward.tp_exposed += net.time(CollectiveOp::all_reduce, per_token, in.tp_group) * 3.0;
    if (in.mtp_depth > 0) {
      // A multi-token-prediction module (Megatron-Core MultiTokenPredictionLayer.forward): the
      // shared embedding's lookup reduces as the first stage's; eh_proj is a ColumnParallelLinear
      // over the 2h concatenation (with SP its input all-gathered along the sequence, its input
      // gradient reduce-scattered; without, that gradient all-reduced), and its h/t output is
      // gathered along the hidden dimension (gather_from_tensor_model_parallel_region, whose
      // backward is a split).
      const Bytes concatenated = activation * 2.0;
      c.mtp_forward.tp_exposed = c.embedding_forward.tp_exposed + net.time(CollectiveOp::all_gather, activation, in.tp_group);
      c.mtp_backward.tp_exposed = c.embedding_backward.tp_exposed;
      if (s.sequence_parallel) {
        c.mtp_forward.tp_exposed += net.time(CollectiveOp::all_gather, concatenated, in.tp_group);
        c.mtp_backward.tp_exposed += net.time(CollectiveOp::reduce_scatter, concatenated, in.tp_group);
      } else {
        c.mtp_backward.tp_exposed += net.time(CollectiveOp::all_reduce, concatenated, in.tp_group);
      }
    }
    c.pipeline_receive = s.sequence_parallel ? Seconds(0.0) : net.time(CollectiveOp::all_gather, activation, in.tp_group);
  }

  const EmbeddingOutputKernels ends = embedding_output_kernels(in);
  c.embedding_forward.compute = ends.embedding_forward.time();
  c.embedding_backward.compute = ends.embedding_backward.time();
  c.output_forward.compute = ends.output_forward.time();
  c.output_backward.compute = ends.output_backward.time();
  c.output_backward.weight_gradient = min(ends.output_backward.weight_gradient_time(), c.output_backward.compute);
  c.embedding_backward.weight_gradient = c.embedding_backward.compute;  // the table's gradient only
  c.mtp_forward.compute = ends.mtp_forward.time();
  c.mtp_backward.compute = ends.mtp_backward.time();
  c.mtp_backward.weight_gradient = min(ends.mtp_backward.weight_gradient_time(), c.mtp_backward.compute);

  add_expert_and_context_traffic(in, forward, backward, c);

  if (s.compute == DataType::fp8 && s.fp8_scaling == Fp8Scaling::delayed) {
    c.amax_forward_bytes = fp8_delayed_amax_bytes(forward, true);
    c.amax_backward_bytes = fp8_delayed_amax_bytes(forward, false);
  }

  // ZeRO-3 / FSDP (Rajbhandari et al. 2020, ZeRO, Sec. 5.3; Zhao et al. 2023, "PyTorch FSDP",
  // VLDB 16(12), Sec. 3.3-3.4): each layer's parameters are all-gathered before its forward and
  // again before its backward, and its gradients reduce-scattered after its backward, in every
  // micro-batch (FSDP accumulates into the sharded gradient unless no_sync keeps full ones, which
  // ZeRO-3 exists to avoid; DeepSpeed ZeRO-3 does the same). The next layer's gather is prefetched
  // one layer ahead (FSDP forward_prefetch / BackwardPrefetch.BACKWARD_PRE; FSDP2's implicit
  // prefetch), so per layer only max(comm - compute, 0) is exposed; in the backward the next
  // gather and this layer's reduce-scatter share the link: comm = gather + reduce-scatter. The
  // first gather of a forward and the last reduce-scatter of a backward have no compute to hide
  // behind (zero3_first_gather, zero3_last_reduce: the predictor adds them once per micro-batch
  // on the pipeline's first chunk). Overlapped compute loses the SMs the collective kernels hold:
  // it runs at (1 - comm_sm_fraction) speed while they run.
  if (in.zero >= 3 && in.dp_group.size > 1) {
    const Bytes layer_bytes(in.layer_parameters_per_rank * in.gather_bytes_per_parameter);
    const Bytes gradient_bytes(in.layer_parameters_per_rank * in.gradient_bytes);
    const Seconds gather = net.time(CollectiveOp::all_gather, layer_bytes, in.dp_group);
    const Seconds scatter = net.time(CollectiveOp::reduce_scatter, gradient_bytes, in.dp_group);
    const double f = in.params->comm_sm_fraction;
    // A pass of `compute` under a collective of `comm`: max(comm, compute + f min(comm, compute)).
    const auto exposed = [f](Seconds comm, Seconds compute) {
      return max(comm, compute + min(comm, compute) * f) - compute;
    };
    // Exposure against the passes' kernels before the FP8 weight cast, which layer_kernels adds
    // to each pass (FP8 compute over 16-bit parameters: the gathered weights are cast, and
    // transposed for the backward's TN GEMMs, in every pass, as there is no persistent FP8 copy
    // to cache them in).
    c.layer_forward.dp_exposed = exposed(gather, kernels.forward.bounded_time());
    c.layer_backward.dp_exposed = exposed(gather + scatter, kernels.backward.bounded_time() + c.layer_backward.recompute);
    c.zero3_first_gather = gather;
    c.zero3_last_reduce = scatter;
  }
  return c;
}

namespace {
PassTime blend(const PassTime& a, const PassTime& b, double f) {
  const auto mix = [f](Seconds x, Seconds y) { return x * (1.0 - f) + y * f; };
  PassTime p;
  p.compute = mix(a.compute, b.compute);
  p.recompute = mix(a.recompute, b.recompute);
  p.tp_exposed = mix(a.tp_exposed, b.tp_exposed);
  p.dp_exposed = mix(a.dp_exposed, b.dp_exposed);
  p.ep_exposed = mix(a.ep_exposed, b.ep_exposed);
  p.ep_unpaired = mix(a.ep_unpaired, b.ep_unpaired);
  p.cp_exposed = mix(a.cp_exposed, b.cp_exposed);
  p.weight_gradient = mix(a.weight_gradient, b.weight_gradient);
  return p;
}
}  // namespace

LayerCosts blend_recompute(const LayerCosts& kept, const LayerCosts& recomputed, double fraction) {
  LayerCosts c = recomputed;
  c.layer_forward = blend(kept.layer_forward, recomputed.layer_forward, fraction);
  c.layer_backward = blend(kept.layer_backward, recomputed.layer_backward, fraction);
  return c;
}

bool same_layer_cost_inputs(const LayerCostInputs& a, const LayerCostInputs& b) {
  const bool zero3 = a.zero >= 3;
  const bool experts = a.shape->moe_layer && (a.shape->ep > 1 || a.shape->expert_tp > 1);
  const bool context = a.shape->cp > 1;
  if (experts && (a.ep_group != b.ep_group || a.etp_group != b.etp_group || a.ep_comm_overlap != b.ep_comm_overlap)) {
    return false;
  }
  if (context && (a.cp_group != b.cp_group || a.cp_ring_hop != b.cp_ring_hop)) return false;
  return a.recompute == b.recompute && a.recompute_modules == b.recompute_modules && a.checkpoint == b.checkpoint &&
         a.mtp_depth == b.mtp_depth && a.graph_replay == b.graph_replay &&
         zero3 == (b.zero >= 3) && a.tp_comm_overlap == b.tp_comm_overlap &&
         a.gpu == b.gpu && a.params == b.params && a.collectives == b.collectives && a.system == b.system && a.tp_group == b.tp_group &&
         *a.shape == *b.shape &&
         (!zero3 || (a.dp_group == b.dp_group && a.layer_parameters_per_rank == b.layer_parameters_per_rank &&
                     a.parameter_bytes == b.parameter_bytes && a.gather_bytes_per_parameter == b.gather_bytes_per_parameter &&
                     a.gradient_bytes == b.gradient_bytes && a.parameter_format == b.parameter_format &&
                     a.fsdp == b.fsdp && a.root_embedding_parameters == b.root_embedding_parameters &&
                     a.root_output_parameters == b.root_output_parameters));
}

}  // namespace stepcast
