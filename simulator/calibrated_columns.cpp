#include "simulator/calibrated_columns.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "simulator/prediction_interval.h"
#include "simulator/training_predictor.h"

namespace stepcast {

const std::vector<std::string>& calibrated_columns() {
  static const std::vector<std::string> columns{"step_time_interval_90", "calibration_extrapolated"};
  return columns;
}

std::vector<std::string> calibrated_cells(const CalibrationProfile& profile, const Scenario& scenario,
                                          const CostParameters& cost, const CollectiveFactory& collectives) {
  TrainingPredictor predictor(cost);
  const auto net = collectives(scenario.system);
  const TrainingPrediction p = predictor.predict(scenario, *net);
  const PredictionInterval interval = training_interval(profile, scenario, p, cost, 0.9);
  return {interval.relative_half_width ? fmt::format("{:.4g}", *interval.relative_half_width) : std::string(),
          fmt::format("{}", fmt::join(interval.extrapolated, ";"))};
}

}  // namespace stepcast
