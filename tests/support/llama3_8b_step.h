#pragma once
// The predicted step time, in seconds, of the small Llama 3 8B training document of
// tests/support/scenario_errors.h with `parallel` (a YAML flow mapping) as its parallel block: for
// tests that compare two parallel settings' step times.

#include <string>

#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/scenario_errors.h"

namespace stepcast::test {

inline double llama3_8b_step_time(const std::string& parallel) {
  TrainingPredictor predictor;
  return predictor.predict(parse_scenario(llama3_8b_training_document(parallel), "t.yaml")).step_time.value();
}

}  // namespace stepcast::test
