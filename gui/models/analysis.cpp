#include "gui/models/analysis.h"

#include <chrono>
#include <exception>

#include "simulator/training_predictor.h"

namespace stepcast::gui {
namespace {

void predict_into(Analysis& a, const Scenario& scenario, const CalibrationProfile& profile) {
  a.profile = profile.name;
  a.interval = profile.step_time;
  try {
    if (scenario.is_training()) {
      TrainingPredictor predictor(profile.parameters);
      TrainingPredictorOptions options;
      options.timeline = true;
      a.training = predictor.predict(scenario, options);
    } else {
      a.failure = "inference scenarios need the serving predictor, which this build does not have";
    }
  } catch (const std::exception& e) {
    a.failure = e.what();
  }
}

}  // namespace

Analysis analyse(const ScenarioDocument& document, const CalibrationProfile& profile, const Catalog& catalog) {
  const auto start = std::chrono::steady_clock::now();
  Analysis a;
  a.evaluation = document.evaluate(catalog);
  if (a.evaluation.scenario) predict_into(a, *a.evaluation.scenario, profile);
  a.compute_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return a;
}

Analysis analyse_scenario(const Scenario& scenario, const CalibrationProfile& profile) {
  const auto start = std::chrono::steady_clock::now();
  Analysis a;
  a.evaluation.scenario = scenario;
  predict_into(a, scenario, profile);
  a.compute_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return a;
}

Curves compute_curves(const Scenario& scenario, const CalibrationProfile& profile,
                      const std::function<bool()>& cancelled) {
  Curves c;
  try {
    if (scenario.is_training()) c.scaling = scaling_curve(scenario, profile.parameters, cancelled);
  } catch (const std::exception&) {
    // A variant the predictor cannot price leaves the curve empty; the main prediction reports why.
    c.scaling.clear();
  }
  return c;
}

}  // namespace stepcast::gui
