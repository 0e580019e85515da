#pragma once
// The scaling curve: how throughput and MFU change with the number of GPUs when the model-parallel
// layout (tp, pp, cp, vpp, micro-batch, global batch) is kept and only data parallelism grows or
// shrinks (strong scaling: the same global batch split over more replicas).
//
// Points: dp = current dp * 2^k for k = -4..4 (integers >= 1), each a full re-prediction with the
// collective model rebuilt for the new cluster size, skipping variants the loader's checks reject
// (global_batch not divisible by dp * micro_batch, a partial node, ...). Plain C++.

#include <functional>
#include <vector>

#include "model/scenario.h"
#include "model/units.h"
#include "simulator/calibration_profile.h"

namespace stepcast::gui {

struct ScalingPoint {
  int gpus = 0;
  int dp = 0;
  Seconds step_time;
  double tokens_per_s = 0.0;
  double mfu = 0.0;
  bool fits = true;
  bool current = false;  // the scenario's own size
};

// `cancelled` is polled between points; when it returns true the points so far are returned.
std::vector<ScalingPoint> scaling_curve(const Scenario& training_scenario, const ModelVariant& variant,
                                        const std::function<bool()>& cancelled = {});

}  // namespace stepcast::gui
