#pragma once
// The notes a training prediction prints, for tests that check what a prediction tells its user.

#include <string>

#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"

namespace stepcast::test {

// Every note of the default predictor's prediction of `scenario_yaml` (a whole scenario file's
// text), one per line.
inline std::string training_notes(const std::string& scenario_yaml) {
  const Scenario sc = parse_scenario(scenario_yaml, "s.yaml");
  std::string all;
  for (const std::string& n : TrainingPredictor().predict(sc).notes) all += n + "\n";
  return all;
}

}  // namespace stepcast::test
