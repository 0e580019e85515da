#pragma once
// Prediction intervals from a calibration profile's residuals, and what a prediction extrapolates.
//
// A training step is a sum of components (model/prediction.h's breakdown). Each is attributed to
// the profile component whose residuals describe it:
//   compute, recompute, pp_bubble, mtp  the layer's kernels by their share of its time (model/layer_ops.h
//                                  priced by model/op_time.h): gemm.<precision>, attention.forward,
//                                  attention.backward, elementwise (memory-bound kernels; the
//                                  profile's "memory" when it has no elementwise residuals),
//                                  reduction (norms, softmax; elementwise when it has none)
//   optimizer                      elementwise (Adam is a memory-bound kernel)
//   tp_comm_exposed                collective.all_reduce, or all_gather + reduce_scatter with
//                                  sequence parallelism
//   dp_comm_exposed                collective.all_reduce, or reduce_scatter + all_gather with a
//                                  distributed optimizer (ZeRO >= 1)
//   pp_comm_exposed, cp            collective.send_recv;  ep: collective.all_to_all
//   offload_exposed, other         nothing: never covered
// The half-width at level q is sum_c share_c x held-out |error| quantile_c(q) (residual_stats.h):
// the errors of components are taken to add up, not to cancel, which is conservative. Components
// the profile has no residuals for are listed as not covered (the interval says nothing about
// them); a component with too few held-out points for level q (a single cuDNN attention shape) is
// left out the same way and listed in too_few_points. Only when no component has enough points is
// there no interval at all.
//
// Extrapolation: each GEMM shape, the attention sequence length and head size, and the TP/DP group
// sizes and message sizes are checked against the coverage of their component.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/cost_parameters.h"
#include "model/prediction.h"
#include "model/scenario.h"
#include "simulator/calibration_profile.h"

namespace stepcast {

struct PredictionInterval {
  double level = 0.9;
  std::optional<double> relative_half_width;              // absent: no component has enough points
  double covered_share = 0.0;                             // of the value, by components in the interval
  std::vector<std::pair<std::string, double>> shares;     // component -> share of the value
  std::vector<std::string> not_covered;                   // components without residuals in the profile
  std::vector<std::string> too_few_points;                // in the profile, too few points for `level`: left out
  std::vector<std::string> extrapolated;                  // "gemm.bf16: k = 53248 above the measured 512..16384"

  // "13.7 s ± 4.1% at 90% (covers 93% of the step; not covered: other; extrapolated: ...)"
  [[nodiscard]] std::string describe(double value, const std::string& unit) const;
};

// The step-time interval of a training prediction made with `params` (the profile's constants).
PredictionInterval training_interval(const CalibrationProfile& profile, const Scenario& scenario,
                                     const TrainingPrediction& prediction, const CostParameters& params,
                                     double level = 0.9);

// Intervals of an inference prediction's prefill step (time to first token) and decode step (time
// per output token), from their breakdowns (model/prediction.h StepBreakdown): linear and output
// -> gemm.<compute precision>; attention -> attention.forward (prefill) or attention.decode
// (decode); tp_comm -> collective.all_reduce; pp_comm -> collective.send_recv; overhead -> not
// covered. Queueing in a serving run adds time no kernel residual describes: the intervals are
// of the step costs. Extrapolation: each step's weight GEMMs (m = the step's tokens: the static
// batch's prompts for prefill, the batch for decode; serving: one mean prompt, max_batch) and its
// attention's context length and head size against the profile's coverage.
struct InferenceIntervals {
  PredictionInterval prefill;
  PredictionInterval decode;
};
InferenceIntervals inference_intervals(const CalibrationProfile& profile, const Scenario& scenario,
                                       const InferencePrediction& prediction, double level = 0.9);

}  // namespace stepcast
