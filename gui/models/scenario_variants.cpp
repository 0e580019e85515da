#include "gui/models/scenario_variants.h"

#include "simulator/scenario_checks.h"

namespace stepcast::gui {

bool is_consistent(const Scenario& scenario, std::string* reason) {
  DiagnosticSink sink("<variant>");
  ScenarioReadState state;
  state.model_read = state.system_read = state.parallel_read = true;
  state.workload_read = state.precision_read = true;
  state.dp_given = state.dp_valid = true;
  check_scenario(sink, scenario, state);
  if (sink.error_count() == 0) return true;
  if (reason != nullptr) {
    const auto diagnostics = sink.take();
    *reason = diagnostics.front().key_path + ": " + diagnostics.front().message;
  }
  return false;
}

Scenario with_data_parallel(const Scenario& scenario, int dp) {
  Scenario out = scenario;
  out.parallel.dp = dp;
  out.system.gpus = scenario.parallel.tp * scenario.parallel.pp * scenario.parallel.cp * dp;
  return out;
}

}  // namespace stepcast::gui
