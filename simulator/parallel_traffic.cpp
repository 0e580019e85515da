#include "simulator/parallel_traffic.h"

#include <algorithm>
#include <cassert>

#include "model/context_parallel.h"
#include "model/ep_overlap.h"
#include "model/layer_ops.h"
#include "model/moe_ops.h"
#include "model/op_time.h"

namespace stepcast {
namespace {

// Kernel time of the attention core in `ops`: the fused kernel, or the unfused path's GEMMs,
// softmax and dropout.
Seconds attention_core_time(const OpList& ops, const LayerCostInputs& in, bool backward) {
  Seconds t(0.0);
  for (const Op& op : ops) {
    const std::string_view n = op.name;
    const bool core = backward ? (n == "flash_attention.backward" || n.starts_with("attention_") ||
                                  n == "scale_mask_softmax.backward")
                               : (n == "flash_attention" || n.starts_with("attention_") || n == "scale_mask_softmax");
    if (core) t += op_time(op, *in.gpu, *in.params);
  }
  return t;
}

// GPU time of the ops of Megatron-Core's mlp node in `ops`: the routed experts (GEMMs, activation,
// FP8 casts and padding) and the permutation around them after dispatch and before combine
// (the alltoall dispatcher's chunk sort; model/moe_ops.h).
Seconds experts_node_time(const OpList& ops, const LayerCostInputs& in) {
  Seconds t(0.0);
  for (const Op& op : ops) {
    const std::string_view n = op.name;
    if (n.starts_with("experts_") || n.starts_with("moe_sort_chunks") || n.starts_with("moe_unsort_chunks")) {
      t += op_time(op, *in.gpu, *in.params);
    }
  }
  return t;
}

}  // namespace

void add_expert_and_context_traffic(const LayerCostInputs& in, const OpList& forward, const OpList& backward,
                                    LayerCosts& c) {
  const LayerShape& s = *in.shape;
  const CollectiveModel& net = *in.collectives;

  if (s.cp > 1) {
    const ContextParallelTime t =
        context_parallel_time(s, attention_core_time(forward, in, false), attention_core_time(backward, in, true), net,
                              in.cp_group, in.cp_ring_hop);
    c.layer_forward.cp_exposed = t.forward_exposed;
    c.layer_backward.cp_exposed =
        t.backward_exposed + (in.recompute == Recompute::full ||
                                      recomputes_module(in.recompute, in.recompute_modules, RecomputeModule::core_attn)
                                  ? t.forward_exposed
                                  : Seconds(0.0));
  }

  if (s.moe_layer && (s.ep > 1 || s.expert_tp > 1)) {
    Seconds exchange(0.0);  // one dispatch or combine exchange on the EP group
    if (s.ep > 1) {
      assert(!is_flex_dispatcher(s.ep_dispatcher) || in.system != nullptr);
      exchange = is_flex_dispatcher(s.ep_dispatcher)
                     ? moe_deepep_time(s, in.ep_group, *in.system, *in.params)
                     : net.time(CollectiveOp::all_to_all, moe_all_to_all_bytes(s), in.ep_group);
    }
    Seconds gather(0.0);   // expert-TP all-gather of the received tokens (before the experts)
    Seconds scatter(0.0);  // and reduce-scatter of their outputs (after them)
    if (s.expert_tp > 1) {
      const Bytes gathered = moe_expert_tp_bytes(s);
      gather = net.time(CollectiveOp::all_gather, gathered, in.etp_group);
      scatter = net.time(CollectiveOp::reduce_scatter, gathered, in.etp_group);
    }
    const Seconds dispatch = exchange + gather;
    const Seconds combine = scatter + exchange;
    const Seconds pass = dispatch + combine;  // one pass's expert traffic; the backward's conjugates
                                              // (gather <-> scatter) cost the same
    Seconds forward_exposed = pass;
    Seconds backward_exposed = pass;
    if (in.ep_comm_overlap) {
      // model/ep_overlap.h: each exchange hides only behind the compute node it is paired with.
      EpOverlapLayer l;
      const PassTime& f = c.layer_forward;
      const PassTime& b = c.layer_backward;
      l.forward_experts = min(experts_node_time(forward, in), f.compute);
      l.forward_attention = f.compute - l.forward_experts + f.tp_exposed + f.cp_exposed;
      Seconds recomputed_experts(0.0);
      if (in.recompute == Recompute::full) {
        recomputed_experts = l.forward_experts;
      } else if (in.recompute == Recompute::selective) {
        recomputed_experts = experts_node_time(selective_recompute_forward_ops(s, in.recompute_modules), in);
      }
      recomputed_experts = min(recomputed_experts, b.recompute);
      l.backward_experts = min(experts_node_time(backward, in), b.compute) + recomputed_experts;
      l.backward_attention = b.compute + b.recompute - l.backward_experts + b.tp_exposed + b.cp_exposed;
      l.forward_dispatch = dispatch;
      l.forward_combine = combine;
      l.backward_combine = exchange + gather;   // the combine's gradients go back, then are gathered
      l.backward_dispatch = scatter + exchange;  // the dispatched tokens' gradients reduced, then sent
      const EpOverlapExposure e = paired_layer_exposure(l, in.params->ep_overlap_compute_slowdown,
                                                        in.params->ep_overlap_comm_slowdown);
      forward_exposed = e.forward;
      backward_exposed = e.backward;
    }
    // Full recomputation and the moe module re-run the layer's dispatch and combine, exposed even
    // under the overlap: the combined 1F1B replays a recomputed chunk's forward before its first
    // layer backward, "The A2A issued here is exposed (not overlapped) by design"
    // (model_chunk_schedule_plan.py, recompute_model_chunk_schedule_plan).
    const bool rerun = in.recompute == Recompute::full ||
                       recomputes_module(in.recompute, in.recompute_modules, RecomputeModule::moe);
    c.layer_forward.ep_exposed = forward_exposed;
    c.layer_backward.ep_exposed = backward_exposed + (rerun ? pass : Seconds(0.0));
    c.layer_forward.ep_unpaired = pass;
    c.layer_backward.ep_unpaired = pass + (rerun ? pass : Seconds(0.0));
  }
}

}  // namespace stepcast
