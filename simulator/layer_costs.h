#pragma once
// Time of one transformer layer (and of the embedding and output layers) on one tensor-parallel
// rank for one micro-batch, split into the components a prediction reports. Computed once per
// prediction and reused for every layer and micro-batch. The compute and recompute terms are the
// pass times of simulator/layer_kernels.h, which lists the kernels behind them.
//
// Tensor-parallel traffic per layer (Shoeybi et al. 2019; Korthikanti et al. 2022, Sec. 4.2.2),
// each collective moving b s h activation bytes on the TP group:
//   without sequence parallelism  forward: all-reduce after the output projection and after FC2;
//                                 backward: all-reduce of the QKV and FC1 input gradients.
//   with sequence parallelism     forward: all-gather before QKV and FC1, reduce-scatter after
//                                 the projection and FC2; backward the conjugates, plus the
//                                 re-gather of the QKV/FC1 inputs for their weight gradients,
//                                 which Megatron overlaps with the data-gradient GEMMs.
// Exposure: without --tp-comm-overlap every collective is on the critical path (except the
// overlapped re-gather, exposed only beyond its GEMM). With it (userbuffers), each collective is
// pipelined with its GEMM in tp chunks; what stays exposed is max(comm - gemm, one chunk).
// Full recomputation re-runs the forward, collectives included; selective re-runs its modules'
// kernels (model/layer_ops.h selective_recompute_forward_ops): the attention core has no TP
// collective (but with context parallelism re-runs its K/V exchange); mlp re-runs the dense MLP's
// forward collectives, shared_experts and moe the shared experts' (moe also re-runs the expert
// all-to-alls, simulator/parallel_traffic.h).
// A MoE layer's TP collectives cover the attention block and its shared experts only; its expert
// all-to-alls (ep_exposed) and the context-parallel K/V exchange (cp_exposed) are priced in
// simulator/parallel_traffic.h.

#include "model/collective.h"
#include "model/cost_parameters.h"
#include "model/hardware.h"
#include "model/layer_shape.h"
#include "model/parallel.h"
#include "model/units.h"

namespace stepcast {

// One pass (forward or backward) of one layer or layer-like block.
struct PassTime {
  Seconds compute;      // kernels of the model FLOPs (and their memory-bound companions)
  Seconds recompute;    // re-running forward kernels before the backward
  Seconds tp_exposed;   // tensor-parallel collectives on the critical path
  Seconds dp_exposed;   // ZeRO-3 parameter gathers not hidden behind compute
  Seconds ep_exposed;   // MoE dispatch/combine all-to-alls (and expert-TP collectives) on the critical path
  Seconds cp_exposed;   // context-parallel K/V exchange not hidden behind attention
  // ep_exposed of a pass that runs alone: with ep_comm_overlap, the combined 1F1B schedule's
  // warm-up forwards and cool-down backwards (simulator/parallel_traffic.h); equal to ep_exposed
  // otherwise. Not added by total(): the predictor charges it to the passes that have no partner.
  Seconds ep_unpaired;
  // The part of `compute` spent on weight gradients (the ".wgrad" GEMMs; all of the embedding's
  // backward): what the zero-bubble schedules run as a separate W pass. Not added by total().
  Seconds weight_gradient;
  [[nodiscard]] Seconds total() const { return compute + recompute + tp_exposed + dp_exposed + ep_exposed + cp_exposed; }
};

struct LayerCosts {
  PassTime layer_forward;
  PassTime layer_backward;   // recomputation included here (it runs right before the backward)
  PassTime embedding_forward;
  PassTime embedding_backward;
  PassTime output_forward;    // final norm, logits, cross-entropy
  PassTime output_backward;
  // One multi-token-prediction module's own ops (embedding lookup, two norms, concatenation, eh_proj;
  // simulator/layer_kernels.h), zero without one; its block and head are priced as a layer and as
  // output_forward / output_backward by the predictor.
  PassTime mtp_forward;
  PassTime mtp_backward;
  Seconds pipeline_receive;   // per received activation with TP > 1: the all-gather that
                              // reassembles a scatter/gather p2p (Narayanan et al. 2021, Sec. 4.1)
  // ZeRO-3 / FSDP, once per micro-batch: the first layer's gather before a forward and the last
  // layer's reduce-scatter after a backward, which no compute hides.
  Seconds zero3_first_gather;
  Seconds zero3_last_reduce;
  // FP8 delayed scaling: the amaxes one layer adds to its chunk's reduction, forward and backward
  // (the amax comment below); the predictor sums them over a chunk's layers and prices one
  // all-reduce per pass (fp8_amax_reduction). Zero for any other format or recipe.
  Bytes amax_forward_bytes;
  Bytes amax_backward_bytes;
};

// Transformer Engine's amax reductions, the per-tensor scaling recipes' collectives.
//   Delayed scaling (DelayedScaling, reduce_amax true): every FP8 module inside one fp8_autocast
//   region records its amaxes in a global buffer; leaving the region, TE concatenates them and
//   all-reduces them (MAX) over the autocast's fp8_group, synchronously on the compute stream
//   (transformer_engine/pytorch/fp8.py, FP8GlobalStateManager.reduce_and_update_fp8_tensors ->
//   reduce_tensor_across_group_op_max, all_reduce(..., async_op=False)); the backward's amaxes are
//   reduced the same way once the region's backward is done. Megatron-Core opens one region per
//   model chunk for delayed scaling (TransformerBlock.forward: the outer fp8 context, other recipes
//   one per layer) with fp8_group = the amax reduction group, tp x cp x dp
//   (placement.h amax_group_members; tp x cp alone under --tp-only-amax-red, precision.fp8_amax_group:
//   tp). So one all-reduce per chunk, micro-batch and pass, across a pipeline stage's ranks (the
//   predictor picks the group): latency-bound (a few KB), and it grows with the nodes the group spans.
//   Bytes: one FP32 amax per FP8 tensor, three per GEMM forward (input, weight, output: TE's
//   FP8FwdTensors) and two backward (output gradient, input gradient: FP8BwdTensors), per expert
//   for a grouped expert GEMM.
//   Current scaling and NVFP4 with sequence parallelism: a column-parallel linear's input is
//   quantized before its all-gather, and a row-parallel linear's output gradient before its own, so
//   every TP rank must share one scale: the quantizer all-reduces the local amax over the TP group
//   before casting (transformer_engine/pytorch/module/linear.py, layernorm_linear.py,
//   layernorm_mlp.py: with_amax_reduction = True, amax_reduction_group = tp_group when
//   sequence_parallel). One 4-byte all-reduce per such tensor, in the stream before the overlapped
//   all-gather can start: two per block forward (QKV and FC1 inputs), two backward (the projection's
//   and FC2's output gradients), priced in tp_exposed. MXFP8's block scales need no reduction.

struct LayerCostInputs {
  const LayerShape* shape = nullptr;
  const GpuSpec* gpu = nullptr;
  const CostParameters* params = nullptr;
  const CollectiveModel* collectives = nullptr;
  const SystemSpec* system = nullptr;  // the flex dispatcher's links (model/moe_ops.h moe_deepep_time)
  GroupLayout tp_group;
  GroupLayout dp_group;
  Recompute recompute = Recompute::none;
  RecomputeModules recompute_modules;  // with selective recompute (model/parallel.h)
  bool tp_comm_overlap = false;
  int zero = 0;
  double layer_parameters_per_rank = 0.0;  // for ZeRO-3 gathers
  double parameter_bytes = 2.0;            // bytes per weight element
  // Expert and context parallelism (used when the shape has ep/expert_tp/cp > 1).
  GroupLayout ep_group;
  GroupLayout etp_group;
  GroupLayout cp_group;
  GroupLayout cp_ring_hop;         // the CP ring's slowest neighbouring pair
  bool ep_comm_overlap = false;    // hide the all-to-alls behind another micro-batch's compute
  // The step replayed as one captured CUDA graph (parallel.cuda_graphs: full_iteration): the host
  // launches no kernel of a layer pass, so no pass waits for its launches (layer_kernels.h).
  bool graph_replay = false;
  double gather_bytes_per_parameter = 2.0; // what a ZeRO-3 gather moves (FP8 with FP8 parameters)
  double gradient_bytes = 4.0;             // bytes per gradient element reduced
  DataType parameter_format = DataType::bf16;
  // ZeRO-3's implementation (model/parallel.h): FSDP2 copies around each gather and reduce-scatter
  // of the layers and of the root module, whose parameters per rank are these (embedding and final
  // norm; output layer), set by the predictor for the stages that hold them.
  FsdpImplementation fsdp = FsdpImplementation::megatron;
  CheckpointImplementation checkpoint = CheckpointImplementation::megatron;  // recompute: full's replay
  double root_embedding_parameters = 0.0;
  double root_output_parameters = 0.0;
  int mtp_depth = 0;  // > 0: price one MTP module's own ops (mtp_forward / mtp_backward)
};

LayerCosts layer_costs(const LayerCostInputs& in);

// True when layer_costs(a) and layer_costs(b) are certain to be equal, for memoization: compares
// exactly what layer_costs() reads (the shapes by value, the GPU, constants and collective model by
// address; zero and the data-parallel group only as far as ZeRO-3 uses them). Keep it in step with
// layer_costs().
// A stage that fully recomputes `fraction` of its layers and keeps the others' activations: the
// per-layer passes averaged over its layers (exact for the stage's sums, which is all the
// schedule uses of a stage's layers).
LayerCosts blend_recompute(const LayerCosts& kept, const LayerCosts& recomputed, double fraction);

bool same_layer_cost_inputs(const LayerCostInputs& a, const LayerCostInputs& b);

}  // namespace stepcast
