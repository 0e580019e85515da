#pragma once
// A layer's cost inputs with communication priced at zero, for tests that look at one layer's
// kernels (compute and host dispatch) alone: every collective a layer asks for takes 0 s, so
// layer_costs()/layer_kernels() give the GPU's and the host's time and nothing else.

#include <string_view>

#include "model/layer_shape.h"
#include "simulator/catalog.h"
#include "simulator/layer_costs.h"

namespace stepcast::test {

// A collective model whose every collective is free.
struct NoCollectives final : CollectiveModel {
  [[nodiscard]] std::string_view name() const override { return "none"; }
  [[nodiscard]] Seconds time(CollectiveOp, Bytes, const GroupLayout&) const override { return Seconds(0.0); }
};

// The inputs for `shape` on `gpu` under `params`, no collective costing anything. The pointers
// must outlive the returned value (the collective model is a static).
inline LayerCostInputs compute_only_inputs(const LayerShape& shape, const GpuSpec& gpu, const CostParameters& params) {
  static const NoCollectives net;
  LayerCostInputs in;
  in.shape = &shape;
  in.gpu = &gpu;
  in.params = &params;
  in.collectives = &net;
  return in;
}

}  // namespace stepcast::test
