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
#include <string>
#include <string_view>

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

namespace {

// --- issue #3's bars, one line per log --------------------------------------------------------------
//
// The issue names single-node A100/H100 (NVLS on and off) and multi-node InfiniBand and RoCE. We
// hold every log to its bars except GB200 NVL72 across racks (a system the issue does not name;
// its tolerance is in "reported-only logs ..." below) and the named misses in kBarMisses, each
// with its analysis. EFA and GPUDirect-TCPXO are outside the list but are held to the same
// bars, which they meet.

// The category of a log, read from the system it ran on.
std::string category_of(const NcclLogCase& c) {
  const SystemSpec& s = c.system;
  if (s.nvlink_domain_gpus > 8) return "GB200 NVL72 multi-rack (outside)";
  if (c.ranks <= c.ranks_per_domain) {
    const char* gpu = s.gpu.architecture == GpuArchitecture::ampere      ? "A100"
                      : s.gpu.architecture == GpuArchitecture::hopper    ? "H100"
                      : s.gpu.architecture == GpuArchitecture::blackwell ? "B200"
                                                                         : "other";
    return std::string("single-node ") + gpu + (s.nvlink_sharp ? " NVLS on" : " NVLS off");
  }
  switch (s.network.transport) {
    case Transport::infiniband: return "multi-node InfiniBand";
    case Transport::roce: return "multi-node RoCE";
    case Transport::efa: return "multi-node EFA (outside)";
    case Transport::tcpxo: return "multi-node TCPXO (outside)";
    case Transport::nvlink: break;
  }
  return "other (outside)";
}

bool held_to_bars(const NcclLogCase& c) { return c.system.nvlink_domain_gpus <= 8; }

// Logs in the bars' scope that miss them, and why. The summary test fails if one of them starts to
// meet its bars (take it off this list) or if any other log misses.
const std::map<std::string, std::string>& bar_misses() {
  static const std::map<std::string, std::string> misses{
      {"mleng A100 1x8 (-g 8)",
       "8 KiB-1 MiB: the author edited the table's columns and its 1, 2 and 4 MiB rows all read ~101 us, "
       "a flat time no bandwidth-bound transfer shows; at 512 KiB and 1 MiB it measures 11.4 and 18.0 GB/s "
       "where the three other 8x A100 logs measure 16.3-34.3 and 28.1-48.4 GB/s. The model (20.6, 33.2 GB/s "
       "with the -g 8 launch term) sits inside that spread."},
      {"GKE A4 B200 2x8 RoCE all_gather (DraNet)",
       "both bands: a setup-limited run. An 8 MiB all-gather moves half the bytes per rank of an 8 MiB "
       "all-reduce, yet it takes 981 us where yw_b200_a4_2x8_allreduce.txt takes 159 us on the same "
       "machine type; it is flat at 234-293 us from 1 KiB to 128 KiB and tops out at 269 GB/s busbw where "
       "that all-reduce reaches 684. The source (google/dranet) demonstrates NIC allocation through "
       "Kubernetes DRA, not a tuned fabric."},
      // NVIDIA/nccl-tests#309 (H100, 8 x 400 Gb/s InfiniBand per node): the only multi-node InfiniBand sweeps in
      // the repo. Datasheet model, no fit; what misses is the model's, stated per log.
      {"H100 IB 4x8 (nccl-tests#309 A)",
       ">= 256 MiB max 26.7% (mean 11.2%): this cluster's default 16-channel rings run at 20.1-20.3 GB/s per "
       "channel (321-325 GB/s busbw), where nccl_parameters.h's Hopper ring_net_channel_gbps (22.9, cluster B's "
       "plateau, which the NCCL maintainer calls good) gives ~366: the per-channel rate belongs to the cluster "
       "(stepcast calibrate fits it: 19.8-21.0 GB/s here). 1 MiB: 34.3%, the model's latency and algorithm "
       "choice at the ring/tree crossover."},
      {"H100 IB 8x8 (nccl-tests#309 A)",
       "1 MiB (its one point in the small band): 36.0%, the ring/tree crossover's latency and algorithm as on "
       "4 nodes; >= 256 MiB meets the bar (max 11.8%)."},
      {"HGX H100 IB 2x8 (nccl-tests#309 B)",
       "64 KiB-256 KiB: busbw 17-36.5% low (the model is slower): it picks tree/LL128 and ring/LL where the run is "
       "faster; our LL128 and tree caps multiply a per-channel rate by the 16 channels that run where NCCL's "
       "tuning multiplies by its 8 search channels (tuning.cc), a change tried and not kept (it moved the "
       "2-node datasheet error from 7.5% to 8.6%). >= 256 MiB: max 15.2% (256 MiB, NVLS-tree's start), mean 8.2%."},
      {"VM H100 IB 4x8 (nccl-tests#309 B)",
       "8 KiB-1 MiB: max 42.1% (mean 24.4%), the same small-size algorithm choice as the 2-node run; its >= 256 "
       "MiB plateau set Hopper's ring_net_channel_gbps (a fit log) and meets the bar (max 7.6%)."},
  };
  return misses;
}

struct BarRow {
  ErrorBand large;
  ErrorBand small;
  [[nodiscard]] bool meets_bars() const {
    return (large.points == 0 || large.max_abs_error <= kLargeBar) &&
           (small.points == 0 || small.max_abs_error <= kSmallBar);
  }
};

BarRow bar_row(const NcclLogCase& c) {
  auto bands = bands_of(compare(c));
  return {bands[">= 256 MiB"], bands["8 KiB-1 MiB"]};
}

std::string band_cell(const ErrorBand& b) {
  if (b.points == 0) return "  -                    ";
  char cell[64];
  std::snprintf(cell, sizeof cell, "%3d %6.1f%% %7.1f%%    ", b.points, b.mean_abs_error * 100.0,
                b.max_abs_error * 100.0);
  return cell;
}

std::string system_of(const NcclLogCase& c) {
  const SystemSpec& s = c.system;
  char text[96];
  if (c.ranks <= c.ranks_per_domain) {
    std::snprintf(text, sizeof text, "1x%d NVLink", c.ranks);
  } else {
    std::snprintf(text, sizeof text, "%dx%d, %dx%.0fG/node", s.nodes(), s.gpus_per_node, s.network.nics_per_node,
                  s.network.nic_bandwidth.value() * 8.0 / 1e9);
  }
  return text;
}

}  // namespace

TEST_CASE("issue #3 bars: every log in their scope meets them, or is a named miss with its analysis (printed)") {
  std::printf("\n== issue #3 bars: |busbw error| of the datasheet model; bars 15%% at >= 256 MiB, 30%% at 8 KiB-1 MiB\n");
  std::printf("%-42s %-34s %-5s %-24s %5s | %-23s| %-23s| %s\n", "log", "category", "op", "system", "ranks",
              " >=256MiB n  mean   max", " 8K-1MiB  n  mean   max", "verdict");
  for (const auto& c : nccl_log_cases()) {
    INFO(c.name);
    const BarRow row = bar_row(c);
    const auto miss = bar_misses().find(c.name);
    const bool listed = miss != bar_misses().end();
    const char* verdict = !held_to_bars(c)   ? (row.meets_bars() ? "outside, meets" : "outside, misses")
                          : listed           ? "ALLOWED MISS"
                          : row.meets_bars() ? "meets"
                                             : "MISSES";
    std::printf("%-42s %-34s %-5s %-24s %5d | %s| %s| %s\n", c.name.c_str(), category_of(c).c_str(),
                c.op == CollectiveOp::all_reduce ? "AR" : c.op == CollectiveOp::all_gather ? "AG" : "other",
                system_of(c).c_str(), c.ranks, band_cell(row.large).c_str(), band_cell(row.small).c_str(), verdict);
    if (!held_to_bars(c)) continue;
    if (listed) {
      CHECK_MESSAGE(!row.meets_bars(), "now meets its bars: take it off bar_misses()");
    } else {
      CHECK(row.meets_bars());
    }
  }
  // Categories the issue names that no in-repo log covers (nccltests290_h100_2x8_allreduce_ring_degraded.txt
  // measures 90 GB/s where ~376 is expected: a parser fixture only, not a case).
  for (const char* named : {"single-node A100 NVLS off", "single-node H100 NVLS on", "single-node H100 NVLS off",
                            "multi-node InfiniBand", "multi-node RoCE"}) {
    int logs = 0;
    for (const auto& c : nccl_log_cases()) logs += category_of(c) == named ? 1 : 0;
    const std::string_view category = named;
    const char* note = logs > 0                                      ? ""
                       : category == "single-node H100 NVLS off"     ? "  <- no sweep; published single points (8x H200, "
                                                                      "8-16 GiB, NVLS off) in published_collectives_test"
                                                                    : "  <- no in-repo log";
    std::printf("   %-28s %d log(s)%s\n", named, logs, note);
  }
  for (const auto& [name, why] : bar_misses()) std::printf("   allowed miss: %s: %s\n", name.c_str(), why.c_str());
  std::printf("   outside: CoreWeave GB200 NVL72 20 racks: the model is ~2x optimistic (tree/LL128 at 1440 ranks): the "
              "network between racks binds at ~450 GB/s per rack, a figure no datasheet gives (analysis in "
              "collective_calibration_test.cpp)\n");
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
