#include "simulator/training_search.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "model/flops.h"
#include "simulator/collective_models.h"
#include "simulator/training_predictor.h"
#include "simulator/worker_arena.h"

namespace stepcast {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A layout that survived screening, with the optimistic score of the first objective.
struct Survivor {
  double bound = 0.0;
  std::uint64_t point = 0;
};

struct Worker {
  explicit Worker(const Scenario& base, const CostParameters& params)
      : predictor(params), scenario(base), row(FieldTable::training().size()) {
    predictor.set_memoize(true);  // the run's collective model outlives every worker
  }
  TrainingPredictor predictor;
  Scenario scenario;
  std::vector<double> row;
  std::vector<Survivor> survivors;
  SearchCounts counts;
  std::vector<Candidate> found;  // timed candidates of the current batch
};

// The objective's fields whose optimistic value screen() gives, each improving as the step time
// falls (so the bound is evaluated with the step-time lower bound in place of the step time).
bool step_monotone_field(const std::string& name, Objective::Sense sense) {
  if (sense == Objective::Sense::minimize) {
    return name == "step_time_s" || name == "gpu_hours_per_million_tokens" || name == "cost_per_million_tokens_usd";
  }
  return name == "tokens_per_s" || name == "mfu";
}

// Time fields of a row as optimistic values from a step-time lower bound; the others NaN. Uses the
// formulas of TrainingPredictor::predict() and fill_time_fields().
void fill_bound_fields(const Scenario& sc, Seconds bound, double model_flops, double gpu_hour_usd, std::span<double> row) {
  const FieldTable& table = FieldTable::training();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table.at(static_cast<int>(i)).phase == FieldPhase::time) row[i] = std::numeric_limits<double>::quiet_NaN();
  }
  const TrainingWorkload& t = sc.training();
  const double cluster_peak = sc.system.gpu.peak(sc.precision.compute).value() * sc.parallel.world_size();
  const double tokens_per_s = static_cast<double>(t.global_batch) * t.seq_len / bound.value();
  row[static_cast<std::size_t>(training_slot::step_time())] = bound.value();
  row[static_cast<std::size_t>(training_slot::tokens_per_s())] = tokens_per_s;
  row[static_cast<std::size_t>(table.slot_of("mfu"))] = cluster_peak > 0.0 ? model_flops / (bound.value() * cluster_peak) : 0.0;
  const double gpu_hours = sc.system.gpus / 3600.0 / tokens_per_s * 1e6;
  row[static_cast<std::size_t>(table.slot_of("gpu_hours_per_million_tokens"))] = gpu_hours;
  row[static_cast<std::size_t>(training_slot::cost_per_million_tokens())] =
      gpu_hour_usd > 0.0 ? gpu_hours * gpu_hour_usd : std::numeric_limits<double>::quiet_NaN();
}

bool passes(const std::vector<SearchCondition>& conditions, FieldPhase phase, std::span<const double> row) {
  for (const SearchCondition& c : conditions) {
    if (c.phase == phase && !c.expression.holds(row)) return false;
  }
  return true;
}

Candidate make_candidate(std::uint64_t point, const std::vector<Objective>& objectives, std::span<const double> row) {
  Candidate c;
  c.point = point;
  for (std::size_t i = 0; i < objectives.size(); ++i) c.score[i] = objectives[i].score(row);
  return c;
}

}  // namespace

bool objective_is_boundable(const Objective& objective) {
  const FieldTable& table = FieldTable::training();
  if (table.phase_of(objective.expression) != FieldPhase::time) return true;  // exact from screen()
  const auto& slots = objective.expression.slots();
  return objective.expression.is_single_name() && step_monotone_field(table.at(slots.front()).name, objective.sense);
}

SearchResult run_training_search(const Scenario& base, const SearchOptions& options_in, const RunControl& control) {
  const Clock::time_point start = Clock::now();
  SearchOptions options = options_in;
  if (options.objectives.empty()) {
    ExprError unused;
    options.objectives.push_back(*parse_objective("min step_time_s", FieldTable::training().resolver(), unused));
  }
  const std::vector<Objective>& objectives = options.objectives;
  const std::size_t n_objectives = std::min(objectives.size(), kMaxObjectives);
  const bool bounded = !options.exhaustive && !options.pareto && objective_is_boundable(objectives.front());

  const LayoutSpace space(base, options.space);
  const auto net = options.collectives ? options.collectives(base.system)
                                       : default_collective_factory(options.parameters)(base.system);
  const double model_flops =
      training_step_flops(base.model, base.training().global_batch, base.training().seq_len, Recompute::none,
                          AttentionCount::full, 1.0, {}, base.training().document_tokens)
          .model.value();
  const auto shard_count = static_cast<std::uint64_t>(std::max(options.shard_count, 1));
  const auto shard_index = static_cast<std::uint64_t>(std::max(options.shard_index, 0));

  SearchResult result;
  result.bounded = bounded;
  result.counts.space = space.size();
  tbb::enumerable_thread_specific<Worker> workers([&] { return Worker(base, options.parameters); });
  ProgressMeter meter(control, start);
  WorkerArena workers_arena(options.threads);
  tbb::task_arena& arena = workers_arena.arena;

  // --- Phase 1: screen every layout of this shard ------------------------------------------------
  std::uint64_t in_shard = 0;
  for (const auto& b : space.blocks()) {
    const std::uint64_t first = (shard_index + shard_count - b.offset % shard_count) % shard_count;
    in_shard += b.size > first ? (b.size - first + shard_count - 1) / shard_count : 0;
  }
  meter.begin("screening", in_shard);
  const auto& blocks = space.blocks();
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks.size(), 1), [&](const tbb::blocked_range<std::size_t>& r) {
      Worker& w = workers.local();
      for (std::size_t bi = r.begin(); bi != r.end(); ++bi) {
        if (control.cancelled()) return;
        const LayoutSpace::Block& b = blocks[bi];
        std::uint64_t screened = 0;
        for (std::uint64_t i = (shard_index + shard_count - b.offset % shard_count) % shard_count; i < b.size;
             i += shard_count) {
          const std::uint64_t point = b.offset + i;
          apply_layout(LayoutSpace::layout_in(b, i), w.scenario);
          ++w.counts.enumerated;
          ++screened;
          fill_key_fields(w.scenario, w.row);
          if (!passes(options.constraints, FieldPhase::key, w.row)) {
            ++w.counts.pruned;
            continue;
          }
          const TrainingScreen s = w.predictor.screen(w.scenario, *net);
          if (!s.fits) {
            ++w.counts.infeasible;
            continue;
          }
          fill_memory_fields(s.memory, s.fits, w.row);
          if (!passes(options.constraints, FieldPhase::memory, w.row)) {
            ++w.counts.pruned;
            continue;
          }
          ++w.counts.feasible;
          fill_bound_fields(w.scenario, s.step_time_lower_bound, model_flops, options.gpu_hour_usd, w.row);
          const double bound = bounded ? objectives.front().score(w.row) : 0.0;
          w.survivors.push_back({std::isnan(bound) ? std::numeric_limits<double>::infinity() : bound, point});
        }
        meter.advance(screened);
      }
    });
  });
  meter.finish();
  std::vector<Survivor> survivors;
  for (Worker& w : workers) {
    result.counts.enumerated += w.counts.enumerated;
    result.counts.pruned += w.counts.pruned;
    result.counts.infeasible += w.counts.infeasible;
    result.counts.feasible += w.counts.feasible;
    survivors.insert(survivors.end(), w.survivors.begin(), w.survivors.end());
    std::vector<Survivor>().swap(w.survivors);
  }
  arena.execute([&] {
    tbb::parallel_sort(survivors.begin(), survivors.end(), [](const Survivor& a, const Survivor& b) {
      return a.bound < b.bound || (a.bound == b.bound && a.point < b.point);
    });
  });
  result.counts.screen_seconds = seconds_since(start);

  // --- Phase 2: time survivors in bound order, batch by batch ------------------------------------
  const Clock::time_point timing_start = Clock::now();
  meter.begin("timing", survivors.size());
  TopK top(options.top, n_objectives);
  ParetoSet pareto(n_objectives);
  TrainingPredictorOptions predict_options;
  predict_options.describe_placement = false;
  const std::size_t batch = std::max<std::size_t>(options.batch, 1);
  std::size_t next = 0;
  while (next < survivors.size() && !control.cancelled()) {
    // The bar a layout must beat: the K-th best so far (fixed for the whole batch).
    const Candidate* bar = bounded ? top.threshold() : nullptr;
    const double limit = bar != nullptr ? bar->score[0] : std::numeric_limits<double>::infinity();
    if (survivors[next].bound > limit) break;  // sorted: no later layout can enter the top K
    std::size_t end = std::min(next + batch, survivors.size());
    while (end > next && survivors[end - 1].bound > limit) --end;
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(next, end, 16), [&](const tbb::blocked_range<std::size_t>& r) {
        Worker& w = workers.local();
        for (std::size_t k = r.begin(); k != r.end(); ++k) {
          if (control.cancelled()) return;
          const std::uint64_t point = survivors[k].point;
          apply_layout(space.at(point), w.scenario);
          const TrainingPrediction p = w.predictor.predict(w.scenario, *net, predict_options);
          ++w.counts.timed;
          fill_key_fields(w.scenario, w.row);
          fill_memory_fields(p.memory, p.fits, w.row);
          fill_time_fields(w.scenario, p, options.gpu_hour_usd, w.row);
          if (!passes(options.constraints, FieldPhase::time, w.row)) continue;
          Candidate c = make_candidate(point, objectives, w.row);
          c.row = w.row;
          w.found.push_back(std::move(c));
        }
        meter.advance(r.size());
      });
    });
    for (Worker& w : workers) {
      for (Candidate& c : w.found) {
        if (options.pareto) {
          pareto.offer(std::move(c));
        } else {
          top.offer(std::move(c));
        }
      }
      w.found.clear();
    }
    next = end;
  }
  meter.finish();
  for (const Worker& w : workers) result.counts.timed += w.counts.timed;
  result.counts.skipped = result.counts.feasible - std::min(result.counts.feasible, result.counts.timed);
  result.best = options.pareto ? pareto.sorted() : top.sorted();
  result.cancelled = control.cancelled();
  result.counts.time_seconds = seconds_since(timing_start);
  result.counts.seconds = seconds_since(start);
  return result;
}

}  // namespace stepcast
