// Speed of one training prediction (issue 2: under 50 us on one core; the search in issue 6
// needs ~10 us). GPT-3 175B on 1024 A100s: TP 8, PP 8 with 3 model chunks per stage (interleaved
// 1F1B), global batch 1536, micro-batch 1 -> 96 micro-batches, 4608 simulated passes.
//
// Run: build/bin/bench_predict [--benchmark_min_time=1]

#include <benchmark/benchmark.h>

#include "simulator/collective_models.h"
#include "simulator/training_predictor.h"
#include "tests/support/gpt3_scenario.h"

using namespace stepcast;

namespace {

// Predicts `sc` over and over with one predictor and one collective model built before the loop
// (as a sweep over one system would), so the predictor's caches are warm.
void predict_warm(benchmark::State& state, const Scenario& sc, const TrainingPredictorOptions& options) {
  TrainingPredictor predictor;
  const auto net = make_collective_model(default_collective_model(), sc.system, predictor.parameters());
  for (auto _ : state) {
    TrainingPrediction p = predictor.predict(sc, *net, options);
    benchmark::DoNotOptimize(p.step_time);
  }
}

// The options a search predicts with: no placement strings.
TrainingPredictorOptions search_options() {
  TrainingPredictorOptions options;
  options.describe_placement = false;
  return options;
}

// What `stepcast predict` does per scenario: full prediction with placement descriptions.
void BM_PredictGpt3_175B(benchmark::State& state) {
  predict_warm(state, test::gpt3_175b(1024, 8, 8, 3, 1536, 1), TrainingPredictorOptions{});
}
BENCHMARK(BM_PredictGpt3_175B)->Unit(benchmark::kMicrosecond);

// What a search evaluates per configuration: no placement strings, predictor and collective
// model reused.
void BM_PredictGpt3_175B_NoPlacement(benchmark::State& state) {
  predict_warm(state, test::gpt3_175b(1024, 8, 8, 3, 1536, 1), search_options());
}
BENCHMARK(BM_PredictGpt3_175B_NoPlacement)->Unit(benchmark::kMicrosecond);

// The same model without a pipeline (PP 1): the cost outside the schedule simulation.
void BM_PredictGpt3_175B_NoPipeline(benchmark::State& state) {
  predict_warm(state, test::gpt3_175b(1024, 8, 1, 1, 1536, 1), search_options());
}
BENCHMARK(BM_PredictGpt3_175B_NoPipeline)->Unit(benchmark::kMicrosecond);

// A fresh predictor and collective model per prediction: the pipeline order for (p, v, m) is not
// cached yet, so this includes building it.
void BM_PredictGpt3_175B_Cold(benchmark::State& state) {
  const Scenario sc = test::gpt3_175b(1024, 8, 8, 3, 1536, 1);
  for (auto _ : state) {
    TrainingPredictor predictor;
    const auto net = make_collective_model(default_collective_model(), sc.system, predictor.parameters());
    TrainingPrediction p = predictor.predict(sc, *net);
    benchmark::DoNotOptimize(p.step_time);
  }
}
BENCHMARK(BM_PredictGpt3_175B_Cold)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
