// parallel.recompute_modules: Megatron-Core's fine-grained selective recomputation (model/parallel.h).
// Each module's dropped bytes (model/activation_memory.h) and re-run kernels (model/layer_ops.h)
// are derived by hand below from the layer's dimensions; BF16 activations (e = 2 bytes).
#include <doctest/doctest.h>

#include <string>

#include "model/activation_memory.h"
#include "model/flops.h"
#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "model/moe_ops.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/catalog_model.h"
#include "tests/support/scenario_errors.h"

using namespace stepcast;

namespace {

using RM = RecomputeModule;

using test::catalog_model;

// One layer of `model` on one rank: TP 1, micro-batch 1 of 4096 tokens, BF16.
LayerShape shape_of(const TransformerSpec& model, int ep = 1) {
  TrainingWorkload w;
  w.seq_len = 4096;
  w.micro_batch = 1;
  w.global_batch = 1;
  ParallelConfig p;
  p.ep = ep;
  return make_layer_shape(model, w, p, PrecisionConfig{});
}

RecomputeModules modules(std::initializer_list<RM> list) {
  RecomputeModules m = RecomputeModules::empty();
  for (RM x : list) m.add(x);
  return m;
}

// Bytes selective recomputation with `list` saves on `s` against keeping everything.
double dropped(const LayerShape& s, std::initializer_list<RM> list) {
  return layer_activation_bytes(s, Recompute::none).stored.value() -
         layer_activation_bytes(s, Recompute::selective, modules(list)).stored.value();
}

std::string op_names(const OpList& ops) {
  std::string out;
  for (const Op& op : ops) out += std::string(op.name) + " ";
  return out;
}

constexpr double T = 4096.0;  // tokens of the micro-batch
constexpr double e = 2.0;     // BF16

}  // namespace

TEST_CASE("the default module set is the attention core, which a flash kernel keeps nothing of") {
  const LayerShape s = shape_of(catalog_model("llama3-8b"));
  CHECK(RecomputeModules{}.has(RM::core_attn));
  CHECK(RecomputeModules{}.is_default());
  CHECK(dropped(s, {RM::core_attn}) == 0.0);
  CHECK(op_names(selective_recompute_forward_ops(s, RecomputeModules{})) == op_names(attention_core_forward_ops(s)));
}

TEST_CASE("mlp drops a dense layer's FC1 input and SwiGLU's input and output, and re-runs norm, FC1, SwiGLU and FC2") {
  const TransformerSpec& m = catalog_model("llama3-8b");  // h 4096, f 14336
  const LayerShape s = shape_of(m);
  // FC1 input T h, SwiGLU input T 2f and output T f, 2 bytes each.
  CHECK(dropped(s, {RM::mlp}) == doctest::Approx(e * T * (4096.0 + 3.0 * 14336.0)));
  const OpList ops = selective_recompute_forward_ops(s, modules({RM::mlp}));
  CHECK(op_names(ops) == "post_attention_norm fc1 swiglu fc2 ");
  // FC1 (gate and up) 2 T h 2f and FC2 2 T f h: 6 T h f.
  double gemm_flops = 0.0;
  for (const Op& op : ops) gemm_flops += op.flops.value();
  CHECK(gemm_flops == doctest::Approx(6.0 * T * 4096.0 * 14336.0));
}

TEST_CASE("layernorm drops nothing where the norms are fused into the next GEMM (a dense GQA layer)") {
  const LayerShape s = shape_of(catalog_model("llama3-8b"));
  CHECK(dropped(s, {RM::layernorm}) == 0.0);
  CHECK(selective_recompute_forward_ops(s, modules({RM::layernorm})).size() == 0);
}

TEST_CASE("layernorm drops the pre-MLP norm's output in a MoE layer, and the input norm's too with MLA") {
  const TransformerSpec& oss = catalog_model("gpt-oss-120b");  // h 2880, GQA
  const LayerShape oss_moe = moe_layer_shape(shape_of(oss, 8));
  CHECK(dropped(oss_moe, {RM::layernorm}) == doctest::Approx(e * T * 2880.0));
  CHECK(op_names(selective_recompute_forward_ops(oss_moe, modules({RM::layernorm}))) == "post_attention_norm ");

  const TransformerSpec& ds = catalog_model("deepseek-v3");  // h 7168, MLA
  const LayerShape ds_dense = shape_of(ds, 8);
  const LayerShape ds_moe = moe_layer_shape(ds_dense);
  CHECK(dropped(ds_dense, {RM::layernorm}) == doctest::Approx(e * T * 7168.0));
  CHECK(dropped(ds_moe, {RM::layernorm}) == doctest::Approx(2.0 * e * T * 7168.0));
  CHECK(op_names(selective_recompute_forward_ops(ds_moe, modules({RM::layernorm}))) == "input_norm post_attention_norm ");
}

TEST_CASE("moe_act drops the routed experts' activation output and re-runs only the activation") {
  const TransformerSpec& m = catalog_model("gpt-oss-120b");  // 128 experts, top 4, expert ffn 2880
  const LayerShape s = moe_layer_shape(shape_of(m, 8));
  // The busiest rank's experts process T top_k x load token copies (16 local experts, each
  // T top_k ep / E x load rows); the activation output is one expert-ffn row per copy, and
  // GPT-OSS's clamp (activation_clamp 7) keeps a clamped copy of FC1's output (2 expert-ffn rows)
  // that the checkpoint drops too. The recomputation re-runs the clamps and the activation.
  const double copies = T * 4.0 * m.moe.load_imbalance;
  CHECK(moe_routing(s).rows == doctest::Approx(copies));
  CHECK(dropped(s, {RM::moe_act}) == doctest::Approx(e * copies * (2880.0 + 2.0 * 2880.0)));
  CHECK(op_names(selective_recompute_forward_ops(s, modules({RM::moe_act}))) == "experts_glu_clamp experts_swiglu ");
  TransformerSpec unclamped = m;
  unclamped.activation_clamp = 0.0;
  const LayerShape u = moe_layer_shape(shape_of(unclamped, 8));
  CHECK(dropped(u, {RM::moe_act}) == doctest::Approx(e * copies * 2880.0));
  CHECK(op_names(selective_recompute_forward_ops(u, modules({RM::moe_act}))) == "experts_swiglu ");
}

TEST_CASE("moe drops all the MoE MLP keeps and re-runs its whole forward; shared_experts only the shared experts'") {
  const TransformerSpec& m = catalog_model("deepseek-v3");  // 256 experts, top 8, 1 shared, expert ffn 2048
  const LayerShape s = moe_layer_shape(shape_of(m, 8));
  const double copies = T * 8.0 * m.moe.load_imbalance;
  // FP32 router probabilities T E x 4; per copy its hidden row and SwiGLU input (2 x 2048) and
  // output (2048); the shared expert's SwiGLU input and output on every token (3 x 2048).
  const double moe = 4.0 * T * 256.0 + e * copies * (7168.0 + 3.0 * 2048.0) + e * T * 3.0 * 2048.0;
  CHECK(dropped(s, {RM::moe}) == doctest::Approx(moe));
  CHECK(dropped(s, {RM::shared_experts}) == doctest::Approx(e * T * 3.0 * 2048.0));
  CHECK(dropped(s, {RM::moe, RM::shared_experts, RM::moe_act}) == doctest::Approx(moe));  // moe covers them
  OpList whole;
  push_moe_forward(whole, s);
  CHECK(op_names(selective_recompute_forward_ops(s, modules({RM::moe, RM::moe_act}))) == op_names(whole));
  CHECK(op_names(selective_recompute_forward_ops(s, modules({RM::shared_experts}))) ==
        "shared_fc1 shared_swiglu shared_fc2 ");
}

TEST_CASE("mla_up_proj drops Q, K and V and re-runs the up-projections and RoPE") {
  const TransformerSpec& m = catalog_model("deepseek-v3");  // 128 heads, d_nope 128, d_rope 64, d_v 128
  const LayerShape s = shape_of(m, 8);
  // Q and K 128 x 192 each, V 128 x 128, per token.
  CHECK(dropped(s, {RM::mla_up_proj}) == doctest::Approx(e * T * (2.0 * 128.0 * 192.0 + 128.0 * 128.0)));
  const OpList ops = selective_recompute_forward_ops(s, modules({RM::mla_up_proj}));
  CHECK(op_names(ops) == "q_up_proj kv_up_proj mla_rope ");
  // q_up 2 T q_r a (d_n + d_r) + kv_up 2 T kv_r a (d_n + d_v).
  double flops = 0.0;
  for (const Op& op : ops) flops += op.flops.value();
  CHECK(flops == doctest::Approx(2.0 * T * (1536.0 * 128.0 * 192.0 + 512.0 * 128.0 * 256.0)));
}

TEST_CASE("hardware FLOPs add each recomputed module's GEMM work over the layers that have it") {
  const TransformerSpec& m = catalog_model("deepseek-v3");
  const double batch = 2.0, seq = 4096.0, tokens = batch * seq;
  const StepFlops none = training_step_flops(m, batch, seq, Recompute::none);
  const StepFlops sel = training_step_flops(m, batch, seq, Recompute::selective, AttentionCount::full, 1.0,
                                            modules({RM::mla_up_proj, RM::mlp, RM::moe_act, RM::layernorm}));
  CHECK(sel.model.value() == doctest::Approx(none.model.value()));
  // mla_up_proj on all 61 layers and the MTP module's (MoE) block, 62; mlp on the 3 dense layers
  // (SwiGLU 6 T h f, f 18432); moe_act and layernorm re-run no GEMM.
  const double up = 2.0 * tokens * (1536.0 * 128.0 * 192.0 + 512.0 * 128.0 * 256.0) * 62.0;
  const double mlp = 6.0 * tokens * 7168.0 * 18432.0 * 3.0;
  CHECK(sel.hardware.value() - sel.model.value() == doctest::Approx(up + mlp));
  // The default set adds the attention core, as before (61 layers and the MTP block).
  const StepFlops core = training_step_flops(m, batch, seq, Recompute::selective);
  CHECK(core.hardware.value() - core.model.value() ==
        doctest::Approx(layer_forward_flops(m, batch, seq).attention.value() * 62.0));
}

namespace {
const char* kGptOss =
    "schema_version: 1\nmodel: gpt-oss-120b\nsystem: {gpu: h100-sxm-80gb, gpus: 64}\n"
    "training: {seq_len: 4096, global_batch: 512, micro_batch: 1}\n";
}  // namespace

TEST_CASE("recompute_modules load strictly: names, selective only, and only modules the model has") {
  const std::string base = kGptOss;
  const auto with = [&](const std::string& parallel) { return test::scenario_errors(base + "parallel: " + parallel + "\n"); };
  CHECK(with("{pp: 4, ep: 8, recompute: selective, recompute_modules: [layernorm, moe_act]}").empty());
  CHECK(with("{pp: 4, ep: 8, recompute: selective, recompute_modules: [layernorm, moe_actt]}").find("did you mean 'moe_act'?") !=
        std::string::npos);
  CHECK(with("{pp: 4, ep: 8, recompute: none, recompute_modules: [moe_act]}").find("act only with recompute: selective") !=
        std::string::npos);
  CHECK(with("{pp: 4, ep: 8, recompute: selective, recompute_modules: moe_act}").find("expected a list of modules") !=
        std::string::npos);
  CHECK(with("{pp: 4, ep: 8, recompute: selective, recompute_modules: [mla_up_proj]}")
            .find("mla_up_proj needs multi-head latent attention") != std::string::npos);
  CHECK(with("{pp: 4, ep: 8, recompute: selective, recompute_modules: [shared_experts]}").find("needs shared experts") !=
        std::string::npos);
  CHECK(with("{pp: 4, ep: 8, recompute: selective, recompute_modules: [mlp]}").find("every layer of this model is a MoE layer") !=
        std::string::npos);
  const std::string dense = "schema_version: 1\nmodel: llama3-8b\nsystem: {gpu: h100-sxm-80gb, gpus: 8}\n"
                            "training: {seq_len: 4096, global_batch: 64, micro_batch: 1}\n";
  CHECK(test::scenario_errors(dense + "parallel: {recompute: selective, recompute_modules: [moe]}\n")
            .find("moe needs a mixture-of-experts model") != std::string::npos);
  CHECK(test::scenario_errors(dense + "precision: fp8\nparallel: {recompute: selective, recompute_modules: [layernorm]}\n")
            .find("need FP8 current scaling") != std::string::npos);
  CHECK(test::scenario_errors(dense + "parallel: {recompute: none, recompute_modules: [core_attn]}\n").empty());  // the default
}

TEST_CASE("recompute_modules round-trip through the scenario writer and apply with --set") {
  const Scenario sc = parse_scenario(std::string(kGptOss) +
                                         "parallel: {pp: 4, ep: 8, recompute: selective, recompute_modules: [moe_act, layernorm]}\n",
                                     "t.yaml");
  CHECK(sc.parallel.recompute_modules == modules({RM::layernorm, RM::moe_act}));
  const std::string yaml = write_scenario_yaml(sc);
  CHECK(yaml.find("recompute_modules: [moe_act, layernorm]") != std::string::npos);
  CHECK(parse_scenario(yaml, "again.yaml").parallel == sc.parallel);
  const Override set = parse_override("parallel.recompute_modules=[moe]");
  const Scenario edited = parse_scenario(apply_overrides(yaml, {&set, 1}), "edited.yaml");
  CHECK(edited.parallel.recompute_modules == modules({RM::moe}));
}

TEST_CASE("recomputing the experts' activation and the norms saves memory for a little recompute time") {
  const std::string base = std::string(kGptOss) + "parallel: {pp: 4, ep: 8";
  const Scenario none = parse_scenario(base + ", recompute: none}\n", "a.yaml");
  const Scenario act = parse_scenario(base + ", recompute: selective, recompute_modules: [layernorm, moe_act]}\n", "b.yaml");
  const Scenario moe = parse_scenario(base + ", recompute: selective, recompute_modules: [moe]}\n", "c.yaml");
  TrainingPredictor predictor;
  const TrainingPrediction p_none = predictor.predict(none);
  const TrainingPrediction p_act = predictor.predict(act);
  const TrainingPrediction p_moe = predictor.predict(moe);
  CHECK(p_act.memory.activations < p_none.memory.activations);
  CHECK(p_moe.memory.activations < p_act.memory.activations);
  CHECK(p_none.time.recompute.value() == 0.0);
  CHECK(p_act.time.recompute.value() > 0.0);
  CHECK(p_act.step_time > p_none.step_time);
  // The whole MoE layer re-runs its GEMMs and its dispatch and combine: more than norms and activation.
  CHECK(p_moe.time.recompute > p_act.time.recompute);
  CHECK(p_moe.time.ep_comm_exposed > p_act.time.ep_comm_exposed);
  // Memory-bound modules add no hardware FLOPs; the MoE module adds the experts' and router's.
  CHECK(p_act.hardware_flops_per_step.value() == doctest::Approx(p_act.model_flops_per_step.value()));
  CHECK(p_moe.hardware_flops_per_step > p_moe.model_flops_per_step);
}
