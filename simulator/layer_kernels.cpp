#include "simulator/layer_kernels.h"

#include <cassert>

#include "model/layer_ops.h"
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

KernelPass training_kernels(const OpList& ops, const LayerCostInputs& in,
                            std::span<const std::string_view> splits_after = {}) {
  return time_kernels(ops, *in.gpu, *in.params, Seconds(in.params->training_host_dispatch_s()), splits_after);
}

// Appends `op` after the stretches: its GPU time adds to the pass outside the dispatch bound.
void append_unbounded(KernelPass& pass, const Op& op, const LayerCostInputs& in) {
  const int i = pass.ops.size();
  pass.ops.push(op);
  pass.timings[static_cast<std::size_t>(i)] = op_timing(op, *in.gpu, *in.params);
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
    k.recompute = k.forward;
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
  return k;
}

EmbeddingOutputKernels embedding_output_kernels(const LayerCostInputs& in) {
  const LayerShape& s = *in.shape;
  return {training_kernels(embedding_forward_ops(s), in), training_kernels(embedding_backward_ops(s), in),
          training_kernels(output_forward_ops(s), in), training_kernels(output_backward_ops(s), in)};
}

}  // namespace stepcast
