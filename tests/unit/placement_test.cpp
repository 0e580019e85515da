#include <doctest/doctest.h>

#include "model/placement.h"

using namespace stepcast;

namespace {
SystemSpec dgx(int gpus) {
  SystemSpec s;
  s.gpus = gpus;
  s.gpus_per_node = 8;
  s.gpu.nvlink_bandwidth = units::gigabytes_per_second(300);
  s.network.nodes_per_leaf = 32;
  return s;
}
ParallelConfig layout(int tp, int pp, int dp, int cp = 1) {
  ParallelConfig p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.cp = cp;
  return p;
}
}  // namespace

TEST_CASE("Megatron order puts TP=8 inside one node and DP across rails") {
  // GPT-3 175B on 1024 GPUs: TP 8, PP 8, DP 16.
  const auto p = layout(8, 8, 16);
  const auto sys = dgx(1024);
  const auto tp = layout_of(ParallelDim::tp, p, sys);
  CHECK(tp.size == 8);
  CHECK(tp.nodes == 1);
  CHECK(tp.ranks_per_node == 8);
  const auto dp = layout_of(ParallelDim::dp, p, sys);
  CHECK(dp.size == 16);
  CHECK(dp.nodes == 16);           // stride 8: one GPU on each of 16 nodes
  CHECK(dp.ranks_per_node == 1);
  CHECK(dp.nic_share == doctest::Approx(1.0 / 8.0));  // one rail of eight
  CHECK(describe(tp, sys) == "inside NVLink (8 GPUs of one node)");
  CHECK(describe(dp, sys) == "16 nodes across rails (1 GPU per node, 1/8 of each node's NICs)");
}

TEST_CASE("pipeline stages are the slowest dimension") {
  const auto p = layout(8, 8, 16);
  const auto stages = group_members(ParallelDim::pp, p);
  REQUIRE(stages.size() == 8);
  CHECK(stages[1] == 8 * 16);  // stride tp * dp
  const auto next = pipeline_neighbour_layout(p, dgx(1024));
  CHECK(next.nodes == 2);
}

TEST_CASE("TP=4 leaves two DP ranks per node sharing its NICs") {
  const auto p = layout(4, 1, 16);
  const auto dp = layout_of(ParallelDim::dp, p, dgx(64));
  CHECK(dp.nodes == 8);
  CHECK(dp.ranks_per_node == 2);
  CHECK(dp.nic_share == doctest::Approx(0.25));
}

TEST_CASE("a TP group larger than a node spans nodes") {
  const auto p = layout(16, 1, 1);
  const auto tp = layout_of(ParallelDim::tp, p, dgx(16));
  CHECK(tp.nodes == 2);
  CHECK(tp.ranks_per_node == 8);
  CHECK(tp.nic_share == doctest::Approx(1.0));
}

TEST_CASE("expert parallelism splits the data-parallel dimension") {
  auto p = layout(2, 1, 8);
  p.ep = 4;
  const auto ep = group_members(ParallelDim::ep, p);
  CHECK(ep == std::vector<int>{0, 2, 4, 6});
  const auto dp = group_members(ParallelDim::dp, p);
  CHECK(dp == std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14});
}

TEST_CASE("groups spanning more nodes than a leaf serves cross the spine") {
  const auto p = layout(8, 1, 64);
  const auto dp = layout_of(ParallelDim::dp, p, dgx(512));
  CHECK(dp.nodes == 64);
  CHECK(dp.leaf_domains == 2);
}
