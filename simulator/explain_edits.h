#pragma once
// The changes `stepcast explain` tries on a training scenario (simulator/explain.h runs and ranks
// them): each a title, what it acts on, and the --set overrides a user would type to make it.
// Candidates cover the batch split, the parallel layout and pipeline schedule, recomputation and
// offload, the overlap flags, the MoE dispatcher, context parallelism's exchange, and the precision
// recipe (FP8 compute, FP8 attention, scaling, amax group, FP8/MXFP8 weights); each is offered only
// where the scenario's loader would accept it.

#include <string>
#include <vector>

#include "model/scenario.h"
#include "simulator/scenario_loader.h"

namespace stepcast {

struct ExplainEdit {
  std::string title;                // "more micro-batches: micro_batch 2 -> 1 (64 -> 128 per step)"
  std::string why;                  // what it acts on
  std::vector<Override> overrides;  // the change as --set overrides on the scenario
};

// The candidate changes for `sc` (a training scenario), in a fixed order.
std::vector<ExplainEdit> candidate_edits(const Scenario& sc);

// Applies one of those overrides to `scenario` in memory, as the loader would read it from the
// command line; false when it cannot (the edit is then skipped).
bool apply_edit(Scenario& scenario, const Override& o);

}  // namespace stepcast
