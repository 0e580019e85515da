#include "simulator/sweep_runner.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <chrono>
#include <cmath>

#include "simulator/collective_models.h"
#include "simulator/sweep_points.h"
#include "simulator/training_predictor.h"
#include "simulator/worker_arena.h"

namespace stepcast {
namespace {

using Clock = std::chrono::steady_clock;

enum class Outcome : unsigned char { invalid, pruned, row };

struct PointResult {
  std::uint64_t point = 0;
  Outcome outcome = Outcome::invalid;
  bool fits = false;
  bool timed = false;
  std::string reason;               // invalid
  std::vector<double> row;          // row
  std::vector<double> objectives;   // row
};

struct Chunk {
  std::uint64_t first = 0;  // shard-local index of the first point
  std::uint64_t count = 0;
  std::vector<PointResult> results;
};

struct Worker {
  Worker(const SweepFile& sweep, const CostParameters& params) : builder(sweep), predictor(params) {
    predictor.set_memoize(true);  // safe: a system change replaces the model and clears the memo
  }
  PointBuilder builder;
  TrainingPredictor predictor;
  SystemSpec system;                      // the system `net` was built for
  std::unique_ptr<CollectiveModel> net;
  std::vector<double> row = std::vector<double>(FieldTable::training().size());
};

bool passes(const std::vector<SweepConstraint>& constraints, FieldPhase phase, std::span<const double> row) {
  for (const SweepConstraint& c : constraints) {
    if (c.phase == phase && !c.expression.holds(row)) return false;
  }
  return true;
}

bool any_phase(const std::vector<SweepConstraint>& constraints, FieldPhase phase) {
  for (const SweepConstraint& c : constraints) {
    if (c.phase == phase) return true;
  }
  return false;
}

}  // namespace

SweepRunResult run_sweep(const SweepFile& sweep, const SweepRunOptions& options_in, const RowSink& on_row,
                         const RunControl& control) {
  const Clock::time_point start = Clock::now();
  SweepRunOptions options = options_in;
  if (!options.collectives) options.collectives = default_collective_factory(options.parameters);
  const auto shard_count = static_cast<std::uint64_t>(std::max(options.shard_count, 1));
  const auto shard_index = static_cast<std::uint64_t>(std::max(options.shard_index, 0));
  const std::uint64_t points = sweep.point_count();
  const std::uint64_t local = points > shard_index ? (points - shard_index + shard_count - 1) / shard_count : 0;
  const std::size_t n_objectives = std::min(sweep.objectives.size(), kMaxObjectives);
  const bool memory_constraints = any_phase(sweep.constraints, FieldPhase::memory);

  SweepRunResult result;
  TopK top(options.selection == Selection::top ? options.top : 0, n_objectives);
  ParetoSet pareto(n_objectives);
  tbb::enumerable_thread_specific<Worker> workers([&] { return Worker(sweep, options.parameters); });
  ProgressMeter meter(control, start);
  meter.begin("evaluating", local);

  const auto evaluate = [&](Worker& w, std::uint64_t point, PointResult& out) {
    out.point = point;
    const Scenario* sc = w.builder.build(point, out.reason);
    if (sc == nullptr) {
      out.outcome = Outcome::invalid;
      return;
    }
    fill_key_fields(*sc, w.row);
    if (!passes(sweep.constraints, FieldPhase::key, w.row)) {
      out.outcome = Outcome::pruned;
      return;
    }
    if (w.net == nullptr || !(sc->system == w.system)) {
      w.system = sc->system;
      w.net = options.collectives(w.system);
    }
    if (memory_constraints) {
      const TrainingScreen s = w.predictor.screen(*sc, *w.net);
      fill_memory_fields(s.memory, s.fits, w.row);
      if (!passes(sweep.constraints, FieldPhase::memory, w.row)) {
        out.outcome = Outcome::pruned;
        return;
      }
    }
    TrainingPredictorOptions predict_options;
    predict_options.describe_placement = false;
    const TrainingPrediction p = w.predictor.predict(*sc, *w.net, predict_options);
    out.timed = true;
    fill_memory_fields(p.memory, p.fits, w.row);
    fill_time_fields(*sc, p, sweep.gpu_hour_usd, w.row);
    if (!passes(sweep.constraints, FieldPhase::time, w.row) || !passes(sweep.constraints, FieldPhase::memory, w.row)) {
      out.outcome = Outcome::pruned;
      return;
    }
    out.outcome = Outcome::row;
    out.fits = p.fits;
    out.row = w.row;
    out.objectives.resize(sweep.objectives.size());
    for (std::size_t i = 0; i < sweep.objectives.size(); ++i) out.objectives[i] = sweep.objectives[i].expression.evaluate(w.row);
  };

  WorkerArena workers_arena(options.threads);
  tbb::task_arena& arena = workers_arena.arena;
  const std::uint64_t chunk = std::max<std::size_t>(options.chunk, 1);
  std::uint64_t next = 0;
  const std::size_t tokens = static_cast<std::size_t>(std::max(arena.max_concurrency(), 1)) * 4;
  arena.execute([&] {
    tbb::parallel_pipeline(
        tokens,
        tbb::make_filter<void, std::shared_ptr<Chunk>>(
            tbb::filter_mode::serial_in_order,
            [&](tbb::flow_control& fc) -> std::shared_ptr<Chunk> {
              if (next >= local || control.cancelled()) {
                fc.stop();
                return nullptr;
              }
              auto c = std::make_shared<Chunk>();
              c->first = next;
              c->count = std::min(chunk, local - next);
              next += c->count;
              return c;
            }) &
            tbb::make_filter<std::shared_ptr<Chunk>, std::shared_ptr<Chunk>>(
                tbb::filter_mode::parallel,
                [&](std::shared_ptr<Chunk> c) {
                  Worker& w = workers.local();
                  c->results.resize(c->count);
                  for (std::uint64_t k = 0; k < c->count; ++k) {
                    if (control.cancelled()) {
                      c->results.resize(k);
                      break;
                    }
                    evaluate(w, (c->first + k) * shard_count + shard_index, c->results[k]);
                  }
                  return c;
                }) &
            tbb::make_filter<std::shared_ptr<Chunk>, void>(
                tbb::filter_mode::serial_in_order, [&](std::shared_ptr<Chunk> c) {
                  for (PointResult& r : c->results) {
                    ++result.summary.points;
                    if (r.timed) ++result.summary.timed;
                    switch (r.outcome) {
                      case Outcome::invalid:
                        ++result.summary.invalid;
                        ++result.invalid_reasons[r.reason];
                        continue;
                      case Outcome::pruned:
                        ++result.summary.pruned;
                        continue;
                      case Outcome::row:
                        break;
                    }
                    if (r.fits) {
                      ++result.summary.feasible;
                    } else {
                      ++result.summary.infeasible;
                    }
                    if (options.selection == Selection::all) {
                      ++result.summary.kept;
                      if (on_row) on_row(r.point, r.row, r.objectives);
                      continue;
                    }
                    if (!r.fits) continue;
                    Candidate cand;
                    cand.point = r.point;
                    for (std::size_t i = 0; i < n_objectives; ++i) {
                      const double v = r.objectives[i];
                      cand.score[i] = sweep.objectives[i].sense == Objective::Sense::minimize ? v : -v;
                    }
                    const bool keep = options.selection == Selection::top ? top.would_keep(cand) : pareto.would_keep(cand);
                    if (!keep) continue;
                    cand.row = std::move(r.row);
                    if (options.selection == Selection::top) {
                      top.offer(std::move(cand));
                    } else {
                      pareto.offer(std::move(cand));
                    }
                  }
                  meter.advance(c->results.size());
                }));
  });
  meter.finish();
  if (options.selection == Selection::top) result.kept = top.sorted();
  if (options.selection == Selection::pareto) result.kept = pareto.sorted();
  if (options.selection != Selection::all) result.summary.kept = result.kept.size();
  result.cancelled = control.cancelled();
  result.summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace stepcast
