#include "simulator/serving_search.h"

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <ostream>
#include <sstream>

#include "model/divisors.h"
#include "simulator/collective_models.h"
#include "simulator/diagnostics.h"
#include "simulator/enum_names.h"
#include "simulator/inference/inference_predictor.h"
#include "simulator/scenario_checks.h"
#include "simulator/scenario_loader.h"
#include "simulator/sweep_file.h"
#include "simulator/worker_arena.h"

namespace stepcast {
namespace {

// Slots of FieldTable::serving(), in the order build_serving_table() appends them.
enum Slot : int {
  s_tp, s_pp, s_replicas, s_gpus, s_precision, s_max_batch, s_max_batch_tokens, s_arrival_rate,
  s_m_weights, s_m_kv, s_m_peak, s_fits,
  s_max_sequences, s_ttft_p50, s_ttft_p99, s_tpot_p50, s_tpot_p99, s_e2e_p99, s_output_tokens_per_s,
  s_output_per_gpu, s_requests_per_s, s_goodput, s_goodput_per_gpu, s_slo_attainment, s_saturated, s_capacity,
  s_count
};

void build_serving_table(std::vector<FieldDef>& out) {
  const auto key_int = [&](const char* name) { out.push_back({name, ExprType::number, FieldPhase::key, {}, true}); };
  const auto memory = [&](const char* name) { out.push_back({name, ExprType::number, FieldPhase::memory, {}, true}); };
  const auto time = [&](const char* name) { out.push_back({name, ExprType::number, FieldPhase::time, {}, false}); };
  key_int("parallel.tp");
  key_int("parallel.pp");
  key_int("inference.replicas");
  key_int("system.gpus");
  out.push_back({"precision", ExprType::word, FieldPhase::key, enum_spellings<DataType>(), false});
  key_int("inference.max_batch");
  key_int("inference.max_batch_tokens");
  out.push_back({"inference.arrival_rate", ExprType::number, FieldPhase::key, {}, false});
  memory("memory_per_gpu_bytes.weights");
  memory("memory_per_gpu_bytes.kv_cache");
  memory("memory_per_gpu_bytes.peak");
  out.push_back({"fits", ExprType::truth, FieldPhase::memory, {}, false});
  out.push_back({"max_concurrent_sequences", ExprType::number, FieldPhase::time, {}, true});
  time("ttft_p50_s");
  time("ttft_p99_s");
  time("tpot_p50_s");
  time("tpot_p99_s");
  time("e2e_p99_s");
  time("output_tokens_per_s");
  time("output_tokens_per_s_per_gpu");
  time("requests_per_s");
  time("goodput_requests_per_s");
  time("goodput_per_gpu");
  time("slo_attainment");
  out.push_back({"saturated", ExprType::truth, FieldPhase::time, {}, false});
  time("capacity_requests_per_s");
}

double precision_index(DataType t) {
  const auto& values = EnumTable<DataType>::values;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i].first == t) return static_cast<double>(i);
  }
  return -1.0;
}

void fill_key_fields(const Scenario& sc, DataType precision_word, std::span<double> row) {
  const ServingWorkload& w = sc.inference().serving;
  row[s_tp] = sc.parallel.tp;
  row[s_pp] = sc.parallel.pp;
  row[s_replicas] = w.replicas;
  row[s_gpus] = sc.system.gpus;
  row[s_precision] = precision_index(precision_word);
  row[s_max_batch] = w.max_batch;
  row[s_max_batch_tokens] = w.max_batch_tokens;
  row[s_arrival_rate] = w.arrival_rate_per_s;
}

struct Worker {
  explicit Worker(const Scenario& base) : scenario(base) {}
  Scenario scenario;
  std::vector<double> row = std::vector<double>(s_count, std::numeric_limits<double>::quiet_NaN());
  ServingSearchCounts counts;
  std::vector<Candidate> found;
};

}  // namespace

const FieldTable& FieldTable::serving() {
  static const FieldTable table = [] {
    FieldTable t;
    build_serving_table(t.m_fields);
    assert(t.m_fields.size() == static_cast<std::size_t>(s_count));
    return t;
  }();
  return table;
}

std::string apply_serving_layout(const ServingLayout& layout, Scenario& scenario) {
  ServingWorkload& w = std::get<InferenceWorkload>(scenario.workload).serving;
  scenario.parallel.tp = layout.tp;
  const DataType kv = scenario.precision.kv_cache;
  scenario.precision = inference_precision_shorthand(layout.precision);
  scenario.precision.kv_cache = kv;
  w.max_batch = layout.max_batch;
  w.max_batch_tokens = layout.max_batch_tokens;
  scenario.system.gpus = layout.replicas * layout.tp * scenario.parallel.pp;
  std::string reason = recheck_scenario(scenario, false);
  w.replicas = layout.replicas;
  return reason;
}

ServingSpace::ServingSpace(const Scenario& base, const ServingSpaceOptions& options) {
  const ServingWorkload& w = base.inference().serving;
  const int pp = std::max(base.parallel.pp, 1);
  const int per_node = std::max(base.system.gpus_per_node, 1);
  for (int tp : divisors(per_node)) {
    if (tp * pp > base.system.gpus) break;
    const int most = base.system.gpus / (tp * pp);
    for (int r = options.fewer_replicas ? 1 : most; r <= most; ++r) m_engines.emplace_back(tp, r);
  }
  m_precisions = options.precisions.empty()
                     ? std::vector<DataType>{DataType::bf16, DataType::fp8, DataType::int8, DataType::int4}
                     : options.precisions;
  m_max_batch = options.max_batch;
  if (m_max_batch.empty()) {
    for (int b = 8; b <= std::max(2 * w.max_batch, 8); b *= 2) m_max_batch.push_back(b);
  }
  m_max_batch_tokens = options.max_batch_tokens.empty() ? std::vector<int>{w.max_batch_tokens} : options.max_batch_tokens;
  m_size = static_cast<std::uint64_t>(m_engines.size()) * m_precisions.size() * m_max_batch.size() *
           m_max_batch_tokens.size();
}

ServingLayout ServingSpace::at(std::uint64_t index) const {
  assert(index < m_size);
  ServingLayout l;
  l.max_batch_tokens = m_max_batch_tokens[index % m_max_batch_tokens.size()];
  index /= m_max_batch_tokens.size();
  l.max_batch = m_max_batch[index % m_max_batch.size()];
  index /= m_max_batch.size();
  l.precision = m_precisions[index % m_precisions.size()];
  index /= m_precisions.size();
  std::tie(l.tp, l.replicas) = m_engines[index];
  return l;
}

void fill_serving_fields(const Scenario& sc, const InferencePrediction& p, std::span<double> row) {
  assert(row.size() == static_cast<std::size_t>(s_count));
  const double gpus = sc.system.gpus;
  row[s_m_weights] = p.memory.weights.value();
  row[s_m_kv] = p.memory.kv_cache.value();
  row[s_m_peak] = p.memory.peak.value();
  row[s_fits] = p.fits ? 1.0 : 0.0;
  row[s_max_sequences] = p.max_concurrent_sequences;
  row[s_ttft_p50] = p.ttft.p50.value();
  row[s_ttft_p99] = p.ttft.p99.value();
  row[s_tpot_p50] = p.tpot.p50.value();
  row[s_tpot_p99] = p.tpot.p99.value();
  row[s_e2e_p99] = p.e2e.p99.value();
  row[s_output_tokens_per_s] = p.output_tokens_per_s;
  row[s_output_per_gpu] = p.output_tokens_per_s / gpus;
  row[s_requests_per_s] = p.requests_per_s;
  row[s_goodput] = p.goodput_requests_per_s;
  row[s_goodput_per_gpu] = p.goodput_requests_per_s / gpus;
  row[s_slo_attainment] = p.slo_attainment;
  row[s_saturated] = p.saturated ? 1.0 : 0.0;
  row[s_capacity] = p.capacity_requests_per_s;
}

namespace {

std::vector<Objective> objectives_or_default(const std::vector<Objective>& given) {
  if (!given.empty()) return given;
  std::vector<Objective> out;
  for (const char* text : {"max goodput_per_gpu", "min ttft_p99_s"}) {
    ExprError error;
    out.push_back(*parse_objective(text, FieldTable::serving().resolver(), error));
  }
  return out;
}

}  // namespace

TableHeader serving_search_table_header(const Scenario& base, const ServingSearchOptions& options) {
  TableHeader h;
  h.kind = "serving-search";
  h.name = base.name;
  h.shard_index = options.shard_index;
  h.shard_count = options.shard_count;
  h.selection = Selection::top;
  h.top = options.top;
  for (const Objective& o : objectives_or_default(options.objectives)) h.objectives.push_back(o.text());
  h.columns = FieldTable::serving().names();
  std::string identity = write_scenario_yaml(base);
  for (DataType t : options.space.precisions) identity += std::string(to_string(t)) + ",";
  for (int b : options.space.max_batch) identity += std::to_string(b) + ",";
  identity += "|";
  for (int b : options.space.max_batch_tokens) identity += std::to_string(b) + ",";
  identity += fmt::format("|fewer={}|", options.space.fewer_replicas);
  for (const auto& o : h.objectives) identity += o + ";";
  for (const Expression& c : options.constraints) identity += c.text() + ";";
  identity += fmt::format("|{}|", h.top);
  CostParameters params = options.parameters;
  params.for_each_constant([&](std::string_view name, double value, std::string_view) {
    identity += fmt::format("{}={};", name, value);
  });
  h.fingerprint = fmt::format("{:016x}", fnv1a(identity));
  return h;
}

void write_serving_search_table(std::ostream& out, TableFormat format, const TableHeader& header,
                                const ServingSearchResult& result) {
  TableWriter writer(out, format, header, FieldTable::serving());
  writer.begin();
  for (const Candidate& c : result.best) {
    writer.row(c.point, c.row, objective_values(c, header.objectives));
  }
  TableSummary s;
  s.points = result.counts.enumerated;
  s.invalid = result.counts.invalid;
  s.pruned = result.counts.pruned;
  s.infeasible = result.counts.infeasible;
  s.feasible = result.counts.predicted - result.counts.infeasible;
  s.timed = result.counts.predicted;
  s.kept = result.best.size();
  s.seconds = result.counts.seconds;
  writer.end(s);
}

ServingSearchResult run_serving_search(const Scenario& base, const ServingSearchOptions& options_in,
                                       const RunControl& control) {
  const auto start = std::chrono::steady_clock::now();
  if (base.is_training() || base.inference().mode != InferenceMode::serving) {
    throw InputError(base.source + ": the serving search needs an `inference: {mode: serving}` scenario");
  }
  if (base.inference().serving.disaggregation.enabled) {
    throw InputError(base.source + ": the serving search does not split prefill and decode GPUs yet; "
                                   "remove inference.disaggregation to search the mixed layouts");
  }
  ServingSearchOptions options = options_in;
  const FieldTable& table = FieldTable::serving();
  options.objectives = objectives_or_default(options.objectives);
  const std::size_t n_objectives = std::min(options.objectives.size(), kMaxObjectives);
  const ServingSpace space(base, options.space);
  const CollectiveFactory collectives =
      options.collectives ? options.collectives : default_collective_factory(options.parameters);
  const auto shard_count = static_cast<std::uint64_t>(std::max(options.shard_count, 1));
  const auto shard_index = static_cast<std::uint64_t>(std::max(options.shard_index, 0));

  ServingSearchResult result;
  result.counts.space = space.size();
  for (const Objective& o : options.objectives) result.objective_texts.push_back(o.text());
  tbb::enumerable_thread_specific<Worker> workers([&] { return Worker(base); });
  ProgressMeter meter(control, start);
  WorkerArena workers_arena(options.threads);
  tbb::task_arena& arena = workers_arena.arena;
  const std::uint64_t in_shard = space.size() > shard_index ? (space.size() - shard_index + shard_count - 1) / shard_count : 0;
  meter.begin("evaluating", in_shard);
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, in_shard, 1), [&](const tbb::blocked_range<std::uint64_t>& r) {
      Worker& w = workers.local();
      for (std::uint64_t k = r.begin(); k != r.end(); ++k) {
        if (control.cancelled()) return;
        const std::uint64_t point = shard_index + k * shard_count;
        const ServingLayout layout = space.at(point);
        w.scenario = base;
        ++w.counts.enumerated;
        if (!apply_serving_layout(layout, w.scenario).empty()) {
          ++w.counts.invalid;
          meter.advance(1);
          continue;
        }
        std::fill(w.row.begin(), w.row.end(), std::numeric_limits<double>::quiet_NaN());
        fill_key_fields(w.scenario, layout.precision, w.row);
        const bool keys_pass = std::all_of(options.constraints.begin(), options.constraints.end(), [&](const Expression& e) {
          return table.phase_of(e) != FieldPhase::key || e.holds(w.row);
        });
        if (!keys_pass) {
          ++w.counts.pruned;
          meter.advance(1);
          continue;
        }
        const auto net = collectives(w.scenario.system);
        InferencePredictorOptions po;
        po.cost = options.parameters;
        po.inference = options.inference;
        po.collectives = net.get();
        po.time_series = false;
        const InferencePrediction p = predict_inference(w.scenario, po);
        ++w.counts.predicted;
        meter.advance(1);
        if (!p.fits) {
          ++w.counts.infeasible;
          continue;
        }
        fill_serving_fields(w.scenario, p, w.row);
        const bool passes = std::all_of(options.constraints.begin(), options.constraints.end(),
                                        [&](const Expression& e) { return e.holds(w.row); });
        if (!passes) {
          ++w.counts.pruned;
          continue;
        }
        Candidate c;
        c.point = point;
        for (std::size_t i = 0; i < n_objectives; ++i) c.score[i] = options.objectives[i].score(w.row);
        c.row = w.row;
        w.found.push_back(std::move(c));
      }
    });
  });
  meter.finish();
  TopK top(options.top, n_objectives);
  for (Worker& w : workers) {
    result.counts.enumerated += w.counts.enumerated;
    result.counts.invalid += w.counts.invalid;
    result.counts.infeasible += w.counts.infeasible;
    result.counts.pruned += w.counts.pruned;
    result.counts.predicted += w.counts.predicted;
    for (Candidate& c : w.found) top.offer(std::move(c));
  }
  result.best = top.sorted();
  result.cancelled = control.cancelled();
  result.counts.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string serving_search_report(const Scenario& base, const ServingSearchResult& result) {
  const FieldTable& t = FieldTable::serving();
  const ServingSearchCounts& c = result.counts;
  const ServingWorkload& w = base.inference().serving;
  std::ostringstream out;
  out << fmt::format("Serving search: {} on up to {} x {}, {} requests at {:g}/s", base.model.name, base.system.gpus,
                     base.system.gpu.name, w.requests, w.arrival_rate_per_s);
  if (w.slo.ttft.value() > 0.0 || w.slo.tpot.value() > 0.0) {
    out << fmt::format(", SLOs: TTFT {:g} ms, TPOT {:g} ms", w.slo.ttft.value() * 1e3, w.slo.tpot.value() * 1e3);
  }
  out << "\n  over tp, precision, max_batch, max_batch_tokens and replicas (pp " << base.parallel.pp << ")\n\n";
  out << fmt::format("  {:>10}  layouts\n", c.enumerated);
  out << fmt::format("  {:>10}  not valid for the model or GPU\n", c.invalid);
  out << fmt::format("  {:>10}  simulated\n", c.predicted);
  out << fmt::format("  {:>10}  do not fit\n", c.infeasible);
  out << fmt::format("  {:>10}  fail a constraint\n", c.pruned);
  out << fmt::format("  {:.2f} s ({:.0f} layouts/s)\n\n", c.seconds, c.seconds > 0 ? c.enumerated / c.seconds : 0.0);
  if (result.cancelled) out << "! cancelled: the best layouts found so far\n\n";
  std::string by;
  for (const auto& o : result.objective_texts) by += (by.empty() ? "" : ", then ") + o;
  out << "Best " << result.best.size() << " by " << by << "\n";
  out << fmt::format("  {:>4} {:>3} {:>8} {:>5} {:>6} {:>6} {:>5} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9} {:>7}\n", "rank",
                     "tp", "replicas", "gpus", "prec", "batch", "tok/k", "ttft p50", "ttft p99", "tpot p50", "tpot p99",
                     "req/s", "good/gpu", "SLO %");
  const auto at = [&](const Candidate& cand, const char* name) {
    return cand.row[static_cast<std::size_t>(t.slot_of(name))];
  };
  int rank = 0;
  for (const Candidate& cand : result.best) {
    out << fmt::format("  {:>4} {:>3} {:>8} {:>5} {:>6} {:>6} {:>5} {:>8.1f}ms {:>8.1f}ms {:>8.1f}ms {:>8.1f}ms {:>9.2f} {:>9.3f} "
                       "{:>6.1f}{}\n",
                       ++rank, at(cand, "parallel.tp"), at(cand, "inference.replicas"), at(cand, "system.gpus"),
                       t.format(t.slot_of("precision"), at(cand, "precision")), at(cand, "inference.max_batch"),
                       at(cand, "inference.max_batch_tokens") / 1024.0, at(cand, "ttft_p50_s") * 1e3,
                       at(cand, "ttft_p99_s") * 1e3, at(cand, "tpot_p50_s") * 1e3, at(cand, "tpot_p99_s") * 1e3,
                       at(cand, "requests_per_s"), at(cand, "goodput_per_gpu"), at(cand, "slo_attainment") * 100.0,
                       at(cand, "saturated") != 0.0 ? "  saturated" : "");
  }
  return out.str();
}

}  // namespace stepcast
