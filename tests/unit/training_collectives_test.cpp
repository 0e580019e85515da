// The training predictor prices its collectives with the NCCL-faithful model on the placed
// groups: where a group sits, and what its links are shared with, changes the step time.

#include <doctest/doctest.h>

#include "model/placement.h"
#include "simulator/collective_models.h"
#include "simulator/training_predictor.h"
#include "tests/support/gpt3_scenario.h"

using namespace stepcast;

TEST_CASE("predictions use the nccl collective model by default") {
  CHECK(default_collective_model() == "nccl");
  const auto p = predict_training(test::gpt3_175b(1024, 8, 8, 3, 1536, 1));
  bool named = false;
  for (const auto& note : p.notes) named = named || note.find("'nccl'") != std::string::npos;
  CHECK(named);
}

TEST_CASE("moving a TP=8 group from inside a node to across two nodes raises GPT-3 175B step time") {
  // Same 1024 GPUs and the same NIC per GPU; only the NVLink domain changes: 8-GPU nodes keep the
  // TP group on NVLink, 4-GPU nodes split it over two nodes and their NICs.
  const Scenario inside = test::gpt3_175b(1024, 8, 8, 3, 1536, 1);
  Scenario split = inside;
  split.system.gpus_per_node = 4;
  split.system.nvlink_domain_gpus = 4;
  split.system.network.nics_per_node = 4;
  REQUIRE(layout_of(ParallelDim::tp, inside.parallel, inside.system).nodes == 1);
  REQUIRE(layout_of(ParallelDim::tp, split.parallel, split.system).nodes == 2);
  const auto a = predict_training(inside);
  const auto b = predict_training(split);
  CHECK(b.time.tp_comm_exposed > 2.0 * a.time.tp_comm_exposed);
  CHECK(b.step_time > a.step_time * 1.05);
}

TEST_CASE("a 4:1 spine slows a DP-heavy layout and leaves TP-only and in-leaf layouts alone") {
  // GPT-3 18.4B (Narayanan et al. 2021, Table 1 row) on 256 GPUs, leaves of 8 nodes: DP=32 over
  // 32 nodes crosses 4 leaf groups; DP is exposed with ZeRO-1's gathers and the last bucket.
  auto gpt18 = [](int gpus, int tp, int pp) {
    Scenario sc = test::gpt3_175b(gpus, tp, pp, 1, 1024, 8);
    sc.model.layers = 40;
    sc.model.hidden = 6144;
    sc.model.heads = 48;
    sc.model.kv_heads = 48;
    sc.model.head_dim = 128;
    sc.model.ffn_hidden = 4 * 6144;
    sc.system.network.nodes_per_leaf = 8;
    return sc;
  };
  auto oversubscribed = [](Scenario sc) {
    sc.system.network.oversubscription = 4.0;
    return sc;
  };
  const Scenario dp_heavy = gpt18(256, 8, 1);
  REQUIRE(layout_of(ParallelDim::dp, dp_heavy.parallel, dp_heavy.system).leaf_domains == 4);
  const auto flat = predict_training(dp_heavy);
  const auto over = predict_training(oversubscribed(dp_heavy));
  CHECK(over.time.dp_comm_exposed > 2.0 * flat.time.dp_comm_exposed);
  CHECK(over.step_time > flat.step_time);

  // TP only, inside one node: not a byte crosses the spine.
  const Scenario tp_only = gpt18(8, 8, 1);
  CHECK(predict_training(oversubscribed(tp_only)).step_time == predict_training(tp_only).step_time);
  // TP x PP over 8 nodes of one leaf group: the pipeline's sends stay under the leaf.
  const Scenario in_leaf = gpt18(64, 8, 8);
  CHECK(predict_training(oversubscribed(in_leaf)).step_time == predict_training(in_leaf).step_time);
}
