// training.attention_kernel: which fused attention kernel generation a training run calls
// (model/attention_kernel.h). Reading and writing the key, its checks against the GPU, the eta it
// selects (model/cost_parameters.h), sweeps over it and explain's change back to `best`.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "model/cost_parameters.h"
#include "simulator/diagnostics.h"
#include "simulator/diff.h"
#include "simulator/explain.h"
#include "simulator/scenario_loader.h"
#include "simulator/sweep_file.h"
#include "simulator/sweep_points.h"
#include "simulator/training_predictor.h"
#include "tests/support/scenario_errors.h"

using namespace stepcast;

namespace {

// Llama 3 8B at 8192 tokens on 8 H100s (attention is a large share of the step at this length).
std::string scenario_yaml(const std::string& gpu, const std::string& training_extra) {
  return "schema_version: 1\nmodel: llama3-8b\nsystem: {gpu: " + gpu +
         ", gpus: 8}\nparallel: {tp: 1, pp: 1, dp: 8, zero: 3}\n"
         "training: {seq_len: 8192, global_batch: 32, micro_batch: 1" +
         (training_extra.empty() ? "" : ", " + training_extra) + "}\n";
}

}  // namespace

TEST_CASE("training.attention_kernel defaults to best and reads best, flash2 or triton") {
  CHECK(parse_scenario(scenario_yaml("h100-sxm-80gb", ""), "t.yaml").training().attention_kernel ==
        AttentionKernel::best);
  CHECK(parse_scenario(scenario_yaml("h100-sxm-80gb", "attention_kernel: best"), "t.yaml").training().attention_kernel ==
        AttentionKernel::best);
  CHECK(parse_scenario(scenario_yaml("h100-sxm-80gb", "attention_kernel: flash2"), "t.yaml")
            .training()
            .attention_kernel == AttentionKernel::flash2);
  CHECK(parse_scenario(scenario_yaml("a100-sxm-80gb", "attention_kernel: triton"), "t.yaml")
            .training()
            .attention_kernel == AttentionKernel::triton);
}

TEST_CASE("an unknown training.attention_kernel is rejected naming the key and every allowed value") {
  const std::string error = test::scenario_errors(scenario_yaml("h100-sxm-80gb", "attention_kernel: flash3"));
  CAPTURE(error);
  CHECK(error.find("training.attention_kernel") != std::string::npos);
  CHECK(error.find("flash3") != std::string::npos);
  CHECK(error.find("best") != std::string::npos);
  CHECK(error.find("flash2") != std::string::npos);
  CHECK(error.find("triton") != std::string::npos);
}

TEST_CASE("flash2 is rejected where no FlashAttention-2 figure exists, and without a fused attention kernel") {
  // Blackwell: no FlashAttention-2 training-shape measurement (model/cost_parameters.h).
  const std::string blackwell = test::scenario_errors(scenario_yaml("b200", "attention_kernel: flash2"));
  CAPTURE(blackwell);
  CHECK(blackwell.find("training.attention_kernel") != std::string::npos);
  CHECK(blackwell.find("blackwell") != std::string::npos);
  CHECK(blackwell.find("attention_kernel: best") != std::string::npos);
  CHECK(test::scenario_errors(scenario_yaml("b200", "attention_kernel: best")).empty());
  // The unfused path has no fused kernel to choose.
  const std::string unfused = test::scenario_errors(scenario_yaml("h100-sxm-80gb", "attention_kernel: flash2, flash_attention: false"));
  CHECK(unfused.find("flash_attention is false") != std::string::npos);
  // Ampere and Hopper have one.
  CHECK(test::scenario_errors(scenario_yaml("a100-sxm-80gb", "attention_kernel: flash2")).empty());
  CHECK(test::scenario_errors(scenario_yaml("h100-sxm-80gb", "attention_kernel: flash2")).empty());
}

TEST_CASE("triton is rejected where FlashAttention-2 has no figure, since it is priced relative to it") {
  const std::string blackwell = test::scenario_errors(scenario_yaml("b200", "attention_kernel: triton"));
  CAPTURE(blackwell);
  CHECK(blackwell.find("training.attention_kernel") != std::string::npos);
  CHECK(blackwell.find("triton is priced on ampere, ada and hopper") != std::string::npos);
  const std::string unfused = test::scenario_errors(scenario_yaml("a100-sxm-80gb", "attention_kernel: triton, flash_attention: false"));
  CHECK(unfused.find("attention_kernel triton names a fused attention kernel") != std::string::npos);
  CHECK(test::scenario_errors(scenario_yaml("a100-sxm-80gb", "attention_kernel: triton")).empty());
  CHECK(test::scenario_errors(scenario_yaml("h100-sxm-80gb", "attention_kernel: triton")).empty());
}

TEST_CASE("the scenario writer keeps attention_kernel flash2 and omits the default") {
  const Scenario flash2 = parse_scenario(scenario_yaml("h100-sxm-80gb", "attention_kernel: flash2"), "t.yaml");
  const std::string written = write_scenario_yaml(flash2);
  CHECK(written.find("attention_kernel: flash2") != std::string::npos);
  CHECK(parse_scenario(written, flash2.source) == flash2);
  const Scenario best = parse_scenario(scenario_yaml("h100-sxm-80gb", ""), "t.yaml");
  CHECK(write_scenario_yaml(best).find("attention_kernel") == std::string::npos);
  const Scenario triton = parse_scenario(scenario_yaml("a100-sxm-80gb", "attention_kernel: triton"), "t.yaml");
  CHECK(write_scenario_yaml(triton).find("attention_kernel: triton") != std::string::npos);
  CHECK(parse_scenario(write_scenario_yaml(triton), triton.source) == triton);
}

TEST_CASE("flash2 divides the Hopper flash etas by the measured ratios and leaves Ampere's and best's alone") {
  const CostParameters p;
  // Hopper: best is cuDNN's 0.42 / 0.33; FlashAttention-2 runs at 0.511 / 0.556 of it.
  CHECK(p.flash_forward_eta(GpuArchitecture::hopper) == p.flash_fwd_eta_hopper);
  CHECK(p.flash_backward_eta(GpuArchitecture::hopper) == p.flash_bwd_eta_hopper);
  CHECK(p.flash_forward_eta(GpuArchitecture::hopper, AttentionKernel::flash2) ==
        doctest::Approx(0.42 * 0.511));
  CHECK(p.flash_backward_eta(GpuArchitecture::hopper, AttentionKernel::flash2) ==
        doctest::Approx(0.33 * 0.556));
  // Ampere's and Ada's etas are FlashAttention-2's own (Dao 2023, A100): flash2 is best there.
  for (GpuArchitecture arch : {GpuArchitecture::ampere, GpuArchitecture::ada}) {
    CHECK(p.flash_forward_eta(arch, AttentionKernel::flash2) == p.flash_forward_eta(arch));
    CHECK(p.flash_backward_eta(arch, AttentionKernel::flash2) == p.flash_backward_eta(arch));
  }
  CHECK(flash2_priced(GpuArchitecture::hopper));
  CHECK_FALSE(flash2_priced(GpuArchitecture::blackwell));
  CHECK_FALSE(flash2_priced(GpuArchitecture::cdna3));
}

TEST_CASE("triton multiplies FlashAttention-2's eta by the Triton ratios on every GPU that prices it") {
  const CostParameters p;
  // Ampere: FlashAttention-2's 0.62 / 0.50 times 0.716 / 0.5 (model/triton_attention.h).
  CHECK(p.flash_forward_eta(GpuArchitecture::ampere, AttentionKernel::triton) == doctest::Approx(0.62 * 0.716));
  CHECK(p.flash_backward_eta(GpuArchitecture::ampere, AttentionKernel::triton) == doctest::Approx(0.50 * 0.5));
  // Hopper: cuDNN's 0.42 / 0.33, FlashAttention-2 at 0.511 / 0.556 of it, Triton at 0.716 / 0.5 of that.
  CHECK(p.flash_forward_eta(GpuArchitecture::hopper, AttentionKernel::triton) == doctest::Approx(0.42 * 0.511 * 0.716));
  CHECK(p.flash_backward_eta(GpuArchitecture::hopper, AttentionKernel::triton) == doctest::Approx(0.33 * 0.556 * 0.5));
}

TEST_CASE("a sweep over training.attention_kernel builds in memory and flash2 is the slower point on Hopper") {
  const SweepFile sweep = parse_sweep(R"(
schema_version: 1
base: llama3-70b-h100
axes:
  training.attention_kernel: [best, flash2]
)",
                                      "<input>");
  REQUIRE(sweep.point_count() == 2);
  PointBuilder builder(sweep);
  REQUIRE(builder.fast());
  std::string reason;
  Scenario points[2];
  for (std::uint64_t i = 0; i < 2; ++i) {
    const Scenario* fast = builder.build(i, reason);
    REQUIRE(fast != nullptr);
    points[i] = *fast;
    // The in-memory point equals the point loaded as a file.
    Scenario loaded;
    REQUIRE(builder.build_by_loading(i, loaded, reason));
    CHECK(points[i] == loaded);
  }
  CHECK(points[0].training().attention_kernel == AttentionKernel::best);
  CHECK(points[1].training().attention_kernel == AttentionKernel::flash2);
  const TrainingPrediction best = predict_training(points[0]);
  const TrainingPrediction flash2 = predict_training(points[1]);
  CHECK(flash2.step_time > best.step_time);
  // `auto` sweeps every kernel.
  const SweepFile all = parse_sweep("schema_version: 1\nbase: llama3-70b-h100\naxes:\n  training.attention_kernel: auto\n",
                                    "<input>");
  CHECK(all.point_count() == 3);
}

TEST_CASE("explain offers attention_kernel flash2 -> best on Hopper, and it is faster") {
  const Scenario sc = parse_scenario(scenario_yaml("h100-sxm-80gb", "attention_kernel: flash2"), "t.yaml");
  const Explanation e = explain_training(sc);
  const auto it = std::find_if(e.changes.begin(), e.changes.end(),
                               [](const ExplainChange& c) { return c.title == "attention_kernel: flash2 -> best"; });
  REQUIRE(it != e.changes.end());
  CHECK(it->saved.value() > 0.0);
  // Not offered where flash2 already is the best kernel (Ampere) or when the run uses best.
  const Explanation ampere = explain_training(parse_scenario(scenario_yaml("a100-sxm-80gb", "attention_kernel: flash2"), "t.yaml"));
  const Explanation best = explain_training(parse_scenario(scenario_yaml("h100-sxm-80gb", ""), "t.yaml"));
  for (const Explanation* x : {&ampere, &best}) {
    CHECK(std::none_of(x->changes.begin(), x->changes.end(),
                       [](const ExplainChange& c) { return c.title.find("attention_kernel") != std::string::npos; }));
  }
}

TEST_CASE("explain offers attention_kernel triton -> flash2 on Ampere and Hopper, and it is faster") {
  for (const char* gpu : {"a100-sxm-80gb", "h100-sxm-80gb"}) {
    CAPTURE(gpu);
    const Explanation e = explain_training(parse_scenario(scenario_yaml(gpu, "attention_kernel: triton"), "t.yaml"));
    const auto it = std::find_if(e.changes.begin(), e.changes.end(),
                                 [](const ExplainChange& c) { return c.title == "attention_kernel: triton -> flash2"; });
    REQUIRE(it != e.changes.end());
    CHECK(it->saved.value() > 0.0);
  }
}

TEST_CASE("diff attributes the step-time change between best and flash2 to the attention kernel alone") {
  const Scenario best = parse_scenario(scenario_yaml("h100-sxm-80gb", ""), "a.yaml");
  const Scenario flash2 = parse_scenario(scenario_yaml("h100-sxm-80gb", "attention_kernel: flash2"), "b.yaml");
  const ScenarioDiff d = diff_training(best, flash2);
  REQUIRE(d.path.size() == 1);
  CHECK(d.path[0].what == "attention kernel: attention_kernel best -> flash2");
  CHECK(d.path[0].step_delta.value() > 0.0);
  CHECK(d.path[0].step_after == d.b.step_time);
}
