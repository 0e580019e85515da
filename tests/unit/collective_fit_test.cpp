// The collective fit (validation/collective_fit.h) recovers known NCCL constants from synthetic
// nccl-tests sweeps made with the NCCL model itself plus multiplicative noise; and measured
// points are read with their checks (validation/collective_points.h).

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "model/topology.h"
#include "simulator/diagnostics.h"
#include "tests/support/reference_systems.h"
#include "validation/collective_fit.h"

using namespace stepcast;
using namespace stepcast::test;

namespace {

// An nccl-tests-like sweep 8 B .. 8 GiB (x4 per step) of `op` on every GPU of `system`, timed
// by the model under `truth` with log-normal noise of `noise`.
CollectiveDataset sweep(const SystemSpec& system, CollectiveOp op, const NcclParameters& truth, double noise,
                        unsigned seed) {
  CollectiveDataset d;
  d.source = "synthetic";
  d.system = system;
  const GroupLayout group = collective_group(d.system, system.gpus, 0, d.source);
  d.fabric = derive_fabric_figures(d.system);
  const NcclCollectiveModel model(d.system, d.fabric, truth);
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, noise);
  for (double bytes = 8; bytes <= 8.0 * (1ull << 30); bytes *= 4) {
    CollectivePoint p;
    p.op = op;
    p.bytes = bytes;
    p.group = group;
    p.measured_s = predict_collective(p, model, {}).time.value() * std::exp(normal(rng));
    d.points.push_back(p);
  }
  return d;
}

double fitted(const NcclParameters& p, std::string_view wanted) {
  double out = 0.0;
  NcclParameters copy = p;
  copy.for_each_parameter([&](std::string_view name, double& v, std::string_view, std::string_view) {
    if (name == wanted) out = v;
  });
  return out;
}

}  // namespace

TEST_CASE("the collective fit recovers NVLink, network and latency constants from 3% noisy sweeps") {
  NcclParameters truth;
  truth.nvlink_link_gbps[index_of(NcclGeneration::hopper)] = 18.0;   // NCCL: 20.6
  truth.nvls_efficiency[index_of(NcclGeneration::hopper)] = 0.78;    // NCCL: 0.85
  truth.network_efficiency[index_of(Transport::infiniband)] = 0.84;  // ours: 0.94
  truth.transport_latency_us[index_of(Transport::infiniband)] = 0.0;
  truth.hw_latency_us[index_of(NcclLink::net)][index_of(CollectiveAlgorithm::tree)][index_of(CollectiveProtocol::ll)] =
      9.0;  // NCCL: 5
  // One DGX H100 (NVLink and NVLS bound its large sizes) and DGX A100s across nodes, whose 8 HDR
  // NICs (200 GB/s) bind rings before their NVLink (240 GB/s NCCL-effective) does.
  const std::vector<CollectiveDataset> data{
      sweep(dgx_h100(1), CollectiveOp::all_reduce, truth, 0.03, 1),
      sweep(dgx_h100(1), CollectiveOp::all_gather, truth, 0.03, 2),
      sweep(dgx_a100(2), CollectiveOp::all_reduce, truth, 0.03, 3),
      sweep(dgx_a100(4), CollectiveOp::all_gather, truth, 0.03, 4)};
  const CollectiveFit fit = fit_collectives(data, NcclParameters{});
  for (const char* name : {"nvlink_link_gbps.hopper", "nvls_efficiency.hopper", "network_efficiency.infiniband",
                           "hw_latency_us.net.tree.ll"}) {
    std::printf("synthetic collective recovery: %-32s truth %7.3f fitted %7.3f (NCCL default %7.3f)\n", name,
                fitted(truth, name), fitted(fit.params, name), fitted(NcclParameters{}, name));
  }
  // The bandwidth constants bound the large sizes of several datasets each: within 3%.
  CHECK(fitted(fit.params, "nvlink_link_gbps.hopper") == doctest::Approx(18.0).epsilon(0.03));
  CHECK(fitted(fit.params, "nvls_efficiency.hopper") == doctest::Approx(0.78).epsilon(0.03));
  CHECK(fitted(fit.params, "network_efficiency.infiniband") == doctest::Approx(0.84).epsilon(0.03));
  // The tree/LL network hop is one of several latency terms the small two-node sizes add up;
  // the prior shares the change among them, so the constant moves towards 9 us but the
  // identifiable quantity is the time: the fitted model's 8 B two-node time is within 5%.
  CHECK(fitted(fit.params, "hw_latency_us.net.tree.ll") > 6.0);
  const NcclCollectiveModel truth_model(data[2].system, data[2].fabric, truth);
  const NcclCollectiveModel fit_model(data[2].system, data[2].fabric, fit.params);
  const auto& small = data[2].points.front();
  CHECK(predict_collective(small, fit_model, {}).time.value() ==
        doctest::Approx(predict_collective(small, truth_model, {}).time.value()).epsilon(0.05));
  // Held-out errors are the noise, not a misfit: rms below 5% (noise 3%).
  double sum = 0.0;
  for (const auto& r : fit.points) sum += std::pow(std::log(r.held_out_predicted_s / r.measured_s), 2);
  CHECK(std::sqrt(sum / fit.points.size()) < 0.05);
}

TEST_CASE("a log row that failed nccl-tests' check is an error naming its line, not a fitted point") {
  const std::string text =
      "# Collective test starting: all_reduce_perf\n"
      "#  Rank  0 Group  0 Pid 1 on host device  0 [0x01] NVIDIA H100 80GB HBM3\n"
      "#  Rank  7 Group  0 Pid 1 on host device  7 [0x01] NVIDIA H100 80GB HBM3\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    40.00   26.21   45.88      0    40.00   26.21   45.88      0\n"
      "     2097152        524288     float     sum      -1    50.00   41.94   73.40      3    50.00   41.94   73.40      0\n";
  const NcclTestsLog log = parse_nccl_tests_log(text, "bad.txt");
  try {
    collective_dataset(log, dgx_h100(1));
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("bad.txt:6") != std::string::npos);
    CHECK(std::string(e.what()).find("#wrong") != std::string::npos);
  }
}

TEST_CASE("a log whose rank count disagrees with --ranks is an error, not a misplaced fit") {
  const std::string text =
      "# Collective test starting: all_reduce_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "   536870912     134217728     float     sum      -1   2156.8  248.92  435.61      0   2093.7  256.42  448.74      0\n";
  // busbw / algbw = 1.75 = 2 (n-1)/n: 8 ranks.
  const NcclTestsLog log = parse_nccl_tests_log(text, "eight.txt");
  CHECK(collective_dataset(log, dgx_h100(2)).points.front().group.size == 8);
  CHECK_THROWS_WITH_AS(collective_dataset(log, dgx_h100(2), 0, 16), doctest::Contains("busbw/algbw ratio"), InputError);
}
