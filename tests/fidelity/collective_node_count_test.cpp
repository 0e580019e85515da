// Issue #9's bar "fitting on one node count predicts another within 20%", on ordinary H100
// InfiniBand clusters measured at several node counts (NVIDIA/nccl-tests issue #309; the logs and
// their sources are in tests/fixtures/nccl_logs_extra/INDEX.md):
//
//   - cluster A (gj-aion): the same 8 nodes of 8x H100 with 8x 400 Gb/s IB per node, all_reduce
//     1 MiB .. 8 GiB at 2, 4 and 8 nodes with NCCL's defaults; and a second pair on it with
//     NCCL_MIN_CTAS=24 (2 nodes forced to NCCL_ALGO=Ring, 8 nodes default algorithms);
//   - cluster B (qoofyk): 2 bare-metal Dell XE9680 HGX H100 nodes and 4 H100 nodes run as VMs,
//     same NIC count and speed, NCCL 2.26.2, 8 B .. 16 GiB.
//
// The NCCL constants are fitted (validation/collective_fit.h, the same fit as `stepcast calibrate`
// and `stepcast validate --holdout by-group-size:N`) on every size of one node count, and every
// size of the other node count is predicted; both directions. The error of a point is
// predicted / measured - 1 (measured: the faster of out-of-place and in-place). The issue's bar is
// read as the mean |error| over the held-out node count's sizes (the every-other-size bar of
// collective_calibration_test.cpp is read the same way); a stricter per-size reading is checked
// as an allowed-to-fail case below, with the analysis of why it misses. Tables print with -s.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/reference_systems.h"
#include "validation/collective_fit.h"

using namespace stepcast;
using namespace stepcast::test;

namespace {

constexpr double kIssueBar = 0.20;  // issue #9: "predicts another within 20%"

struct NodeCountLog {
  std::string name;
  int nodes = 0;
  CollectiveDataset data;
};

// An all_reduce log of 8 H100 per node with 8 x 400 Gb/s InfiniBand NICs per node: dgx_h100's
// figures, which both clusters match (the thread's maintainer reads their multi-node ceiling as
// 8 x 400 Gb/s = 400 GB/s busbw).
NodeCountLog h100_ib_log(const std::string& file, int nodes) {
  const std::string path = "tests/fixtures/nccl_logs_extra/" + file;
  NodeCountLog l{file, nodes, collective_dataset(read_nccl_tests_log(path), dgx_h100(nodes), 8, 8 * nodes)};
  for (const auto& p : l.data.points) {
    REQUIRE(p.group.size == 8 * nodes);
    REQUIRE(p.group.nodes == nodes);
  }
  return l;
}

NodeCountLog cluster_a(int nodes) {
  return h100_ib_log("nccltests309_h100_" + std::to_string(nodes) + "x8_allreduce.txt", nodes);
}

struct CrossError {
  double mean_abs = 0.0;
  double max_abs = 0.0;
  double max_abs_from_64mib = 0.0;  // bandwidth-bound sizes, >= 64 MiB
  double datasheet_mean_abs = 0.0;
  int points = 0;
};

// Fits on every size of `fit_on`, predicts every size of `predict`; prints the table.
CrossError cross_predict(const NodeCountLog& fit_on, const NodeCountLog& predict) {
  std::vector<FittedValue> fitted;
  const NcclParameters p = fit_collective_parameters({fit_on.data}, NcclParameters{}, {}, &fitted);
  const auto calibrated = collective_residuals({predict.data}, p);
  const auto datasheet = collective_residuals({predict.data}, NcclParameters{});
  std::printf("== fit %s (%d nodes, %zu sizes) -> predict %s (%d nodes): %zu constants moved\n", fit_on.name.c_str(),
              fit_on.nodes, fit_on.data.points.size(), predict.name.c_str(), predict.nodes, fitted.size());
  for (const auto& f : fitted) std::printf("   %-44s %10.4g (NCCL %g) %s\n", f.name.c_str(), f.value, f.datasheet, f.unit.c_str());
  std::printf("   %-12s %11s %11s %8s %11s %8s\n", "bytes", "measured_us", "calibrated", "error", "datasheet", "error");
  CrossError r;
  for (std::size_t i = 0; i < calibrated.size(); ++i) {
    const double e = calibrated[i].predicted_s / calibrated[i].measured_s - 1.0;
    const double e0 = datasheet[i].predicted_s / datasheet[i].measured_s - 1.0;
    std::printf("   %-12.0f %11.1f %11.1f %+7.1f%% %11.1f %+7.1f%%\n", calibrated[i].bytes,
                calibrated[i].measured_s * 1e6, calibrated[i].predicted_s * 1e6, 100 * e,
                datasheet[i].predicted_s * 1e6, 100 * e0);
    r.mean_abs += std::fabs(e);
    r.max_abs = std::max(r.max_abs, std::fabs(e));
    if (calibrated[i].bytes >= 64.0 * 1024 * 1024) r.max_abs_from_64mib = std::max(r.max_abs_from_64mib, std::fabs(e));
    r.datasheet_mean_abs += std::fabs(e0);
    ++r.points;
  }
  REQUIRE(r.points > 0);
  r.mean_abs /= r.points;
  r.datasheet_mean_abs /= r.points;
  std::printf("   %d points: calibrated mean |err| %.1f%% max %.1f%% (>= 64 MiB: max %.1f%%); datasheet mean %.1f%%\n",
              r.points, 100 * r.mean_abs, 100 * r.max_abs, 100 * r.max_abs_from_64mib, 100 * r.datasheet_mean_abs);
  return r;
}

}  // namespace

TEST_CASE("node-count holdout, one H100 IB cluster at 2, 4 and 8 nodes: fitted on any one, the others within 20% on average") {
  // Measured (nccl-tests#309, gj-aion), 8 GiB busbw: 467 GB/s on 2 nodes (NVLS-tree: the tree
  // halves the network traffic of 2 nodes, "an ideal case for the TREE protocol", the
  // maintainer), 325 on 4 and 321 on 8 (rings over the NICs). Mean |error| printed with -s:
  //   fit 2 -> 4: 12.8%   fit 2 -> 8: 15.7%   fit 4 -> 2: 11.7%
  //   fit 4 -> 8:  9.9%   fit 8 -> 2:  7.2%   fit 8 -> 4:  6.4%
  // The same splits run from the command line:
  //   stepcast validate --system dgx-h100 --holdout by-group-size:16 <the three logs>
  const std::vector<NodeCountLog> logs{cluster_a(2), cluster_a(4), cluster_a(8)};
  for (const auto& l : logs) REQUIRE(l.data.points.size() == 14);
  for (const auto& fit_on : logs) {
    for (const auto& predict : logs) {
      if (fit_on.nodes == predict.nodes) continue;
      const CrossError r = cross_predict(fit_on, predict);
      CAPTURE(fit_on.nodes);
      CAPTURE(predict.nodes);
      CHECK(r.mean_abs <= kIssueBar);
    }
  }
}

TEST_CASE("node-count holdout, H100 IB 2 bare-metal nodes <-> 4 VM nodes: within 20% on average both ways") {
  // nccl-tests#309 (qoofyk), 8 B .. 16 GiB, NCCL 2.26.2; the maintainer called both results
  // good. Not one set of machines (the 4 nodes are VMs given a topology file), but the same GPU,
  // NIC count and speed; the user reports that any 2 of the VMs also reach 470 GB/s. Mean
  // |error|: fit 2 -> 4: 5.5%, fit 4 -> 2: 7.5% (printed with -s).
  const NodeCountLog two = h100_ib_log("nccltests309_hgx_h100_2x8_allreduce.txt", 2);
  const NodeCountLog four = h100_ib_log("nccltests309_vm_h100_4x8_allreduce.txt", 4);
  REQUIRE(two.data.points.size() == 32);
  REQUIRE(four.data.points.size() == 32);
  CHECK(cross_predict(two, four).mean_abs <= kIssueBar);
  CHECK(cross_predict(four, two).mean_abs <= kIssueBar);
}

TEST_CASE("node-count holdout, per size: every size >= 64 MiB within 20% in every direction" * doctest::may_fail()) {
  // Known shortfall (allowed to fail). The worst bandwidth-bound sizes (>= 64 MiB) per direction:
  //   cluster A: 2 -> 4 -21.8% (256 MiB), 4 -> 2 +32.1% (128 MiB) and +28.2% (256 MiB),
  //              8 -> 2 +24.1% (128 MiB); 2 -> 8, 4 -> 8, 8 -> 4 within 16%;
  //   cluster B: 4 -> 2 +26.4% (256 MiB); 2 -> 4 within 7%.
  // Why: NCCL changes algorithm with the node count, and the model has one network efficiency
  // for every algorithm. On 2 nodes the large sizes run NVLS-tree; from 3 nodes on they run
  // rings, and on cluster A those rings move only ~81% of the NICs' line rate (321-325 GB/s of
  // 400) with NCCL's default channel count: the same 8 nodes reach 391 GB/s with
  // NCCL_MIN_CTAS=24 (nccltests309_h100_8x8_allreduce_ctas24.txt), as does a forced 2-node ring
  // (393 GB/s). That is a per-channel limit (~20 GB/s x 16 channels, 2 per NIC), not the
  // transport's efficiency. Fitted on 4 or 8 nodes, the fit lowers network_efficiency.infiniband
  // to 0.85-0.87 and NVLink to 17.9-19.0 GB/s, which then slows the 2-node ring and NVLS-tree
  // around their crossover (128-512 MiB); fitted on 2 nodes it keeps 0.95, and the 4- and 8-node
  // runs come out 7-15% fast at 1-8 GiB. The mean bar above still holds in every direction.
  const std::vector<NodeCountLog> a{cluster_a(2), cluster_a(4), cluster_a(8)};
  double worst = 0.0;
  for (const auto& fit_on : a) {
    for (const auto& predict : a) {
      if (fit_on.nodes != predict.nodes) worst = std::max(worst, cross_predict(fit_on, predict).max_abs_from_64mib);
    }
  }
  const NodeCountLog two = h100_ib_log("nccltests309_hgx_h100_2x8_allreduce.txt", 2);
  const NodeCountLog four = h100_ib_log("nccltests309_vm_h100_4x8_allreduce.txt", 4);
  worst = std::max({worst, cross_predict(two, four).max_abs_from_64mib, cross_predict(four, two).max_abs_from_64mib});
  CHECK(worst <= kIssueBar);
}

TEST_CASE("node-count holdout, per size: the >= 64 MiB miss does not grow past today's 33%") {
  // Guard for the allowed-to-fail case above (worst today: +32.1%, cluster A fit 4 -> 2 at
  // 128 MiB): a change that widens the miss fails here; one that closes it should tighten this.
  const std::vector<NodeCountLog> a{cluster_a(2), cluster_a(4), cluster_a(8)};
  for (const auto& fit_on : a) {
    for (const auto& predict : a) {
      if (fit_on.nodes == predict.nodes) continue;
      CAPTURE(fit_on.nodes);
      CAPTURE(predict.nodes);
      CHECK(cross_predict(fit_on, predict).max_abs_from_64mib <= 0.33);
    }
  }
}

TEST_CASE("node-count holdout, 24 CTAs: forced 2-node ring <-> 8 nodes within 20% on average" * doctest::may_fail()) {
  // Known shortfall (allowed to fail): fit 2 -> 8 misses at 22.8% mean (max 78% at 2 MiB),
  // fit 8 -> 2 meets it at 12.2%. Both runs set NCCL_MIN_CTAS=24, which the model does not read
  // (its ring runs channels_per_nic x NICs = 16 channels). Fitted on a ring-only run (the filter
  // below, as NCCL_ALGO=Ring forced), the fit raises network_efficiency.infiniband to 1.07, above
  // line rate, trading the 1-8 GiB sizes against the 32-512 MiB ones; on 8 nodes the model then
  // picks trees at 8-128 MiB that the measurement shows 15-35% slower than predicted (8 MiB:
  // 391 us measured, 255 predicted), and its latency at 1-2 MiB is 50-80% high.
  NodeCountLog ring2 = h100_ib_log("nccltests309_h100_2x8_allreduce_ring_ctas24.txt", 2);
  ring2.data.filter.algorithm = CollectiveAlgorithm::ring;
  const NodeCountLog eight = h100_ib_log("nccltests309_h100_8x8_allreduce_ctas24.txt", 8);
  const CrossError up = cross_predict(ring2, eight);
  const CrossError down = cross_predict(eight, ring2);
  CHECK(down.mean_abs <= kIssueBar);
  CHECK(up.mean_abs <= kIssueBar);
}
