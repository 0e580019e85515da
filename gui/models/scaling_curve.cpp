#include "gui/models/scaling_curve.h"

#include "gui/models/scenario_variants.h"
#include "simulator/training_predictor.h"

namespace stepcast::gui {

std::vector<ScalingPoint> scaling_curve(const Scenario& scenario, const CostParameters& parameters,
                                        const std::function<bool()>& cancelled) {
  std::vector<ScalingPoint> points;
  if (!scenario.is_training()) return points;
  constexpr int kOctaves = 4;  // points span dp/16 .. dp*16
  TrainingPredictor predictor(parameters);
  TrainingPredictorOptions options;
  options.describe_placement = false;
  const int dp = scenario.parallel.dp;
  for (int k = -kOctaves; k <= kOctaves; ++k) {
    if (cancelled && cancelled()) break;
    const int candidate = k < 0 ? dp >> -k : dp << k;
    if (candidate < 1 || (k < 0 && (candidate << -k) != dp)) continue;
    const Scenario variant = with_data_parallel(scenario, candidate);
    if (!is_consistent(variant)) continue;
    const TrainingPrediction p = predictor.predict(variant, options);
    points.push_back(ScalingPoint{variant.system.gpus, candidate, p.step_time, p.tokens_per_s, p.mfu, p.fits, k == 0});
  }
  return points;
}

}  // namespace stepcast::gui
