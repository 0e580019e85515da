// Memory per GPU of Megatron-Core runs (Megatron-Bridge, NeMo 2) against their published MEASURED
// peaks: the rows of tests/fixtures/reference/published_memory_megatron.yaml, each with the layout
// it ran (`scenario`, the file's header states the mapping rules and sources) and what the source
// measured (`kind`). The views are memory_fidelity_test.cpp's (the torchtitan rows):
//   device         the prediction's peak (nvidia-smi)
//   max_reserved   the peak less what lies outside the PyTorch caching allocator: the CUDA context
//                  (memory.cuda_context_bytes) and NCCL's buffers per communicator, counted as
//                  training_predictor.cpp stage_memory() counts them (tp, pp, dp, cp groups larger
//                  than 1, and for MoE the expert-parallel, expert-TP and expert-data-parallel ones)
//   max_allocated  max_reserved less the allocator's fragmentation (memory.allocator_fragmentation)
//
// What the rows show (main at a675dc4, no model change): seven rows, mean |error| 9.8%, mean
// signed error +1.0%: no systematic over-estimate in the allocated view. Five are within 10%; the
// two outside point in opposite directions:
//   - NeMo 2 Llama 3 8B BF16 on 8 B200 (micro-batch 2 x 8192, no recompute): +17.3%. Its model
//     states are sourced (BF16 weights 14.96, FP32 gradients 29.92 by bf16_mixed()'s
//     grad_reduce_in_fp32, remainder master + FP32 moments 9.35 GiB), so the ~19 GiB excess is in
//     the 72.2 GiB of activations (6h + 2 kv + 3f 16-bit elements per token and layer, the tensors
//     Transformer Engine's LayerNormLinear, attention, SwiGLU and FC2 save) or in the per-layer
//     CUDA graphs the run enabled; no source read explains it, so nothing is changed.
//   - Megatron-Bridge Llama 3 70B SFT, TP 8: -11.2%; with it the [mlp] recompute row (-9.8%): the
//     prediction drops 13.4 GiB of MLP activations where the run measured 3.2 GB less than the
//     baseline. Both run Transformer Engine CUDA graphs over the MLP (cuda_graph_scope mlp), whose
//     static buffers the model does not hold; not modelled.
// The H100 Llama 3.1 8B FP8 example (90.9 GiB of 79.6) carries FP32 gradients; NeMo 2's
// performance scripts set grad_reduce_in_fp32 = False for every FP8 recipe (scripts/performance/
// helpers.py set_precision_configs, code index id 15243474233), so that run's scenario is
// `grads: bf16`: 74.8 GiB against 89.8 with FP32 gradients (tp 1, cp 2, dp 4, micro-batch 1,
// global batch 128, delayed scaling), which fits: a mapping, not a model, question.
//
// Tolerances: a regression guard holds each row within 5 points of its recorded error; the bar
// (every row within 10% of its measurement) is a case allowed to fail while rows miss it.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/published_memory_rows.h"

using namespace stepcast;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct MegatronMemoryRow {
  std::string id;
  std::string kind;
  double measured_gib = 0.0;
  double predicted_gib = 0.0;
  double error = 0.0;  // predicted / measured - 1
};

// Bytes outside the caching allocator: the CUDA context and one NCCL buffer set per communicator.
double outside_allocator_bytes(const Scenario& sc, const CostParameters& params) {
  const ParallelConfig& par = sc.parallel;
  int communicators = 0;
  for (int size : {par.tp, par.pp, par.dp, par.cp}) communicators += size > 1 ? 1 : 0;
  if (sc.model.is_moe()) {
    // Megatron-Core's expert data-parallel group: the ranks of one pipeline stage that hold the
    // same experts, tp x cp x dp / (ep x expert_tp).
    const int expert_dp = par.tp * par.cp * par.dp / (par.ep * par.expert_tensor_parallel());
    for (int size : {par.ep, par.expert_tensor_parallel(), expert_dp}) communicators += size > 1 ? 1 : 0;
  }
  return params.cuda_context_bytes + params.nccl_buffer_bytes_per_communicator * communicators;
}

double view_bytes(const MemoryBreakdown& m, const std::string& kind, const Scenario& sc, const CostParameters& params) {
  if (kind == "device") return m.peak.value();
  if (kind == "max_reserved") return m.peak.value() - outside_allocator_bytes(sc, params);
  REQUIRE(kind == "max_allocated");
  return m.peak.value() - outside_allocator_bytes(sc, params) - m.fragmentation.value();
}

YAML::Node megatron_memory_runs() {
  return YAML::LoadFile("tests/fixtures/reference/published_memory_megatron.yaml")["memory_runs"];
}

const std::vector<MegatronMemoryRow>& megatron_rows() {
  static const std::vector<MegatronMemoryRow> result = [] {
    std::vector<MegatronMemoryRow> out;
    const YAML::Node runs = megatron_memory_runs();
    TrainingPredictor predictor;
    std::printf("\n%-68s %-13s %8s %8s %7s | %7s %7s %7s %7s %7s %7s (GiB)\n", "Megatron memory row", "kind",
                "measured", "pred", "error", "weights", "grads", "optim", "activ", "buffers", "frag");
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const YAML::Node row = runs[i];
      MegatronMemoryRow r;
      r.id = row["id"].as<std::string>();
      r.kind = row["kind"].as<std::string>();
      r.measured_gib = row["measured_gib"].as<double>();
      const Scenario sc = test::published_memory_scenario(row, r.id);
      const TrainingPrediction p = predictor.predict(sc);
      const MemoryBreakdown& m = p.memory;
      r.predicted_gib = view_bytes(m, r.kind, sc, predictor.parameters()) / kGiB;
      r.error = r.predicted_gib / r.measured_gib - 1.0;
      std::printf("%-68s %-13s %8.1f %8.1f %+6.1f%% | %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f\n", r.id.c_str(),
                  r.kind.c_str(), r.measured_gib, r.predicted_gib, 100.0 * r.error, m.weights.value() / kGiB,
                  m.gradients.value() / kGiB, m.optimizer_states.value() / kGiB, m.activations.value() / kGiB,
                  m.buffers.value() / kGiB, m.fragmentation.value() / kGiB);
      // Where the source measured the other views of the same run too, print them beside.
      for (const char* other : {"max_reserved", "device"}) {
        const std::string key = std::string("measured_") + (std::string(other) == "device" ? "device" : "reserved") + "_gib";
        if (!row[key]) continue;
        const double measured = row[key].as<double>();
        const double predicted = view_bytes(m, other, sc, predictor.parameters()) / kGiB;
        std::printf("%-68s %-13s %8.1f %8.1f %+6.1f%%\n", "  (same run)", other, measured, predicted,
                    100.0 * (predicted / measured - 1.0));
      }
      out.push_back(r);
    }
    return out;
  }();
  return result;
}

}  // namespace

TEST_CASE("every Megatron memory row names its source, its line, a known kind and a scenario that predicts") {
  const YAML::Node runs = megatron_memory_runs();
  REQUIRE(runs.size() == megatron_rows().size());
  CHECK(megatron_rows().size() == 7);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    CAPTURE(runs[i]["id"].as<std::string>());
    CHECK(!runs[i]["source"].as<std::string>().empty());
    CHECK(!runs[i]["line"].as<std::string>().empty());
    CHECK(!runs[i]["kind_source"].as<std::string>().empty());
    const std::string kind = runs[i]["kind"].as<std::string>();
    CHECK((kind == "max_allocated" || kind == "max_reserved" || kind == "device"));
    CHECK(megatron_rows()[i].predicted_gib > 0.0);
  }
}

TEST_CASE("Megatron memory rows: regression guard") {
  // Each row's error when recorded (predicted view / measured - 1), with a band of 5 points: a
  // model change that moves a row further must say why and update this table. These measure the
  // model's error; they are not targets.
  const std::map<std::string, double> recorded = {
      {"mbridge-2026-07-qwen3-30b-a3b-h100-ep16-hybridep", -0.099},
      {"mbridge-2026-05-llama3-70b-sft-h100-fp8cs-tp4-pp4-vpp5", 0.082},
      {"mbridge-2026-05-llama3-70b-sft-h100-fp8cs-tp4-pp4-vpp10", 0.034},
      {"mbridge-2026-05-llama3-70b-sft-h100-fp8cs-tp4-pp8-vpp5", 0.087},
      {"mbridge-2026-05-llama3-70b-sft-h100-fp8cs-tp8-pp4-vpp5", -0.112},
      {"mbridge-2026-05-llama3-70b-sft-h100-fp8cs-tp4-pp4-vpp5-recompute-mlp", -0.098},
      {"nemo2-2025-10-llama3-8b-b200-bf16-tp1-mbs2", 0.173},
  };
  for (const MegatronMemoryRow& r : megatron_rows()) {
    CAPTURE(r.id);
    CAPTURE(r.error);
    REQUIRE(recorded.count(r.id) == 1);
    CHECK(std::fabs(r.error - recorded.at(r.id)) <= 0.05);
  }
}

TEST_CASE("every Megatron memory row within 10% of its measured peak (the bar)" * doctest::may_fail()) {
  for (const MegatronMemoryRow& r : megatron_rows()) {
    CAPTURE(r.id);
    CHECK(std::fabs(r.error) <= 0.10);
  }
}
