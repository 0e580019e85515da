// Calibration profiles (simulator/calibration_profile.h): they round-trip through save and load,
// a corrupt or mismatched one is a clear error, they set exactly the constants they name, and
// the intervals drawn from them follow residual_stats.h and prediction_interval.h.

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "simulator/calibration_profile.h"
#include "simulator/diagnostics.h"
#include "simulator/inference/inference_predictor.h"
#include "simulator/prediction_interval.h"
#include "simulator/residual_stats.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/gpt3_scenario.h"

using namespace stepcast;

namespace {

CalibrationProfile sample_profile() {
  CalibrationProfile p;
  p.name = "h100-lab";
  p.created_utc = "2026-01-01T00:00:00Z";
  p.tool_version = "0.1.0";
  p.git_sha = "abc";
  p.gpu = "h100-sxm-80gb";
  p.gpu_device_name = "NVIDIA H100 80GB HBM3";
  p.sm_count = 132;
  p.system = "dgx-h100";
  p.inputs.push_back({"gemm.json", std::string(64, 'a'), "harness", 40, {{"driver", "550.54"}, {"cuda_runtime", "13.0"}}});
  p.cost_parameters.push_back({"gemm.eta.hopper_16bit", 0.71, 0.79, "1", "gemm.bf16 (40 points)"});
  p.cost_parameters.push_back({"kernel.gap_s", 5e-6, 4e-6, "s", "gemm.bf16 (40 points)"});
  p.nccl_parameters.push_back({"nvls_efficiency.hopper", 0.80, 0.85, "1", "collective.all_reduce (30 points)"});
  ComponentCalibration c;
  c.name = "gemm.bf16";
  c.points = 40;
  const std::vector<double> errors{0.01, -0.02, 0.03, -0.01, 0.02, 0.015, -0.025, 0.005, 0.04, -0.03};
  c.in_sample = summarize_residuals(errors);
  c.held_out = summarize_residuals(errors);
  c.coverage.include("m", 512);
  c.coverage.include("m", 8192);
  c.coverage.include("k", 1024);
  c.coverage.include("k", 8192);
  c.coverage.include_value("precision", "bf16");
  p.components.push_back(c);
  p.notes.push_back("a note");
  return p;
}

std::filesystem::path temp_file(const std::string& name) { return std::filesystem::temp_directory_path() / name; }

}  // namespace

TEST_CASE("conformal half-widths: the ceil((n+1)q)-th smallest |error|, absent when n is too small") {
  // 10 errors, |e| sorted: 0.005 0.01 0.01 0.015 0.02 0.02 0.025 0.03 0.03 0.04.
  const std::vector<double> e{0.01, -0.02, 0.03, -0.01, 0.02, 0.015, -0.025, 0.005, 0.04, -0.03};
  // q = 0.5: ceil(11 * 0.5) = 6th -> 0.02; q = 0.9: ceil(9.9) = 10th -> 0.04; q = 0.95: 11th > 10.
  CHECK(*conformal_abs_quantile(e, 0.5) == doctest::Approx(0.02));
  CHECK(*conformal_abs_quantile(e, 0.9) == doctest::Approx(0.04));
  CHECK_FALSE(conformal_abs_quantile(e, 0.95).has_value());
  const ResidualStats s = summarize_residuals(e);
  CHECK(s.n == 10);
  CHECK(s.mean_abs == doctest::Approx(0.0205));
  CHECK(s.max_abs == doctest::Approx(0.04));
  CHECK(s.bias == doctest::Approx(0.0035));
  CHECK(*s.half_width(0.9) == doctest::Approx(0.04));
}

TEST_CASE("a profile round-trips through save and load unchanged") {
  const CalibrationProfile p = sample_profile();
  const auto path = temp_file("stepcast_profile_roundtrip.json");
  save_profile(path, p);
  const CalibrationProfile back = load_profile(path);
  CHECK(back == p);
  std::filesystem::remove(path);
}

TEST_CASE("applying a profile sets exactly the constants it names") {
  const CalibrationProfile p = sample_profile();
  const CostParameters c = apply_profile(p);
  CHECK(c.gemm_eta_hopper_16bit == 0.71);
  CHECK(c.kernel_gap_s == 5e-6);
  CHECK(c.gemm_eta_ampere_16bit == CostParameters{}.gemm_eta_ampere_16bit);
  const NcclParameters n = apply_profile(p, NcclParameters{});
  CHECK(n.nvls_efficiency[index_of(NcclGeneration::hopper)] == 0.80);
  CHECK(n.nvls_efficiency[index_of(NcclGeneration::blackwell)] == NcclParameters{}.nvls_efficiency[3]);
  const ModelVariant v = calibrated_variant(std::make_shared<const CalibrationProfile>(p));
  CHECK(v.name == "h100-lab");
  CHECK(v.cost.gemm_eta_hopper_16bit == 0.71);
  CHECK(datasheet_variant().name == "datasheet");
  CHECK(datasheet_variant().profile == nullptr);
}

TEST_CASE("corrupt profiles are errors naming the file and the key path") {
  const std::string good = profile_to_json_text(sample_profile());
  auto error_of = [](const std::string& text) {
    try {
      parse_profile_text(text, "p.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("{not json").find("p.json") != std::string::npos);
  CHECK(error_of("{not json").find("not valid JSON") != std::string::npos);
  std::string typo = good;
  typo.replace(typo.find("\"notes\""), 7, "\"notez\"");
  CHECK(error_of(typo).find("unknown key 'notez'; did you mean 'notes'") != std::string::npos);
  std::string constant = good;
  constant.replace(constant.find("gemm.eta.hopper_16bit"), 21, "gemm.eta.hoper_16bit");
  CHECK(error_of(constant).find("cost_parameters[0].name") != std::string::npos);
  CHECK(error_of(constant).find("did you mean 'gemm.eta.hopper_16bit'") != std::string::npos);
  std::string version = good;
  version.replace(version.find("\"schema_version\": 1"), 19, "\"schema_version\": 2");
  CHECK(error_of(version).find("version 2 is not supported") != std::string::npos);
  std::string reserved = good;
  reserved.replace(reserved.find("\"h100-lab\""), 10, "\"datasheet\"");
  CHECK(error_of(reserved).find("reserved") != std::string::npos);
  std::string harness = good;
  harness.replace(harness.find("stepcast.calibration.profile"), 28, "stepcast.harness.measurements");
  CHECK(error_of(harness).find("is this a calibration profile?") != std::string::npos);
  CHECK_THROWS_WITH_AS(load_profile(temp_file("no_such_profile.json")), doctest::Contains("cannot read"), InputError);
}

TEST_CASE("a profile applies only to the GPU and system it was measured on; --force turns mismatches into warnings") {
  const CalibrationProfile p = sample_profile();
  SystemSpec s;
  s.name = "dgx-h100";
  s.gpu.name = "h100-sxm-80gb";
  s.gpu.sm_count = 132;
  CHECK(check_profile_applies(p, s, false).empty());
  SystemSpec other = s;
  other.gpu.name = "h200-sxm-141gb";
  CHECK_THROWS_WITH_AS(check_profile_applies(p, other, false),
                       doctest::Contains("measured on GPU 'h100-sxm-80gb', the scenario runs on 'h200-sxm-141gb'"),
                       InputError);
  CHECK(check_profile_applies(p, other, true).size() == 1);
  SystemSpec cloud = s;
  cloud.name = "aws-p5";
  CHECK_THROWS_WITH_AS(check_profile_applies(p, cloud, false), doctest::Contains("fitted collectives on system 'dgx-h100'"),
                       InputError);
  SystemSpec pcie = s;
  pcie.gpu.sm_count = 114;
  CHECK_THROWS_WITH_AS(check_profile_applies(p, pcie, false), doctest::Contains("132 SMs"), InputError);
}

TEST_CASE("coverage names each quantity outside the measured range") {
  Coverage c;
  c.include("k", 1024);
  c.include("k", 16384);
  c.include("bytes", 4096);
  const auto out = c.outside({{"k", 65536}, {"bytes", 4096}, {"untracked", 1}});
  REQUIRE(out.size() == 1);
  CHECK(out.front() == "k = 65536 above the measured 1024..16384");
  CHECK(c.outside({{"k", 512}}).front() == "k = 512 below the measured 1024..16384");
}

TEST_CASE("the step-time interval weighs each component's held-out quantile by its share of the step") {
  // GPT-3 175B on 1024 A100s without sequence parallelism or distributed optimizer: TP and DP
  // both all-reduce.
  Scenario sc = test::gpt3_175b(1024, 8, 8, 3, 1536, 1);
  sc.parallel.sequence_parallel = false;
  sc.parallel.zero = 0;
  TrainingPredictor predictor;
  const TrainingPrediction pred = predictor.predict(sc);
  CalibrationProfile p = sample_profile();
  p.gpu = sc.system.gpu.name;
  // Residuals for the GEMMs (|e| 90% quantile 0.04) and for all-reduce (0.10); nothing else.
  p.components.front().name = "gemm." + std::string(to_string(sc.precision.compute));
  ComponentCalibration ar;
  ar.name = "collective.all_reduce";
  std::vector<double> e(20, 0.10);
  ar.held_out = summarize_residuals(e);
  p.components.push_back(ar);
  const PredictionInterval i = training_interval(p, sc, pred, CostParameters{}, 0.9);
  double gemm_share = 0.0;
  double ar_share = 0.0;
  double total = 0.0;
  for (const auto& [c, share] : i.shares) {
    total += share;
    if (c == p.components.front().name) gemm_share = share;
    if (c == "collective.all_reduce") ar_share = share;
  }
  CHECK(total == doctest::Approx(1.0).epsilon(1e-9));  // the shares split the whole step
  CHECK(gemm_share > 0.3);
  REQUIRE(i.relative_half_width.has_value());
  CHECK(*i.relative_half_width == doctest::Approx(0.04 * gemm_share + 0.10 * ar_share));
  CHECK(i.covered_share == doctest::Approx(gemm_share + ar_share));
  // Attention and the memory-bound kernels have no residuals here: listed, not silently covered.
  CHECK(std::find(i.not_covered.begin(), i.not_covered.end(), std::string("elementwise")) != i.not_covered.end());
  // GPT-3's QKV and FC1 GEMMs reduce over h = 12288: beyond the profile's k of 1024..8192.
  bool k_outside = false;
  for (const auto& x : i.extrapolated) k_outside |= x.find("k = ") != std::string::npos;
  CHECK(k_outside);
  CHECK(i.describe(pred.step_time.value(), "s").find("at 90%") != std::string::npos);
  // A component with 8 points has no 90% quantile (ceil(9 * 0.9) = 9 > 8): it is left out of the
  // interval like an uncovered one, and named; the other component still gives one.
  p.components.back().held_out = summarize_residuals(std::vector<double>(8, 0.1));
  const PredictionInterval few = training_interval(p, sc, pred, CostParameters{}, 0.9);
  REQUIRE(few.relative_half_width.has_value());
  CHECK(*few.relative_half_width == doctest::Approx(0.04 * gemm_share));
  CHECK(few.covered_share == doctest::Approx(gemm_share));
  REQUIRE(few.too_few_points.size() == 1);
  CHECK(few.too_few_points.front().find("collective.all_reduce") == 0);
  CHECK(few.describe(1.0, "s").find("too few points for a 90% interval, so not covered: collective.all_reduce") !=
        std::string::npos);
  // With every component short of points there is no interval at all.
  p.components.front().held_out = summarize_residuals(std::vector<double>(8, 0.04));
  const PredictionInterval none = training_interval(p, sc, pred, CostParameters{}, 0.9);
  CHECK_FALSE(none.relative_half_width.has_value());
  CHECK(none.describe(1.0, "s").find("too few calibration points") != std::string::npos);
}

TEST_CASE("inference intervals weigh the prefill and decode steps' components and name what extrapolates") {
  // Llama 2 7B, one H100, a static batch of 8 with 128-token prompts and 128 output tokens:
  // prefill runs the weight GEMMs at m = 8 x 128 = 1024 tokens, decode at m = 8.
  const Scenario sc = parse_scenario(
      "schema_version: 1\nname: t\nmodel: llama2-7b\nsystem: {gpu: h100-sxm-80gb, gpus: 1}\nprecision: bf16\n"
      "inference: {mode: static, batch: 8, input_len: 128, output_len: 128}\n",
      "inline");
  const InferencePrediction pred = predict_inference(sc);
  CalibrationProfile p = sample_profile();  // gemm.bf16: |e| quantile 0.04 over m 512..8192, k 1024..8192
  ComponentCalibration decode;
  decode.name = "attention.decode";
  decode.held_out = summarize_residuals(std::vector<double>(20, 0.20));
  decode.coverage.include("seq_kv", 1024);
  decode.coverage.include("seq_kv", 8192);
  p.components.push_back(decode);
  const InferenceIntervals i = inference_intervals(p, sc, pred, 0.9);

  // Decode: GEMMs (linear + output) at 4%, attention at 20%, by their shares of the step.
  const StepBreakdown& d = pred.decode_step;
  const double total = d.total().value();
  const double gemm = (d.linear + d.output).value() / total;
  const double attention = d.attention.value() / total;
  REQUIRE(i.decode.relative_half_width.has_value());
  CHECK(*i.decode.relative_half_width == doctest::Approx(0.04 * gemm + 0.20 * attention));
  CHECK(i.decode.covered_share == doctest::Approx(gemm + attention));
  // m = 8 is below the measured 512; the mean context 128 + 64 = 192 below the measured 1024.
  const auto has = [](const PredictionInterval& x, const std::string& s) {
    return std::any_of(x.extrapolated.begin(), x.extrapolated.end(), [&](const std::string& e) { return e == s; });
  };
  CHECK(has(i.decode, "gemm.bf16: m = 8 below the measured 512..8192"));
  CHECK(has(i.decode, "attention.decode: seq_kv = 192 below the measured 1024..8192"));
  // Prefill: m = 1024 is measured, but k = h = 4096 is too; its FC2 reduces over f = 11008, above
  // the measured 8192. Flash attention has no residuals here: not covered.
  CHECK_FALSE(has(i.prefill, "gemm.bf16: m = 1024 below the measured 512..8192"));
  CHECK(has(i.prefill, "gemm.bf16: k = 11008 above the measured 1024..8192"));
  CHECK(std::find(i.prefill.not_covered.begin(), i.prefill.not_covered.end(), std::string("attention.forward")) !=
        i.prefill.not_covered.end());
  REQUIRE(i.prefill.relative_half_width.has_value());
  CHECK(*i.prefill.relative_half_width ==
        doctest::Approx(0.04 * (pred.prefill_step.linear + pred.prefill_step.output).value() /
                        pred.prefill_step.total().value()));
}

TEST_CASE("--calibration names the datasheet variant as it names a profile") {
  for (const std::string name : {"", "datasheet"}) {
    const ModelVariant v = model_variant_named(name);
    CHECK(v.name == "datasheet");
    CHECK(v.profile == nullptr);
    CHECK(v.cost.kernel_gap_s == CostParameters{}.kernel_gap_s);
  }
  const auto path = temp_file("stepcast_named_variant.json");
  save_profile(path, sample_profile());
  const ModelVariant v = model_variant_named(path.string());
  CHECK(v.name == "h100-lab");
  REQUIRE(v.profile != nullptr);
  CHECK(v.cost.kernel_gap_s == doctest::Approx(5e-6));
  CHECK_THROWS_AS(model_variant_named("no-such-profile.json"), InputError);
}
