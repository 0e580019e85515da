// The layout search (simulator/training_search.h): its best layouts equal an exhaustive prediction
// of every layout, whatever the thread count or sharding, and its space is exactly the valid
// layouts.

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <tuple>

#include "simulator/collective_models.h"
#include "simulator/scenario_loader.h"
#include "simulator/search_table.h"
#include "simulator/sweep_file.h"
#include "simulator/sweep_points.h"
#include "simulator/table_merge.h"
#include "simulator/training_predictor.h"
#include "simulator/training_search.h"

using namespace stepcast;

namespace {

// A 24-layer GPT-3-shaped model on 64 A100s: small enough to predict every layout in a test
// (a few thousand), with pipelines, interleaving and layouts that do not fit.
constexpr const char* kSmallYaml = R"(schema_version: 1
name: gpt3-24-layers
model: {preset: gpt3-175b, layers: 24}
system: {preset: dgx-a100, gpus: 64}
training: {seq_len: 2048, global_batch: 128, micro_batch: 1}
parallel: {tp: 8, pp: 8, sequence_parallel: true, recompute: selective, zero: 1}
precision: bf16
)";
Scenario small_scenario() { return parse_scenario(kSmallYaml, "<test>"); }

struct Ranked {
  double step = 0.0;
  std::uint64_t point = 0;
  bool operator<(const Ranked& o) const { return step < o.step || (step == o.step && point < o.point); }
};

// Predicts every layout with a plain predictor (no screening, no memo) and ranks those that fit.
std::vector<Ranked> exhaustive(const Scenario& base, const LayoutSpace& space, std::uint64_t& fitting,
                               const TrainingPredictorOptions& options = {}) {
  TrainingPredictor predictor;
  const auto net = make_collective_model(default_collective_model(), base.system, predictor.parameters());
  Scenario sc = base;
  std::vector<Ranked> out;
  fitting = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    apply_layout(space.at(i), sc);
    const TrainingPrediction p = predictor.predict(sc, *net, options);
    if (!p.fits) continue;
    ++fitting;
    out.push_back({p.step_time.value(), i});
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The search kept `top` layouts, and they are the exhaustive ranking's first `top`, in order, with
// the same step times.
void check_best_are_first_ranked(const SearchResult& r, const std::vector<Ranked>& all, std::size_t top) {
  REQUIRE(r.best.size() == top);
  const int step = FieldTable::training().slot_of("step_time_s");
  for (std::size_t k = 0; k < top; ++k) {
    CAPTURE(k);
    CHECK(r.best[k].point == all[k].point);
    CHECK(r.best[k].row[static_cast<std::size_t>(step)] == all[k].step);
  }
}

std::string table_of(const Scenario& base, const SearchOptions& options, const SearchResult& r) {
  std::ostringstream out;
  TableHeader h = search_table_header(base, options);
  write_search_table(out, TableFormat::csv, h, r);
  return out.str();
}

// The rows of a CSV table (between the column line and the summary).
std::string rows_of(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::string out;
  int n = 0;
  while (std::getline(in, line)) {
    if (++n <= 2 || line.rfind("# summary", 0) == 0) continue;
    out += line + "\n";
  }
  return out;
}

// Every combination of the searched keys, checked by the loader's own rules (a sweep's points over
// `base_yaml` with every key on `auto`, vpp on `vpps`), less what the space leaves out on purpose
// (GPipe without a pipeline, no ZeRO without data parallelism, no sequence parallelism without
// tensor parallelism), must be the space's layouts, each once. Returns how many layouts recompute
// with `counted`.
std::size_t check_space_is_the_valid_layouts(const std::string& base_yaml, const std::string& vpps,
                                             Recompute counted = Recompute::selective_op) {
  std::string indented;
  std::istringstream lines(base_yaml);
  for (std::string line; std::getline(lines, line);) indented += "  " + line + "\n";
  const SweepFile grid = parse_sweep("schema_version: 1\nbase:\n" + indented + R"(axes:
  parallel.tp: auto
  parallel.pp: auto
  training.micro_batch: auto
  parallel.vpp: )" + vpps + R"(
  parallel.schedule: [gpipe, 1f1b]
  parallel.sequence_parallel: auto
  parallel.recompute: auto
  parallel.zero: auto
)",
                                     "<test>");
  PointBuilder builder(grid);
  REQUIRE(builder.fast());
  using Key = std::tuple<int, int, int, int, int, bool, int, int>;
  std::set<Key> valid;
  for (std::uint64_t i = 0; i < grid.point_count(); ++i) {
    std::string reason;
    const Scenario* sc = builder.build(i, reason);
    if (sc == nullptr) continue;
    const ParallelConfig& p = sc->parallel;
    if (p.pp == 1 && p.schedule != PipelineSchedule::one_f_one_b) continue;
    if (p.dp == 1 && p.zero != 0) continue;
    if (p.tp == 1 && p.sequence_parallel) continue;
    valid.insert({p.tp, p.pp, p.vpp, sc->training().micro_batch, static_cast<int>(p.schedule), p.sequence_parallel,
                  static_cast<int>(p.recompute), p.zero});
  }
  const LayoutSpace space(parse_scenario(base_yaml, "<test>"));
  std::set<Key> enumerated;
  std::size_t with_counted = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const TrainingLayout l = space.at(i);
    enumerated.insert({l.tp, l.pp, l.vpp, l.micro_batch, static_cast<int>(l.schedule), l.sequence_parallel,
                       static_cast<int>(l.recompute), l.zero});
    with_counted += l.recompute == counted ? 1 : 0;
  }
  CHECK(enumerated.size() == space.size());  // no layout twice
  CHECK(enumerated.size() == valid.size());
  CHECK(enumerated == valid);
  return with_counted;
}

}  // namespace

TEST_CASE("the search's best layouts equal an exhaustive prediction of every layout") {
  const Scenario base = small_scenario();
  SearchOptions options;
  options.top = 10;
  options.threads = 2;
  const LayoutSpace space(base, options.space);
  std::uint64_t fitting = 0;
  const std::vector<Ranked> all = exhaustive(base, space, fitting);
  const SearchResult r = run_training_search(base, options);
  MESSAGE("layouts " << space.size() << ", fit " << fitting << ", timed by the search " << r.counts.timed);
  CHECK(space.size() > 1000);
  CHECK(r.counts.enumerated == space.size());
  CHECK(r.counts.feasible == fitting);          // screening's memory is exact
  CHECK(r.counts.infeasible == space.size() - fitting);
  CHECK(r.bounded);
  CHECK(r.counts.timed < fitting / 4);          // the bound spares most of the simulations
  check_best_are_first_ranked(r, all, 10);
}

TEST_CASE("the GPT-3 175B search on 512 A100s at global batch 1536 finds what predicting every layout finds") {
  // The issue's search (tests/bench/bench_search.cpp times it): the catalog scenario on 512 GPUs,
  // the default space (every tp, pp, vpp, micro-batch, sequence parallelism, recompute, ZeRO stage
  // and schedule; tens of thousands of layouts). Every layout is predicted here without placement
  // strings, which changes no number.
  const std::vector<Override> overrides = {{"system.gpus", "512"}, {"training.global_batch", "1536"}};
  const Scenario base = load_scenario("gpt3-175b-selene", overrides);
  SearchOptions options;
  options.top = 10;
  options.threads = 2;
  const LayoutSpace space(base, options.space);
  TrainingPredictorOptions plain;
  plain.describe_placement = false;
  std::uint64_t fitting = 0;
  const std::vector<Ranked> all = exhaustive(base, space, fitting, plain);
  const SearchResult r = run_training_search(base, options);
  MESSAGE("layouts " << space.size() << ", fit " << fitting << ", timed by the search " << r.counts.timed);
  CHECK(space.size() > 30000);
  CHECK(r.counts.feasible == fitting);
  CHECK(r.counts.timed < fitting / 100);
  check_best_are_first_ranked(r, all, 10);
}

TEST_CASE("search results do not depend on the thread count, and merged shards equal one run") {
  const Scenario base = small_scenario();
  SearchOptions options;
  options.top = 7;
  options.threads = 1;
  const SearchResult one = run_training_search(base, options);
  const std::string reference = table_of(base, options, one);
  for (int threads : {2, 3}) {
    options.threads = threads;
    const SearchResult r = run_training_search(base, options);
    CHECK(rows_of(table_of(base, options, r)) == rows_of(reference));
    CHECK(r.counts.timed == one.counts.timed);  // batches are fixed, not per thread
  }
  // Three shards, written and read back as tables, merged.
  options.threads = 2;
  options.shard_count = 3;
  std::vector<Table> shards;
  std::vector<std::string> names;
  std::uint64_t enumerated = 0;
  for (int i = 0; i < 3; ++i) {
    options.shard_index = i;
    const SearchResult r = run_training_search(base, options);
    enumerated += r.counts.enumerated;
    shards.push_back(parse_table(table_of(base, options, r), "shard" + std::to_string(i)));
    names.push_back("shard" + std::to_string(i));
  }
  CHECK(enumerated == one.counts.enumerated);
  const Table merged = merge_tables(shards, names);
  std::ostringstream out;
  write_table(out, merged, FieldTable::training());
  CHECK(rows_of(out.str()) == rows_of(reference));
  CHECK(merged.summary.feasible == one.counts.feasible);
  CHECK(merged.summary.infeasible == one.counts.infeasible);
}

TEST_CASE("the layout space is exactly the valid layouts, each once") {
  // GPT-3's linears carry biases: torchtitan's per-op policy (selective_op) is not priced for them,
  // and the loader refuses it, so neither the sweep's `auto` nor the space offers it.
  const Scenario base = small_scenario();
  CHECK(check_space_is_the_valid_layouts(kSmallYaml, "[1, 2, 3, 4, 6, 12, 24]") == 0);
  const LayoutSpace space(base);

  // Those left out are no better: sequence parallelism without TP changes nothing; GPipe without a
  // pipeline takes the same time and holds more.
  TrainingPredictor predictor;
  const auto net = make_collective_model(default_collective_model(), base.system, predictor.parameters());
  Scenario a = base;
  apply_layout(space.at(0), a);  // tp 1, pp 1
  REQUIRE(a.parallel.tp == 1);
  REQUIRE(a.parallel.pp == 1);
  Scenario b = a;
  b.parallel.sequence_parallel = !a.parallel.sequence_parallel;
  b.parallel.schedule = a.parallel.schedule == PipelineSchedule::gpipe ? PipelineSchedule::one_f_one_b : PipelineSchedule::gpipe;
  const TrainingPrediction pa = predictor.predict(a, *net);
  const TrainingPrediction pb = predictor.predict(b, *net);
  CHECK(pa.step_time.value() == doctest::Approx(pb.step_time.value()).epsilon(1e-12));  // sums in another order
  CHECK(pa.memory.peak <= pb.memory.peak);
}

TEST_CASE("the search offers torchtitan's per-op checkpointing (selective_op) for a dense bias-free model, as the loader takes it") {
  // An 8-layer Llama 3 8B on 8 H100s: dense, no MLA, no linear bias, so the loader (and the sweep's
  // `recompute: auto`) takes recompute: selective_op; the space must hold exactly those layouts,
  // selective_op among them, one for every layout with each other recompute choice.
  const std::string dense = R"(schema_version: 1
name: llama3-8b-8-layers
model: {preset: llama3-8b, layers: 8}
system: {preset: dgx-h100, gpus: 8}
training: {seq_len: 4096, global_batch: 16, micro_batch: 1}
parallel: {tp: 2, pp: 2, recompute: selective}
precision: bf16
)";
  const std::size_t per_op = check_space_is_the_valid_layouts(dense, "[1, 2, 4]");
  CHECK(per_op > 0);
  CHECK(per_op == check_space_is_the_valid_layouts(dense, "[1, 2, 4]", Recompute::none));
  const LayoutSpace space(parse_scenario(dense, "<test>"));
  CHECK(space.size() == 4 * per_op);  // none, selective, full, selective_op in every block

  // A search kept to selective_op predicts them, and some fit.
  SearchOptions options;
  options.threads = 2;
  options.top = 3;
  options.space.recompute = {Recompute::selective_op};
  const Scenario base = parse_scenario(dense, "<test>");
  const SearchResult r = run_training_search(base, options);
  CHECK(r.counts.space == per_op);
  CHECK(r.counts.feasible > 0);
  REQUIRE(r.best.size() == 3);
  const LayoutSpace searched(base, options.space);
  for (const Candidate& c : r.best) CHECK(searched.at(c.point).recompute == Recompute::selective_op);
}

TEST_CASE("the search leaves selective_op out for a MoE model, which the loader refuses it for") {
  const Scenario moe = load_scenario("scenarios/examples/mixtral-8x7b-ep.yaml");
  REQUIRE(moe.model.is_moe());
  const LayoutSpace space(moe, {.schedules = {PipelineSchedule::one_f_one_b}, .zero = {1}, .max_micro_batch = 1});
  REQUIRE(space.size() > 0);
  for (std::uint64_t i = 0; i < space.size(); ++i) CHECK(space.at(i).recompute != Recompute::selective_op);
}

TEST_CASE("a memory objective is exact from screening; constraints prune before timing") {
  const Scenario base = small_scenario();
  SearchOptions options;
  options.top = 3;
  const ExprResolver resolver = FieldTable::training().resolver();
  ExprError error;
  options.objectives.push_back(*parse_objective("min memory_per_gpu_bytes.peak", resolver, error));
  options.constraints.push_back({*Expression::parse("parallel.tp <= 4", resolver, error), FieldPhase::key});
  const SearchResult r = run_training_search(base, options);
  REQUIRE(r.best.size() == 3);
  CHECK(r.counts.pruned > 0);
  CHECK(r.counts.timed <= 64);  // one batch: the bound is the exact memory
  const int tp = FieldTable::training().slot_of("parallel.tp");
  const int peak = FieldTable::training().slot_of("memory_per_gpu_bytes.peak");
  for (const Candidate& c : r.best) CHECK(c.row[static_cast<std::size_t>(tp)] <= 4);
  CHECK(r.best[0].row[static_cast<std::size_t>(peak)] <= r.best[1].row[static_cast<std::size_t>(peak)]);
}

TEST_CASE("a cancelled search returns promptly, marked cancelled") {
  const Scenario base = small_scenario();
  std::atomic<bool> cancel{true};
  RunControl control;
  control.cancel = &cancel;
  const SearchResult r = run_training_search(base, {}, control);
  CHECK(r.cancelled);
  CHECK(r.counts.timed == 0);
}

TEST_CASE("the search keeps the base's FSDP and checkpoint implementations where a layout uses them") {
  // A torchtitan-style base (FSDP2, torch.utils.checkpoint): layouts with ZeRO-3 keep fsdp2 and
  // those with full recomputation keep checkpoint pytorch; the others fall back to Megatron-Core's
  // (no dead settings in the scenarios a search writes), and every layout's scenario loads back.
  const std::string base_yaml = R"(schema_version: 1
name: llama3-8b-8-layers-fsdp2
model: {preset: llama3-8b, layers: 8}
system: {preset: dgx-h100, gpus: 8}
training: {seq_len: 4096, global_batch: 16, micro_batch: 1, kernels: eager}
parallel: {dp: 8, zero: 3, fsdp: fsdp2, recompute: full, checkpoint: pytorch}
precision: bf16
)";
  const Scenario base = parse_scenario(base_yaml, "<test>");
  const LayoutSpace space(base);
  REQUIRE(space.size() > 0);
  int zero3 = 0, full = 0;
  Scenario sc = base;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const TrainingLayout l = space.at(i);
    CHECK(l.fsdp == (l.zero == 3 ? FsdpImplementation::fsdp2 : FsdpImplementation::megatron));
    const bool replays = l.recompute == Recompute::full || l.recompute == Recompute::selective_op;
    CHECK(l.checkpoint == (replays ? CheckpointImplementation::pytorch : CheckpointImplementation::megatron));
    zero3 += l.zero == 3;
    full += l.recompute == Recompute::full;
    apply_layout(l, sc);  // the same scenario object across layouts, as the search's workers do
    CHECK(sc.parallel.fsdp == l.fsdp);
    CHECK(sc.parallel.checkpoint == l.checkpoint);
  }
  CHECK(zero3 > 0);
  CHECK(full > 0);
  SearchOptions options;
  options.threads = 2;
  options.top = 5;
  const SearchResult r = run_training_search(base, options);
  REQUIRE(!r.best.empty());
  for (const auto& c : r.best) {
    Scenario best = base;
    apply_layout(space.at(c.point), best);
    CHECK(parse_scenario(write_scenario_yaml(best), best.source) == best);
  }
}
