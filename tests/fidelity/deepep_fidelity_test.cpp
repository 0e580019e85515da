// Fidelity of the flex dispatcher's exchange time (model/moe_ops.h moe_deepep_time) against the
// dispatch and combine bandwidths DeepEP's authors publish (tests/fixtures/reference/
// hybridep_bandwidth.yaml: HybridEP on H100 over 2-8 nodes, on B200 and on a GB200 NVL72 rack;
// DeepEP V1 on H800), through the PyTorch API that Megatron-Core calls.
//
// Each row's measured time is the bytes its test counts over the bandwidth it reports, the test's
// own convention: T x D x hidden x 2, D the expected distinct nodes (ib) or ranks (nvl) a token's
// top_k experts reach under uniform routing, own node or rank included (expected_distinct_bins).
// The prediction prices the same workload on the catalog system (H800: an H100 system with
// NVLink's 200 GB/s per direction).
//
// The figures the model applies are fitted to these rows' API columns (the network leg's fixed
// time and rate, CostParameters::deepep_network_latency_s and deepep_network_eta, by least squares
// over the six H100 points, scripts/fit_deepep_network.py; the NVLink shares deepep_nvlink_eta_*
// as means), so the mean error is small by construction; what the test guards is that one set of
// figures holds every row, from 2 to 8 nodes and 8 to 36 ranks of one NVLink domain, within 25%;
// that the network rows, whose share of the NIC rises from 0.57 to 0.83 with the bytes per
// exchange, each stay within 10% (one flat share missed them by up to 19%); that the mean stays
// within 10%; and that the model stays slower than the kernels alone over the rows (the API's
// preprocessing and buffer copy are real time in a training step).
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "model/cost_parameters.h"
#include "model/layer_shape.h"
#include "model/moe_ops.h"
#include "simulator/catalog.h"

using namespace stepcast;

namespace {

struct Exchange {
  std::string name;
  double measured_s = 0.0;
  double kernel_s = 0.0;  // 0 when the row gives no kernel-only figure
  double predicted_s = 0.0;
  bool network = false;  // the exchange crosses the network (the ib rows)
};

std::vector<Exchange> exchanges() {
  const YAML::Node rows = YAML::LoadFile("tests/fixtures/reference/hybridep_bandwidth.yaml")["rows"];
  REQUIRE(rows.IsSequence());
  const CostParameters params;
  std::vector<Exchange> out;
  for (const YAML::Node& r : rows) {
    const std::string system_name = r["gpu_system"].as<std::string>();
    SystemSpec system;
    if (r["link_gbps"]) {
      const SystemSpec* h100 = Catalog::builtin().find_system("dgx-h100");
      REQUIRE(h100 != nullptr);
      system = *h100;
      system.intra_node_bandwidth = Bandwidth(r["link_gbps"].as<double>() * 1e9);
    } else {
      const SystemSpec* found = Catalog::builtin().find_system(system_name);
      REQUIRE(found != nullptr);
      system = *found;
    }
    const int ranks = r["ranks"].as<int>();
    const int nodes = r["nodes"].as<int>();
    const bool ib = r["convention"].as<std::string>() == "ib";
    LayerShape s;
    s.micro_batch = 1;
    s.seq = r["tokens"].as<double>();
    s.hidden = r["hidden"].as<double>();
    s.moe_layer = true;
    s.moe.experts = r["experts"].as<int>();
    s.moe.top_k = r["top_k"].as<int>();
    s.ep = ranks;
    s.ep_dispatcher = ExpertDispatcher::deepep;
    GroupLayout ep;
    ep.size = ranks;
    ep.nodes = nodes;
    ep.ranks_per_node = ranks / nodes;
    const double distinct = expected_distinct_bins(s.moe, ib ? nodes : ranks);
    // DeepEP V1 dispatches in FP8: its test counts FP8 bytes (bf16 bytes x (1 + 4/128) / 2, the
    // scales included), and the model prices the same bytes.
    const bool fp8_dispatch = r["library"].as<std::string>() == "deepep_v1";
    for (const char* kind : {"dispatch", "combine"}) {
      const bool dispatch = std::string(kind) == "dispatch";
      const double element = dispatch && fp8_dispatch ? 2.0 * (1.0 + 4.0 / 128.0) / 2.0 : 2.0;
      s.activation_bytes = element;
      const double counted = s.seq * distinct * s.hidden * element;
      Exchange e;
      e.name = r["library"].as<std::string>() + " " + system_name + " " + std::to_string(ranks) + " ranks " + kind;
      e.measured_s = counted / (r[std::string(kind) + "_api"].as<double>() * 1e9);
      if (r[std::string(kind) + "_kernel"]) e.kernel_s = counted / (r[std::string(kind) + "_kernel"].as<double>() * 1e9);
      e.predicted_s = moe_deepep_time(s, ep, system, params).value();
      e.network = ib;
      out.push_back(e);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("DeepEP/HybridEP exchange times match the libraries' published dispatch and combine bandwidths") {
  const std::vector<Exchange> rows = exchanges();
  REQUIRE(rows.size() == 20);
  double sum = 0.0;
  double predicted_with_kernel = 0.0;  // over the rows that give a kernel-only figure
  double kernel = 0.0;
  std::printf("%-44s %10s %10s %8s\n", "exchange", "measured", "predicted", "error");
  for (const Exchange& e : rows) {
    const double error = e.predicted_s / e.measured_s - 1.0;
    std::printf("%-44s %8.0f us %8.0f us %+7.1f%%\n", e.name.c_str(), e.measured_s * 1e6, e.predicted_s * 1e6,
                100.0 * error);
    INFO(e.name);
    CHECK(std::abs(error) <= 0.25);
    if (e.network) CHECK(std::abs(error) <= 0.10);
    if (e.kernel_s > 0.0) {
      predicted_with_kernel += e.predicted_s;
      kernel += e.kernel_s;
    }
    sum += std::abs(error);
  }
  const double mean = sum / static_cast<double>(rows.size());
  std::printf("mean |error| %.1f%%\n", 100.0 * mean);
  CHECK(mean <= 0.10);
  // Over the rows with a kernel-only figure the model takes longer than the kernels alone (the
  // API's are 1.3-1.4x): the fixed time per network exchange is fitted to the API columns, so the
  // H100 rows at 2 nodes, which the flat share priced under their combine kernel, now sit above it.
  std::printf("predicted over kernel-only time, rows with a kernel figure: %.2fx\n", predicted_with_kernel / kernel);
  CHECK(predicted_with_kernel > 1.1 * kernel);
}
