#include <doctest/doctest.h>

#include "model/placement.h"
#include "tests/support/parallel_layout.h"
#include "model/topology.h"

using namespace stepcast;
using test::parallel_layout;

namespace {
SystemSpec dgx(int gpus) {
  SystemSpec s;
  s.gpus = gpus;
  s.gpus_per_node = 8;
  s.gpu.nvlink_bandwidth = units::gigabytes_per_second(300);
  s.network.nodes_per_leaf = 32;
  return s;
}
}  // namespace

TEST_CASE("Megatron order puts TP=8 inside one node and DP across rails") {
  // GPT-3 175B on 1024 GPUs: TP 8, PP 8, DP 16.
  const auto p = parallel_layout(8, 8, 16);
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
  const auto p = parallel_layout(8, 8, 16);
  const auto stages = group_members(ParallelDim::pp, p);
  REQUIRE(stages.size() == 8);
  CHECK(stages[1] == 8 * 16);  // stride tp * dp
  const auto next = pipeline_neighbour_layout(p, dgx(1024));
  CHECK(next.nodes == 2);
}

TEST_CASE("TP=4 leaves two DP ranks per node sharing its NICs") {
  const auto p = parallel_layout(4, 1, 16);
  const auto dp = layout_of(ParallelDim::dp, p, dgx(64));
  CHECK(dp.nodes == 8);
  CHECK(dp.ranks_per_node == 2);
  CHECK(dp.nic_share == doctest::Approx(0.25));
}

TEST_CASE("a TP group larger than a node spans nodes") {
  const auto p = parallel_layout(16, 1, 1);
  const auto tp = layout_of(ParallelDim::tp, p, dgx(16));
  CHECK(tp.nodes == 2);
  CHECK(tp.ranks_per_node == 8);
  CHECK(tp.nic_share == doctest::Approx(1.0));
}

TEST_CASE("with expert_tp = tp and no context parallelism, expert parallelism splits the data-parallel ranks") {
  // Megatron-Core's expert RankGenerator(tp = expert_tp, ep, dp = tp*cp*dp/(expert_tp*ep), cp = 1)
  // over "tp-cp-ep-dp-pp": expert_tp = tp = 2 (its default, 0: follows tp) gives EP stride 2, the
  // older layout.
  auto p = parallel_layout(2, 1, 8);
  p.ep = 4;
  CHECK(p.expert_tensor_parallel() == 2);
  CHECK(group_members(ParallelDim::ep, p) == std::vector<int>{0, 2, 4, 6});
  CHECK(group_members(ParallelDim::etp, p) == std::vector<int>{0, 1});
  CHECK(group_members(ParallelDim::edp, p) == std::vector<int>{0, 8});  // 2*8/(2*4) = 2 replicas
  // Dense layers keep their data-parallel group: stride tp, all 8 replicas.
  CHECK(group_members(ParallelDim::dp, p) == std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14});
}

TEST_CASE("expert_tp = 1 folds the tensor-parallel ranks into expert parallelism") {
  // Qwen3-235B-A22B on 256 H100s (Megatron-Bridge): TP 2, PP 8, DP 16, EP 32, expert TP 1.
  // tp*cp*dp = 32 ranks per stage regroup as 1 x 32 x 1: one EP group of 32 adjacent GPUs.
  auto p = parallel_layout(2, 8, 16);
  p.ep = 32;
  p.expert_tp = 1;
  const auto ep = group_members(ParallelDim::ep, p);
  REQUIRE(ep.size() == 32);
  CHECK(ep[1] == 1);
  CHECK(ep.back() == 31);
  const auto placed = layout_of(ParallelDim::ep, p, dgx(256));
  CHECK(placed.nodes == 4);
  CHECK(placed.ranks_per_node == 8);
  CHECK(placed.nic_share == doctest::Approx(1.0));
  CHECK(group_members(ParallelDim::edp, p) == std::vector<int>{0});
}

TEST_CASE("context-parallel ranks fold into the expert dimensions, and reduce dense gradients with dp") {
  // TP 1, CP 2, DP 4, EP 8: the 8 ranks of (cp, dp) form one EP group.
  auto p = parallel_layout(1, 1, 4, 2);
  p.ep = 8;
  CHECK(group_members(ParallelDim::ep, p) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(group_members(ParallelDim::cp, p) == std::vector<int>{0, 1});
  CHECK(group_members(ParallelDim::dp, p) == std::vector<int>{0, 2, 4, 6});
  // Dense-weight gradients: Megatron's data-parallel group with context parallelism, dp x cp.
  CHECK(gradient_group_members(parallel_layout(2, 1, 4, 2)) == std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14});
  CHECK(gradient_group_members(parallel_layout(8, 1, 4)) == group_members(ParallelDim::dp, parallel_layout(8, 1, 4)));
}

TEST_CASE("groups spanning more nodes than a leaf serves cross the spine") {
  const auto p = parallel_layout(8, 1, 64);
  const auto dp = layout_of(ParallelDim::dp, p, dgx(512));
  CHECK(dp.nodes == 64);
  CHECK(dp.leaf_domains == 2);
}

TEST_CASE("a GB200 NVL72 rack is one node for communication: TP=8 over two trays stays inside NVLink") {
  SystemSpec s = dgx(144);
  s.gpus_per_node = 4;
  s.nvlink_domain_gpus = 72;
  const auto tp = layout_of(ParallelDim::tp, parallel_layout(8, 1, 18), s);
  CHECK(tp.nodes == 1);
  CHECK(tp.leaf_domains == 1);
  CHECK(describe(tp, s) == "inside NVLink (8 GPUs of one 72-GPU NVLink domain)");
  const auto dp = layout_of(ParallelDim::dp, parallel_layout(8, 1, 18), s);
  CHECK(dp.nodes == 2);            // 18 DP ranks, 8 GPUs apart: 9 per rack
  CHECK(dp.ranks_per_node == 9);
  CHECK(dp.nic_share == doctest::Approx(9.0 / 72.0));
}

TEST_CASE("configurable order: dp before tp puts DP inside a node and TP across nodes") {
  auto p = parallel_layout(8, 1, 8);
  p.order = "dp-tp-pp";
  const auto sys = dgx(64);
  CHECK(layout_of(ParallelDim::dp, p, sys).nodes == 1);
  CHECK(layout_of(ParallelDim::tp, p, sys).nodes == 8);
}

TEST_CASE("the topology says which links a group's ring crosses") {
  SystemSpec s = dgx(64);
  s.network.nics_per_node = 8;
  s.network.nic_bandwidth = units::gigabits_per_second(400);
  s.network.nodes_per_leaf = 4;
  const Topology topo(s);
  const auto p = parallel_layout(8, 1, 8);
  const auto tp = links_crossed(group_members(ParallelDim::tp, p), topo);
  CHECK(tp == GroupLinks{true, false, false, false});
  CHECK(describe(tp) == "NVLink");
  // DP over 8 nodes, 4 per leaf: through NICs, leaves and the spine, never NVLink.
  const auto dp = links_crossed(group_members(ParallelDim::dp, p), topo);
  CHECK(dp.network);
  CHECK(dp.spine);
  CHECK_FALSE(dp.nvlink);
  CHECK(describe(dp) == "network + spine");
}

TEST_CASE("placement strings for predict and explain") {
  SystemSpec s = dgx(1024);
  const auto p = parallel_layout(8, 8, 16);
  CHECK(placement_summary(p, s) ==
        "TP: inside NVLink (8 GPUs of one node); DP: 16 nodes across rails (1 GPU per node, 1/8 of each node's "
        "NICs); PP: stage to stage: 2 nodes across rails (1 GPU per node, 1/8 of each node's NICs)");
  const auto report = placement_report(p, s);
  REQUIRE(report.size() == 3);
  CHECK(report[0].group == "tp");
  CHECK(report[1].size == 16);
  SystemSpec over = dgx(512);
  over.network.oversubscription = 4.0;
  CHECK(describe(layout_of(ParallelDim::dp, parallel_layout(8, 1, 64), over), over) ==
        "64 nodes across rails (1 GPU per node, 1/8 of each node's NICs), through the spine (2 leaf switches, 4:1 "
        "oversubscribed)");
}
