// Speed of `stepcast search` (issue 6: the full GPT-3 175B search on 512 A100s at global batch
// 1536 evaluates at least 200,000 configurations per second on 2 cores and finishes in under a
// minute; Calculon, measured on the same kind of machine, does ~2,300/s).
//
// Scenario: scenarios/examples/gpt3-175b-selene.yaml (GPT-3 175B, DGX A100 nodes, seq 2048) on
// 512 GPUs at global batch 1536. The space is simulator/training_layouts.h's default: every valid
// tp, pp (dp follows), vpp, micro_batch, sequence_parallel, recompute (none, selective, full),
// ZeRO stage (0-3) and schedule (GPipe, 1F1B, interleaved 1F1B); ep is 1 (a dense model) and cp
// and offload are not in the default space (the predictor prices neither yet): 39,732 layouts.
// The "_full" variant adds cp > 1 and every useful setting of the three overlap flags
// (tp_comm_overlap, overlap_grad_reduce, overlap_param_gather): 1,223,310 layouts. Its cp > 1
// layouts are not priced for their K/V exchange, so that variant measures the rate over the
// largest space; its answer has cp = 1 today (the exhaustive check in the README).
//
// Each iteration is one whole run_training_search(): enumerate and screen every layout (exact
// memory, step-time lower bound), then predict in bound order until no remaining layout can
// enter the top 10. "configs_per_s" counts every layout of the space (enumerated and decided:
// pruned, infeasible, timed or skipped by a bound no better than the 10th best) over wall time.
//
// Run: build/bin/bench_search [--benchmark_min_time=1]

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "simulator/scenario_loader.h"
#include "simulator/training_search.h"

using namespace stepcast;

namespace {

Scenario gpt3_512() {
  const std::vector<Override> overrides = {{"system.gpus", "512"}, {"training.global_batch", "1536"}};
  return load_scenario("gpt3-175b-selene", overrides);
}

void run(benchmark::State& state, bool full) {
  const Scenario base = gpt3_512();
  SearchOptions options;
  options.top = 10;
  options.threads = static_cast<int>(state.range(0));
  options.space.context_parallel = full;
  options.space.overlap_flags = full;
  double configs = 0.0;
  SearchCounts last;
  for (auto _ : state) {
    const SearchResult r = run_training_search(base, options);
    benchmark::DoNotOptimize(r.best.data());
    configs += static_cast<double>(r.counts.enumerated);
    last = r.counts;
  }
  state.counters["configs_per_s"] = benchmark::Counter(configs, benchmark::Counter::kIsRate);
  state.counters["space"] = static_cast<double>(last.space);
  state.counters["feasible"] = static_cast<double>(last.feasible);
  state.counters["timed"] = static_cast<double>(last.timed);
  state.counters["screen_s"] = last.screen_seconds;
  state.counters["time_s"] = last.time_seconds;
}

void BM_SearchGpt3_175B_512xA100(benchmark::State& state) { run(state, false); }
BENCHMARK(BM_SearchGpt3_175B_512xA100)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SearchGpt3_175B_512xA100_full(benchmark::State& state) { run(state, true); }
BENCHMARK(BM_SearchGpt3_175B_512xA100_full)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
