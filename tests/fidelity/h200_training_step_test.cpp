// Whole training steps measured on one H200 against stepcast's prediction of the same scenario:
// tests/fixtures/measured/h200_torch_training_steps_2026-12-01.json, written by
// scripts/measure_torch_training_step.py (PyTorch 2.11.0+cu130, cuDNN 9.19, driver 580.159.04,
// 700 W; median of 10 timed steps after 3 warm-up steps, each step synchronized). The model is
// Llama 3 8B's shapes with 4, 8 or 16 blocks, written as torchtitan wrote its Llama in late 2024
// and run eagerly under FSDP2 on one rank. Nothing in the model was fitted to these steps.
//
// Mapping rules (one per field; the script's docstring lists what it runs):
//   model      llama3-8b with `layers` blocks
//   system     hgx-h200, 1 GPU (no collective crosses a link)
//   precision  FSDP2 MixedPrecisionPolicy(param_dtype bf16, reduce_dtype fp32): FP32 parameters,
//              gradients and AdamW moments, no separate master copy; BF16 compute
//   parallel   dp 1, zero 3, fsdp fsdp2 (fully_shard per block and at the root: its copies around
//              each gather and reduce-scatter run on one rank too); recompute none or full (every
//              block under non-reentrant torch.utils.checkpoint: checkpoint pytorch)
//   training   seq_len and micro_batch as run, one micro-batch a step; kernels eager (plain
//              PyTorch RMSNorm, complex-view RoPE, silu-then-mul SwiGLU); repeat_kv true;
//              cross_entropy_fusion pytorch (F.cross_entropy on FP32 logits); attention_kernel
//              flash2 for SDPA's flash backend (FlashAttention-2), best for its cuDNN backend
//
// Tolerance: each step within 15% of the measured median, and the mean |error| within issue #8's
// 10%. Recorded on 2026-12-01: +0.1% (8 layers, 8192 tokens, no AC, FlashAttention-2), +1.5%
// (full AC), +0.3% (cuDNN attention), -2.2% (4096 tokens x 2), +0.3% (16 layers, full AC), +5.7%
// (4 layers, 16384 tokens, full AC): mean 1.7%. The first version of this test (nothing of FSDP2's
// copies or the checkpoint's early stop priced) gave -6.9, -1.8, -7.2, -9.8, -2.4, +4.7%, mean
// 5.5%; FSDP2's copies made it +0.1, +4.3, +0.3, -2.2, +3.4, +8.0%, mean 3.0%.
// A second check holds the model to the measured cost of the attention kernel alone: the same
// step with SDPA's flash backend instead of its cuDNN backend took 21.5 ms longer (358.8 against
// 337.3 ms), and the prediction's difference (20.8 ms) must stay within 25% of that.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"

using namespace stepcast;

namespace {

const char* const kFile = "tests/fixtures/measured/h200_torch_training_steps_2026-12-01.json";

struct MeasuredStep {
  std::string id;
  double measured_s = 0.0;
  double predicted_s = 0.0;
  double error() const { return predicted_s / measured_s - 1.0; }
};

Scenario step_scenario(const nlohmann::json& run) {
  const std::string attention = run.at("attention").get<std::string>();
  REQUIRE((attention == "flash" || attention == "cudnn"));
  const std::string ac = run.at("ac").get<std::string>();
  REQUIRE((ac == "none" || ac == "full"));
  const int micro_batch = run.at("micro_batch").get<int>();
  const std::string yaml =
      "schema_version: 1\n"
      "model: {preset: llama3-8b, layers: " + std::to_string(run.at("layers").get<int>()) + "}\n"
      "system: {preset: hgx-h200, gpus: 1}\n"
      "training: {seq_len: " + std::to_string(run.at("seq_len").get<int>()) +
      ", global_batch: " + std::to_string(micro_batch) + ", micro_batch: " + std::to_string(micro_batch) +
      ", cross_entropy_fusion: pytorch, attention_kernel: " + (attention == "flash" ? "flash2" : "best") +
      ", repeat_kv: true, kernels: eager}\n"
      "parallel: {dp: 1, zero: 3, fsdp: fsdp2, recompute: " + ac + (ac == "full" ? ", checkpoint: pytorch" : "") + "}\n"
      "precision: {compute: bf16, params: fp32, grads: fp32, optimizer: fp32, master_weights: false}\n";
  return parse_scenario_node(YAML::Load(yaml), run.at("id").get<std::string>());
}

const std::vector<MeasuredStep>& measured_steps() {
  static const std::vector<MeasuredStep> result = [] {
    std::vector<MeasuredStep> out;
    const auto root = nlohmann::json::parse(std::ifstream(kFile));
    REQUIRE(root.at("provenance").at("gpu").get<std::string>() == "NVIDIA H200");
    REQUIRE(root.at("failed").empty());
    TrainingPredictor predictor;
    std::printf("\n%-28s %12s %12s %8s\n", "H200 training step", "measured ms", "predicted ms", "error");
    for (const auto& run : root.at("runs")) {
      MeasuredStep s;
      s.id = run.at("id").get<std::string>();
      s.measured_s = run.at("median_step_s").get<double>();
      s.predicted_s = predictor.predict(step_scenario(run)).step_time.value();
      std::printf("%-28s %12.1f %12.1f %+7.1f%%\n", s.id.c_str(), 1e3 * s.measured_s, 1e3 * s.predicted_s,
                  100.0 * s.error());
      out.push_back(s);
    }
    return out;
  }();
  return result;
}

const MeasuredStep& step(const std::string& id) {
  for (const MeasuredStep& s : measured_steps()) {
    if (s.id == id) return s;
  }
  FAIL("no measured step " << id);
  static const MeasuredStep none;
  return none;
}

}  // namespace

TEST_CASE("measured H200 training steps: each within 15% of the measured median, the mean within 10%") {
  const auto& steps = measured_steps();
  REQUIRE(steps.size() == 6);
  double sum = 0.0;
  for (const MeasuredStep& s : steps) {
    CAPTURE(s.id);
    CHECK(std::fabs(s.error()) <= 0.15);
    sum += std::fabs(s.error());
  }
  std::printf("mean |error| %.1f%% over %zu measured steps\n", 100.0 * sum / steps.size(), steps.size());
  CHECK(sum / steps.size() <= 0.10);
}

TEST_CASE("measured H200 training steps: FlashAttention-2 against cuDNN attention on the same step") {
  const MeasuredStep& flash = step("l8-s8192-b1-noac-flash");
  const MeasuredStep& cudnn = step("l8-s8192-b1-noac-cudnn");
  const double measured = flash.measured_s - cudnn.measured_s;
  const double predicted = flash.predicted_s - cudnn.predicted_s;
  std::printf("flash - cuDNN: measured %.1f ms, predicted %.1f ms\n", 1e3 * measured, 1e3 * predicted);
  REQUIRE(measured > 0.0);
  CHECK(predicted == doctest::Approx(measured).epsilon(0.25));
}
