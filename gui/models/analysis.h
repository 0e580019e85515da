#pragma once
// What the window shows for one scenario document, computed off the GUI thread.
//
// analyse() runs the scenario loader over the document and, when the scenario is valid, the
// predictor for its workload (the training step with its pipeline timeline). compute_curves() is
// the slower second part: the scaling curve (simulator re-runs at other GPU counts). Both are pure
// functions of their arguments, so a job can run them on any thread; the job tracker drops results
// that an edit made stale. Plain C++.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gui/models/calibration_profiles.h"
#include "gui/models/scaling_curve.h"
#include "gui/models/scenario_document.h"
#include "model/prediction.h"

namespace stepcast::gui {

struct Analysis {
  Evaluation evaluation;                       // the scenario, or the loader's diagnostics
  std::optional<TrainingPrediction> training;  // a valid training scenario's prediction
  std::string failure;                         // a valid scenario the predictor could not price
  std::string profile;                         // calibration profile used
  std::optional<PredictionInterval> interval;  // the profile's interval, if it has one
  double compute_seconds = 0.0;                // wall time of loading and predicting

  [[nodiscard]] bool valid() const { return evaluation.scenario.has_value(); }
  [[nodiscard]] bool predicted() const { return training.has_value(); }
};

Analysis analyse(const ScenarioDocument& document, const CalibrationProfile& profile,
                 const Catalog& catalog = Catalog::builtin());
// The same for a scenario already loaded (a sweep point, the comparison baseline).
Analysis analyse_scenario(const Scenario& scenario, const CalibrationProfile& profile);

struct Curves {
  std::vector<ScalingPoint> scaling;  // training
};

Curves compute_curves(const Scenario& scenario, const CalibrationProfile& profile,
                      const std::function<bool()>& cancelled = {});

}  // namespace stepcast::gui
