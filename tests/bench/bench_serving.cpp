// Speed of the serving simulator (issue 5: 100,000 requests of Llama 3 70B on 8 H100s in under
// one second on one core; an offline max-throughput run of 30,000 requests fast too).
//
// Scenario: scenarios/examples/llama3-70b-serving.yaml (TP 8 on one H100 node, lognormal
// prompts of mean 1024 / p99 4096 tokens and answers of mean 256 / p99 1024, continuous
// batching with chunked prefill, max_batch 256), with the request count and arrival rate below.
// Each iteration is one whole predict_inference(): request stream, simulation, statistics.
//
// Run: build/bin/bench_serving [--benchmark_min_time=1]

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "simulator/inference/inference_predictor.h"
#include "simulator/scenario_loader.h"

using namespace stepcast;

namespace {

Scenario example(const std::string& requests, const std::string& rate) {
  const std::vector<Override> overrides = {{"inference.requests", requests}, {"inference.arrival_rate", rate}};
  return load_scenario("llama3-70b-serving", overrides);
}

void run(benchmark::State& state, const Scenario& scenario) {
  double simulated_requests = 0.0;
  for (auto _ : state) {
    const InferencePrediction p = predict_inference(scenario);
    benchmark::DoNotOptimize(p.ttft.p99);
    simulated_requests += p.requests;
  }
  state.counters["requests_per_s"] = benchmark::Counter(simulated_requests, benchmark::Counter::kIsRate);
}

// The example's load (8 requests/s, about half the configuration's capacity): ~700k engine
// iterations with ~40 sequences each.
void BM_Serving100k_Llama3_70B_8xH100(benchmark::State& state) {
  run(state, example("100000", "8/s"));
}
BENCHMARK(BM_Serving100k_Llama3_70B_8xH100)->Unit(benchmark::kMillisecond);

// Near capacity (14/s): fuller batches, longer queues.
void BM_Serving100k_Llama3_70B_8xH100_NearCapacity(benchmark::State& state) {
  run(state, example("100000", "14/s"));
}
BENCHMARK(BM_Serving100k_Llama3_70B_8xH100_NearCapacity)->Unit(benchmark::kMillisecond);

// Offline max-throughput: 30,000 requests arriving at once (1,000,000/s).
void BM_Offline30k_Llama3_70B_8xH100(benchmark::State& state) {
  run(state, example("30000", "1000000/s"));
}
BENCHMARK(BM_Offline30k_Llama3_70B_8xH100)->Unit(benchmark::kMillisecond);

// One static-mode prediction (the TensorRT-LLM table setting): Llama 2 7B FP8, batch 64,
// 128 + 128 tokens.
void BM_Static_Llama2_7B_H100(benchmark::State& state) {
  const Scenario s = load_scenario("llama2-7b-static-fp8");
  for (auto _ : state) {
    const InferencePrediction p = predict_inference(s);
    benchmark::DoNotOptimize(p.output_tokens_per_s);
  }
}
BENCHMARK(BM_Static_Llama2_7B_H100)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
