// parallel.recompute: selective_op, torchtitan's per-op selective activation checkpointing
// (model/op_checkpoint.h). The hand counts follow the policy in pytorch/torchtitan
// torchtitan/parallelisms/parallelize_llama.py @004b3148 (_save_list: aten.mm, the flash and
// efficient SDPA ops, reduce_scatter_tensor; every second mm of a block recomputed) and the call
// order of torchtitan/models/llama/model.py (wq, wk, wv, SDPA, wo, w1, w3, w2).
#include <doctest/doctest.h>

#include <string>

#include "model/activation_memory.h"
#include "model/flops.h"
#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "model/op_checkpoint.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/catalog_model.h"
#include "tests/support/llama3_8b_step.h"
#include "tests/support/scenario_errors.h"

using namespace stepcast;

namespace {

const TransformerSpec& llama3_8b() { return test::catalog_model("llama3-8b"); }

// One layer on one rank: micro-batch 1 of 4096 tokens, BF16, TP `tp` (with SP when tp > 1).
LayerShape shape_of(const TransformerSpec& model, int tp = 1) {
  TrainingWorkload w;
  w.seq_len = 4096;
  w.micro_batch = 1;
  w.global_batch = 1;
  ParallelConfig p;
  p.tp = tp;
  p.sequence_parallel = tp > 1;
  return make_layer_shape(model, w, p, PrecisionConfig{});
}

std::string mm_text(const BlockMms& b) {
  std::string out;
  for (int i = 0; i < b.count; ++i) out += std::string(b.mm[i].name) + (b.mm[i].saved ? "+ " : "- ");
  return out;
}

bool has_op(const OpList& ops, std::string_view name) {
  for (const Op& op : ops) {
    if (op.name == name) return true;
  }
  return false;
}

constexpr double T = 4096.0;  // tokens of the micro-batch
constexpr double e = 2.0;     // BF16

}  // namespace

TEST_CASE("the policy keeps the 1st, 3rd, 5th and 7th mm of a SwiGLU block: wq, wv, w1, w2") {
  CHECK(mm_text(selective_op_block_mms(shape_of(llama3_8b()))) == "wq+ wk- wv+ wo- w1+ w3- w2+ ");
  // A two-matrix MLP has six mms: fc1 (w1) is the 5th, kept; fc2 (w2) the 6th, re-run.
  TransformerSpec gelu = llama3_8b();
  gelu.mlp = MlpKind::gelu;
  CHECK(mm_text(selective_op_block_mms(shape_of(gelu))) == "wq+ wk- wv+ wo- w1+ w2- ");
}

TEST_CASE("a Llama 3 8B layer keeps its input, wq, wv, w1 and w2 outputs and the flash output with its logsumexp") {
  const LayerShape s = shape_of(llama3_8b());  // h 4096, 32 heads, 8 KV heads of 128, f 14336
  // input 4096 + wq 4096 + wv 1024 + flash output 4096 + w1 14336 + w2 4096, 16-bit, per token;
  // logsumexp FP32 per head and token.
  const double hand = e * T * (4096.0 + 4096.0 + 1024.0 + 4096.0 + 14336.0 + 4096.0) + 4.0 * 32.0 * T;
  CHECK(selective_op_saved_bytes(s).value() == doctest::Approx(hand));
  const LayerActivations a = layer_activation_bytes(s, Recompute::selective_op);
  CHECK(a.stored.value() == doctest::Approx(hand));
  CHECK(a.attention_core.value() == 0.0);
  // Between full recomputation (the input only) and none.
  CHECK(a.stored > layer_activation_bytes(s, Recompute::full).stored);
  CHECK(a.stored < layer_activation_bytes(s, Recompute::none).stored);
}

TEST_CASE("with TP 2 and SP the kept widths are per rank and both reduce-scatter outputs are kept") {
  const LayerShape s = shape_of(llama3_8b(), 2);
  const double Tn = T / 2.0;
  // input Tn h; wq T 2048, wv T 512 (4 of 8 KV heads), flash output T 2048, w1 T 7168,
  // w2 (partial sums before the reduce-scatter) T 4096; the two reduce-scatter outputs Tn h.
  const double hand = e * Tn * 4096.0 + e * T * (2048.0 + 512.0 + 2048.0 + 7168.0 + 4096.0) + 4.0 * 16.0 * T +
                      2.0 * e * Tn * 4096.0;
  CHECK(selective_op_saved_bytes(s).value() == doctest::Approx(hand));
}

TEST_CASE("the backward replays wk, wo and w3 and every non-GEMM forward op except the flash kernel") {
  const LayerShape s = shape_of(llama3_8b());
  const OpList ops = selective_op_recompute_forward_ops(s);
  double gemm_flops = 0.0;
  for (const Op& op : ops) {
    if (op.kind == OpKind::gemm) gemm_flops += op.flops.value();
  }
  // wk 2 T h (8 x 128), wo 2 T (32 x 128) h, w3 2 T h f.
  CHECK(gemm_flops == doctest::Approx(2.0 * T * 4096.0 * (1024.0 + 4096.0 + 14336.0)));
  CHECK(has_op(ops, "wk"));
  CHECK(has_op(ops, "wo"));
  CHECK(has_op(ops, "w3"));
  CHECK(has_op(ops, "input_norm"));
  CHECK(has_op(ops, "post_attention_norm"));
  CHECK(has_op(ops, "swiglu"));
  CHECK_FALSE(has_op(ops, "flash_attention"));
  CHECK_FALSE(has_op(ops, "qkv_proj"));
  CHECK_FALSE(has_op(ops, "fc1"));
  CHECK_FALSE(has_op(ops, "fc2"));
  // An unfused attention is outside the save list: its scores and softmax re-run too.
  LayerShape unfused = s;
  unfused.flash_attention = false;
  CHECK(has_op(selective_op_recompute_forward_ops(unfused), "attention_scores"));
}

TEST_CASE("the step's hardware FLOPs add the re-run GEMMs of every layer") {
  const TransformerSpec& m = llama3_8b();
  const double tokens = 16.0 * 8192.0;
  const StepFlops none = training_step_flops(m, 16.0, 8192.0, Recompute::none);
  const StepFlops op = training_step_flops(m, 16.0, 8192.0, Recompute::selective_op);
  CHECK(op.model.value() == doctest::Approx(none.model.value()));
  CHECK((op.hardware - op.model).value() == doctest::Approx(2.0 * tokens * 4096.0 * (1024.0 + 4096.0 + 14336.0) * 32.0));
}

TEST_CASE("the loader reads recompute: selective_op and refuses it with recompute_modules") {
  const Scenario sc = parse_scenario(test::llama3_8b_training_document("{dp: 8, zero: 3, recompute: selective_op}"), "t.yaml");
  CHECK(sc.parallel.recompute == Recompute::selective_op);
  CHECK(test::scenario_errors(test::llama3_8b_training_document("{dp: 8, recompute: selective_op, recompute_modules: [mlp]}"))
            .find("act only with recompute: selective") != std::string::npos);
  CHECK(test::scenario_errors(test::llama3_8b_training_document("{dp: 8, recompute: selective_ops}"))
            .find("selective_op") != std::string::npos);
}

TEST_CASE("a predicted step under selective_op keeps less than none and re-runs less than full") {
  TrainingPredictor predictor;
  const auto predict = [&](const char* recompute) {
    return predictor.predict(parse_scenario(
        test::llama3_8b_training_document(std::string("{dp: 8, zero: 3, recompute: ") + recompute + "}"), "t.yaml"));
  };
  const TrainingPrediction none = predict("none");
  const TrainingPrediction op = predict("selective_op");
  const TrainingPrediction full = predict("full");
  CHECK(op.memory.activations < none.memory.activations);
  CHECK(op.memory.activations > full.memory.activations);
  CHECK(op.time.recompute.value() > 0.0);
  CHECK(op.time.recompute < full.time.recompute);
}

TEST_CASE("checkpoint: pytorch replays a dense layer up to the activation that feeds fc2 (early stop)") {
  // torch.utils.checkpoint without reentrancy stops once every saved tensor is rebuilt: fc2's
  // output and the residual add after it are saved by nothing.
  const LayerShape s = shape_of(llama3_8b());
  const OpList forward = layer_forward_ops(s);
  const OpList replay = early_stop_recompute_forward_ops(s);
  REQUIRE(forward.size() >= 2);
  CHECK(replay.size() == forward.size() - 2);
  CHECK(has_op(forward, "fc2"));
  CHECK(!has_op(replay, "fc2"));
  for (int i = 0; i < replay.size(); ++i) CHECK(replay[i].name == forward[i].name);
  // With dropout the mask is saved, so fc2 and the dropout run again: the whole forward.
  LayerShape dropout = s;
  dropout.dropout = true;
  CHECK(early_stop_recompute_forward_ops(dropout).size() == layer_forward_ops(dropout).size());

  TrainingPredictor predictor;
  const auto predict = [&](const char* parallel) {
    return predictor.predict(parse_scenario(test::llama3_8b_training_document(parallel), "t.yaml"));
  };
  const TrainingPrediction megatron = predict("{dp: 8, recompute: full}");
  const TrainingPrediction pytorch = predict("{dp: 8, recompute: full, checkpoint: pytorch}");
  CHECK(pytorch.time.recompute < megatron.time.recompute);
  CHECK(pytorch.time.recompute.value() > 0.5 * megatron.time.recompute.value());
  CHECK(pytorch.memory.activations == megatron.memory.activations);
}

TEST_CASE("the loader reads parallel.checkpoint with any recompute setting, and the writer keeps it") {
  const Scenario sc = parse_scenario(test::llama3_8b_training_document("{dp: 8, recompute: full, checkpoint: pytorch}"), "t.yaml");
  CHECK(sc.parallel.checkpoint == CheckpointImplementation::pytorch);
  CHECK(parse_scenario(write_scenario_yaml(sc), sc.source) == sc);
  CHECK(write_scenario_yaml(parse_scenario(test::llama3_8b_training_document("{dp: 8, recompute: full}"), "t.yaml"))
            .find("checkpoint:") == std::string::npos);
  // It describes the trainer: without full recomputation there is nothing to replay, so the
  // prediction is the same (and --set parallel.recompute=none on such a scenario stays valid).
  const auto step = test::llama3_8b_step_time;
  CHECK(step("{dp: 8, checkpoint: pytorch}") == doctest::Approx(step("{dp: 8}")));
  const std::string typo = test::scenario_errors(test::llama3_8b_training_document("{dp: 8, recompute: full, checkpoint: torch}"));
  CAPTURE(typo);
  CHECK(typo.find("parallel.checkpoint") != std::string::npos);
  CHECK(typo.find("pytorch") != std::string::npos);
}
