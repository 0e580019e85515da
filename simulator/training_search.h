#pragma once
// The training layout search behind `stepcast search`: the best layouts of a scenario's model on
// its GPUs, found exactly and fast.
//
// Two phases, both parallel (oneTBB, one TrainingPredictor per thread):
//   1. Screening. Every layout of the space (simulator/training_layouts.h) in this shard is
//      checked against the constraints that need only its keys, then screened
//      (TrainingPredictor::screen): exact memory per GPU, no schedule simulation. Layouts that do
//      not fit, or fail a memory constraint, are pruned here. Each survivor gets a bound on its
//      first objective from screen()'s step-time lower bound (exact when the objective reads only
//      keys and memory).
//   2. Timing, branch and bound. Survivors are sorted by bound and fully predicted in that order,
//      in fixed-size batches; the run stops at the first batch whose bound is worse than the K-th
//      best found so far. No skipped layout could have entered the top K (its objective is no
//      better than its bound), so the result equals predicting every layout (a test checks this).
//      Objectives without a valid bound, and Pareto sets, time every survivor.
// Results do not depend on the thread count: the ranking is a total order (simulator/ranking.h)
// and the batches are fixed. Cancellation returns the best found so far, marked cancelled.
//
// A bound exists for a first objective that is `min step_time_s`, `max tokens_per_s`, `max mfu`,
// `min gpu_hours_per_million_tokens` or `min cost_per_million_tokens_usd` (each monotone in the
// step time at a fixed GPU count and batch), or any expression of keys and memory only.

#include <cstdint>
#include <string>
#include <vector>

#include "model/cost_parameters.h"
#include "model/scenario.h"
#include "simulator/collective_factory.h"
#include "simulator/ranking.h"
#include "simulator/result_fields.h"
#include "simulator/run_control.h"
#include "simulator/training_layouts.h"

namespace stepcast {

struct SearchCondition {
  Expression expression;
  FieldPhase phase = FieldPhase::key;
};

struct SearchOptions {
  LayoutSpaceOptions space;
  std::vector<Objective> objectives;          // empty: min step_time_s
  std::vector<SearchCondition> constraints;
  std::size_t top = 10;
  bool pareto = false;                        // keep the Pareto set instead of the top K
  bool exhaustive = false;                    // time every survivor (no bound pruning): for checks
  int threads = 0;                            // 0: every core
  int shard_index = 0;                        // layouts with index % shard_count == shard_index
  int shard_count = 1;
  double gpu_hour_usd = 0.0;                  // for cost_per_million_tokens_usd
  CostParameters parameters;
  CollectiveFactory collectives;              // empty: default_collective_factory(parameters)
  std::string variant;                        // names the cost model in outputs ("nccl, datasheet")
  std::size_t batch = 64;                     // layouts timed between threshold updates
};

struct SearchCounts {
  std::uint64_t space = 0;       // layouts in the whole space
  std::uint64_t enumerated = 0;  // layouts in this shard
  std::uint64_t pruned = 0;      // failed a constraint on keys or memory
  std::uint64_t infeasible = 0;  // do not fit in GPU memory
  std::uint64_t feasible = 0;    // fit and passed the constraints known before timing
  std::uint64_t timed = 0;       // fully predicted
  std::uint64_t skipped = 0;     // feasible, not timed: their bound could not reach the top K
  double screen_seconds = 0.0;
  double time_seconds = 0.0;
  double seconds = 0.0;
};

struct SearchResult {
  std::vector<Candidate> best;   // ranked; each row holds every field of FieldTable::training()
  SearchCounts counts;
  bool bounded = false;          // whether phase 2 pruned by bound
  bool cancelled = false;
};

SearchResult run_training_search(const Scenario& base, const SearchOptions& options, const RunControl& control = {});

// Whether `objective` has a valid optimistic bound from screen() (see the file comment).
bool objective_is_boundable(const Objective& objective);

}  // namespace stepcast
