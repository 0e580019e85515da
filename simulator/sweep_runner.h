#pragma once
// Runs a sweep file: every point of the grid (or of one shard of it) built, checked and predicted
// in parallel, the rows delivered in point order whatever the thread count.
//
// Per point: the scenario is built (simulator/sweep_points.h; inconsistent points are counted as
// invalid, with their reason), constraints on keys are checked, then memory constraints after the
// closed-form memory (TrainingPredictor::screen, no timing), then the full prediction and the
// constraints on results. A point that passes is a row: every field of FieldTable::training() and
// each objective's value. Rows of layouts that do not fit are still rows (fits = false), but never
// ranked: the top K and the Pareto set hold only layouts that fit.
//
// Parallelism: oneTBB's parallel_pipeline over chunks of points; a serial, in-order stage hands
// rows to the caller, so the row stream is the same for 1 or 32 threads. Shard I of N takes the
// points with index % N == I. Progress and cancellation: simulator/run_control.h.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/collective.h"
#include "model/cost_parameters.h"
#include "simulator/collective_factory.h"
#include "simulator/ranking.h"
#include "simulator/result_table.h"
#include "simulator/run_control.h"
#include "simulator/sweep_file.h"

namespace stepcast {

struct SweepRunOptions {
  int threads = 0;           // 0: every core
  int shard_index = 0;
  int shard_count = 1;
  Selection selection = Selection::all;
  std::size_t top = 10;      // for Selection::top
  CostParameters parameters;
  CollectiveFactory collectives;  // empty: default_collective_factory(parameters)
  std::size_t chunk = 64;    // points per parallel work item
};

struct SweepRunResult {
  TableSummary summary;
  std::vector<Candidate> kept;                      // top K or Pareto set, ranked (not for all)
  std::map<std::string, std::uint64_t> invalid_reasons;  // first reason of each invalid point, counted
  bool cancelled = false;
};

// `on_row(point, row, objectives)` receives every row in point order (with Selection::all; with
// top/pareto it is not called: the kept rows come back in the result).
using RowSink = std::function<void(std::uint64_t point, std::span<const double> row, std::span<const double> objectives)>;

SweepRunResult run_sweep(const SweepFile& sweep, const SweepRunOptions& options, const RowSink& on_row,
                         const RunControl& control = {});

}  // namespace stepcast
