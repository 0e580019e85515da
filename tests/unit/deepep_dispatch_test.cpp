// The flex dispatcher with DeepEP / HybridEP (parallel.ep_dispatcher: deepep, model/moe_ops.h
// moe_deepep_bytes): the expected number of distinct bins a token's experts reach, against a
// brute-force enumeration of every routing and against its closed forms; the bytes it puts on
// the network and on NVLink; the scenario setting and the router's group limit as the loader reads
// and checks them.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "model/layer_shape.h"
#include "model/moe_ops.h"
#include "simulator/catalog.h"
#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/moe_layer.h"

using namespace stepcast;

namespace {

// Bin of expert e among `bins` contiguous bins of E experts, with the bounds floor(j E / bins).
int bin_of(int e, int experts, int bins) {
  int j = 0;
  while (static_cast<long long>(j + 1) * experts / bins <= e) ++j;
  return j;
}

// Calls f on every k-subset of `items`.
template <class F>
void for_each_subset(const std::vector<int>& items, int k, std::vector<int>& chosen, std::size_t from, F&& f) {
  if (static_cast<int>(chosen.size()) == k) {
    f(chosen);
    return;
  }
  for (std::size_t i = from; i < items.size(); ++i) {
    chosen.push_back(items[i]);
    for_each_subset(items, k, chosen, i + 1, f);
    chosen.pop_back();
  }
}

// E[distinct bins] by enumerating every equally likely routing: each choice of router_group_topk
// groups, then each choice of top_k experts among theirs.
double brute_force_distinct_bins(const MoeSpec& moe, int bins) {
  const int G = moe.group_limited() ? moe.router_groups : 1;
  const int M = moe.group_limited() ? moe.router_group_topk : 1;
  const int size = moe.experts / G;
  std::vector<int> groups(static_cast<std::size_t>(G));
  for (int g = 0; g < G; ++g) groups[static_cast<std::size_t>(g)] = g;
  double total = 0.0;
  double cases = 0.0;
  std::vector<int> picked_groups;
  for_each_subset(groups, M, picked_groups, 0, [&](const std::vector<int>& gs) {
    std::vector<int> eligible;
    for (int g : gs) {
      for (int e = g * size; e < (g + 1) * size; ++e) eligible.push_back(e);
    }
    double sum = 0.0;
    double count = 0.0;
    std::vector<int> picked;
    for_each_subset(eligible, moe.top_k, picked, 0, [&](const std::vector<int>& es) {
      std::set<int> hit;
      for (int e : es) hit.insert(bin_of(e, moe.experts, bins));
      sum += static_cast<double>(hit.size());
      count += 1.0;
    });
    total += sum / count;  // each group choice is equally likely, and each expert choice within it
    cases += 1.0;
  });
  return total / cases;
}

MoeSpec moe_of(int experts, int top_k, int groups = 0, int group_topk = 0) {
  MoeSpec m;
  m.experts = experts;
  m.top_k = top_k;
  m.router_groups = groups;
  m.router_group_topk = group_topk;
  return m;
}

// C(n - a, k) / C(n, k).
double miss(double n, double a, int k) {
  double p = 1.0;
  for (int i = 0; i < k; ++i) p *= (n - a - i) / (n - i);
  return p;
}

}  // namespace

TEST_CASE("the expected distinct bins a token's experts reach match an enumeration of every routing") {
  // Without a group limit: 16 experts, top-4, over 2, 4, 5 (uneven: 3,3,3,3,4 experts) and 16 bins.
  for (int bins : {1, 2, 4, 5, 16}) {
    const MoeSpec m = moe_of(16, 4);
    CHECK_MESSAGE(expected_distinct_bins(m, bins) == doctest::Approx(brute_force_distinct_bins(m, bins)).epsilon(1e-12),
                  "bins ", bins);
  }
  // Group-limited: 16 experts in 4 groups of 4, each token in 2 groups, top-3; bins that hold
  // two groups (2), one group (4), half a group (8), one expert (16), and bins across groups (3, 5).
  for (int bins : {1, 2, 3, 4, 5, 8, 16}) {
    const MoeSpec m = moe_of(16, 3, 4, 2);
    CHECK_MESSAGE(expected_distinct_bins(m, bins) == doctest::Approx(brute_force_distinct_bins(m, bins)).epsilon(1e-12),
                  "bins ", bins);
  }
  // 12 experts in 3 groups of 4, one group per token, top-2, 5 uneven bins.
  const MoeSpec one_group = moe_of(12, 2, 3, 1);
  CHECK(expected_distinct_bins(one_group, 5) == doctest::Approx(brute_force_distinct_bins(one_group, 5)).epsilon(1e-12));
}

TEST_CASE("DeepSeek-V3's node limit: a token reaches at most 4 of 8 nodes, 3.6 on average under uniform routing") {
  const TransformerSpec* v3 = Catalog::builtin().find_model("deepseek-v3");
  REQUIRE(v3 != nullptr);
  CHECK(v3->moe.router_groups == 8);      // Hugging Face config.json n_group
  CHECK(v3->moe.router_group_topk == 4);  // topk_group
  // Groups = nodes (32 experts each): a node is reached only if its group is picked (4 of 8), and
  // then unless all 8 experts fall in the other 96 of the 128 eligible:
  //   E[D] = 8 x 4/8 x (1 - C(96, 8) / C(128, 8)) = 4 x (1 - 0.0934) = 3.63.
  const double nodes = 8.0 * 0.5 * (1.0 - miss(128, 32, 8));
  CHECK(expected_distinct_bins(v3->moe, 8) == doctest::Approx(nodes).epsilon(1e-12));
  CHECK(nodes == doctest::Approx(3.63).epsilon(0.01));
  // Without the limit the same token reaches 8 x (1 - C(224, 8) / C(256, 8)) = 5.28 nodes.
  MoeSpec free = v3->moe;
  free.router_groups = free.router_group_topk = 0;
  CHECK(expected_distinct_bins(free, 8) == doctest::Approx(8.0 * (1.0 - miss(256, 32, 8))).epsilon(1e-12));
  CHECK(expected_distinct_bins(free, 8) == doctest::Approx(5.28).epsilon(0.01));
  // One expert per bin: every expert is a distinct bin, top_k of them.
  CHECK(expected_distinct_bins(v3->moe, 256) == doctest::Approx(8.0).epsilon(1e-12));
}

TEST_CASE("DeepEP sends each token once per remote NVLink domain and forwards it to each GPU there over NVLink") {
  const TransformerSpec* v3 = Catalog::builtin().find_model("deepseek-v3");
  REQUIRE(v3 != nullptr);
  ParallelConfig p;
  p.ep = 64;
  p.expert_tp = 1;
  p.ep_dispatcher = ExpertDispatcher::deepep;
  const LayerShape s = test::one_sequence_moe_layer(*v3, p);
  GroupLayout ep;  // EP 64 over 8 nodes of 8 GPUs (DeepSeek-V3's training layout, report Sec. 3.2)
  ep.size = 64;
  ep.ranks_per_node = 8;
  ep.nodes = 8;
  const DeepEpBytes b = moe_deepep_bytes(s, ep);
  const double token = 4096.0 * 7168 * 2;  // 4096 tokens of h = 7168 in 16 bits
  // Network: 3.63 distinct nodes a token, 7/8 of them remote.
  CHECK(b.network.value() == doctest::Approx(token * expected_distinct_bins(v3->moe, 8) * 7.0 / 8.0).epsilon(1e-12));
  // NVLink: the distinct GPUs (4 experts each, 8 picked among the 4 x 8 GPUs of the picked nodes),
  // less the 1/8 that land on the receiving rank itself.
  CHECK(b.nvlink.value() == doctest::Approx(token * expected_distinct_bins(v3->moe, 64) * 7.0 / 8.0).epsilon(1e-12));
  // Against the all-to-all dispatcher's top_k copies, 56/64 of them over the network: 2.2x fewer bytes.
  const double all_to_all_network = moe_all_to_all_bytes(s).value() * 56.0 / 64.0;
  CHECK(all_to_all_network / b.network.value() == doctest::Approx(8.0 / 3.63).epsilon(0.01));
  // Inside one NVLink domain nothing crosses the network.
  GroupLayout one_node = ep;
  one_node.size = one_node.ranks_per_node = 8;
  one_node.nodes = 1;
  ParallelConfig p8 = p;
  p8.ep = 8;
  const DeepEpBytes local = moe_deepep_bytes(test::one_sequence_moe_layer(*v3, p8), one_node);
  CHECK(local.network.value() == 0.0);
  CHECK(local.nvlink.value() == doctest::Approx(token * expected_distinct_bins(v3->moe, 8) * 7.0 / 8.0).epsilon(1e-12));
}

TEST_CASE("a DeepEP exchange takes the slower of its network leg (a fixed time, then the bytes at the rank's NIC) and its NVLink leg, each as measured") {
  // EP 16 over two DGX H100 nodes, 128 experts (8 per rank), top 8, 4096 tokens of h = 7168 in 16
  // bits: HybridEP's H100 benchmark (tests/fixtures/reference/hybridep_bandwidth.yaml).
  const SystemSpec* h100 = Catalog::builtin().find_system("dgx-h100");
  REQUIRE(h100 != nullptr);
  LayerShape s;
  s.micro_batch = 1;
  s.seq = 4096;
  s.hidden = 7168;
  s.moe_layer = true;
  s.moe.experts = 128;
  s.moe.top_k = 8;
  s.ep = 16;
  s.ep_dispatcher = ExpertDispatcher::deepep;
  GroupLayout ep;
  ep.size = 16;
  ep.nodes = 2;
  ep.ranks_per_node = 8;
  const CostParameters params;
  const double token = 4096.0 * 7168 * 2;
  // Network: a token reaches 2 (1 - C(64, 8) / C(128, 8)) = 1.9938 of the 2 nodes, half of them
  // remote (58.5 MB), through the rank's own 400 Gb/s NIC (8 NICs for 8 GPUs: 50 GB/s) at 0.86 of
  // its rate, after the exchange's fixed 636 us: 0.636 + 1.361 = 2.00 ms.
  const double miss_node = miss(128, 64, 8);
  const double network = 636e-6 + token * 2.0 * (1.0 - miss_node) * 0.5 / (50e9 * 0.86);
  // NVLink: 16 (1 - C(120, 8) / C(128, 8)) distinct GPUs, 7/8 of them reached over NVLink (450 GB/s
  // per direction, Hopper's 0.68 share): 1.09 ms, under the network's 2.00 ms.
  const double nvlink = token * 16.0 * (1.0 - miss(128, 8, 8)) * 7.0 / 8.0 / (450e9 * 0.68);
  CHECK(network == doctest::Approx(2.00e-3).epsilon(0.01));
  CHECK(nvlink < network);
  CHECK(moe_deepep_time(s, ep, *h100, params).value() == doctest::Approx(network).epsilon(1e-9));
  // On one node only NVLink carries the exchange: 8 (1 - C(112, 8) / C(128, 8)) GPUs, 7/8 remote.
  GroupLayout one = ep;
  one.size = one.ranks_per_node = 8;
  one.nodes = 1;
  s.ep = 8;
  const double local = token * 8.0 * (1.0 - miss(128, 16, 8)) * 7.0 / 8.0 / (450e9 * 0.68);
  CHECK(moe_deepep_time(s, one, *h100, params).value() == doctest::Approx(local).epsilon(1e-9));
  // A Blackwell NVLink domain runs at its own measured share (0.52 of 900 GB/s).
  const SystemSpec* b200 = Catalog::builtin().find_system("dgx-b200");
  REQUIRE(b200 != nullptr);
  CHECK(moe_deepep_time(s, one, *b200, params).value() == doctest::Approx(local * (450e9 * 0.68) / (900e9 * 0.52)).epsilon(1e-9));
}

TEST_CASE("parallel.ep_dispatcher deepep prices the expert traffic by destination domain, and the loader checks it") {
  Scenario sc = load_scenario("mixtral-8x7b-ep");  // 16 H100s, tp 2, ep 8: EP ranks 4 per node, 2 nodes
  TrainingPredictor predictor;
  const TrainingPrediction all_to_all = predictor.predict(sc);
  sc.parallel.ep_dispatcher = ExpertDispatcher::deepep;
  const TrainingPrediction deepep = predictor.predict(sc);
  // Mixtral's top-2 of 8 experts on 2 nodes: 2 (1 - C(4,2)/C(8,2)) = 1.57 distinct nodes, half of
  // them remote, 0.79 network copies a token against the all-to-all's 2 x 4/8 = 1. The bytes are
  // small (2048 tokens of h = 4096 in 16 bits per rank: 16.8 MB a copy), so DeepEP's fixed 636 us
  // per exchange outweighs the 21% it saves on the wire: 0.636 + 0.79 x 16.8 MB / 43 GB/s =
  // 0.94 ms against NCCL's 16.8 MB / 47 GB/s = 0.36 ms. DeepEP pays off with many experts per
  // token and large exchanges (DeepSeek-V3: top 8, h = 7168), not on top-2 routing at this size.
  CHECK(deepep.time.ep_comm_exposed.value() > 0.0);
  CHECK(deepep.time.ep_comm_exposed > all_to_all.time.ep_comm_exposed);
  CHECK(parse_scenario(write_scenario_yaml(sc), sc.source) == sc);

  const std::string text = R"(schema_version: 1
model: mixtral-8x7b
system: {preset: dgx-h100, gpus: 16}
training: {seq_len: 4096, global_batch: 16}
parallel: {tp: 2, ep: 8, ep_dispatcher: deepEP}
)";
  try {
    parse_scenario(text, "t.yaml");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("parallel.ep_dispatcher") != std::string::npos);
    CHECK(what.find("did you mean 'deepep'") != std::string::npos);
  }
}

TEST_CASE("router_groups and router_group_topk come together, divide the experts and leave top_k room") {
  const auto error_of = [](const std::string& model) -> std::string {
    try {
      parse_scenario("schema_version: 1\nmodel: " + model +
                         "\nsystem: {preset: dgx-h100, gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n",
                     "t.yaml");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(error_of("{preset: deepseek-v3, router_groups: 0}").find("needs both router_groups and router_group_topk") !=
        std::string::npos);
  CHECK(error_of("{preset: deepseek-v3, router_groups: 7}").find("router_groups (7) must divide experts (256)") !=
        std::string::npos);
  CHECK(error_of("{preset: deepseek-v3, router_group_topk: 9}").find("router_group_topk (9) exceeds router_groups (8)") !=
        std::string::npos);
  CHECK(error_of("{preset: deepseek-v3, router_groups: 128, router_group_topk: 2}")
            .find("top_k (8) exceeds the experts of router_group_topk groups (2 x 2)") != std::string::npos);
  const Scenario ok = parse_scenario(
      "schema_version: 1\nmodel: deepseek-v3\nsystem: {preset: dgx-h100, gpus: 64}\n"
      "training: {seq_len: 4096, global_batch: 64}\nparallel: {ep: 64, ep_dispatcher: deepep}\n",
      "t.yaml");
  CHECK(ok.parallel.ep_dispatcher == ExpertDispatcher::deepep);
  CHECK(parse_scenario(write_scenario_yaml(ok), ok.source) == ok);
}
