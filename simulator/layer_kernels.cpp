#include "simulator/layer_kernels.h"

#include <algorithm>
#include <cassert>

#include "model/layer_ops.h"
#include "model/op_builders.h"
#include "model/op_checkpoint.h"
#include "model/moe_ops.h"

namespace stepcast {

Seconds KernelPass::bounded_time() const {
  Seconds t(0.0);
  for (int i = 0; i < stretch_count; ++i) t += stretches[static_cast<std::size_t>(i)].time();
  return t;
}

Seconds KernelPass::time() const {
  Seconds t = bounded_time();
  const int bounded_end = stretch_count > 0 ? stretches[static_cast<std::size_t>(stretch_count - 1)].end : 0;
  for (int i = bounded_end; i < ops.size(); ++i) t += op_time(i);
  return t;
}

Seconds KernelPass::gpu_time() const {
  Seconds t(0.0);
  for (int i = 0; i < ops.size(); ++i) t += op_time(i);
  return t;
}

double KernelPass::launches() const {
  double n = 0.0;
  for (const Op& op : ops) n += op.launches;
  return n;
}

int KernelPass::index_named(std::string_view name) const {
  for (int i = 0; i < ops.size(); ++i) {
    if (ops[i].name == name) return i;
  }
  return -1;
}

Seconds KernelPass::time_named(std::string_view name) const {
  const int i = index_named(name);
  return i < 0 ? Seconds(0.0) : op_time(i);
}

Seconds KernelPass::weight_gradient_time() const {
  constexpr std::string_view kSuffix = ".wgrad";
  Seconds t(0.0);
  for (int i = 0; i < ops.size(); ++i) {
    const std::string_view name = ops[i].name;
    if (name.size() >= kSuffix.size() && name.substr(name.size() - kSuffix.size()) == kSuffix) t += op_time(i);
  }
  return t;
}

KernelPass time_kernels(const OpList& ops, const GpuSpec& gpu, const CostParameters& params, Seconds host_per_launch,
                        std::span<const std::string_view> splits_after) {
  assert(static_cast<int>(splits_after.size()) < KernelPass::kMaxStretches);
  KernelPass pass;
  pass.ops = ops;
  pass.host_per_launch = host_per_launch;
  for (int i = 0; i < ops.size(); ++i) pass.timings[static_cast<std::size_t>(i)] = op_timing(ops[i], gpu, params);
  // Summed op by op in list order, as model/op_time.h ops_time sums them.
  const auto stretch = [&](int begin, int end) {
    KernelStretch s{begin, end, Seconds(0.0), Seconds(0.0)};
    double launches = 0.0;
    for (int i = begin; i < end; ++i) {
      s.gpu += pass.op_time(i);
      launches += ops[i].launches;
    }
    s.host = host_per_launch * launches;
    return s;
  };
  int begin = 0;
  for (const std::string_view name : splits_after) {
    int split = begin;
    while (split < ops.size() && ops[split].name != name) ++split;
    assert(split < ops.size());
    ++split;
    pass.stretches[static_cast<std::size_t>(pass.stretch_count++)] = stretch(begin, split);
    begin = split;
  }
  if (begin < ops.size() || pass.stretch_count == 0) {
    pass.stretches[static_cast<std::size_t>(pass.stretch_count++)] = stretch(begin, ops.size());
  }
  return pass;
}

KernelPass time_kernels(const OpList& ops, const GpuSpec& gpu, const CostParameters& params, Seconds host_per_launch,
                        std::string_view split_after) {
  if (split_after.empty()) return time_kernels(ops, gpu, params, host_per_launch, std::span<const std::string_view>{});
  return time_kernels(ops, gpu, params, host_per_launch, std::span<const std::string_view>(&split_after, 1));
}

namespace {

// The host's time per launch of a training pass: Transformer Engine's dispatch, or none when the
// step is replayed from a full-iteration CUDA graph. A replay submits the captured kernels with one
// launch: the per-kernel launch overheads "can be paid once for the entire graph during
// instantiation, and the graph itself can then be launched repeatedly with very little overhead"
// (CUDA Programming Guide, Sec. 4.2 "CUDA Graphs"); FullCudaGraphWrapper.__call__ replays forward_backward_func
// with cuda_graph.replay(), megatron/core/full_cuda_graph.py, NVIDIA/Megatron-LM @00caa53a). What
// the host still does per step, copying each micro-batch's inputs into the graph's static buffers
// (StaticBufferLoader) and the one replay launch, is microseconds a step and not priced. The GPU's
// own gap between kernels (CostParameters::kernel_gap_s) stays: no sourced figure for the spacing
// of graph-replayed kernels.
Seconds training_host_per_launch(const LayerCostInputs& in) {
  return in.graph_replay ? Seconds(0.0) : Seconds(in.params->training_host_dispatch_s());
}

KernelPass training_kernels(const OpList& ops, const LayerCostInputs& in,
                            std::span<const std::string_view> splits_after = {}) {
  return time_kernels(ops, *in.gpu, *in.params, training_host_per_launch(in), splits_after);
}

// Appends `op` after the stretches: its GPU time adds to the pass outside the dispatch bound.
void append_unbounded(KernelPass& pass, const Op& op, const LayerCostInputs& in) {
  const int i = pass.ops.size();
  pass.ops.push(op);
  pass.timings[static_cast<std::size_t>(i)] = op_timing(op, *in.gpu, *in.params);
}

// PyTorch FSDP2's copies (parallel.fsdp: fsdp2; torch/distributed/fsdp/_fully_shard/
// _fsdp_collectives.py @010ae4a8), memory-bound kernels on the compute path, for `parameters`
// unsharded elements over a data-parallel group of N ranks:
//   around an all-gather: the rank's 1/N shard cast from its stored format (parameter_bytes) to
//     param_dtype (the gathered format) into a flat buffer (_get_param_all_gather_inputs' foreach
//     copy), that buffer copied into the all-gather input (all_gather_copy_in), and every unsharded
//     parameter copied out of the output (split_with_sizes_copy): (p + g)/N + 2g/N + 2g bytes;
//   around a reduce-scatter: the unsharded gradients, in param_dtype as autograd computed them,
//     chunk-cat into the reduce-dtype input (g + r bytes); on one rank foreach_reduce copies that
//     input to the output instead of a collective (2r more).
bool fsdp2(const LayerCostInputs& in) { return in.zero >= 3 && in.fsdp == FsdpImplementation::fsdp2; }

Op fsdp2_gather_copies(double parameters, const LayerCostInputs& in) {
  const double ranks = std::max(1, in.dp_group.size);
  const double p = in.parameter_bytes;
  const double g = in.gather_bytes_per_parameter;
  Op op = ops::data_movement_op("fsdp2.all_gather_copies", parameters * ((p + g) / ranks + 2.0 * g / ranks + 2.0 * g));
  op.launches = 3.0;
  return op;
}

Op fsdp2_reduce_copies(double parameters, const LayerCostInputs& in) {
  const double g = in.gather_bytes_per_parameter;
  const double r = in.gradient_bytes;
  const bool one_rank = in.dp_group.size <= 1;
  Op op = ops::data_movement_op("fsdp2.reduce_scatter_copies", parameters * ((g + r) + (one_rank ? 2.0 * r : 0.0)));
  op.launches = one_rank ? 2.0 : 1.0;
  return op;
}

}  // namespace

LayerKernels layer_kernels(const LayerCostInputs& in) {
  const LayerShape& s = *in.shape;
  const OpList forward = layer_forward_ops(s);
  // The forward's host synchronizations, in op order: the token counts before the dispatch, then
  // a clamped activation's offset tensor (model/moe_ops.h).
  std::array<std::string_view, KernelPass::kMaxStretches - 1> splits{};
  std::size_t n = 0;
  if (moe_forward_host_sync(s)) splits[n++] = moe_host_sync_after(s);
  if (moe_activation_host_sync(s)) splits[n++] = kMoeActivationHostSyncAfter;
  LayerKernels k;
  k.forward = training_kernels(forward, in, std::span<const std::string_view>(splits.data(), n));
  k.backward = training_kernels(layer_backward_ops(s), in);
  if (in.recompute == Recompute::full) {
    k.recompute = in.checkpoint == CheckpointImplementation::pytorch
                      ? training_kernels(early_stop_recompute_forward_ops(s), in)
                      : k.forward;
  } else if (in.recompute == Recompute::selective) {
    k.recompute = training_kernels(selective_recompute_forward_ops(s, in.recompute_modules), in);
  } else if (in.recompute == Recompute::selective_op) {
    k.recompute = training_kernels(selective_op_recompute_forward_ops(s), in);
  }
  // ZeRO-3 / FSDP with FP8 compute over 16-bit parameters: the gathered weights are cast (and
  // transposed for the backward's TN GEMMs) in every pass, as there is no persistent FP8 copy to
  // cache them in (simulator/layer_costs.h).
  if (in.zero >= 3 && in.dp_group.size > 1 && is_quantized_training_format(s.compute) &&
      !is_quantized_training_format(in.parameter_format)) {
    const Op cast = weight_quantize_op(s, in.layer_parameters_per_rank);
    append_unbounded(k.forward, cast, in);
    append_unbounded(k.backward, cast, in);
  }
  // FSDP2 gathers a layer before its forward and again before its backward (torchtitan's
  // reshard_after_forward for every block; a recomputed forward runs inside the backward's
  // gather), and reduce-scatters its gradients after the backward.
  if (fsdp2(in)) {
    append_unbounded(k.forward, fsdp2_gather_copies(in.layer_parameters_per_rank, in), in);
    append_unbounded(k.backward, fsdp2_gather_copies(in.layer_parameters_per_rank, in), in);
    append_unbounded(k.backward, fsdp2_reduce_copies(in.layer_parameters_per_rank, in), in);
  }
  return k;
}

EmbeddingOutputKernels embedding_output_kernels(const LayerCostInputs& in) {
  const LayerShape& s = *in.shape;
  EmbeddingOutputKernels k{training_kernels(embedding_forward_ops(s), in), training_kernels(embedding_backward_ops(s), in),
                           training_kernels(output_forward_ops(s), in), training_kernels(output_backward_ops(s), in),
                           {}, {}};
  if (in.mtp_depth > 0) {
    k.mtp_forward = training_kernels(mtp_forward_ops(s), in);
    k.mtp_backward = training_kernels(mtp_backward_ops(s), in);
  }
  // FSDP2's root module stays gathered from its forward to the end of the backward (training_
  // predictor.cpp, zero3_root): one gather's copies with the first op that reads it, one
  // reduce-scatter's with the last backward.
  if (fsdp2(in)) {
    if (in.root_embedding_parameters > 0.0) {
      append_unbounded(k.embedding_forward, fsdp2_gather_copies(in.root_embedding_parameters, in), in);
      append_unbounded(k.embedding_backward, fsdp2_reduce_copies(in.root_embedding_parameters, in), in);
    }
    if (in.root_output_parameters > 0.0) {
      append_unbounded(k.output_forward, fsdp2_gather_copies(in.root_output_parameters, in), in);
      append_unbounded(k.output_backward, fsdp2_reduce_copies(in.root_output_parameters, in), in);
    }
  }
  return k;
}

}  // namespace stepcast
