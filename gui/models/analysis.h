#pragma once
// What the window shows for one scenario document, computed off the GUI thread.
//
// analyse() runs the scenario loader over the document and, when the scenario is valid, the
// predictor for its workload with the chosen model variant: the training step with its pipeline
// timeline, or the inference prediction (static batch, or the serving simulation with its time
// series). compute_curves() is the slower second part: the scaling curve (training: re-predictions
// at other GPU counts) or the latency-throughput curve (inference: re-predictions at other loads).
// Both are pure functions of their arguments, so a job can run them on any thread; the job
// tracker drops results that an edit made stale. Plain C++.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gui/models/calibration_profiles.h"
#include "gui/models/latency_curve.h"
#include "gui/models/scaling_curve.h"
#include "gui/models/scenario_document.h"
#include "model/prediction.h"

namespace stepcast::gui {

struct Analysis {
  Evaluation evaluation;                         // the scenario, or the loader's diagnostics
  std::optional<TrainingPrediction> training;    // a valid training scenario's prediction
  std::optional<InferencePrediction> inference;  // a valid inference scenario's prediction
  std::string failure;                           // a valid scenario the predictor could not price
  std::string profile;                           // model variant used
  std::optional<PredictionInterval> interval;    // the variant's step-time interval, if it has one
  std::vector<std::string> component_intervals;  // the variant's fitted components' intervals
  std::vector<std::string> warnings;             // e.g. a profile measured on another GPU
  double compute_seconds = 0.0;                  // wall time of loading and predicting

  [[nodiscard]] bool valid() const { return evaluation.scenario.has_value(); }
  [[nodiscard]] bool predicted() const { return training.has_value() || inference.has_value(); }
};

Analysis analyse(const ScenarioDocument& document, const CalibrationChoice& choice,
                 const Catalog& catalog = Catalog::builtin());
// The same for a scenario already loaded (a sweep point, the comparison baseline).
Analysis analyse_scenario(const Scenario& scenario, const CalibrationChoice& choice);

struct Curves {
  std::vector<ScalingPoint> scaling;  // training
  LatencyCurve latency;               // inference
};

Curves compute_curves(const Scenario& scenario, const CalibrationChoice& choice,
                      const std::function<bool()>& cancelled = {});

}  // namespace stepcast::gui
