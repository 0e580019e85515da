// mlp: relu2 (model/transformer.h MlpKind): Nemotron-4's non-gated MLP with the squared ReLU. It has
// the GELU MLP's GEMMs (h -> f -> h) and one fused activation kernel of GELU's traffic (Megatron-Core's
// compiled squared_relu), so everything but the activation kernel's name equals the GELU model's.
// Also the Nemotron-4 catalog entries against their published parameter totals.
#include <doctest/doctest.h>

#include <string>

#include "model/activation_memory.h"
#include "model/flops.h"
#include "model/inference_ops.h"
#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "model/parameter_count.h"
#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/catalog_model.h"
#include "tests/support/scenario_errors.h"
#include "tests/support/op_lookup.h"

using namespace stepcast;
using stepcast::test::total_bytes;
using stepcast::test::total_flops;

namespace {

using test::catalog_model;
using test::find_op;

TransformerSpec with_mlp(TransformerSpec m, MlpKind mlp) {
  m.mlp = mlp;
  return m;
}

LayerShape shape_of(const TransformerSpec& model, int tp) {
  TrainingWorkload w;
  w.seq_len = 4096;
  w.micro_batch = 2;
  w.global_batch = 2;
  ParallelConfig p;
  p.tp = tp;
  p.sequence_parallel = tp > 1;
  return make_layer_shape(model, w, p, PrecisionConfig{});
}

const std::string kNemotron =
    "schema_version: 1\nmodel: nemotron4-15b\nsystem: {preset: dgx-h100, gpus: 8}\n"
    "training: {seq_len: 4096, global_batch: 32, micro_batch: 2}\nparallel: {tp: 4, sequence_parallel: true}\n"
    "precision: bf16\n";

}  // namespace

TEST_CASE("a relu2 model has the parameters and FLOPs of the same model with a GELU MLP") {
  const TransformerSpec& relu2 = catalog_model("nemotron4-15b");
  REQUIRE(relu2.mlp == MlpKind::relu2);
  const TransformerSpec gelu = with_mlp(relu2, MlpKind::gelu);
  const TransformerSpec swiglu = with_mlp(relu2, MlpKind::swiglu);
  CHECK(total_parameters(relu2) == total_parameters(gelu));
  CHECK(total_parameters(relu2) < total_parameters(swiglu));
  // 4 b s h f forward for the two GEMMs, no gate.
  const double b = 2, s = 4096, h = 6144, f = 24576;
  const LayerFlops lf = layer_forward_flops(relu2, b, s);
  CHECK(lf.mlp.value() == doctest::Approx(4 * b * s * h * f));
  CHECK(lf.total().value() == layer_forward_flops(gelu, b, s).total().value());
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
    const StepFlops a = training_step_flops(relu2, 32, s, r);
    const StepFlops g = training_step_flops(gelu, 32, s, r);
    CHECK(a.model.value() == g.model.value());
    CHECK(a.hardware.value() == g.hardware.value());
  }
}

TEST_CASE("a relu2 layer runs the GELU layer's kernels, its activation named squared_relu, and keeps its activations") {
  const TransformerSpec& relu2 = catalog_model("nemotron4-15b");
  const TransformerSpec gelu = with_mlp(relu2, MlpKind::gelu);
  for (int tp : {1, 4}) {
    CAPTURE(tp);
    const LayerShape a = shape_of(relu2, tp);
    const LayerShape g = shape_of(gelu, tp);
    const OpList af = layer_forward_ops(a), gf = layer_forward_ops(g);
    const OpList ab = layer_backward_ops(a), gb = layer_backward_ops(g);
    CHECK(af.size() == gf.size());
    CHECK(ab.size() == gb.size());
    CHECK(total_bytes(af) == total_bytes(gf));
    CHECK(total_bytes(ab) == total_bytes(gb));
    CHECK(total_flops(af) == total_flops(gf));
    CHECK(total_flops(ab) == total_flops(gb));
    const Op* act = find_op(af, "squared_relu");
    const Op* gelu_act = find_op(gf, "bias_gelu");
    REQUIRE(act != nullptr);
    REQUIRE(gelu_act != nullptr);
    CHECK(find_op(af, "bias_gelu") == nullptr);
    CHECK(act->kind == gelu_act->kind);
    CHECK(act->bytes.value() == gelu_act->bytes.value());
    // Forward reads x and writes y; backward reads x and dy and writes dx: 2 and 3 elements.
    CHECK(act->bytes.value() == doctest::Approx(2.0 * a.tokens() * a.ffn / tp * 2.0));
    const Op* back = find_op(ab, "squared_relu.backward");
    REQUIRE(back != nullptr);
    CHECK(back->bytes.value() == doctest::Approx(3.0 * a.tokens() * a.ffn / tp * 2.0));
    for (Recompute r : {Recompute::none, Recompute::selective}) {
      CHECK(layer_activation_bytes(a, r).stored.value() == layer_activation_bytes(g, r).stored.value());
    }
    // Recomputing the mlp module re-runs the squared ReLU as it re-runs the GELU.
    RecomputeModules mlp;
    mlp.add(RecomputeModule::mlp);  // with core_attn, the default
    CHECK(find_op(selective_recompute_forward_ops(a, mlp), "squared_relu") != nullptr);
    CHECK(total_bytes(selective_recompute_forward_ops(a, mlp)) == total_bytes(selective_recompute_forward_ops(g, mlp)));
  }
}

TEST_CASE("a relu2 training step is predicted exactly as the GELU model's") {
  const Scenario relu2 = parse_scenario(kNemotron, "t.yaml");
  const Scenario gelu = parse_scenario(kNemotron, "t.yaml", {{parse_override("model.mlp=gelu")}});
  CHECK(relu2.model.mlp == MlpKind::relu2);
  CHECK(gelu.model.mlp == MlpKind::gelu);
  const TrainingPrediction a = predict_training(relu2);
  const TrainingPrediction g = predict_training(gelu);
  CHECK(a.step_time.value() == g.step_time.value());
  CHECK(a.memory.peak.value() == g.memory.peak.value());
}

TEST_CASE("the loader reads mlp: relu2, writes it back, and suggests it for a typo") {
  const Scenario s = parse_scenario(kNemotron, "t.yaml");
  CHECK(parse_scenario(write_scenario_yaml(s), s.source) == s);
  const Scenario custom = parse_scenario(
      "schema_version: 1\nmodel: {preset: llama3-8b, mlp: relu2}\nsystem: {preset: dgx-h100, gpus: 8}\n"
      "training: {seq_len: 4096, global_batch: 8}\nprecision: bf16\n",
      "c.yaml");
  CHECK(custom.model.mlp == MlpKind::relu2);
  const std::string typo = test::scenario_errors(
      "schema_version: 1\nmodel: {preset: llama3-8b, mlp: relu_2}\nsystem: {preset: dgx-h100, gpus: 8}\n"
      "training: {seq_len: 4096, global_batch: 8}\nprecision: bf16\n");
  CAPTURE(typo);
  CHECK(typo.find("model.mlp") != std::string::npos);
  CHECK(typo.find("expected one of gelu, swiglu, or relu2, found 'relu_2'") != std::string::npos);
  CHECK(typo.find("did you mean 'relu2'?") != std::string::npos);
}

TEST_CASE("inference runs the squared ReLU as one kernel of GELU's traffic") {
  const TransformerSpec& relu2 = catalog_model("nemotron4-15b");
  InferenceShape s;
  s.hidden = relu2.hidden;
  s.ffn = relu2.ffn_hidden;
  s.heads = relu2.heads;
  s.kv_heads = relu2.kv_heads;
  s.head_dim = 128;
  s.mlp = MlpKind::relu2;
  InferenceShape g = s;
  g.mlp = MlpKind::gelu;
  const OpList a = inference_layer_ops(s, 64, false);
  const OpList b = inference_layer_ops(g, 64, false);
  const Op* act = find_op(a, "squared_relu");
  const Op* gelu_act = find_op(b, "gelu");
  REQUIRE(act != nullptr);
  REQUIRE(gelu_act != nullptr);
  CHECK(act->bytes.value() == gelu_act->bytes.value());
  CHECK(total_flops(a) == total_flops(b));
}

TEST_CASE("Nemotron-4 15B and 340B have the parameter totals their reports give") {
  // Nemotron-4 15B report (arXiv:2402.16819) Sec. 2: 3.2B embedding and 12.5B non-embedding
  // parameters. Our count: per layer attention 6144 (6144 + 2 x 1024 + 6144) = 88.1M and MLP
  // 2 x 6144 x 24576 = 302M (no biases), 32 layers 12.48B; untied embeddings 2 x 256000 x 6144 =
  // 3.146B (the report's 3.2 is this rounded up; 2% tolerance).
  const TransformerSpec& m15 = catalog_model("nemotron4-15b");
  const double e15 = embedding_parameters(m15) + output_layer_parameters(m15);
  CHECK(e15 == doctest::Approx(3.2e9).epsilon(0.02));
  CHECK(total_parameters(m15) - e15 == doctest::Approx(12.5e9).epsilon(0.01));
  CHECK(total_parameters(m15) == doctest::Approx(15.7e9).epsilon(0.01));
  // Nemotron-4 340B report (arXiv:2406.11704) Sec. 2: 9.4B embedding, 331.6B non-embedding;
  // model card: 340B. Head dim 18432 / 96 = 192, KV width 8 x 192; per layer attention
  // 18432 x 39936 = 736M and MLP 2 x 18432 x 73728 = 2.72B; 96 layers 331.6B; 2 x 256000 x 18432 = 9.44B.
  const TransformerSpec& m340 = catalog_model("nemotron4-340b");
  const double e340 = embedding_parameters(m340) + output_layer_parameters(m340);
  CHECK(e340 == doctest::Approx(9.4e9).epsilon(0.01));
  CHECK(total_parameters(m340) - e340 == doctest::Approx(331.6e9).epsilon(0.001));
  CHECK(total_parameters(m340) == doctest::Approx(340e9).epsilon(0.01));
  CHECK(m340.resolved_head_dim() == 192.0);
}
