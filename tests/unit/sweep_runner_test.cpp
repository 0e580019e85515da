// Running sweeps (simulator/sweep_runner.h): rows in point order whatever the thread count, and
// sharded runs that merge into exactly the table of one run, for every selection.

#include <doctest/doctest.h>

#include <sstream>

#include "simulator/sweep_file.h"
#include "simulator/sweep_runner.h"
#include "simulator/table_merge.h"

using namespace stepcast;

namespace {

// Llama 3 8B on 16 H100s: tp x pp x micro-batch x recompute x zero, with inconsistent points
// (tp 3) and a memory constraint.
SweepFile test_sweep() {
  return parse_sweep(R"(
schema_version: 1
name: llama-grid
base:
  schema_version: 1
  model: llama3-8b
  system: {gpu: h100-sxm-80gb, gpus: 16}
  training: {seq_len: 4096, global_batch: 64}
axes:
  parallel.tp: [1, 2, 3, 4, 8]
  parallel.pp: [1, 2, 4]
  training.micro_batch: [1, 2, 4]
  parallel.recompute: [none, full]
  parallel.zero: [0, 1]
constraints:
  - memory_per_gpu_bytes.peak <= 75 GiB
objectives:
  - min step_time_s
  - min memory_per_gpu_bytes.peak
)",
                     "<test>");
}

TableHeader header_of(const SweepFile& sweep, const SweepRunOptions& options) {
  TableHeader h;
  h.kind = "sweep";
  h.name = sweep.name;
  h.fingerprint = std::to_string(sweep.fingerprint);
  h.shard_index = options.shard_index;
  h.shard_count = options.shard_count;
  h.selection = options.selection;
  h.top = options.selection == Selection::top ? options.top : 0;
  for (const auto& o : sweep.objectives) h.objectives.push_back(o.text());
  h.columns = {"parallel.tp", "parallel.pp", "training.micro_batch", "parallel.recompute", "parallel.zero",
               "step_time_s", "memory_per_gpu_bytes.peak", "fits"};
  return h;
}

// The run as a CSV table (summary line without its timing).
std::string run_table(const SweepFile& sweep, const SweepRunOptions& options, SweepRunResult* out = nullptr) {
  std::ostringstream text;
  TableWriter writer(text, TableFormat::csv, header_of(sweep, options), FieldTable::training());
  writer.begin();
  SweepRunResult r = run_sweep(sweep, options, [&](std::uint64_t point, std::span<const double> row, std::span<const double> obj) {
    writer.row(point, row, obj);
  });
  for (const Candidate& c : r.kept) {
    std::vector<double> obj;
    for (std::size_t i = 0; i < sweep.objectives.size(); ++i) {
      obj.push_back(sweep.objectives[i].sense == Objective::Sense::minimize ? c.score[i] : -c.score[i]);
    }
    writer.row(c.point, c.row, obj);
  }
  r.summary.seconds = 0.0;
  writer.end(r.summary);
  if (out != nullptr) *out = r;
  return text.str();
}

std::string merged_table(const SweepFile& sweep, SweepRunOptions options, int shards) {
  std::vector<Table> tables;
  std::vector<std::string> names;
  for (int i = 0; i < shards; ++i) {
    options.shard_index = i;
    options.shard_count = shards;
    tables.push_back(parse_table(run_table(sweep, options), "shard" + std::to_string(i)));
    names.push_back("shard" + std::to_string(i));
  }
  std::ostringstream out;
  write_table(out, merge_tables(tables, names), FieldTable::training());
  return out.str();
}

}  // namespace

TEST_CASE("a sweep streams the same rows, in point order, for any thread count") {
  const SweepFile sweep = test_sweep();
  SweepRunOptions options;
  options.threads = 1;
  options.chunk = 7;  // chunks that do not divide the grid
  SweepRunResult r;
  const std::string one = run_table(sweep, options, &r);
  CHECK(r.summary.points == 5 * 3 * 3 * 2 * 2);
  CHECK(r.summary.invalid > 0);   // tp 3 divides neither 16 GPUs nor 32 heads
  CHECK(r.summary.pruned > 0);    // over 75 GiB
  CHECK(r.summary.kept == r.summary.points - r.summary.invalid - r.summary.pruned);
  CHECK(r.invalid_reasons.size() >= 1);
  for (int threads : {2, 4}) {
    options.threads = threads;
    CHECK(run_table(sweep, options) == one);
  }
}

TEST_CASE("sharded sweeps merge into the table of one run: all rows, top K and Pareto set") {
  const SweepFile sweep = test_sweep();
  for (Selection selection : {Selection::all, Selection::top, Selection::pareto}) {
    SweepRunOptions options;
    options.threads = 2;
    options.selection = selection;
    options.top = 5;
    CAPTURE(to_string(selection));
    const std::string one = run_table(sweep, options);
    CHECK(merged_table(sweep, options, 3) == one);
    CHECK(merged_table(sweep, options, 4) == one);
  }
}

TEST_CASE("merge refuses shards of different sweeps, repeated or missing shards") {
  const SweepFile sweep = test_sweep();
  SweepRunOptions options;
  options.shard_count = 2;
  const Table a = parse_table(run_table(sweep, options), "a");
  CHECK_THROWS_WITH_AS(merge_tables({a, a}, {"a", "b"}), "b: error: repeats shard 0", InputError);
  CHECK_THROWS_WITH_AS(merge_tables({a}, {"a"}), "merge: error: shards 1 of 2 are missing", InputError);
  Table other = a;
  other.header.fingerprint = "different";
  other.header.shard_index = 1;
  CHECK_THROWS_AS(merge_tables({a, other}, {"a", "other"}), InputError);
}
