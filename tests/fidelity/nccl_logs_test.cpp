// Predicted against measured bus bandwidth for every real nccl-tests log in tests/fixtures, by
// size band, with issue #3's bars: within 15% at >= 256 MiB and within 30% from 8 KiB to 1 MiB,
// for single-node A100/H100 (NVLS on and off) and multi-node InfiniBand/RoCE/EFA. Every table is
// printed (run the test binary with -s, or see the test log) so the report can quote it.
//
// No constant is tuned to a log: the fitted ones (model/nccl_parameters.h: TCPXO latency;
// validation/collective_comparison.h: nccl-tests' -g launch cost) are recomputed below from the
// named sizes of the named logs, and every other size of those logs, and every other log, is a
// check.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "simulator/catalog.h"
#include "tests/fidelity/nccl_log_cases.h"
#include "validation/collective_comparison.h"

using namespace stepcast;
using namespace stepcast::test;

namespace {

constexpr double kLargeBar = 0.15;  // >= 256 MiB
constexpr double kSmallBar = 0.30;  // 8 KiB .. 1 MiB

const NcclLogCase& find_case(const std::string& name) {
  static const auto cases = nccl_log_cases();
  for (const auto& c : cases) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no log case " + name);
}

std::vector<CollectiveComparison> compare(const NcclLogCase& c, const NcclParameters& p = {}) {
  const auto log = read_nccl_tests_log(c.path);
  const NcclCollectiveModel model(c.system, p);
  return compare_with_log(log, c.op, whole_domains(c), model, c.gpus_per_thread);
}

std::map<std::string, ErrorBand> bands_of(const std::vector<CollectiveComparison>& points) {
  std::map<std::string, ErrorBand> out;
  for (const auto& b : error_bands(points)) out[b.name] = b;
  return out;
}

void print(const NcclLogCase& c, const std::vector<CollectiveComparison>& points) {
  std::printf("== %s  [%s]\n%s", c.name.c_str(), c.path.c_str(), format_comparison(points).c_str());
  for (const auto& b : error_bands(points)) {
    if (b.points > 0) {
      std::printf("   %-12s points %2d  max|err| %6.1f%%  mean|err| %5.1f%%  bias %+6.1f%%\n", b.name.c_str(), b.points,
                  b.max_abs_error * 100.0, b.mean_abs_error * 100.0, b.bias * 100.0);
    }
  }
  if (!c.note.empty()) std::printf("   note: %s\n", c.note.c_str());
}

// Sum of squared log errors of the time over [lo, hi] bytes.
double log_error(const NcclLogCase& c, const NcclParameters& p, double lo, double hi) {
  double sum = 0.0;
  for (const auto& pt : compare(c, p)) {
    if (pt.size.value() < lo || pt.size.value() > hi) continue;
    const double e = std::log(pt.predicted_time / pt.measured_time);
    sum += e * e;
  }
  return sum;
}

// The transport latency minimising the error on the pure-latency sizes 8 B .. 4 KiB.
double fitted_transport_latency(const NcclLogCase& c, Transport t) {
  double best = 0.0;
  double best_error = 1e300;
  for (double us = 0.0; us <= 120.0; us += 0.5) {
    NcclParameters p;
    p.transport_latency_us[index_of(t)] = us;
    const double e = log_error(c, p, 8.0, 4096.0);
    if (e < best_error) {
      best_error = e;
      best = us;
    }
  }
  return best;
}

}  // namespace

TEST_CASE("every reference log: predicted vs measured bus bandwidth by size band (printed)") {
  for (const auto& c : nccl_log_cases()) {
    const auto points = compare(c);
    CHECK(points.size() > 0);
    print(c, points);
  }
}

TEST_CASE("issue #3 bars hold on the logs they cover") {
  for (const auto& c : nccl_log_cases()) {
    if (c.use != LogUse::bars && c.use != LogUse::fit) continue;
    INFO(c.name);
    auto bands = bands_of(compare(c));
    if (bands["8 KiB-1 MiB"].points > 0) CHECK(bands["8 KiB-1 MiB"].max_abs_error <= kSmallBar);
    if (bands[">= 256 MiB"].points > 0) CHECK(bands[">= 256 MiB"].max_abs_error <= kLargeBar);
  }
}

TEST_CASE("held-out logs: large messages within 15%; p4de within the bars once NCCL runs Simple only") {
  // p4de measures ~160 us at 8 B where p5 measures ~70: aws-ofi-nccl sets NCCL_PROTO=simple on
  // p4d/p4de (src/platform-aws.c, force_proto_simple), so the latency regime is the tree/Simple
  // one (8.4 + 2 * (7 * 4.0 + 14 + 2 * 20) = 172 us), not tree/LL's 65 us. No constant was set
  // from this log.
  auto p4de = bands_of(compare(find_case("AWS p4de 2x8 EFA")));
  CHECK(p4de[">= 256 MiB"].max_abs_error <= kLargeBar);
  CHECK(p4de["8 KiB-1 MiB"].max_abs_error <= kSmallBar);
  auto gather = bands_of(compare(find_case("GCP A3 Mega 2x8 TCPXO all_gather")));
  CHECK(gather[">= 256 MiB"].max_abs_error <= kLargeBar);
}

TEST_CASE("reported-only logs keep their stated tolerances") {
  // mleng A100 (-g 8, author-massaged): large sizes within 15%.
  CHECK(bands_of(compare(find_case("mleng A100 1x8 (-g 8)")))[">= 256 MiB"].max_abs_error <= kLargeBar);
  // GB200 NVL72 across 2 racks (NVLS off): within 20% at >= 256 MiB; the ring's NVLink-bound
  // 722 GB/s falls short of the measured 810-820 GB/s at 8-16 GiB.
  CHECK(bands_of(compare(find_case("CoreWeave GB200 NVL72 2 racks")))[">= 256 MiB"].max_abs_error <= 0.20);
}

TEST_CASE("the fitted constants are what their named logs give") {
  const NcclParameters defaults;
  // EFA: the documented 20 us (aws-ofi-nccl's tuner); 8 B .. 4 KiB of aws_p5_2x8_allreduce.txt
  // alone agree within 15%.
  CHECK(fitted_transport_latency(find_case("AWS p5 2x8 EFA"), Transport::efa) ==
        doctest::Approx(defaults.transport_latency_us[index_of(Transport::efa)]).epsilon(0.15));
  // GPUDirect-TCPXO: 8 B .. 4 KiB of a3mega_2x8_allreduce.txt.
  CHECK(fitted_transport_latency(find_case("GCP A3 Mega 2x8 TCPXO all_reduce"), Transport::tcpxo) ==
        doctest::Approx(defaults.transport_latency_us[index_of(Transport::tcpxo)]).epsilon(0.05));
  // nccl-tests -g 8 against one process per GPU on the same machine, 8 B .. 4 KiB, per extra GPU.
  const auto g8 = read_nccl_tests_log(find_case("thanos A100 1x8 (-g 8)").path);
  const auto g1 = read_nccl_tests_log(find_case("thanos A100 1x8 (1 proc/GPU)").path);
  double diff = 0.0;
  int n = 0;
  for (std::size_t i = 0; i < g8.rows.size() && i < g1.rows.size(); ++i) {
    if (g8.rows[i].size.value() > 4096.0) break;
    REQUIRE(g8.rows[i].size == g1.rows[i].size);
    diff += (g8.rows[i].out_of_place.time - g1.rows[i].out_of_place.time).value();
    ++n;
  }
  CHECK(diff / n / 7.0 * 1e6 == doctest::Approx(NcclTestsHarness{}.launch_us_per_extra_gpu).epsilon(0.05));
}

TEST_CASE("the catalog's systems reproduce the same fidelity as the test systems") {
  // Catalog entries (scenarios/catalog/systems.yaml) for the machines of the logs; OCI's NIC speed
  // is unknown in the catalog and is left out. The CoreWeave runs had NVLS disabled.
  const std::vector<std::pair<std::string, std::string>> systems{
      {"thanos A100 1x8 (1 proc/GPU)", "dgx-a100"},   {"dkh A100 1x8 (-g 8)", "dgx-a100"},
      {"H100 1x8 NVLS (nccl-tests#290)", "dgx-h100"}, {"AWS p4de 2x8 EFA", "aws-p4de"},
      {"AWS p5 2x8 EFA", "aws-p5"},                   {"GCP A3 Mega 2x8 TCPXO all_reduce", "gcp-a3-mega"},
      {"GCP A4 B200 2x8 RoCE all_reduce", "gcp-a4"},  {"CoreWeave GB200 NVL72 2 racks", "coreweave-gb200"},
  };
  for (const auto& [name, catalog_name] : systems) {
    INFO(name, " on ", catalog_name);
    NcclLogCase c = find_case(name);
    const SystemSpec* s = Catalog::builtin().find_system(catalog_name);
    REQUIRE(s != nullptr);
    const auto expected = bands_of(compare(c));
    c.system = *s;
    c.system.gpus = c.ranks;
    if (catalog_name == "coreweave-gb200") c.system.nvlink_sharp = false;
    const auto got = bands_of(compare(c));
    for (const auto& [band, b] : expected) {
      if (b.points == 0) continue;
      INFO(band);
      CHECK(got.at(band).max_abs_error == doctest::Approx(b.max_abs_error).epsilon(0.03).scale(1.0));
    }
  }
}
