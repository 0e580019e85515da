#pragma once
// The expert-parallel and context-parallel traffic of one layer and micro-batch, and how much of
// it stays on the critical path (PassTime::ep_exposed, PassTime::cp_exposed).
//
// Expert parallelism (MoE layers with ep > 1 or expert_tp > 1): forward, a dispatch and a combine
// on the EP group. Megatron-Core's all-to-all token dispatcher (parallel.ep_dispatcher alltoall)
// sends the busiest rank's buffer as two all-to-alls (model/moe_ops.h: b s/t x top_k x load x h x
// 2 bytes each); the flex dispatcher with DeepEP or HybridEP (deepep) sends each token once per
// destination NVLink domain over the network and forwards it over NVLink (moe_deepep_bytes), the
// slower of the two legs setting each exchange's time, each leg at the share of its link rate
// the libraries are measured to reach (moe_deepep_time). With expert_tp > 1 an
// all-gather of the received tokens before the experts and a reduce-scatter after them on the
// expert-TP group; the backward moves the gradients the same way (two all-to-alls, the conjugate
// collectives). Exposure: all of it by default — the dispatcher waits for each collective before
// the expert GEMMs, and the combine before the next layer. With ep_comm_overlap (Megatron-Core
// --overlap-moe-expert-parallel-comm, the combined 1F1B schedule; DeepSeek-V3's DualPipe overlaps
// the same way, report Sec. 3.2.1), the forward of one micro-batch runs paired with the backward
// of another, node by node (model/ep_overlap.h): each exchange hides only behind the compute node
// it is paired with (the attn node: everything but the routed experts; the mlp node: the routed
// experts, experts_node_time), the compute slowed while the exchange runs
// (CostParameters::ep_overlap_compute_slowdown). That is PassTime::ep_exposed; a pass with no
// partner (the warm-up forwards, the cool-down backwards) exposes its exchanges whole,
// PassTime::ep_unpaired, which the predictor charges to its share of the stage's passes
// (pipeline_schedule_orders.h combined_unpaired_passes). Full recomputation, and selective with
// the moe module (the whole MoE layer checkpointed), dispatch again.
//
// Context parallelism: model/context_parallel.h, hidden behind this rank's attention kernels.
// Full recomputation and selective with core_attn (both re-run the attention core) repeat the
// forward exchange.

#include "model/op.h"
#include "simulator/layer_costs.h"

namespace stepcast {

void add_expert_and_context_traffic(const LayerCostInputs& in, const OpList& forward, const OpList& backward,
                                    LayerCosts& costs);

}  // namespace stepcast
