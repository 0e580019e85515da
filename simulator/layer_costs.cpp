#include "simulator/layer_costs.h"

#include <algorithm>
#include <cassert>

#include "model/layer_ops.h"
#include "model/moe_ops.h"
#include "model/op_time.h"
#include "simulator/parallel_traffic.h"

namespace stepcast {
namespace {

Seconds time_of(const Op& op, const LayerCostInputs& in) { return op_time(op, *in.gpu, *in.params); }

// GPU time of the ops [first, last), bounded below by the host's time to dispatch them through
// Transformer Engine modules (CostParameters::training_host_dispatch_s per launch).
Seconds training_ops_time(const Op* first, const Op* last, const LayerCostInputs& in) {
  return ops_time(first, last, *in.gpu, *in.params, Seconds(in.params->training_host_dispatch_s()));
}
Seconds training_ops_time(const OpList& ops, const LayerCostInputs& in) {
  return training_ops_time(ops.begin(), ops.end(), in);
}

// The time of the named GEMM in `ops` (zero when absent).
Seconds gemm_time(const OpList& ops, std::string_view name, const LayerCostInputs& in) {
  for (const Op& op : ops) {
    if (op.name == name) return time_of(op, in);
  }
  return Seconds(0.0);
}

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

// Time of the weight-gradient GEMMs in `ops` (named "<gemm>.wgrad").
Seconds weight_gradient_time(const OpList& ops, const LayerCostInputs& in) {
  Seconds t(0.0);
  constexpr std::string_view kSuffix = ".wgrad";
  for (const Op& op : ops) {
    if (op.name.size() >= kSuffix.size() && op.name.substr(op.name.size() - kSuffix.size()) == kSuffix) {
      t += time_of(op, in);
    }
  }
  return t;
}

// Exposed part of a collective that --tp-comm-overlap pipelines with `gemm`.
Seconds overlapped(Seconds comm, Seconds gemm, const LayerCostInputs& in) {
  const Seconds chunk = comm * (in.params->tp_overlap_exposed_chunks / std::max(in.tp_group.size, 1));
  return max(comm - gemm, chunk);
}

// A forward pass's kernels. A MoE layer that synchronizes with the host before its all-to-all
// (model/moe_ops.h moe_forward_host_sync) runs as two stretches, each bounded by its own dispatch
// time: the host cannot have run ahead into the second.
Seconds forward_compute(const OpList& forward, const LayerCostInputs& in) {
  if (!moe_forward_host_sync(*in.shape)) return training_ops_time(forward, in);
  const Op* sync = forward.begin();
  while (sync != forward.end() && sync->name != kMoeHostSyncAfter) ++sync;
  assert(sync != forward.end());
  ++sync;
  return training_ops_time(forward.begin(), sync, in) + training_ops_time(sync, forward.end(), in);
}

}  // namespace

LayerCosts layer_costs(const LayerCostInputs& in) {
  const LayerShape& s = *in.shape;
  const CollectiveModel& net = *in.collectives;
  const OpList forward = layer_forward_ops(s);
  const OpList backward = layer_backward_ops(s);

  LayerCosts c;
  c.layer_forward.compute = forward_compute(forward, in);
  c.layer_backward.compute = training_ops_time(backward, in);
  c.layer_backward.weight_gradient = min(weight_gradient_time(backward, in), c.layer_backward.compute);
  if (in.recompute == Recompute::full) {
    c.layer_backward.recompute = c.layer_forward.compute;
  } else if (in.recompute == Recompute::selective) {
    c.layer_backward.recompute = training_ops_time(selective_recompute_forward_ops(s, in.recompute_modules), in);
  }

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
    if (s.sequence_parallel) {
      const Seconds gather = net.time(CollectiveOp::all_gather, activation, in.tp_group);
      const Seconds scatter = net.time(CollectiveOp::reduce_scatter, activation, in.tp_group);
      const Seconds regather_attention = max(gather - gemm_time(backward, attention.in_dgrad, in), Seconds(0.0));
      const Seconds regather_mlp =
          mlp_collectives ? max(gather - gemm_time(backward, mlp.in_dgrad, in), Seconds(0.0)) : Seconds(0.0);
      if (in.tp_comm_overlap) {
        forward_comm = overlapped(gather, gemm_time(forward, attention.in, in), in) +
                       overlapped(scatter, gemm_time(forward, attention.out, in), in);
        backward_comm = overlapped(gather, gemm_time(backward, attention.out_dgrad, in), in) +
                        overlapped(scatter, gemm_time(backward, attention.in_dgrad, in), in) + regather_attention;
        if (mlp_collectives) {
          mlp_forward_comm = overlapped(gather, gemm_time(forward, mlp.in, in), in) +
                             overlapped(scatter, gemm_time(forward, mlp.out, in), in);
          forward_comm += mlp_forward_comm;
          backward_comm += overlapped(gather, gemm_time(backward, mlp.out_dgrad, in), in) +
                           overlapped(scatter, gemm_time(backward, mlp.in_dgrad, in), in) + regather_mlp;
        }
      } else {
        forward_comm = (gather + scatter) * blocks;
        if (mlp_collectives) mlp_forward_comm = gather + scatter;
        backward_comm = (gather + scatter) * blocks + regather_attention + regather_mlp;
      }
    } else {
      const Seconds reduce = net.time(CollectiveOp::all_reduce, activation, in.tp_group);
      if (in.tp_comm_overlap) {
        forward_comm = overlapped(reduce, gemm_time(forward, attention.out, in), in);
        backward_comm = overlapped(reduce, gemm_time(backward, attention.in_wgrad, in), in);
        if (mlp_collectives) {
          mlp_forward_comm = overlapped(reduce, gemm_time(forward, mlp.out, in), in);
          forward_comm += mlp_forward_comm;
          backward_comm += overlapped(reduce, gemm_time(backward, mlp.in_wgrad, in), in);
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
    c.layer_backward.tp_exposed = backward_comm + (in.recompute == Recompute::full ? forward_comm
                                                   : mlp_block_recomputed       ? mlp_forward_comm
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
    c.pipeline_receive = s.sequence_parallel ? Seconds(0.0) : net.time(CollectiveOp::all_gather, activation, in.tp_group);
  }

  c.embedding_forward.compute = training_ops_time(embedding_forward_ops(s), in);
  c.embedding_backward.compute = training_ops_time(embedding_backward_ops(s), in);
  c.output_forward.compute = training_ops_time(output_forward_ops(s), in);
  c.output_backward.compute = training_ops_time(output_backward_ops(s), in);
  c.output_backward.weight_gradient = min(weight_gradient_time(output_backward_ops(s), in), c.output_backward.compute);
  c.embedding_backward.weight_gradient = c.embedding_backward.compute;  // the table's gradient only

  add_expert_and_context_traffic(in, forward, backward, c);

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
    c.layer_forward.dp_exposed = exposed(gather, c.layer_forward.compute);
    c.layer_backward.dp_exposed = exposed(gather + scatter, c.layer_backward.compute + c.layer_backward.recompute);
    c.zero3_first_gather = gather;
    c.zero3_last_reduce = scatter;
    // FP8 compute over 16-bit parameters: the gathered weights are cast (and transposed for the
    // backward's TN GEMMs) in every pass, as there is no persistent FP8 copy to cache them in.
    if (is_quantized_training_format(s.compute) && !is_quantized_training_format(in.parameter_format)) {
      const Seconds cast = time_of(weight_quantize_op(s, in.layer_parameters_per_rank), in);
      c.layer_forward.compute += cast;
      c.layer_backward.compute += cast;
    }
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
  return a.recompute == b.recompute && a.recompute_modules == b.recompute_modules && zero3 == (b.zero >= 3) && a.tp_comm_overlap == b.tp_comm_overlap &&
         a.gpu == b.gpu && a.params == b.params && a.collectives == b.collectives && a.system == b.system && a.tp_group == b.tp_group &&
         *a.shape == *b.shape &&
         (!zero3 || (a.dp_group == b.dp_group && a.layer_parameters_per_rank == b.layer_parameters_per_rank &&
                     a.parameter_bytes == b.parameter_bytes && a.gather_bytes_per_parameter == b.gather_bytes_per_parameter &&
                     a.gradient_bytes == b.gradient_bytes && a.parameter_format == b.parameter_format));
}

}  // namespace stepcast
