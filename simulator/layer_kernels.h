#pragma once
// The kernels of one layer pass (forward, backward or recomputation of one layer, or of the
// embedding and output layer, on one tensor-parallel rank and one micro-batch), each priced by
// model/op_time.h, and the pass time the step prediction charges as `compute` / `recompute`
// (simulator/layer_costs.h takes its PassTime::compute from here; `stepcast explain --ops` prints
// the same lists). Times in seconds.
//
// A pass's time is the sum of its stretches' times plus its unbounded ops' times. A stretch is a
// run of ops the host dispatches from a standing start: its time is max(GPU time, launches x the
// host's time per launch, CostParameters::training_host_dispatch_s), the GPU idling for the host
// when the host is slower (model/op_time.h ops_time); replayed from a full-iteration CUDA graph
// (parallel.cuda_graphs, LayerCostInputs::graph_replay) the host launches nothing and a stretch
// takes its GPU time. A layer pass is one stretch, except a MoE
// forward that synchronizes with the host before its all-to-all (model/moe_ops.h
// moe_forward_host_sync): two, split after moe_host_sync_after; a clamped activation's offset tensor
// (model/moe_ops.h moe_activation_host_sync) synchronizes once more, after
// kMoeActivationHostSyncAfter: one more stretch. Unbounded ops follow the stretches
// and add their GPU time alone: only the ZeRO-3 weight cast of FP8 compute over 16-bit parameters
// (model/layer_ops.h weight_quantize_op), which the prediction adds to each pass's compute.

#include <array>
#include <span>
#include <string_view>

#include "model/op.h"
#include "model/op_time.h"
#include "simulator/layer_costs.h"

namespace stepcast {

struct KernelStretch {
  int begin = 0;  // ops [begin, end)
  int end = 0;
  Seconds gpu;    // sum of the ops' times
  Seconds host;   // launches x host time per launch
  [[nodiscard]] Seconds time() const { return max(gpu, host); }
  [[nodiscard]] bool host_bound() const { return host > gpu; }
};

struct KernelPass {
  OpList ops;
  std::array<OpTiming, OpList::kCapacity> timings{};  // timings[i] of ops[i]
  static constexpr int kMaxStretches = 3;
  std::array<KernelStretch, kMaxStretches> stretches{};
  int stretch_count = 0;
  Seconds host_per_launch;

  [[nodiscard]] bool empty() const { return ops.size() == 0; }
  [[nodiscard]] Seconds op_time(int i) const { return timings[static_cast<std::size_t>(i)].total; }
  // The stretches' time: what the host dispatch bounds.
  [[nodiscard]] Seconds bounded_time() const;
  // The pass time the prediction uses: bounded_time() plus the unbounded ops' times.
  [[nodiscard]] Seconds time() const;
  // Sum of every op's GPU time; time() - gpu_time() is the GPU's wait for the host.
  [[nodiscard]] Seconds gpu_time() const;
  [[nodiscard]] double launches() const;
  // The index of the first op named `name`, or -1 when absent.
  [[nodiscard]] int index_named(std::string_view name) const;
  // The time of the first op named `name` (zero when absent).
  [[nodiscard]] Seconds time_named(std::string_view name) const;
  // Sum of the weight-gradient GEMMs' times (ops named "<gemm>.wgrad").
  [[nodiscard]] Seconds weight_gradient_time() const;
};

// Prices `ops` as one stretch, or as two split after the op named `split_after` when it is not
// empty (the op must be in the list).
KernelPass time_kernels(const OpList& ops, const GpuSpec& gpu, const CostParameters& params, Seconds host_per_launch,
                        std::string_view split_after = {});
// The same with up to kMaxStretches - 1 split points, each after the first op of that name that
// follows the previous split (each must be in the list, in list order).
KernelPass time_kernels(const OpList& ops, const GpuSpec& gpu, const CostParameters& params, Seconds host_per_launch,
                        std::span<const std::string_view> splits_after);

// One transformer layer of the kind `in.shape` describes. `recompute` is empty without
// recomputation; with full recomputation it re-runs the forward's ops (without the ZeRO-3 cast);
// with selective, model/layer_ops.h selective_recompute_forward_ops.
struct LayerKernels {
  KernelPass forward;
  KernelPass backward;
  KernelPass recompute;
};
LayerKernels layer_kernels(const LayerCostInputs& in);

// The embedding (first pipeline stage) and the output layer with the loss (last stage), and one
// multi-token-prediction module's own kernels (last stage; model/layer_ops.h mtp_forward_ops).
struct EmbeddingOutputKernels {
  KernelPass embedding_forward;
  KernelPass embedding_backward;
  KernelPass output_forward;
  KernelPass output_backward;
  KernelPass mtp_forward;
  KernelPass mtp_backward;
};
EmbeddingOutputKernels embedding_output_kernels(const LayerCostInputs& in);

}  // namespace stepcast
