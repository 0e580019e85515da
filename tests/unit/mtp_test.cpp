// Multi-token prediction (model.mtp_depth): the DeepSeek-V3 module's place in a training step. The
// module (DeepSeek-V3 report arXiv:2412.19437 Sec. 2.2; Megatron-Core MultiTokenPredictionLayer)
// runs on the last pipeline stage after the main model: its own ops (embedding lookup, enorm, hnorm,
// concatenation, eh_proj 2h -> h), one block of the decoder's last layer kind and the shared output
// head with its cross-entropy, for every micro-batch; its parameters and a copy of the embedding
// live there (Megatron-Core gpt_model.py builds the embedding where mtp_process).
#include <doctest/doctest.h>

#include <string>

#include "model/activation_memory.h"
#include "model/flops.h"
#include "model/layer_ops.h"
#include "model/parameter_count.h"
#include "simulator/diagnostics.h"
#include "simulator/explain.h"
#include "simulator/report.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"

using namespace stepcast;

namespace {

Scenario deepseek(int mtp_depth) {
  return parse_scenario("schema_version: 1\nmodel: {preset: deepseek-v3, mtp_depth: " + std::to_string(mtp_depth) +
                            "}\nsystem: {preset: dgx-h100, gpus: 256}\n"
                            "training: {seq_len: 4096, global_batch: 512, micro_batch: 1}\n"
                            "parallel: {tp: 1, pp: 16, dp: 16, ep: 16, expert_tp: 1, first_stage_layers: 4, "
                            "last_stage_layers: 1, zero: 1, recompute: none}\n",
                        "t.yaml");
}

// A dense model on one pipeline stage (the MTP module runs on the critical stage), with an MTP
// module: Llama 3 8B on 8 H100s, data-parallel.
Scenario llama(int mtp_depth, int zero = 1, const std::string& recompute = "none") {
  return parse_scenario("schema_version: 1\nmodel: {preset: llama3-8b, mtp_depth: " + std::to_string(mtp_depth) +
                            "}\nsystem: {preset: dgx-h100, gpus: 8}\n"
                            "training: {seq_len: 4096, global_batch: 64, micro_batch: 1}\n"
                            "parallel: {tp: 1, pp: 1, dp: 8, zero: " + std::to_string(zero) +
                            ", recompute: " + recompute + "}\n",
                        "t.yaml");
}

}  // namespace

TEST_CASE("mtp_depth is read, validated and written back") {
  CHECK(deepseek(1).model.mtp_depth == 1);
  CHECK(deepseek(0).model.mtp_depth == 0);
  const Scenario s = deepseek(2);
  CHECK(parse_scenario(write_scenario_yaml(s), s.source) == s);
  std::string error;
  try {
    deepseek(-1);
  } catch (const InputError& e) {
    error = e.what();
  }
  CHECK(error.find("mtp_depth") != std::string::npos);
}

TEST_CASE("the MTP module's own ops: two norms, a concatenation and the 2h -> h projection") {
  const Scenario s = deepseek(1);
  const LayerShape shape = make_layer_shape(s.model, s.training(), s.parallel, s.precision);
  double gemm_flops = 0.0;
  int norms = 0;
  for (const Op& op : mtp_forward_ops(shape)) {
    if (op.kind == OpKind::gemm) gemm_flops += op.flops.value();
    if (std::string_view(op.name).ends_with("norm")) ++norms;
  }
  // eh_proj: 2 x tokens x 2h x h (Sec. 2.2's M_k in R^{d x 2d}), one micro-batch of 4096 tokens.
  CHECK(gemm_flops == doctest::Approx(2.0 * 4096 * 2.0 * 7168 * 7168));
  CHECK(norms == 2);
  CHECK(mtp_activation_bytes(shape).value() == doctest::Approx(4.0 * 2.0 * 4096 * 7168));
}

TEST_CASE("the MTP module adds one MoE block, its projection and the logits to the model FLOPs") {
  const Scenario with = deepseek(1);
  const Scenario without = deepseek(0);
  const double b = 512, seq = 4096;
  const Flops added = training_step_flops(with.model, b, seq, Recompute::none).model -
                      training_step_flops(without.model, b, seq, Recompute::none).model;
  const Flops module = layer_forward_flops(with.model, b, seq, AttentionCount::full, true).total() +
                       Flops(2.0 * b * seq * 2.0 * 7168.0 * 7168.0) + logits_forward_flops(with.model, b, seq);
  CHECK(added.value() == doctest::Approx(3.0 * module.value()));
}

TEST_CASE("the MTP module slows and fills the last pipeline stage only") {
  const TrainingPrediction with = predict_training(deepseek(1));
  const TrainingPrediction without = predict_training(deepseek(0));
  const std::size_t last = with.per_stage_busy.size() - 1;
  // Every stage but the last is unchanged.
  for (std::size_t s = 0; s < last; ++s) {
    CAPTURE(s);
    CHECK(with.per_stage_busy[s].value() == doctest::Approx(without.per_stage_busy[s].value()));
    CHECK(with.per_stage[s].weights.value() == doctest::Approx(without.per_stage[s].weights.value()));
  }
  // The last stage holds one decoder layer: with the module it runs about a second MoE layer, a
  // second head and the module's own ops, so its busy time more than doubles its layer share.
  CHECK(with.per_stage_busy[last] > without.per_stage_busy[last]);
  // Its parameters: the module (11.6B, 11.27B of it routed experts split over EP 16) and the
  // embedding copy (0.93B), in BF16 weights.
  const Scenario s = deepseek(1);
  const LayerParametersPerRank mtp = mtp_parameters_per_rank(s.model, 1, 16, 1);
  const double added_params = mtp.total() + embedding_parameters(s.model);
  CHECK(with.per_stage[last].weights.value() - without.per_stage[last].weights.value() ==
        doctest::Approx(added_params * 2.0).epsilon(0.01));
  CHECK(with.per_stage[last].activations > without.per_stage[last].activations);
  CHECK(with.step_time > without.step_time);
}

TEST_CASE("the MTP module's time is a breakdown line of its own") {
  const TrainingPrediction with = predict_training(llama(1));
  const TrainingPrediction without = predict_training(llama(0));
  // Its ops, block and head leave compute and TP communication as they are without it...
  CHECK(with.time.compute.value() == doctest::Approx(without.time.compute.value()));
  CHECK(with.time.tp_comm_exposed.value() == doctest::Approx(without.time.tp_comm_exposed.value()));
  CHECK(without.time.mtp.value() == 0.0);
  // ...and take at least a decoder layer's share of the compute (32 layers, one more block and a
  // second head).
  CHECK(with.time.mtp.value() > with.time.compute.value() / 32.0);
  // The step grows by the module's line (one stage: no bubble to absorb it); the optimizer and the
  // gradient reduction see its parameters too.
  CHECK(with.step_time.value() - without.step_time.value() >= with.time.mtp.value() * 0.999);
  CHECK(with.time.total().value() == doctest::Approx(with.step_time.value()).epsilon(1e-9));
  // predict --format json: "mtp" in time_breakdown_s with the module, absent without it.
  CHECK(training_report_json(llama(1), with).find("\"mtp\"") != std::string::npos);
  CHECK(training_report_json(llama(0), without).find("\"mtp\"") == std::string::npos);
  CHECK(training_report_table(llama(1), with).find("MTP module") != std::string::npos);
  // predict --format csv: an mtp_s column, its value the breakdown line (0 without the module).
  const auto csv_column = [](const std::string& header, const std::string& row, const std::string& name) {
    std::size_t column = 0;
    for (std::size_t i = 0; i < header.find(name + ","); ++i) column += header[i] == ',' ? 1 : 0;
    std::size_t start = 0;
    for (std::size_t c = 0; c < column; ++c) start = row.find(',', start) + 1;
    return std::stod(row.substr(start, row.find(',', start) - start));
  };
  REQUIRE(training_csv_header().find(",mtp_s,") != std::string::npos);
  CHECK(csv_column(training_csv_header(), training_csv_row(llama(1), with), "mtp_s") ==
        doctest::Approx(with.time.mtp.value()).epsilon(1e-6));
  CHECK(csv_column(training_csv_header(), training_csv_row(llama(0), without), "mtp_s") == 0.0);
  // explain lists it among the components.
  const Explanation e = explain_training(llama(1));
  bool listed = false;
  for (const ExplainComponent& c : e.components) listed = listed || (c.key == "mtp" && c.time == with.time.mtp);
  CHECK(listed);
}

TEST_CASE("ZeRO-3 gathers the MTP module's projection and norms with the root") {
  // Held through the backward: the gathered root and its unsharded gradient, in BF16; the module's
  // eh_proj (2h x h) and its three norms are now part of it, its block a layer unit like the others.
  const TrainingPrediction with = predict_training(llama(1, 3));
  const TrainingPrediction without = predict_training(llama(0, 3));
  const Scenario s = llama(1, 3);
  const double root = 2.0 * 4096.0 * 4096.0 + 3.0 * 4096.0;
  CHECK(with.per_stage[0].buffers.value() - without.per_stage[0].buffers.value() ==
        doctest::Approx(2.0 * root * 2.0).epsilon(1e-6));
  // Its weights, gradients and optimizer states are sharded over DP 8 like every other parameter.
  const double module = mtp_parameters(s.model);
  CHECK(with.per_stage[0].weights.value() - without.per_stage[0].weights.value() ==
        doctest::Approx(module * 2.0 / 8.0).epsilon(1e-6));
  // The root's gather and reduce-scatter, and the block's per-layer ones, are in its step.
  CHECK(with.time.dp_comm_exposed > without.time.dp_comm_exposed);
}

TEST_CASE("recomputation re-runs the MTP module's block in the hardware FLOPs") {
  const TransformerSpec with = deepseek(1).model;
  const TransformerSpec without = deepseek(0).model;
  const double b = 512, seq = 4096;
  const auto recomputed = [&](const TransformerSpec& m, Recompute r, RecomputeModules modules = {}) {
    const StepFlops f = training_step_flops(m, b, seq, r, AttentionCount::full, 1.0, modules);
    return (f.hardware - f.model).value();
  };
  const LayerFlops block = layer_forward_flops(with, b, seq, AttentionCount::full, true);
  // Full recomputation: one more forward of the MoE block (not of the projection or the head).
  CHECK(recomputed(with, Recompute::full) - recomputed(without, Recompute::full) ==
        doctest::Approx(block.total().value()));
  // Selective: the block's modules under the decoder's policy.
  RecomputeModules modules;
  modules.add(RecomputeModule::core_attn);
  modules.add(RecomputeModule::moe);
  CHECK(recomputed(with, Recompute::selective, modules) - recomputed(without, Recompute::selective, modules) ==
        doctest::Approx((block.attention + block.mlp + block.router).value()));
  CHECK(recomputed(with, Recompute::none) == 0.0);
}
