// FP8 fused attention (precision.fp8_attention: Transformer Engine's FP8 dot-product attention, which
// runs cuDNN's FP8 SDPA) against cuDNN's own measurements: the FP8 and BF16 causal lines of one cuDNN
// 9.19 run per GPU (tests/fixtures/reference/blackwell_compute.yaml: attention_fp8 against the BF16
// rows of attention and attention_blackwell_ultra), Llama 3.1 shape (batch 1, 64/8 heads, head dim
// 128), seq 2048-32768, on an H200 (Hopper), a GB200 (Blackwell) and a GB300 (Blackwell Ultra).
//
// What is checked: the model's BF16-over-FP8 time ratio of each shape and pass against the measured
// one. The constants (CostParameters::flash_fp8_*) are these rows' geometric means
// (scripts/fit_fp8_attention.py), so the mean within 3% checks the constants and their plumbing
// (the precision flag through the layer shape to the op); the per-shape bound states how far one
// constant per generation and pass is from each length: 12%, except Hopper's backward, whose FP8
// kernel falls from 1.06x BF16's speed at seq 2048 to 0.64x at 32768 (a cuDNN 9.19 property the
// model does not carry: one constant, 0.809, misses both ends by 21-27%), held to 30%.
// Discrimination: without the flag both ratios are 1.0 (the H200 forward is measured at 1.48).

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "model/op_time.h"
#include "tests/support/catalog_gpu.h"
#include "tests/support/flash_op.h"

using namespace stepcast;
using stepcast::test::catalog_gpu;

namespace {

// seq -> (forward ms, backward ms) of one GPU's causal Llama 3.1 rows in `sections`.
std::map<double, std::pair<double, double>> times(const std::string& gpu, std::initializer_list<const char*> sections) {
  const YAML::Node root = YAML::LoadFile("tests/fixtures/reference/blackwell_compute.yaml");
  std::map<double, std::pair<double, double>> out;
  for (const char* section : sections) {
    for (const auto& n : root[section]) {
      if (n["gpu"].as<std::string>() != gpu) continue;
      if (n["mask"] && n["mask"].as<std::string>() != "top_left") continue;
      out[n["seqlen"].as<double>()] = {n["fwd_time_ms"].as<double>(), n["bwd_time_ms"].as<double>()};
    }
  }
  return out;
}


struct Case {
  const char* catalog;
  const char* posted;  // the CSV's gpu_name
  double backward_shape_tolerance;
};

constexpr double kMeanTolerance = 0.03;
constexpr double kShapeTolerance = 0.12;
constexpr double kHopperBackwardShapeTolerance = 0.30;  // the header says why

}  // namespace

TEST_CASE("FP8 attention runs at cuDNN's measured FP8-over-BF16 speed on Hopper, Blackwell and Blackwell Ultra") {
  const CostParameters burst = CostParameters().burst();  // 10-iteration harness runs
  for (const Case& c : {Case{"h200-sxm-141gb", "NVIDIA H200", kHopperBackwardShapeTolerance},
                        Case{"gb200", "NVIDIA GB200", kShapeTolerance}, Case{"gb300", "NVIDIA GB300", kShapeTolerance}}) {
    CAPTURE(c.catalog);
    const GpuSpec& gpu = catalog_gpu(c.catalog);
    const auto bf16 = times(c.posted, {"attention", "attention_blackwell_ultra"});
    const auto fp8 = times(c.posted, {"attention_fp8"});
    REQUIRE(fp8.size() == 5);
    for (bool backward : {false, true}) {
      CAPTURE(backward);
      double log_sum = 0.0;
      double worst = 0.0;
      for (const auto& [seq, t8] : fp8) {
        REQUIRE(bf16.count(seq) == 1);
        const auto& t16 = bf16.at(seq);
        const double measured = backward ? t16.second / t8.second : t16.first / t8.first;
        const Op sixteen = test::causal_bf16_flash_op(64.0, seq, 128.0, backward, /*known_split=*/true);
        Op eight = sixteen;
        eight.attention.fp8 = true;
        const double predicted = op_time(sixteen, gpu, burst).value() / op_time(eight, gpu, burst).value();
        const double error = predicted / measured - 1.0;
        std::printf("%-14s seq %6.0f %s: BF16/FP8 time measured %.3f predicted %.3f error %+5.1f%%\n", c.catalog, seq,
                    backward ? "bwd" : "fwd", measured, predicted, 100.0 * error);
        log_sum += std::log(predicted / measured);
        worst = std::max(worst, std::abs(error));
      }
      CHECK(std::abs(std::exp(log_sum / 5.0) - 1.0) <= kMeanTolerance);
      CHECK(worst <= (backward ? c.backward_shape_tolerance : kShapeTolerance));
    }
  }
}

TEST_CASE("without the FP8 flag the model's attention misses cuDNN's FP8 speed") {
  const CostParameters burst = CostParameters().burst();
  for (const auto& [catalog, posted] : {std::pair{"h200-sxm-141gb", "NVIDIA H200"}, std::pair{"gb200", "NVIDIA GB200"}}) {
    CAPTURE(catalog);
    const GpuSpec& gpu = catalog_gpu(catalog);
    const auto bf16 = times(posted, {"attention"});
    const auto fp8 = times(posted, {"attention_fp8"});
    double log_sum = 0.0;
    for (const auto& [seq, t8] : fp8) {
      const Op op = test::causal_bf16_flash_op(64.0, seq, 128.0, false, true);  // the flag left off
      Op same = op;
      const double predicted = op_time(op, gpu, burst).value() / op_time(same, gpu, burst).value();
      log_sum += std::log(predicted / (bf16.at(seq).first / t8.first));
    }
    CHECK(std::abs(std::exp(log_sum / 5.0) - 1.0) > kMeanTolerance);
  }
  // A generation without a measurement (Ampere) prices the flag at 1; the scenario checks reject it.
  CHECK(flash_fp8_speedup(catalog_gpu("a100-sxm-80gb"), false, burst) == 1.0);
  CHECK(flash_fp8_speedup(catalog_gpu("b300"), false, burst) == burst.flash_fp8_fwd_speedup_blackwell_ultra);
}
