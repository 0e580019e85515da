// The token permutations of a MoE layer under each dispatcher (model/parallel.h ExpertDispatcher,
// model/moe_ops.h; Megatron-Core megatron/core/transformer/moe/token_dispatcher.py):
//   alltoall  permute before the all-to-all, sort the received chunks by expert after it, and the
//             inverses around the combine (MoEAlltoAllTokenDispatcher: sort_chunks_by_idxs)
//   deepep    the flex dispatcher sends tokens, not copies, and permutes what it received into
//             expert order (_DeepepManager get_permuted_hidden_states_by_experts): no chunk sort
//   hybridep  the permutations run inside HybridEP's dispatch and combine kernels
//             (_HybridEPManager: dispatch_with_permute / combine_with_unpermute): none of their own
// Each one's op list, the host synchronization point, the traffic HybridEP shares with DeepEP, and
// the scenario spelling.
#include <doctest/doctest.h>

#include <string>

#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "model/moe_ops.h"
#include "simulator/catalog.h"
#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/catalog_model.h"
#include "tests/support/moe_layer.h"
#include "tests/support/op_lookup.h"

using namespace stepcast;

namespace {

// Qwen3-30B-A3B's MoE layer on one rank of EP 8, one 4096-token sequence (16 local experts).
LayerShape qwen3_layer(ExpertDispatcher dispatcher, int ep = 8,
                       MoeGroupedGemm grouped = MoeGroupedGemm::per_expert) {
  ParallelConfig p;
  p.ep = ep;
  p.expert_tp = 1;
  p.ep_dispatcher = dispatcher;
  p.moe_grouped_gemm = grouped;
  return test::one_sequence_moe_layer(test::catalog_model("qwen3-30b-a3b"), p);
}

constexpr const char* kForwardPermutations[] = {"moe_permute", "moe_sort_chunks", "moe_unsort_chunks", "moe_unpermute"};
constexpr const char* kBackwardPermutations[] = {"moe_unpermute.backward", "moe_sort_chunks.backward",
                                                 "moe_unsort_chunks.backward", "moe_permute.backward"};

bool has(const OpList& ops, const char* name) { return test::find_op(ops, name) != nullptr; }

}  // namespace

TEST_CASE("the all-to-all dispatcher permutes, sorts the received chunks by expert, and undoes both") {
  const LayerShape s = qwen3_layer(ExpertDispatcher::alltoall);
  const OpList forward = layer_forward_ops(s);
  const OpList backward = layer_backward_ops(s);
  for (const char* name : kForwardPermutations) CHECK_MESSAGE(has(forward, name), name);
  for (const char* name : kBackwardPermutations) CHECK_MESSAGE(has(backward, name), name);
  // A chunk sort reads and writes every row the rank's experts get: 4096 tokens x top-8 = 32768
  // rows (the EP group's tokens to this rank's 16 of 128 experts) x 2048 x 2 bytes, both ways.
  const Op* sort = test::find_op(forward, "moe_sort_chunks");
  REQUIRE(sort != nullptr);
  CHECK(sort->bytes.value() == doctest::Approx(32768.0 * 2048.0 * 2.0 * 2.0));
}

TEST_CASE("the flex dispatcher with DeepEP permutes the received tokens into expert order and sorts no chunks") {
  const LayerShape flex = qwen3_layer(ExpertDispatcher::deepep);
  const LayerShape a2a = qwen3_layer(ExpertDispatcher::alltoall);
  const OpList forward = layer_forward_ops(flex);
  const OpList backward = layer_backward_ops(flex);
  for (const char* name : {"moe_sort_chunks", "moe_unsort_chunks"}) CHECK_MESSAGE(!has(forward, name), name);
  for (const char* name : {"moe_sort_chunks.backward", "moe_unsort_chunks.backward"}) {
    CHECK_MESSAGE(!has(backward, name), name);
  }
  // One permute and one unpermute each way, of the rank's 32768 expert rows: the same bytes as the
  // all-to-all dispatcher's token x top_k copies (rows = tokens x top_k over the EP group).
  for (const char* name : {"moe_permute", "moe_unpermute"}) {
    const Op* f = test::find_op(forward, name);
    const Op* a = test::find_op(layer_forward_ops(a2a), name);
    REQUIRE(f != nullptr);
    REQUIRE(a != nullptr);
    CHECK(f->bytes.value() == doctest::Approx(a->bytes.value()));
  }
  CHECK(has(backward, "moe_permute.backward"));
  CHECK(has(backward, "moe_unpermute.backward"));
  // Two chunk sorts fewer each way, 32768 x 2048 x 2 x 2 bytes each.
  const double sort = 32768.0 * 2048.0 * 2.0 * 2.0;
  const auto bytes = [](const OpList& ops) {
    double b = 0.0;
    for (const Op& op : ops) b += op.bytes.value();
    return b;
  };
  CHECK(bytes(layer_forward_ops(a2a)) - bytes(forward) == doctest::Approx(2.0 * sort));
  CHECK(bytes(layer_backward_ops(a2a)) - bytes(backward) == doctest::Approx(2.0 * sort));
}

TEST_CASE("HybridEP permutes inside its dispatch and combine kernels: no permutation kernels over EP") {
  const LayerShape s = qwen3_layer(ExpertDispatcher::hybridep);
  const OpList forward = layer_forward_ops(s);
  const OpList backward = layer_backward_ops(s);
  for (const char* name : kForwardPermutations) CHECK_MESSAGE(!has(forward, name), name);
  for (const char* name : kBackwardPermutations) CHECK_MESSAGE(!has(backward, name), name);
  // The other kernels are DeepEP's, one for one.
  const OpList deepep = layer_forward_ops(qwen3_layer(ExpertDispatcher::deepep));
  CHECK(forward.size() == deepep.size() - 2);
  // Without EP there is no dispatch kernel to fuse into: the permutations stay.
  const LayerShape one = qwen3_layer(ExpertDispatcher::hybridep, 1);
  CHECK(has(layer_forward_ops(one), "moe_permute"));
  CHECK(has(layer_forward_ops(one), "moe_unpermute"));
}

TEST_CASE("the flex dispatcher needs the routing counts at the dispatch: its host sync follows the router") {
  // The all-to-all dispatcher syncs after its permute, before the all-to-all; DeepEP and HybridEP
  // right after routing (the dispatch itself reads the counts).
  CHECK(moe_host_sync_after(qwen3_layer(ExpertDispatcher::alltoall)) == "moe_permute");
  for (ExpertDispatcher d : {ExpertDispatcher::deepep, ExpertDispatcher::hybridep}) {
    const LayerShape s = qwen3_layer(d);
    CHECK(moe_forward_host_sync(s));  // per-expert GEMMs take host split lists
    CHECK(moe_host_sync_after(s) == "router_topk");
    CHECK(has(layer_forward_ops(s), "router_topk"));
    // Grouped GEMMs with the counts on the device: no sync with either backend.
    CHECK_FALSE(moe_forward_host_sync(qwen3_layer(d, 8, MoeGroupedGemm::grouped)));
  }
}

TEST_CASE("parallel.ep_dispatcher hybridep: DeepEP's traffic, fewer kernels, and the loader reads and writes it") {
  Scenario sc = load_scenario("mixtral-8x7b-ep");  // 16 H100s, tp 2, ep 8 over 2 nodes
  TrainingPredictor predictor;
  sc.parallel.ep_dispatcher = ExpertDispatcher::deepep;
  const TrainingPrediction deepep = predictor.predict(sc);
  sc.parallel.ep_dispatcher = ExpertDispatcher::hybridep;
  const TrainingPrediction hybridep = predictor.predict(sc);
  // The same exchanges (model/moe_ops.h moe_deepep_time prices both backends) ...
  CHECK(hybridep.time.ep_comm_exposed.value() == doctest::Approx(deepep.time.ep_comm_exposed.value()));
  // ... and less compute: Mixtral's 8 experts over EP 8 are one per rank (no chunk sort either
  // way), so the permute and unpermute, forward and backward, are what goes.
  CHECK(hybridep.time.compute < deepep.time.compute);
  CHECK(parse_scenario(write_scenario_yaml(sc), sc.source) == sc);

  const auto error_of = [](const std::string& value) -> std::string {
    try {
      parse_scenario("schema_version: 1\nmodel: mixtral-8x7b\nsystem: {preset: dgx-h100, gpus: 16}\n"
                     "training: {seq_len: 4096, global_batch: 16}\nparallel: {tp: 2, ep: 8, ep_dispatcher: " +
                         value + "}\n",
                     "t.yaml");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(error_of("hybridep").empty());
  const std::string bad = error_of("hybrid_ep");
  CHECK(bad.find("parallel.ep_dispatcher") != std::string::npos);
  CHECK(bad.find("did you mean 'hybridep'") != std::string::npos);
}
