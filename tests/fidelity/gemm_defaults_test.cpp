// The default GEMM time model (model/op_time.h with model/cost_parameters.h) against the published
// GEMM measurements it was built from: published H100 SXM rows
// (tests/fixtures/reference/gemm_measurements.yaml) and our H200 grid
// (tests/fixtures/measured/h200_gemm_grid_2026-11-29.json). Hopper's eta is the mean of the two
// sources, which differ by ~10% (different machines and software), so each source sits a few
// percent to one side. Rows up to 8192^3 are compared with the burst model (sustained_derate = 1);
// the 10240^3 rows, the longest running and visibly power-throttled, with the sustained model.
// Tolerance: H100 rows within 15% each; H200 grid rows within 25% each (narrow outputs, n = 2048,
// run slower than the tile/wave model says); mean |error| per source within 10%; A100 SXM
// best-shape rows within 10%.

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "model/op_time.h"

using namespace stepcast;

namespace {
GpuSpec h100_sxm() {
  GpuSpec g;
  g.architecture = GpuArchitecture::hopper;
  g.dense_peak[index_of(DataType::bf16)] = units::teraflops(989.4);
  g.dense_peak[index_of(DataType::fp16)] = units::teraflops(989.4);
  g.memory_bandwidth = units::gigabytes_per_second(3350);
  g.sm_count = 132;
  return g;
}
double predicted_tflops(const GpuSpec& gpu, DataType dtype, double m, double n, double k, double batch,
                        const CostParameters& params) {
  Op op;
  op.kind = OpKind::gemm;
  op.dtype = dtype;
  op.gemm = {m, n, k, batch};
  op.flops = Flops(2.0 * m * n * k * batch);
  op.bytes = Bytes(2.0 * batch * (m * k + k * n + m * n));
  // The measurements time back-to-back calls of one op from Python: the host's dispatch bounds them.
  const double t = std::max(op_time(op, gpu, params).value(), params.host_dispatch_s);
  return op.flops.value() / t / 1e12;
}
}  // namespace

TEST_CASE("the default GEMM curve reproduces the published H100 SXM GEMM measurements") {
  CostParameters burst;
  burst.sustained_derate = 1.0;
  const CostParameters sustained;
  const YAML::Node root = YAML::LoadFile("tests/fixtures/reference/gemm_measurements.yaml");
  std::vector<double> errors;
  for (const auto& row : root["gemm"]) {
    const std::string id = row["id"].as<std::string>();
    if (id.rfind("zz_nvidia_h100_80gb_hbm3_", 0) != 0) continue;
    const std::string dtype = row["dtype_inputs"].as<std::string>();
    if (dtype != "bf16" && dtype != "fp16") continue;
    const double m = row["m"].as<double>();
    if (m < 2048) continue;  // 1024^3 rows time the Python loop more than the kernel
    const double measured = row["tflops"].as<double>();
    const double predicted = predicted_tflops(h100_sxm(), dtype == "bf16" ? DataType::bf16 : DataType::fp16, m,
                                              row["n"].as<double>(), row["k"].as<double>(), 1.0,
                                              m >= 10240 ? sustained : burst);
    const double error = predicted / measured - 1.0;
    std::printf("%-40s measured %7.1f predicted %7.1f error %+6.1f%%\n", id.c_str(), measured, predicted, 100 * error);
    CAPTURE(id);
    CHECK(std::fabs(error) <= 0.15);
    errors.push_back(std::fabs(error));
  }
  REQUIRE(errors.size() == 8);
  double sum = 0.0;
  for (double e : errors) sum += e;
  CHECK(sum / static_cast<double>(errors.size()) <= 0.10);
}

TEST_CASE("the default GEMM curve reproduces our H200 bf16 GEMM grid") {
  CostParameters burst;
  burst.sustained_derate = 1.0;
  const auto root = nlohmann::json::parse(std::ifstream("tests/fixtures/measured/h200_gemm_grid_2026-11-29.json"));
  double sum = 0.0;
  int rows = 0;
  for (const auto& r : root["records"]) {
    // Shorter calls are inflated by the host's launch latency (each was timed alone).
    if (r["kind"] != "gemm" || !r.contains("k") || r["seconds"].get<double>() < 3e-4) continue;
    const double m = r["m"], n = r["n"], k = r["k"];
    const double measured = r["tflops"];
    const double predicted = predicted_tflops(h100_sxm(), DataType::bf16, m, n, k, 1.0, burst);
    const double error = predicted / measured - 1.0;
    CAPTURE(r["name"].get<std::string>());
    CHECK(std::fabs(error) <= 0.25);  // narrow outputs (n = 2048) run slower than the tile model says
    sum += std::fabs(error);
    ++rows;
  }
  REQUIRE(rows >= 40);
  std::printf("H200 grid: %d rows, mean |error| %.1f%%\n", rows, 100.0 * sum / rows);
  CHECK(sum / rows <= 0.10);
}

TEST_CASE("the default GEMM curve reproduces the A100 SXM best-shape measurements") {
  CostParameters burst;
  burst.sustained_derate = 1.0;
  GpuSpec a100;
  a100.architecture = GpuArchitecture::ampere;
  a100.dense_peak[index_of(DataType::bf16)] = units::teraflops(312);
  a100.memory_bandwidth = units::gigabytes_per_second(2039);
  a100.sm_count = 108;
  // mamf_nvidia_a100_sxm_bf16: 271.2 TFLOP/s at 1024x10240x5120 (dimension order ambiguous: the
  // model's efficiency for either reading); zzdb_nvidia_a100_sxm4_80gb_bf16: 264.53 best of squares.
  for (const auto& [m, n, k, measured] : {std::tuple{1024.0, 10240.0, 5120.0, 271.2}, std::tuple{1024.0, 5120.0, 10240.0, 271.2},
                                          std::tuple{8192.0, 8192.0, 8192.0, 264.53}}) {
    const double predicted = predicted_tflops(a100, DataType::bf16, m, n, k, 1.0, burst);
    CAPTURE(m);
    CAPTURE(n);
    CHECK(std::fabs(predicted / measured - 1.0) <= 0.10);
  }
}
