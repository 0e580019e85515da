// Blackwell Ultra's doubled SFU against cuDNN's own measurements
// (tests/fixtures/reference/blackwell_compute.yaml, attention_blackwell_ultra and the GB200 rows of
// attention): the same cuDNN 9.19 runner and Llama 3.1 attention shape (head dim 128, BF16, batch 1,
// seq 2048-32768, causal and unmasked) on a GB300 and a GB200, whose tensor-core rates and SM counts
// are equal in the catalog and whose SFUs differ: 32 exponentials per SM per clock on GB300, 16 on
// GB200 (scenarios/catalog/gpus.yaml).
//
// What is checked: the model's GB200-over-GB300 time ratio of each shape, forward and backward,
// against the measured one. A ratio cancels the absolute flash etas (set from training runs, not this
// harness) and the CTA schedule (the same shape on the same SM count); what is left is the doubled-SFU
// speed-up (model/op_time.h flash_doubled_sfu_speedup), whose constants
// (CostParameters::flash_{fwd,bwd}_speedup_doubled_sfu) are these ten ratios' geometric means
// (scripts/fit_doubled_sfu_attention.py). So the mean checks the constants, the catalog field and
// the plumbing; the per-shape bound states how far one constant per pass is from each shape.
// Tolerances: the geometric mean within 3% per pass; each shape within 12% (the measured forward
// ratios spread 1.056-1.256; the model has no mask or length term for the speed-up).
// Discrimination: with the GB300's SFU at the architecture's 16 (the catalog before it had the field)
// both ratios are 1.0 against the measured 1.171 and 1.060, outside the 3%.

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "model/op_time.h"
#include "tests/support/catalog_gpu.h"
#include "tests/support/flash_op.h"

using namespace stepcast;
using stepcast::test::catalog_gpu;

namespace {

// (mask, seq) -> (forward ms, backward ms) of one GPU's bfloat16 Llama 3.1 rows.
using Times = std::map<std::pair<std::string, double>, std::pair<double, double>>;

Times times_of(const std::string& gpu) {
  const YAML::Node root = YAML::LoadFile("tests/fixtures/reference/blackwell_compute.yaml");
  Times out;
  for (const char* section : {"attention", "attention_blackwell_ultra"}) {
    for (const auto& n : root[section]) {
      if (n["gpu"].as<std::string>() != gpu) continue;
      const std::string mask = n["mask"] ? n["mask"].as<std::string>() : "top_left";  // `attention` rows are causal
      out[{mask, n["seqlen"].as<double>()}] = {n["fwd_time_ms"].as<double>(), n["bwd_time_ms"].as<double>()};
    }
  }
  return out;
}

// Model GB200-over-GB300 time ratio of one Llama 3.1 attention kernel (64 heads, head dim 128).
double predicted_ratio(const GpuSpec& gb200, const GpuSpec& gb300, double seq, bool backward, const CostParameters& params) {
  const Op op = test::causal_bf16_flash_op(64.0, seq, 128.0, backward, /*known_split=*/true);
  return op_time(op, gb200, params).value() / op_time(op, gb300, params).value();
}

struct PassFit {
  double log_mean_error = 0.0;  // log of (predicted / measured geometric mean)
  double worst = 0.0;           // largest |predicted / measured - 1| over the shapes
};

PassFit fit(const GpuSpec& gb200, const GpuSpec& gb300, bool backward, const CostParameters& params, bool print) {
  const Times slow = times_of("NVIDIA GB200");
  const Times fast = times_of("NVIDIA GB300");
  REQUIRE(fast.size() == 10);
  double log_sum = 0.0;
  PassFit out;
  for (const auto& [key, t300] : fast) {
    const auto it = slow.find(key);
    REQUIRE(it != slow.end());
    const double measured = backward ? it->second.second / t300.second : it->second.first / t300.first;
    const double predicted = predicted_ratio(gb200, gb300, key.second, backward, params);
    const double error = predicted / measured - 1.0;
    if (print) {
      std::printf("%-8s seq %6.0f %s: GB200/GB300 time measured %.3f predicted %.3f error %+5.1f%%\n", key.first.c_str(),
                  key.second, backward ? "bwd" : "fwd", measured, predicted, 100.0 * error);
    }
    log_sum += std::log(predicted / measured);
    out.worst = std::max(out.worst, std::abs(error));
  }
  out.log_mean_error = log_sum / static_cast<double>(fast.size());
  return out;
}

constexpr double kMeanTolerance = 0.03;
constexpr double kShapeTolerance = 0.12;


}  // namespace

TEST_CASE("the catalog's GB300 and GB200 differ in the SFU and not in the tensor cores or SMs") {
  const GpuSpec& gb200 = catalog_gpu("gb200");
  const GpuSpec& gb300 = catalog_gpu("gb300");
  CHECK(gb300.peak(DataType::bf16).value() == gb200.peak(DataType::bf16).value());
  CHECK(gb300.sm_count == gb200.sm_count);
  CHECK(sfu_exp_per_sm_clock(gb200) == 16.0);
  CHECK(sfu_exp_per_sm_clock(gb300) == 32.0);
  CHECK(sfu_exp_per_sm_clock(catalog_gpu("b300")) == 32.0);
  CHECK(sfu_exp_per_sm_clock(catalog_gpu("b200")) == 16.0);
}

TEST_CASE("GB300 runs cuDNN's Llama 3.1 attention faster than GB200 by the ratio the doubled SFU predicts") {
  const GpuSpec& gb200 = catalog_gpu("gb200");
  const GpuSpec& gb300 = catalog_gpu("gb300");
  const CostParameters burst = CostParameters().burst();  // 10-iteration harness runs
  for (bool backward : {false, true}) {
    CAPTURE(backward);
    const PassFit f = fit(gb200, gb300, backward, burst, /*print=*/true);
    std::printf("%s: geometric-mean error %+5.1f%%, worst shape %4.1f%%\n", backward ? "bwd" : "fwd",
                100.0 * (std::exp(f.log_mean_error) - 1.0), 100.0 * f.worst);
    CHECK(std::abs(std::exp(f.log_mean_error) - 1.0) <= kMeanTolerance);
    CHECK(f.worst <= kShapeTolerance);
  }
}

TEST_CASE("without the doubled SFU the GB300 attention ratios miss cuDNN's") {
  const GpuSpec& gb200 = catalog_gpu("gb200");
  GpuSpec plain = catalog_gpu("gb300");
  plain.sfu_exp_per_sm_clock = 0.0;  // the architecture's 16
  const CostParameters burst = CostParameters().burst();
  for (bool backward : {false, true}) {
    CAPTURE(backward);
    CHECK(std::abs(std::exp(fit(gb200, plain, backward, burst, false).log_mean_error) - 1.0) > kMeanTolerance);
  }
  // And the speed-up applies to Blackwell Ultra only: a B200 prices as before.
  const Op op = test::causal_bf16_flash_op(64.0, 8192.0, 128.0, false, true);
  CHECK(flash_doubled_sfu_speedup(catalog_gpu("b200"), false, burst) == 1.0);
  CHECK(flash_doubled_sfu_speedup(catalog_gpu("b300"), false, burst) == doctest::Approx(burst.flash_fwd_speedup_doubled_sfu));
  CHECK(op_time(op, catalog_gpu("b200"), burst).value() / op_time(op, catalog_gpu("b300"), burst).value() ==
        doctest::Approx(burst.flash_fwd_speedup_doubled_sfu).epsilon(0.01));
}
