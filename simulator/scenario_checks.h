#pragma once
// Cross-field checks of a parsed scenario: the invariants listed in model/scenario.h.
//
// The loader first reads every section on its own (types, units, ranges, enum values); these
// checks then relate the sections to each other: tp*pp*dp*cp == gpus, heads % tp == 0, layers
// over pp*vpp model chunks, global_batch over dp*micro_batch, ep over experts and dp*cp, the
// compute format against the GPU's peaks, and so on. A check runs only when the sections it reads
// were free of errors, so one mistake is not reported again as a consequence elsewhere. Errors go
// to the sink at the key path they concern (its remembered file position, or the --set override).

#include "model/scenario.h"
#include "simulator/yaml_reader.h"

namespace stepcast {

// Which sections could be read at all, and what the file gave explicitly. Individual fields with
// errors are found through the sink: a check runs only when every field it reads is free of the
// errors reported while reading (`reading_errors` of them).
struct ScenarioReadState {
  bool model_read = false;      // the model resolved (catalog name or mapping)
  bool system_read = false;
  bool parallel_read = false;   // parallel section present and a mapping, or absent (all defaults)
  bool workload_read = false;
  bool precision_read = false;
  bool dp_given = false;        // parallel.dp was written (otherwise the loader derives it)
  bool dp_valid = false;        // parallel.dp holds a usable value (given cleanly, or derived)
  std::size_t reading_errors = 0;
};

// Derives parallel.dp when it was not given (gpus / (tp*pp*cp)), reporting when it cannot, and a
// serving scenario's inference.replicas when it was not given (gpus / (tp*pp) model instances).
// Returns whether parallel.dp now holds a usable value (the ScenarioReadState::dp_valid flag).
bool derive_data_parallel(DiagnosticSink& sink, Scenario& scenario, const ScenarioReadState& state);

void check_scenario(DiagnosticSink& sink, const Scenario& scenario, const ScenarioReadState& state);

// The cross-field checks of a scenario changed in memory (every field already valid on its own):
// derives parallel.dp unless `dp_given`, then runs check_scenario(). Returns the first problem
// ("parallel.tp: model heads (96) are not divisible by tp (5)"), or an empty string when the
// scenario is consistent, exactly as the loader would judge the same document.
std::string recheck_scenario(Scenario& scenario, bool dp_given);

}  // namespace stepcast
