// Speed of pricing one collective with the "nccl" model: issue #3 asks for under 1 us, so that a
// search over millions of configurations stays fast. Run: build/bin/bench_collective
#include <benchmark/benchmark.h>

#include "model/nccl_model.h"
#include "tests/support/reference_systems.h"

using namespace stepcast;

namespace {

GroupLayout group(int size, int per_domain, double nic_share) {
  GroupLayout g;
  g.size = size;
  g.ranks_per_node = per_domain;
  g.nodes = (size + per_domain - 1) / per_domain;
  g.nic_share = nic_share;
  return g;
}

// Sizes spread over the latency and bandwidth regimes so the branch predictor cannot learn one.
const double kSizes[] = {8.0, 4096.0, 65536.0, 1048576.0, 16777216.0, 268435456.0, 4294967296.0};

void price(benchmark::State& state, const SystemSpec& system, const GroupLayout& g, CollectiveOp op) {
  const NcclCollectiveModel model(system);  // built once, outside the loop: the hot path is time()
  std::size_t i = 0;
  for (auto _ : state) {
    const Seconds t = model.time(op, Bytes(kSizes[i]), g);
    benchmark::DoNotOptimize(t);
    i = (i + 1) % std::size(kSizes);
  }
}

void BM_AllReduceTpInsideH100Node(benchmark::State& state) {
  price(state, test::dgx_h100(1), group(8, 8, 1.0), CollectiveOp::all_reduce);
}
void BM_AllReduceDp128NodesH100(benchmark::State& state) {
  price(state, test::dgx_h100(128), group(128, 1, 1.0 / 8.0), CollectiveOp::all_reduce);
}
void BM_AllGather16NodesEfa(benchmark::State& state) {
  price(state, test::aws_p5(16), group(128, 8, 1.0), CollectiveOp::all_gather);
}
void BM_AllToAllGb200(benchmark::State& state) {
  price(state, test::gb200_nvl72(2, true), group(64, 32, 32.0 / 72.0), CollectiveOp::all_to_all);
}

}  // namespace

BENCHMARK(BM_AllReduceTpInsideH100Node);
BENCHMARK(BM_AllReduceDp128NodesH100);
BENCHMARK(BM_AllGather16NodesEfa);
BENCHMARK(BM_AllToAllGb200);

BENCHMARK_MAIN();
