// MXFP8 weights (precision.params: mxfp8): Megatron-Core's --fp8-param-gather with
// --reuse-grad-buf-for-mxfp8-param-ag, which Megatron-Bridge's bf16_with_mxfp8_mixed sets. The
// weights are the MXFP8 row-wise and column-wise copies with no BF16 copy (model/model_states.h),
// and the distributed optimizer still all-gathers them in BF16, into the gradient buffer
// (PrecisionConfig::distributed_optimizer_gather): memory falls, the step's traffic does not.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/model_states.h"
#include "simulator/diagnostics.h"
#include "simulator/explain.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_layouts.h"
#include "simulator/training_predictor.h"

using namespace stepcast;

namespace {

constexpr double kMxfp8Bytes = 1.0 + 1.0 / 32.0;  // OCP MX v1.0: one E8M0 scale per 32 elements

// Llama 3 70B on 64 GB200s, TP 2 PP 4 (x5 chunks) DP 8, the distributed optimizer: the layout of
// Megatron-Bridge's LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_MX_V2 (scripts/performance/configs/llama/
// llama3_workload_base_configs.py), MXFP8 with `params` as given.
Scenario llama70b_gb200_mxfp8(const std::string& params, std::vector<Override> extra = {}) {
  std::vector<Override> o = {{"system", "{preset: gb200-nvl72, gpus: 64}"},
                             {"training.global_batch", "256"},
                             {"training.seq_len", "8192"},
                             {"parallel.tp", "2"},
                             {"parallel.pp", "4"},
                             {"parallel.dp", "8"},
                             {"parallel.vpp", "5"},
                             {"parallel.recompute", "none"},
                             {"precision", "{compute: mxfp8, grads: bf16, params: " + params + "}"}};
  o.insert(o.end(), extra.begin(), extra.end());
  return load_scenario("llama3-70b-h100", o);
}

}  // namespace

TEST_CASE("MXFP8 weights keep the row-wise and column-wise copies and no BF16 copy: 2 x (1 + 1/32) bytes") {
  PrecisionConfig bf16_weights = precision_shorthand(DataType::bf16);
  bf16_weights.compute = DataType::mxfp8;
  PrecisionConfig mx_weights = bf16_weights;
  mx_weights.params = DataType::mxfp8;
  for (const bool transposes : {true, false}) {
    CHECK(bytes_per_parameter(bf16_weights, transposes).weights == doctest::Approx(2.0 + 2.0 * kMxfp8Bytes));
    CHECK(bytes_per_parameter(mx_weights, transposes).weights == doctest::Approx(2.0 * kMxfp8Bytes));
  }
  // Gradients and the optimizer's FP32 master and moments are as with BF16 weights.
  CHECK(bytes_per_parameter(mx_weights, false).gradients == bytes_per_parameter(bf16_weights, false).gradients);
  CHECK(bytes_per_parameter(mx_weights, false).optimizer_states ==
        bytes_per_parameter(bf16_weights, false).optimizer_states);
  // The distributed optimizer gathers them in BF16; other stored formats gather as stored.
  CHECK(mx_weights.distributed_optimizer_gather() == DataType::bf16);
  CHECK(bf16_weights.distributed_optimizer_gather() == DataType::bf16);
  PrecisionConfig fp8_weights = precision_shorthand(DataType::fp8);
  fp8_weights.params = DataType::fp8;
  CHECK(fp8_weights.distributed_optimizer_gather() == DataType::fp8);
}

TEST_CASE("MXFP8 weights lower the weights' memory by 2 bytes a parameter and leave the step time as it is") {
  const Scenario bf16 = llama70b_gb200_mxfp8("bf16");
  const Scenario mx = llama70b_gb200_mxfp8("mxfp8");
  const TrainingPrediction a = predict_training(bf16);
  const TrainingPrediction b = predict_training(mx);
  MESSAGE("Llama 3 70B MXFP8 on 64 GB200s, peak stage weights: BF16 params " << a.memory.weights.value() / 1e9
                                                                          << " GB, MXFP8 params "
                                                                          << b.memory.weights.value() / 1e9 << " GB");
  // Per parameter of the peak stage: 2 + 2(1 + 1/32) against 2(1 + 1/32).
  CHECK(b.memory.weights.value() / a.memory.weights.value() ==
        doctest::Approx(2.0 * kMxfp8Bytes / (2.0 + 2.0 * kMxfp8Bytes)).epsilon(0.02));
  CHECK(b.memory.gradients == a.memory.gradients);
  CHECK(b.memory.optimizer_states == a.memory.optimizer_states);
  // The parameter all-gather moves BF16 either way: the same exposed traffic, the same step.
  CHECK(b.time.dp_comm_exposed == a.time.dp_comm_exposed);
  CHECK(b.step_time == a.step_time);
}

TEST_CASE("params: mxfp8 needs MXFP8 compute and the distributed optimizer (zero 1 or 2), and writes back") {
  const auto error_of = [](const std::string& params, const std::string& compute, std::vector<Override> extra) {
    std::vector<Override> o = {{"system", "{preset: gb200-nvl72, gpus: 8}"},
                               {"parallel.zero", "1"},
                               {"precision", "{compute: " + compute + ", params: " + params + "}"}};
    o.insert(o.end(), extra.begin(), extra.end());
    try {
      load_scenario("llama3-8b-fp8", o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of("mxfp8", "mxfp8", {}).empty());
  CHECK(error_of("mxfp8", "fp8", {}).find("needs compute: mxfp8") != std::string::npos);
  CHECK(error_of("mxfp8", "bf16", {}).find("needs compute: mxfp8") != std::string::npos);
  CHECK(error_of("mxfp8", "mxfp8", {{"parallel.zero", "3"}}).find("ZeRO-3/FSDP with MXFP8 weights") != std::string::npos);
  // Megatron-LM supports --fp8-param-gather only with the distributed optimizer.
  CHECK(error_of("mxfp8", "mxfp8", {{"parallel.zero", "0"}}).find("needs the distributed optimizer") != std::string::npos);
  CHECK(error_of("mxfp8", "mxfp8", {{"parallel.zero", "2"}}).empty());
  CHECK(error_of("mxfp8", "mxfp8", {{"parallel.offload", "optimizer+params"}}).find("offloaded to the host") !=
        std::string::npos);
  const Scenario mx = llama70b_gb200_mxfp8("mxfp8");
  CHECK(mx.precision.params == DataType::mxfp8);
  CHECK(parse_scenario(write_scenario_yaml(mx), mx.source) == mx);
}

TEST_CASE("explain offers MXFP8 weights under MXFP8 compute, and the change as a user runs it is the prediction shown") {
  // The same layout on 64 GB300s with TP 1 (Megatron-Bridge's LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_MX_V2):
  // with BF16 weights it needs more than a GB300 holds; MXFP8 weights make it fit, at the same step.
  const std::vector<Override> gb300 = {{"system", "{preset: gb300-nvl72, gpus: 64}"}, {"parallel.tp", "1"},
                                       {"parallel.dp", "16"}};
  const Scenario bf16 = llama70b_gb200_mxfp8("bf16", gb300);
  ExplainOptions quick;
  quick.sensitivity = false;
  const Explanation e = explain_training(bf16, quick);
  REQUIRE_FALSE(e.base.fits);
  const auto it = std::find_if(e.changes.begin(), e.changes.end(),
                               [](const ExplainChange& c) { return c.title == "MXFP8 weights (params: mxfp8)"; });
  REQUIRE(it != e.changes.end());
  REQUIRE(it->overrides.size() == 1);
  CHECK(it->overrides[0].key_path == "precision.params");
  CHECK(it->fits);
  CHECK(it->prediction.step_time == e.base.step_time);
  std::vector<Override> changed = gb300;
  changed.push_back(it->overrides[0]);
  const TrainingPrediction again = predict_training(llama70b_gb200_mxfp8("bf16", changed));
  CHECK(again.step_time == it->prediction.step_time);
  CHECK(again.memory.peak == it->prediction.memory.peak);
  // Not offered once the weights are MXFP8.
  const Explanation mx = explain_training(llama70b_gb200_mxfp8("mxfp8", gb300), quick);
  for (const ExplainChange& c : mx.changes) CHECK(c.title != "MXFP8 weights (params: mxfp8)");
}

TEST_CASE("a layout search over a scenario with MXFP8 weights tries the distributed optimizer's stages only") {
  const Scenario mx = llama70b_gb200_mxfp8("mxfp8");
  const LayoutSpace space(mx);
  REQUIRE(space.size() > 0);
  bool saw_dp = false;
  for (const LayoutSpace::Block& b : space.blocks()) {
    for (const LayoutSpace::Block::State& state : b.states) {
      CAPTURE(b.dp);
      if (b.dp > 1) {
        saw_dp = true;
        CHECK((state.zero == 1 || state.zero == 2));
      } else {
        CHECK(state.zero == 0);
      }
    }
  }
  CHECK(saw_dp);
  // Asked for zero 0 alone, the replicated layouts still take the distributed optimizer.
  LayoutSpaceOptions zero0;
  zero0.zero = {0};
  const LayoutSpace zero0_space(mx, zero0);
  for (const LayoutSpace::Block& b : zero0_space.blocks()) {
    for (const LayoutSpace::Block::State& state : b.states) CHECK(state.zero == (b.dp > 1 ? 1 : 0));
  }
}
