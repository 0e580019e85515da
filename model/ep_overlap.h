#pragma once
// Megatron-Core's EP all-to-all overlap (--overlap-moe-expert-parallel-comm, the "combined 1F1B"
// schedule): what one MoE layer's dispatch and combine leave exposed when the layer's forward of
// one micro-batch runs paired with its backward of another.
//
// Sources (NVIDIA/Megatron-LM):
//   docs/user-guide/features/moe_a2a_overlap.md @fc81b209041f99fa126dad855ab4e073a0f3546d,
//   "Fine-grained execution", and megatron/core/models/common/model_chunk_schedule_plan.py
//   (TransformerLayerSchedulePlan.run) @d428de40c139dd091d3a91baf041e9128811a4d7. Each layer is
//   split into nodes: attn (attention, pre-MLP norm, router, dispatch preprocessing: compute
//   stream), dispatch (communication stream), mlp (the routed experts: compute), combine
//   (communication). A paired layer issues
//       F.attn | B.combine,  B.mlp | F.dispatch,  F.mlp | B.dispatch,  B.attn | F.combine
//   where each forward node waits for the previous forward node and each backward node for the
//   previous backward node (one CUDA event per micro-batch's plan), and each stream runs in issue
//   order. So the four phases run one after the other, each as long as the longer of its compute
//   node and its communication node: an all-to-all hides only behind the compute node it is paired
//   with, not behind the whole other pass.
//   While a communication kernel runs it holds SMs the compute cannot use (DeepEP: 20 SMs,
//   megatron/core/transformer/transformer_config.py moe_deepep_num_sms = 20
//   @d2c5e8b4f4fa0062d8cd9cbe18a7fca7cf1f99a3; the doc above: "reserves 20 SMs per GPU and
//   observes about a 20% GEMM-efficiency cost", CostParameters::ep_overlap_compute_slowdown).
//   The contention runs both ways: while they share the GPU the exchange slows too, taking (1 + g)
//   its time alone (g = CostParameters::ep_overlap_comm_slowdown, 0.312: the communication kernels
//   of a controlled A/B pair of Nsight profiles total 10.83 s with the overlap and 8.25 s without,
//   tests/fixtures/reference/moe_ep_overlap_ab.yaml). With the compute slowed by a share f while
//   the communication runs, a phase of compute C and communication c takes
//   max(c', C + f min(c', C)), c' = (1 + g) c — the form used for ZeRO-3's overlapped collectives
//   (CostParameters::comm_sm_fraction), with the exchange stretched.
// Only passes that have a partner overlap: the schedule's warm-up forwards and cool-down backwards
// run alone (simulator/pipeline_schedule_orders.h combined_unpaired_passes), their all-to-alls
// exposed as without the overlap.
//
// Controlled A/B rows (Qwen3-30B-A3B, 16 H100, EP 16, only the overlap switched;
// tests/fixtures/reference/moe_ep_overlap_ab.yaml, tests/fidelity/ep_overlap_ab_test.cpp) gained 15%
// (HybridEP) and 24% (all-to-all). Without the stretched exchange this model gained 34% and 36%;
// with it, 26% and 24%. The HybridEP run's rank-0 profile shows 36.55% of the communication hidden
// by compute. What the stretch leaves is not modelled; examined, not priced for want of a sourced
// figure:
//   - the dispatcher's host sync inside F.dispatch (HybridEP without a token bound copies the
//     dispatched-token count to the host after all-gathering the routing map, deepseek-ai/DeepEP
//     deep_ep/hybrid_ep_buffer.py dispatch_with_permute @017a520224046dcf347e13ed56f1aacd8bbba89e,
//     and Megatron-Core's _HybridEPManager passes no bound: "None means no up-bound, will cause a
//     CPU sync"; the all-to-all dispatcher syncs before its all-to-all, model/moe_ops.h). Issued
//     after F.attn and B.combine, it makes the host wait for both streams before it issues B.mlp:
//     the phase boundary assumed above, plus a re-launch. It would serialize more only if the host
//     were slower than the GPU over the pair, and at the model's launch costs (79 launches x 32 us
//     per paired layer against 4.5 ms of GPU time) it is not;
//   - the schedule's own host work per node (events, stream switches: "EP Overlap brings extra cpu
//     overhead and may cause GPU bubble", NVIDIA/Megatron-LM pull request #2184): no published
//     figure. The profile's HybridEP metadata-preprocess range (host time, the sync's wait
//     included) falls from 1.01 to 0.22 ms per forward dispatch with the overlap on (3.109 s and
//     0.670 s over 48 x 64): the host's lead over the GPU nearly vanishes, which fits a host-bound
//     pair but does not measure its cost;
//   - HybridEP's SMs (moe_hybridep_num_sms, fewer than DeepEP's 20) would hide more, not less.

#include "model/units.h"

namespace stepcast {

// One MoE layer's pieces, per micro-batch (seconds).
struct EpOverlapLayer {
  Seconds forward_attention;   // the forward's attn node: everything but the routed experts
  Seconds forward_experts;     // the forward's mlp node
  Seconds backward_attention;  // the backward's attn node (its recomputation included)
  Seconds backward_experts;    // the backward's mlp node: data and weight gradients, recomputation
  Seconds forward_dispatch;    // communication nodes: the dispatch and combine exchanges (and the
  Seconds forward_combine;     // expert-TP gather / scatter next to them)
  Seconds backward_dispatch;   // the backward's exchange of the dispatch's gradients
  Seconds backward_combine;    // the backward's exchange of the combine's gradients
};

// Time a paired layer spends beyond its compute, charged to the pass whose communication it is:
// forward = F.dispatch's and F.combine's phases, backward = B.combine's and B.dispatch's.
struct EpOverlapExposure {
  Seconds forward;
  Seconds backward;
};

// A phase of `compute` next to `comm`, less the compute: max(c', compute + f min(c', compute))
// - compute with c' = (1 + g) comm, f the share of the compute's speed the communication kernels
// take and g the share by which the exchange runs longer beside the compute.
Seconds overlapped_phase_exposure(Seconds comm, Seconds compute, double compute_slowdown, double comm_slowdown);

EpOverlapExposure paired_layer_exposure(const EpOverlapLayer& layer, double compute_slowdown, double comm_slowdown);

}  // namespace stepcast
