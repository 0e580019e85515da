// The serving search (simulator/serving_search.h): its best layouts equal predicting every layout
// of the space one at a time, whatever the thread count; layouts the loader rejects are counted,
// not ranked; constraints hold in every kept row.

#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <cmath>
#include <tuple>

#include "simulator/collective_models.h"
#include "simulator/diagnostics.h"
#include "simulator/inference/inference_predictor.h"
#include "simulator/scenario_loader.h"
#include "simulator/serving_search.h"
#include "simulator/table_merge.h"

using namespace stepcast;

namespace {

// Llama 3 8B on up to 4 H100s, a short Poisson stream with SLOs: small enough to simulate every
// layout in a test.
Scenario small_serving(const char* gpu = "h100-sxm-80gb") {
  return parse_scenario(std::string(R"(
schema_version: 1
model: llama3-8b
system: {gpu: )") + gpu + R"(, gpus: 4}
inference:
  mode: serving
  arrival_rate: 20/s
  requests: 150
  input_len: {dist: lognormal, mean: 512, p99: 2048}
  output_len: {dist: lognormal, mean: 128, p99: 512}
  max_batch: 64
  max_batch_tokens: 4096
  slo: {ttft: 300 ms, tpot: 40 ms}
  seed: 3
parallel: {tp: 1}
precision: bf16
)",
                        "<test>");
}

ServingSearchOptions small_options() {
  ServingSearchOptions o;
  o.space.max_batch = {16, 64};
  o.top = 5;
  o.threads = 2;
  return o;
}

struct Scored {
  double goodput_per_gpu = 0.0;
  double ttft_p99 = 0.0;
  std::uint64_t point = 0;
};

}  // namespace

TEST_CASE("the serving search's best layouts equal predicting every layout one at a time") {
  const Scenario base = small_serving();
  const ServingSearchOptions options = small_options();
  const ServingSpace space(base, options.space);
  // tp in {1, 2, 4, 8} limited to 4 GPUs: (1, r = 1..4), (2, r = 1..2), (4, r = 1): 7 engines x 4
  // precisions x 2 max_batch values.
  CHECK(space.size() == 7 * 4 * 2);
  std::vector<Scored> all;
  std::uint64_t invalid = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    Scenario sc = base;
    if (!apply_serving_layout(space.at(i), sc).empty()) {
      ++invalid;
      continue;
    }
    const auto net = make_collective_model(default_collective_model(), sc.system, CostParameters{});
    InferencePredictorOptions po;
    po.collectives = net.get();
    po.time_series = false;
    const InferencePrediction p = predict_inference(sc, po);
    if (!p.fits) continue;
    all.push_back({p.goodput_requests_per_s / sc.system.gpus, p.ttft.p99.value(), i});
  }
  std::sort(all.begin(), all.end(), [](const Scored& a, const Scored& b) {
    return std::tuple(-a.goodput_per_gpu, a.ttft_p99, a.point) < std::tuple(-b.goodput_per_gpu, b.ttft_p99, b.point);
  });
  const ServingSearchResult r = run_serving_search(base, options);
  CHECK(r.counts.enumerated == space.size());
  CHECK(r.counts.invalid == invalid);
  REQUIRE(r.best.size() == 5);
  const FieldTable& t = FieldTable::serving();
  for (std::size_t k = 0; k < 5; ++k) {
    CAPTURE(k);
    CHECK(r.best[k].point == all[k].point);
    CHECK(r.best[k].row[static_cast<std::size_t>(t.slot_of("goodput_per_gpu"))] == all[k].goodput_per_gpu);
  }
  // One thread gives the same ranking.
  ServingSearchOptions one = options;
  one.threads = 1;
  const ServingSearchResult r1 = run_serving_search(base, one);
  REQUIRE(r1.best.size() == r.best.size());
  for (std::size_t k = 0; k < r.best.size(); ++k) CHECK(r1.best[k].point == r.best[k].point);
}

TEST_CASE("a serving layout uses replicas x tp GPUs and the precision's inference meaning") {
  Scenario sc = small_serving();
  ServingLayout l;
  l.tp = 2;
  l.replicas = 1;
  l.precision = DataType::int4;
  l.max_batch = 32;
  l.max_batch_tokens = 2048;
  CHECK(apply_serving_layout(l, sc).empty());
  CHECK(sc.system.gpus == 2);
  CHECK(sc.inference().serving.replicas == 1);
  CHECK(sc.precision.params == DataType::int4);
  CHECK(sc.precision.compute == DataType::bf16);  // int4 is weight-only
  CHECK(sc.inference().serving.max_batch == 32);
  CHECK(sc.inference().serving.max_batch_tokens == 2048);
}

TEST_CASE("on an A100, FP8 layouts are invalid (no FP8 tensor cores) and never ranked") {
  const Scenario base = small_serving("a100-sxm-80gb");
  ServingSearchOptions options = small_options();
  options.space.precisions = {DataType::bf16, DataType::fp8};
  const ServingSearchResult r = run_serving_search(base, options);
  // Half of the 7 x 2 x 2 layouts are FP8.
  CHECK(r.counts.invalid == 14);
  const int prec = FieldTable::serving().slot_of("precision");
  for (const Candidate& c : r.best) CHECK(FieldTable::serving().format(prec, c.row[static_cast<std::size_t>(prec)]) == "bf16");
}

TEST_CASE("every layout the serving search keeps meets its constraints") {
  const Scenario base = small_serving();
  ServingSearchOptions options = small_options();
  ExprError error;
  options.constraints.push_back(*Expression::parse("slo_attainment >= 0.99 and system.gpus >= 2",
                                                   FieldTable::serving().resolver(), error));
  const ServingSearchResult r = run_serving_search(base, options);
  REQUIRE(!r.best.empty());
  CHECK(r.counts.pruned > 0);
  const FieldTable& t = FieldTable::serving();
  for (const Candidate& c : r.best) {
    CHECK(c.row[static_cast<std::size_t>(t.slot_of("slo_attainment"))] >= 0.99);
    CHECK(c.row[static_cast<std::size_t>(t.slot_of("system.gpus"))] >= 2);
  }
}

TEST_CASE("serving search shards, written as tables and merged, give the one-run table") {
  const Scenario base = small_serving();
  ServingSearchOptions options = small_options();
  options.space.precisions = {DataType::bf16, DataType::int4};
  const auto table_of = [&](const ServingSearchResult& r) {
    std::ostringstream out;
    write_serving_search_table(out, TableFormat::csv, serving_search_table_header(base, options), r);
    return out.str();
  };
  const ServingSearchResult one = run_serving_search(base, options);
  const Table reference = parse_table(table_of(one), "one");
  std::vector<Table> shards;
  std::vector<std::string> names;
  options.shard_count = 3;
  for (int i = 0; i < 3; ++i) {
    options.shard_index = i;
    shards.push_back(parse_table(table_of(run_serving_search(base, options)), "shard" + std::to_string(i)));
    names.push_back("shard" + std::to_string(i));
  }
  const Table merged = merge_tables(shards, names);
  REQUIRE(merged.rows.size() == reference.rows.size());
  CHECK(merged.header.kind == "serving-search");
  for (std::size_t k = 0; k < merged.rows.size(); ++k) {
    CAPTURE(k);
    CHECK(merged.rows[k].point == reference.rows[k].point);
    CHECK(merged.rows[k].cells == reference.rows[k].cells);
  }
  CHECK(merged.summary.points == reference.summary.points);
  CHECK(merged.summary.invalid == reference.summary.invalid);
}

TEST_CASE("the serving search refuses training and disaggregated scenarios") {
  const Scenario training = load_scenario("gpt3-175b-selene");
  CHECK_THROWS_AS(run_serving_search(training, {}), InputError);
  const Scenario disaggregated = load_scenario("llama3-8b-disaggregated");
  CHECK_THROWS_AS(run_serving_search(disaggregated, {}), InputError);
}
