#include "gui/models/scaling_curve.h"

#include "gui/models/scenario_variants.h"
#include "gui/models/model_runner.h"

namespace stepcast::gui {

std::vector<ScalingPoint> scaling_curve(const Scenario& scenario, const ModelVariant& variant,
                                        const std::function<bool()>& cancelled) {
  std::vector<ScalingPoint> points;
  if (!scenario.is_training()) return points;
  constexpr int kOctaves = 4;  // points span dp/16 .. dp*16
  ModelRunner runner(variant);
  TrainingPredictorOptions options;
  options.describe_placement = false;
  const int dp = scenario.parallel.dp;
  for (int k = -kOctaves; k <= kOctaves; ++k) {
    if (cancelled && cancelled()) break;
    const int candidate = k < 0 ? dp >> -k : dp << k;
    if (candidate < 1 || (k < 0 && (candidate << -k) != dp)) continue;
    const Scenario resized = with_data_parallel(scenario, candidate);
    if (!is_consistent(resized)) continue;
    const TrainingPrediction p = runner.training(resized, options);
    points.push_back(ScalingPoint{resized.system.gpus, candidate, p.step_time, p.tokens_per_s, p.mfu, p.fits, k == 0});
  }
  return points;
}

}  // namespace stepcast::gui
