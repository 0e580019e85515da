// `stepcast calibrate` end to end on harness-format files (validation/calibration.h): a file
// written by the harness's own writer (validation/measurement_records.h, measurement_json.h) from
// synthetic timings with known constants goes through the real schema and reader, the fit
// recovers the constants, the profile records the file's provenance and round-trips; and bad
// inputs (corrupt, failed checks, mixed GPUs, failed selftests) are clear errors, not bad fits.
// When real H200 files arrive (scenarios/calibration/h200-sxm-141gb/*.json) this is the path
// they take.

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "model/topology.h"
#include "simulator/catalog.h"
#include "simulator/diagnostics.h"
#include "validation/calibration.h"
#include "validation/harness_grids.h"
#include "validation/measurement_json.h"
#include "validation/measurement_records.h"
#include "validation/sha256.h"
#include "validation/validation_report.h"
#include "validation/work_counts.h"
#include "tests/support/harness_file.h"

using namespace stepcast;

namespace {

std::filesystem::path temp(const std::string& name) { return std::filesystem::temp_directory_path() / name; }

TimingResult timing_of(double seconds) {
  TimingResult t;
  t.samples = {seconds * 0.999, seconds, seconds * 1.001};
  t.wall_s = 0.5;
  return t;
}

// Adds a record whose median is what the model under `truth` predicts, times exp(noise).
template <class Inputs>
void add(MeasurementFile& f, Inputs inputs, const GpuSpec& gpu, const CostParameters& truth, double noise) {
  Measurement m = make_measurement(inputs, timing_of(1.0), test::passed_check());
  // The model's time for exactly what the calibration will read back from this record.
  MeasurementFile one;
  one.records.push_back(m);
  const KernelPoint p = kernel_points(one).front();
  const double t = predict_kernel(p, gpu, truth) * std::exp(noise);
  f.records.push_back(make_measurement(inputs, timing_of(t), test::passed_check()));
}

struct Truth {
  CostParameters cost;
  NcclParameters nccl;
};

Truth truth() {
  Truth t;
  t.cost.gemm_eta_hopper_16bit = 0.74;
  t.cost.gemm_eta_fp8 = 0.61;
  t.cost.flash_fwd_eta_hopper = 0.45;
  t.cost.flash_bwd_eta_hopper = 0.35;
  t.cost.memory_bandwidth_eta = 0.83;
  t.cost.elementwise_bytes_per_sm_clock = 11.5;
  t.cost.reduction_bytes_per_sm_clock = 7.5;
  t.cost.kernel_gap_s = 4.5e-6;
  t.nccl.nvls_efficiency[index_of(NcclGeneration::hopper)] = 0.80;
  t.nccl.nvlink_link_gbps[index_of(NcclGeneration::hopper)] = 19.0;
  return t;
}

// A harness-format file of an H200 with GEMMs, attention, elementwise, memory and collectives.
MeasurementFile synthetic_h200(double noise, unsigned seed) {
  const GpuSpec gpu = *Catalog::builtin().find_gpu("h200-sxm-141gb");
  const Truth tr = truth();
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, noise);
  MeasurementFile f = test::harness_file("NVIDIA H200", "h200-sxm-141gb", gpu.sm_count);
  for (std::int64_t m : {1024, 2048, 4096, 8192}) {
    for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{4096, 4096}, {12288, 4096}, {4096, 14336}}) {
      add(f, gemm_point(DataType::bf16, "TN", m, n, k, "grid"), gpu, tr.cost, normal(rng));
      add(f, gemm_point(DataType::fp8, "TN", m, n, k, "grid"), gpu, tr.cost, normal(rng));
    }
  }
  for (std::int64_t s : {1024, 2048, 4096, 8192}) {
    for (auto dir : {AttentionDirection::forward, AttentionDirection::backward}) {
      AttentionInputs a;
      a.impl = "cudnn_sdpa";
      a.direction = dir;
      a.batch = 2;
      a.heads = 32;
      a.kv_heads = 8;
      a.seq_q = a.seq_kv = s;
      a.causal = true;
      add(f, a, gpu, tr.cost, normal(rng));
    }
  }
  for (std::int64_t rows : {2048, 8192, 32768}) {
    for (const char* op : {"gelu", "bias_dropout_add", "rmsnorm", "softmax"}) {
      add(f, ElementwiseInputs{op, DataType::bf16, rows, 8192}, gpu, tr.cost, normal(rng));
    }
  }
  // A copy streams at the HBM limit (as real copies do: 0.86 of datasheet on an H200,
  // tests/fixtures/measured/h200_torch_kernels_2026-11-29.json), which op_time does not apply to
  // memory-bound kernels alone: its time is written directly.
  for (std::int64_t elements : {1 << 24, 1 << 28}) {
    const MemoryInputs copy{"copy", DataType::fp32, elements};
    const double t = memory_bytes(copy).value() / (gpu.memory_bandwidth.value() * tr.cost.memory_bandwidth_eta) +
                     tr.cost.kernel_gap_s;
    f.records.push_back(make_measurement(copy, timing_of(t * std::exp(normal(rng))), test::passed_check()));
  }
  // All-reduce on the 8 GPUs of one HGX H200 (the catalog's default system for the GPU).
  SystemSpec system = *Catalog::builtin().find_system(Catalog::builtin().default_system_name("h200-sxm-141gb"));
  system.gpus = 8;
  const NcclCollectiveModel model(system, derive_fabric_figures(system), tr.nccl);
  GroupLayout group;
  group.size = group.ranks_per_node = 8;
  for (std::int64_t bytes = 1 << 10; bytes <= (std::int64_t{1} << 33); bytes *= 8) {
    CollectiveInputs c;
    c.op = CollectiveOp::all_reduce;
    c.size_bytes = bytes;
    c.count = bytes / 4;
    c.ranks = 8;
    c.ranks_per_node = 8;
    const double t = model.estimate(c.op, Bytes(static_cast<double>(bytes)), group).time.value() * std::exp(normal(rng));
    Measurement m = make_measurement(c, timing_of(t), test::passed_check());
    const double algbw = static_cast<double>(bytes) / t;
    m.collective = CollectiveResult{algbw, algbw * bus_bandwidth_factor(c.op, 8), bus_bandwidth_factor(c.op, 8), std::nullopt};
    f.records.push_back(m);
  }
  f.records.push_back(make_measurement(SelftestInputs{"spin_kernel", 1e-3, 1.01e-3, 0.025, true}, timing_of(1e-3), test::passed_check()));
  return f;
}

const FittedValue* find(const std::vector<FittedValue>& values, const std::string& name) {
  for (const auto& v : values) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

std::string input_error(const CalibrationRequest& request) {
  try {
    calibrate(request);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("calibrate reads a harness file written by the harness's own writer and recovers the constants") {
  const auto path = temp("stepcast_synthetic_h200.json");
  write_measurement_file(path, synthetic_h200(0.01, 5));
  CalibrationRequest request;
  request.inputs = {path};
  request.name = "h200-synthetic";
  const CalibrationProfile p = calibrate(request);
  for (const auto& v : p.cost_parameters) std::printf("fitted %s = %g (from %s)\n", v.name.c_str(), v.value, v.fitted_from.c_str());
  for (const auto& c : p.components) std::printf("component %s in-sample mean %.3f held-out %.3f bias %+.3f\n", c.name.c_str(), c.in_sample.mean_abs, c.held_out.mean_abs, c.in_sample.bias);

  CHECK(p.gpu == "h200-sxm-141gb");
  CHECK(p.gpu_device_name == "NVIDIA H200");
  CHECK(p.sm_count == 132);
  CHECK(p.system == Catalog::builtin().default_system_name("h200-sxm-141gb"));
  REQUIRE(p.inputs.size() == 1);
  CHECK(p.inputs[0].sha256 == sha256_file_hex(path));
  CHECK(p.inputs[0].kind == "harness");
  CHECK(p.inputs[0].provenance.at("driver") == "580.00");
  CHECK(p.inputs[0].provenance.at("devices").find("NVIDIA H200") != std::string::npos);

  // 1% noise: efficiencies within 2%, the NVLS efficiency within 5%.
  const Truth tr = truth();
  REQUIRE(find(p.cost_parameters, "gemm.eta.hopper_16bit") != nullptr);
  CHECK(find(p.cost_parameters, "gemm.eta.hopper_16bit")->value == doctest::Approx(tr.cost.gemm_eta_hopper_16bit).epsilon(0.02));
  CHECK(find(p.cost_parameters, "gemm.eta.fp8")->value == doctest::Approx(tr.cost.gemm_eta_fp8).epsilon(0.02));
  CHECK(find(p.cost_parameters, "flash.fwd_eta.hopper")->value == doctest::Approx(tr.cost.flash_fwd_eta_hopper).epsilon(0.02));
  CHECK(find(p.cost_parameters, "flash.bwd_eta.hopper")->value == doctest::Approx(tr.cost.flash_bwd_eta_hopper).epsilon(0.02));
  CHECK(find(p.cost_parameters, "memory.bandwidth_eta")->value == doctest::Approx(tr.cost.memory_bandwidth_eta).epsilon(0.02));
  CHECK(find(p.cost_parameters, "memory.elementwise_bytes_per_sm_clock")->value ==
        doctest::Approx(tr.cost.elementwise_bytes_per_sm_clock).epsilon(0.02));
  CHECK(find(p.cost_parameters, "memory.reduction_bytes_per_sm_clock")->value ==
        doctest::Approx(tr.cost.reduction_bytes_per_sm_clock).epsilon(0.02));
  REQUIRE(find(p.nccl_parameters, "nvls_efficiency.hopper") != nullptr);
  CHECK(find(p.nccl_parameters, "nvls_efficiency.hopper")->value == doctest::Approx(0.80).epsilon(0.05));

  // Every component has residuals and coverage; held-out errors are about the noise.
  for (const char* name : {"gemm.bf16", "gemm.fp8", "attention.forward", "attention.backward", "elementwise",
                           "reduction", "memory", "collective.all_reduce"}) {
    CAPTURE(name);
    const ComponentCalibration* c = p.component(name);
    REQUIRE(c != nullptr);
    CHECK(c->points > 0);
    CHECK(c->held_out.n == c->points);
  }
  CHECK(p.component("gemm.bf16")->held_out.mean_abs < 0.03);
  CHECK(p.component("gemm.bf16")->coverage.ranges.at("k") == std::pair<double, double>{4096, 14336});
  CHECK(p.component("collective.all_reduce")->coverage.ranges.at("ranks") == std::pair<double, double>{8, 8});

  // The profile round-trips through save and load.
  const auto profile_path = temp("stepcast_synthetic_h200_profile.json");
  save_profile(profile_path, p);
  CHECK(load_profile(profile_path) == p);
  std::filesystem::remove(profile_path);
  std::filesystem::remove(path);
}

TEST_CASE("the harness's attention grid fits the flash efficiencies from cuDNN's points and holds out every shape") {
  // Every point of the full attention grid (validation/harness_grids.h), timed as the model
  // prices it under known efficiencies with 2% noise for cuDNN's SDPA; stepcast's own flash
  // kernels at 40x that (about 2% of peak, as measured on the H200) and decode at 10x. Only the
  // cuDNN points may set flash.fwd_eta / flash.bwd_eta, and each cuDNN shape gets a held-out
  // error from a cross-validation fold that did not see it.
  const GpuSpec gpu = *Catalog::builtin().find_gpu("h200-sxm-141gb");
  const Truth tr = truth();
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0.0, 0.02);
  MeasurementFile f = test::harness_file("NVIDIA H200", "h200-sxm-141gb", gpu.sm_count);
  int forward = 0;
  int backward = 0;
  for (const AttentionInputs& a : attention_grid(HarnessOptions{})) {
    const bool cudnn = a.impl == "cudnn_sdpa";
    const double slower = cudnn ? 1.0 : a.direction == AttentionDirection::decode ? 10.0 : 40.0;
    add(f, a, gpu, tr.cost, normal(rng) + std::log(slower));
    if (cudnn) (a.direction == AttentionDirection::forward ? forward : backward) += 1;
  }
  f.records.push_back(make_measurement(SelftestInputs{"spin_kernel", 1e-3, 1.01e-3, 0.025, true}, timing_of(1e-3), test::passed_check()));
  const auto path = temp("stepcast_attention_grid.json");
  write_measurement_file(path, f);
  CalibrationRequest request;
  request.inputs = {path};
  request.name = "attention-grid";
  const CalibrationProfile p = calibrate(request);
  // `stepcast validate --holdout every-other` on the same file: every other cuDNN shape of each
  // direction fits, the rest are predicted, within a few times the noise.
  ValidationReport report;
  validate_measurements(load_measurements(request), datasheet_variant(), parse_holdout("every-other"), request, report);
  std::filesystem::remove(path);
  std::map<std::string, int> held_out_rows;
  for (const auto& r : report.rows) {
    if (r.component != "attention.forward" && r.component != "attention.backward") continue;
    CAPTURE(r.label);
    CHECK(std::fabs(r.error()) < 0.08);
    ++held_out_rows[r.component];
  }
  CHECK(held_out_rows["attention.forward"] >= forward / 2);
  CHECK(held_out_rows["attention.backward"] >= backward / 2);

  // 28 forward and 17 backward points at 2% noise: each efficiency within 2%.
  REQUIRE(find(p.cost_parameters, "flash.fwd_eta.hopper") != nullptr);
  REQUIRE(find(p.cost_parameters, "flash.bwd_eta.hopper") != nullptr);
  CHECK(find(p.cost_parameters, "flash.fwd_eta.hopper")->value == doctest::Approx(tr.cost.flash_fwd_eta_hopper).epsilon(0.02));
  CHECK(find(p.cost_parameters, "flash.bwd_eta.hopper")->value == doctest::Approx(tr.cost.flash_bwd_eta_hopper).epsilon(0.02));
  for (const auto& [name, n] : {std::pair{"attention.forward", forward}, std::pair{"attention.backward", backward}}) {
    CAPTURE(name);
    const ComponentCalibration* c = p.component(name);
    REQUIRE(c != nullptr);
    CHECK(c->points == n);
    CHECK(c->held_out.n == n);
    // Held-out errors are about the noise (2%): the model's form is the truth's here.
    CHECK(c->held_out.mean_abs < 0.04);
    CHECK(c->coverage.ranges.at("seq_q") == std::pair<double, double>{512, n == forward ? 32768 : 16384});
  }
  // stepcast's own kernels are validated against the fitted constants: 40x slower than they predict.
  const ComponentCalibration* own = p.component("attention.forward.stepcast_flash");
  REQUIRE(own != nullptr);
  CHECK(own->in_sample.bias < -0.9);
}

TEST_CASE("a corrupt measurement file is an error with file:line, not a bad fit") {
  const auto path = temp("stepcast_corrupt.json");
  std::string text = write_measurement_text(synthetic_h200(0.0, 1));
  text.resize(text.size() / 2);  // truncated mid-record
  std::ofstream(path, std::ios::binary) << text;
  CalibrationRequest request;
  request.inputs = {path};
  request.name = "x";
  const std::string error = input_error(request);
  CHECK(error.find(path.string() + ":") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("a record that failed its result check is refused, even with --force") {
  MeasurementFile f = synthetic_h200(0.0, 1);
  f.records[3].check.passed = false;
  const auto path = temp("stepcast_failed_check.json");
  write_measurement_file(path, f);
  CalibrationRequest request;
  request.inputs = {path};
  request.name = "x";
  request.force = true;
  CHECK(input_error(request).find("records[3]") != std::string::npos);
  CHECK(input_error(request).find("failed its result check") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("measurement files of two GPUs, or a failed selftest, are errors; --force records the selftest") {
  const auto h200 = temp("stepcast_h200.json");
  const auto h100 = temp("stepcast_h100.json");
  write_measurement_file(h200, synthetic_h200(0.0, 1));
  MeasurementFile other = synthetic_h200(0.0, 2);
  other.provenance.devices[0].name = "NVIDIA H100 80GB HBM3";
  other.provenance.devices[0].catalog_gpu = "h100-sxm-80gb";
  write_measurement_file(h100, other);
  CalibrationRequest request;
  request.inputs = {h200, h100};
  request.name = "x";
  CHECK(input_error(request).find("a profile applies to one GPU") != std::string::npos);

  MeasurementFile failed = synthetic_h200(0.0, 3);
  std::get<SelftestInputs>(failed.records.back().inputs).passed = false;
  write_measurement_file(h200, failed);
  request.inputs = {h200};
  CHECK(input_error(request).find("selftest 'spin_kernel' failed") != std::string::npos);
  request.force = true;
  const CalibrationProfile p = calibrate(request);
  bool noted = false;
  for (const auto& n : p.notes) noted |= n.find("accepted with --force") != std::string::npos;
  CHECK(noted);
  std::filesystem::remove(h200);
  std::filesystem::remove(h100);
}

TEST_CASE("an nccl-tests log needs --system, and a harness GPU must be the system's GPU") {
  CalibrationRequest request;
  request.inputs = {"tests/fixtures/reference/nccl_logs/aws_p5_2x8_allreduce.txt"};
  request.name = "x";
  CHECK_THROWS_WITH_AS(calibrate(request), doctest::Contains("give --system NAME"), UsageError);
  request.system = "aws-p5";
  const CalibrationProfile p = calibrate(request);
  CHECK(p.gpu == "h100-sxm-80gb");
  CHECK(p.system == "aws-p5");
  CHECK(p.component("collective.all_reduce")->points == 32);

  const auto path = temp("stepcast_h200_for_system.json");
  write_measurement_file(path, synthetic_h200(0.0, 1));
  request.inputs = {path};
  request.system = "dgx-h100";
  CHECK(input_error(request).find("system 'dgx-h100' has 'h100-sxm-80gb'") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("sha256 matches FIPS 180-4's test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
