#include "gui/models/analysis.h"

#include <chrono>
#include <exception>

#include "gui/models/model_runner.h"

namespace stepcast::gui {
namespace {

void predict_into(Analysis& a, const Scenario& scenario, const CalibrationChoice& choice) {
  a.profile = choice.name();
  a.interval = choice.step_time;
  a.component_intervals = component_intervals(choice);
  try {
    if (choice.variant.profile) {
      // A profile measured elsewhere is still used (the user picked it), with the mismatch shown.
      a.warnings = check_profile_applies(*choice.variant.profile, scenario.system, true);
    }
    ModelRunner runner(choice.variant);
    if (scenario.is_training()) {
      TrainingPredictorOptions options;
      options.timeline = true;
      a.training = runner.training(scenario, options);
    } else {
      a.inference = runner.inference(scenario, true);
    }
  } catch (const std::exception& e) {
    a.failure = e.what();
  }
}

}  // namespace

Analysis analyse(const ScenarioDocument& document, const CalibrationChoice& choice, const Catalog& catalog) {
  const auto start = std::chrono::steady_clock::now();
  Analysis a;
  a.evaluation = document.evaluate(catalog);
  if (a.evaluation.scenario) predict_into(a, *a.evaluation.scenario, choice);
  a.compute_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return a;
}

Analysis analyse_scenario(const Scenario& scenario, const CalibrationChoice& choice) {
  const auto start = std::chrono::steady_clock::now();
  Analysis a;
  a.evaluation.scenario = scenario;
  predict_into(a, scenario, choice);
  a.compute_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return a;
}

Curves compute_curves(const Scenario& scenario, const CalibrationChoice& choice,
                      const std::function<bool()>& cancelled) {
  Curves c;
  try {
    if (scenario.is_training()) {
      c.scaling = scaling_curve(scenario, choice.variant, cancelled);
    } else {
      c.latency = latency_curve(scenario, choice.variant, cancelled);
    }
  } catch (const std::exception&) {
    // A variant the predictor cannot price leaves the curve empty; the main prediction says why.
    c = Curves{};
  }
  return c;
}

}  // namespace stepcast::gui
