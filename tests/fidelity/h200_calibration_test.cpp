// Calibration on the real H200 harness measurements (scenarios/calibration/h200-sxm-141gb/, written
// by stepcast-harness on one H200 on 2026-11-29; see the README there): fit the GEMM constants on
// every other measured shape of each precision and predict the shapes held out. Every row is
// printed (run with -s) so the report can quote it.
//
// Tolerance: for each precision, the held-out GEMMs whose dimensions are multiples of 64 and that
// run at least 50 us are predicted within 10% on average. The rest are reported, not held to it:
// shapes that are not multiples of 64 (their strides, when not multiples of 16 bytes, are priced
// by gemm.misaligned_eta: bf16/fp16 2500^3 and int8 2500^3 now within 2%; but int8 10000^3, which
// is aligned, runs 26% slower than the model), launch-bound ones (< 50 us; cold and hot samples
// are each predicted with their own launch cost, kernel.cold_start_s). Grouped MoE GEMMs are
// priced as the harness runs them, one launch per expert on one stream (the skinny n = 256
// groups within 12%).

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <regex>

#include "validation/validation_report.h"

using namespace stepcast;

namespace {

const std::string kRun = "scenarios/calibration/h200-sxm-141gb/run-5692d753a737/";
// The full calibration set (2026-12-01): every grid, FP8 GEMMs and cuDNN's SDPA forward and
// backward included; the committed profile.json is fitted from it.
const std::string kFullRun = "scenarios/calibration/h200-sxm-141gb/run-084f22936c86/";

bool aligned(const std::string& label) {
  static const std::regex dims("m=([0-9]+) n=([0-9]+) k=([0-9]+)");
  std::smatch m;
  if (!std::regex_search(label, m, dims)) return false;
  for (int i = 1; i <= 3; ++i) {
    if (std::stol(m[i]) % 64 != 0) return false;
  }
  return true;
}

// A precision's held-out GEMM mean |error| as recorded: its held-out points and the figure.
struct RecordedGemmError {
  const char* component;
  int points;
  double mean_abs;
};

// Fits `gemm_file` on every other shape of each precision, predicts the rest, and holds each
// precision's held-out mean |error| within one percentage point of its record, better or worse:
// a change that moves one fails until the record (and the calibration folder's README) is updated.
void check_recorded_gemm_errors(const std::string& gemm_file, std::initializer_list<RecordedGemmError> recorded) {
  constexpr double kTolerance = 0.01;
  CalibrationRequest request;
  request.inputs = {gemm_file};
  const LoadedMeasurements m = load_measurements(request);
  REQUIRE(m.gpu.name == "h200-sxm-141gb");
  ValidationReport report;
  validate_measurements(m, datasheet_variant(), parse_holdout("every-other"), request, report);
  std::map<std::string, std::pair<double, int>> by;
  for (const auto& r : report.rows) {
    by[r.component].first += std::fabs(r.error());
    ++by[r.component].second;
  }
  for (const RecordedGemmError& want : recorded) {
    CAPTURE(want.component);
    const auto& [sum, n] = by[want.component];
    REQUIRE(n == want.points);
    std::printf("  %-10s held out %2d: mean |err| %.2f%% (recorded %.1f%%)\n", want.component, n, 100 * sum / n,
                100 * want.mean_abs);
    CHECK(std::fabs(sum / n - want.mean_abs) <= kTolerance);
  }
}

}  // namespace

TEST_CASE("H200 harness GEMMs: fitted on every other shape, held-out aligned GEMMs >= 50 us within 10% on average") {
  CalibrationRequest request;
  request.inputs = {kRun + "gemm.json"};
  const LoadedMeasurements m = load_measurements(request);
  REQUIRE(m.gpu.name == "h200-sxm-141gb");
  ValidationReport report;
  validate_measurements(m, datasheet_variant(), parse_holdout("every-other"), request, report);
  ValidationReport datasheet;
  validate_measurements(m, datasheet_variant(), parse_holdout("none"), request, datasheet);
  std::map<std::string, double> datasheet_error;
  for (const auto& r : datasheet.rows) datasheet_error[r.label] = r.error();

  std::printf("fitted on %d H200 GEMMs (every other shape per precision):\n", report.fitted_points);
  for (const auto& f : report.fitted) std::printf("  %-28s %9.4g (default %g)\n", f.name.c_str(), f.value, f.datasheet);
  std::map<std::string, std::pair<double, int>> in_tolerance;
  std::map<std::string, std::pair<double, int>> all;
  for (const auto& r : report.rows) {
    const bool counted = aligned(r.label) && r.measured_s >= 50e-6;
    std::printf("  %-62s measured %9.1f us  calibrated %+6.1f%%  datasheet %+6.1f%%%s\n", r.label.c_str(),
                r.measured_s * 1e6, 100 * r.error(), 100 * datasheet_error[r.label], counted ? "" : "  (not in the tolerance)");
    auto& a = all[r.component];
    a.first += std::fabs(r.error());
    ++a.second;
    if (counted) {
      auto& t = in_tolerance[r.component];
      t.first += std::fabs(r.error());
      ++t.second;
    }
  }
  for (const auto& [c, sum] : all) {
    const auto& t = in_tolerance[c];
    std::printf("  %-10s held out %2d: mean |err| %5.1f%%; aligned >= 50 us: %2d, mean |err| %5.1f%%\n", c.c_str(),
                sum.second, 100 * sum.first / sum.second, t.second, t.second ? 100 * t.first / t.second : 0.0);
    CAPTURE(c);
    REQUIRE(t.second >= 3);
    // int8 was 10.2% here until its epilogue was priced (model/op_time.h gemm_epilogue_depth): the
    // 268 MB of int32 C of 8192 x 8192 x 1024 was hidden under its short mainloop (-34%). Now 7.9%.
    CHECK(t.first / t.second <= 0.10);
  }
}

TEST_CASE("H200 harness GEMMs: the held-out mean |error| of every shape of each precision stays at its recorded figure") {
  // Every held-out GEMM counts here (misaligned, launch-bound and grouped ones included), as
  // `stepcast validate scenarios/calibration/h200-sxm-141gb/run-5692d753a737/gemm.json --holdout
  // every-other` prints it, each point priced at its measured SM clock. Recorded on 2026-12-01
  // (issue 9) with the epilogue and sector terms (model/op_time.h gemm_epilogue_depth,
  // gemm_sector_misaligned): bf16 4.7%, fp16 4.2%, fp32 6.8%, int8 8.7%, tf32 10.8% (before them:
  // 4.4, 4.1, 6.2, 11.1, 13.1%; the shared k_half the fit now sets to 0 served bf16 and fp32 a
  // little better). tf32 is above the 10%: 1000^3 (cold and hot, 26-32% slower than the
  // model: cuBLAS's tf32 kernel at that size runs larger tiles than the model's best-of-tiles) and
  // 2500^3. Tolerance: check_recorded_gemm_errors.
  check_recorded_gemm_errors(kRun + "gemm.json", {{"gemm.bf16", 19, 0.047},
                                                  {"gemm.fp16", 16, 0.042},
                                                  {"gemm.fp32", 9, 0.068},
                                                  {"gemm.int8", 12, 0.087},
                                                  {"gemm.tf32", 10, 0.108}});
}

TEST_CASE("a profile of the whole H200 run names the GPU, fits every GEMM precision and cross-validates each component") {
  CalibrationRequest request;
  for (const char* f : {"gemm.json", "attention.json", "elementwise.json", "memory.json", "selftest.json"}) {
    request.inputs.emplace_back(kRun + f);
  }
  request.name = "h200-run-5692d753a737";
  const CalibrationProfile p = calibrate(request);
  CHECK(p.gpu == "h200-sxm-141gb");
  CHECK(p.gpu_device_name == "NVIDIA H200");
  CHECK(p.system.empty());  // one GPU: no collectives
  std::printf("profile %s: components (held-out mean |err|, max, bias, 90%% half-width)\n", p.name.c_str());
  for (const auto& c : p.components) {
    const auto q = c.held_out.half_width(0.9);
    std::printf("  %-36s %3d points  %6.1f%% %6.1f%% %+6.1f%%  %s\n", c.name.c_str(), c.points, 100 * c.held_out.mean_abs,
                100 * c.held_out.max_abs, 100 * c.held_out.bias, q ? (std::to_string(100 * *q).substr(0, 5) + "%").c_str() : "n/a");
  }
  for (const auto& v : p.cost_parameters) std::printf("  fitted %-40s %9.4g (default %g)\n", v.name.c_str(), v.value, v.datasheet);
  for (const char* c : {"gemm.bf16", "gemm.fp16", "gemm.tf32", "gemm.fp32", "gemm.int8"}) {
    CAPTURE(c);
    REQUIRE(p.component(c) != nullptr);
    CHECK(p.component(c)->held_out.n == p.component(c)->points);
  }
  // stepcast's own flash kernels are far slower than cuDNN's (13.6 ms against 0.48 ms on the same
  // shape, README): validated, never fitted.
  for (const auto& v : p.cost_parameters) CHECK(v.name.rfind("flash.", 0) != 0);
}

TEST_CASE("H200 harness attention: fitted on every other shape, held-out flash forward and backward within 10%") {
  // The attention kernels the harness measured on several shapes are stepcast's own flash
  // kernels (cuDNN's fused SDPA has one point, run-52730d9b4f49): 8 forward and 8 backward
  // shapes (batch 2-16, 1k-8k tokens, causal and not, head dims 64 and 128). Every other shape,
  // in increasing time, fits the implementation's own efficiency (validate_measurements); the
  // model's FLOP count, causal halving and head terms then predict the held-out shapes. Measured:
  // forward mean 2.8% / max 7.3%, backward 3.9% / 7.9% (3 held out each); the check is
  // the 10% on the mean and every point within 10%. The paged decode kernel is reported,
  // not held to it: it has a ~0.6 ms floor at any size that no term of the model describes.
  CalibrationRequest request;
  request.inputs = {kRun + "attention.json", "scenarios/calibration/h200-sxm-141gb/run-52730d9b4f49/attention-quick.json"};
  const LoadedMeasurements m = load_measurements(request);
  ValidationReport report;
  validate_measurements(m, datasheet_variant(), parse_holdout("every-other"), request, report);
  std::map<std::string, std::pair<double, int>> by;
  for (const auto& r : report.rows) {
    std::printf("  %-36s %-70s measured %9.1f us  %+6.1f%%\n", r.component.c_str(), r.label.c_str(), r.measured_s * 1e6,
                100 * r.error());
    if (r.component.rfind("attention.forward.", 0) != 0 && r.component.rfind("attention.backward.", 0) != 0) continue;
    CAPTURE(r.label);
    CHECK(std::fabs(r.error()) <= 0.10);
    by[r.component].first += std::fabs(r.error());
    ++by[r.component].second;
  }
  for (const char* c : {"attention.forward.stepcast_flash", "attention.backward.stepcast_flash"}) {
    CAPTURE(c);
    REQUIRE(by[c].second >= 3);
    std::printf("  %-36s held out %d: mean |err| %.1f%%\n", c, by[c].second, 100 * by[c].first / by[c].second);
    CHECK(by[c].first / by[c].second <= 0.10);
  }
}

TEST_CASE("the committed H200 profile is what `stepcast calibrate` fits from the committed files today") {
  // scenarios/calibration/h200-sxm-141gb/profile.json, made by the command in the README there.
  // When the fit changes, this fails until the profile is regenerated with that command.
  const std::string dir = "scenarios/calibration/h200-sxm-141gb/";
  const CalibrationProfile committed = load_profile(dir + "profile.json");
  CalibrationRequest request;
  for (const auto& in : committed.inputs) request.inputs.emplace_back(in.path);
  REQUIRE(request.inputs.size() == 6);  // run-084f22936c86: the README's command
  request.name = committed.name;
  const CalibrationProfile fresh = calibrate(request);
  CHECK(fresh.gpu == committed.gpu);
  REQUIRE(fresh.inputs.size() == committed.inputs.size());
  for (std::size_t i = 0; i < fresh.inputs.size(); ++i) {
    CAPTURE(fresh.inputs[i].path);
    CHECK(fresh.inputs[i].sha256 == committed.inputs[i].sha256);  // the measurement files are unedited
  }
  REQUIRE(fresh.cost_parameters.size() == committed.cost_parameters.size());
  for (std::size_t i = 0; i < fresh.cost_parameters.size(); ++i) {
    CAPTURE(fresh.cost_parameters[i].name);
    CHECK(fresh.cost_parameters[i].name == committed.cost_parameters[i].name);
    CHECK(fresh.cost_parameters[i].value == doctest::Approx(committed.cost_parameters[i].value).epsilon(1e-3));
  }
  REQUIRE(fresh.components.size() == committed.components.size());
  for (std::size_t i = 0; i < fresh.components.size(); ++i) {
    CAPTURE(fresh.components[i].name);
    CHECK(fresh.components[i].held_out.mean_abs ==
          doctest::Approx(committed.components[i].held_out.mean_abs).epsilon(1e-3));
  }
}

TEST_CASE("H200 full run: the profile's held-out cuDNN attention, forward and backward, is within 10% on average") {
  // Issue 9: "with a profile from measured H200 data, predicted GEMM and attention times on
  // held-out shapes are within 10%". cuDNN's fused SDPA (what a training step runs) on 28 forward
  // and 17 backward shapes (d 64/128, 512-32768 tokens, batch 1-32, causal and not, MHA/GQA/MQA,
  // bf16 and fp16); each point is predicted by a cross-validation fold that did not see it, with
  // the flash etas and the CTA-schedule terms refitted per fold. Fitted on the attention files
  // alone (as here): forward 3.9% (max 13.4%), backward 8.6% (max 23.0%; 32 x 512 tokens causal,
  // whose backward takes 4.7x its forward, is the largest miss); in the whole profile, 5.2% and
  // 7.5%. The check is the
  // issue's 10% on each direction's mean.
  CalibrationRequest request;
  for (const char* f : {"selftest.json", "attention.json", "attention-backward.json"}) request.inputs.emplace_back(kFullRun + f);
  request.name = "h200-run-084f22936c86-attention";
  const CalibrationProfile p = calibrate(request);
  for (const char* c : {"attention.forward", "attention.backward"}) {
    CAPTURE(c);
    const auto* component = p.component(c);
    REQUIRE(component != nullptr);
    std::printf("  %-20s %2d points: held-out mean |err| %.1f%%, max %.1f%%, bias %+.1f%%\n", c, component->points,
                100 * component->held_out.mean_abs, 100 * component->held_out.max_abs, 100 * component->held_out.bias);
    CHECK(component->points >= 17);
    CHECK(component->held_out.n == component->points);
    CHECK(component->held_out.mean_abs <= 0.10);
  }
  bool fitted_forward = false;
  for (const auto& v : p.cost_parameters) fitted_forward = fitted_forward || v.name == "flash.fwd_eta.hopper";
  CHECK(fitted_forward);
}

TEST_CASE("H200 full run: the held-out GEMM mean |error| of each precision stays at its recorded figure") {
  // As `stepcast validate scenarios/calibration/h200-sxm-141gb/run-084f22936c86/gemm.json
  // --holdout every-other` prints it: every held-out GEMM counts (misaligned, launch-bound,
  // grouped MoE and MLA shapes included), each point priced at its measured SM clock. Recorded on
  // 2026-12-01 with the epilogue and sector terms (model/op_time.h gemm_epilogue_depth,
  // gemm_sector_misaligned): bf16 8.6%, fp16 7.3%, fp32 6.1%, fp8 7.3%, int8 11.3%, tf32 10.4%
  // (before them: 9.1, 7.3, 8.0, 7.9, 11.7, 10.7%). int8 and tf32 are still above the 10%
  // here: the half this split fits on holds few of the sector-misaligned shapes, and its
  // gemm.sector_misaligned_eta (0.93) leaves int8 10000^3 -27% and tf32 2500^3 -28%; int8 16384^3's
  // median is a throttled sample (-23%); tf32 1000^3 runs 24-32% slower than the model (larger
  // tiles than the model's best-of-tiles). The largest misses overall: the DeepSeek-V3 decode
  // expert group (n = 64: +55%, the model streams its weights with 64 CTAs), misaligned k = 4100,
  // 1026^3. Tolerance: check_recorded_gemm_errors.
  check_recorded_gemm_errors(kFullRun + "gemm.json", {{"gemm.bf16", 34, 0.086},
                                                      {"gemm.fp16", 19, 0.073},
                                                      {"gemm.fp32", 9, 0.061},
                                                      {"gemm.fp8", 29, 0.073},
                                                      {"gemm.int8", 12, 0.113},
                                                      {"gemm.tf32", 10, 0.104}});
}

TEST_CASE("H200 full run: the committed profile's cross-validated GEMM errors stay at their recorded figures") {
  // scenarios/calibration/h200-sxm-141gb/profile.json (its README's table): each point predicted
  // by a 5-fold cross-validation fit that did not see it. Recorded on 2026-12-01 with the epilogue
  // and sector terms: bf16 8.5%, fp16 4.8%, fp32 8.1%, fp8 7.4%, int8 9.7%, tf32 10.1% (before
  // them: 8.6, 5.1, 8.4, 7.9, 11.7, 10.9%); attention 5.1% forward, 7.6% backward. Each within
  // half a point of its figure (the profile is refitted by the test above when the fit changes).
  const CalibrationProfile p = load_profile("scenarios/calibration/h200-sxm-141gb/profile.json");
  const std::map<std::string, double> recorded{{"gemm.bf16", 0.085}, {"gemm.fp16", 0.048},
                                               {"gemm.fp32", 0.081}, {"gemm.fp8", 0.074},
                                               {"gemm.int8", 0.097}, {"gemm.tf32", 0.101},
                                               {"attention.forward", 0.051}, {"attention.backward", 0.076}};
  for (const auto& [name, want] : recorded) {
    CAPTURE(name);
    const auto* c = p.component(name);
    REQUIRE(c != nullptr);
    std::printf("  %-20s cross-validated mean |err| %.2f%% (recorded %.1f%%)\n", name.c_str(), 100 * c->held_out.mean_abs,
                100 * want);
    CHECK(std::fabs(c->held_out.mean_abs - want) <= 0.005);
  }
  CHECK(p.component("gemm.int8")->held_out.mean_abs <= 0.10);
}
