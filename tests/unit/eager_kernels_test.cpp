// PyTorch eager modules vs fused kernels (training.kernels) and the RoPE pass (model.position):
// byte counts derived kernel by kernel in model/layer_ops.cpp, checked here from that derivation.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "model/activation_memory.h"
#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"
#include "tests/support/catalog_model.h"
#include "tests/support/op_lookup.h"

using namespace stepcast;
using stepcast::test::total_bytes;
using stepcast::test::total_flops;

namespace {

// Llama-like layer on one rank: b = 1, s = 1024, h = 512, 8 heads of 64, 2 KV heads, FFN 1536.
LayerShape llama_layer(KernelFusion kernels) {
  LayerShape s;
  s.micro_batch = 1;
  s.seq = 1024;
  s.context = 1024;
  s.hidden = 512;
  s.heads = 8;
  s.kv_heads = 2;
  s.head_dim = 64;
  s.ffn = 1536;
  s.vocab = 32000;
  s.mlp = MlpKind::swiglu;
  s.norm = NormKind::rmsnorm;
  s.position = PositionEmbedding::rotary;
  s.linear_bias = false;
  s.dropout = false;
  s.kernels = kernels;
  s.repeat_kv = kernels == KernelFusion::eager;  // make_layer_shape's default for GQA
  return s;
}

}  // namespace

TEST_CASE("an eager RMSNorm moves 28 + 4e bytes per element forward and 44 + 6e backward in 8 and 11 kernels") {
  const LayerShape s = llama_layer(KernelFusion::eager);
  const double elements = 1024.0 * 512.0;
  const auto norm = test::forward_and_backward_op(s, "input_norm");
  REQUIRE(norm);
  CHECK(norm->forward.bytes.value() == doctest::Approx(elements * (28.0 + 4.0 * 2.0)));
  CHECK(norm->backward.bytes.value() == doctest::Approx(elements * (44.0 + 6.0 * 2.0)));
  CHECK(norm->forward.launches == 8.0);
  CHECK(norm->backward.launches == 11.0);
  // The fused norm: read x, write y (2e); backward read x, dy and the residual gradient, write dx (4e).
  const LayerShape f = llama_layer(KernelFusion::fused);
  CHECK(test::find_op(layer_forward_ops(f), "input_norm")->bytes.value() == doctest::Approx(elements * 4.0));
  CHECK(test::find_op(layer_backward_ops(f), "input_norm.backward")->bytes.value() == doctest::Approx(elements * 8.0));
}

TEST_CASE("RoPE rotates every query and key: 2e bytes per element fused, 16 + 2e through eager FP32 complex views") {
  // Q is 8 x 64 = 512 wide, K 2 x 64 = 128: 640 elements per token.
  const double elements = 1024.0 * 640.0;
  const OpList fused_ops = layer_forward_ops(llama_layer(KernelFusion::fused));
  const OpList eager_ops = layer_forward_ops(llama_layer(KernelFusion::eager));
  const Op* fused = test::find_op(fused_ops, "rope");
  const Op* eager = test::find_op(eager_ops, "rope");
  REQUIRE(fused != nullptr);
  REQUIRE(eager != nullptr);
  CHECK(fused->bytes.value() == doctest::Approx(elements * 4.0));
  CHECK(eager->bytes.value() == doctest::Approx(elements * 20.0));
  CHECK(fused->launches == 2.0);
  CHECK(eager->launches == 6.0);
  CHECK(test::find_op(layer_backward_ops(llama_layer(KernelFusion::eager)), "rope.backward")->bytes.value() ==
        doctest::Approx(elements * 20.0));
  // A learned-position (GPT) layer has no per-layer RoPE pass.
  LayerShape gpt = llama_layer(KernelFusion::fused);
  gpt.position = PositionEmbedding::learned;
  CHECK(test::find_op(layer_forward_ops(gpt), "rope") == nullptr);
}

TEST_CASE("eager GQA copies K and V out to every query head; flash kernels read the shared heads") {
  // Read 2 x 128 KV elements, write 2 x 512 per token, 2 bytes each.
  const OpList ops = layer_forward_ops(llama_layer(KernelFusion::eager));
  const Op* op = test::find_op(ops, "repeat_kv");
  REQUIRE(op != nullptr);
  CHECK(op->bytes.value() == doctest::Approx(1024.0 * 2.0 * (128.0 + 512.0) * 2.0));
  CHECK(test::find_op(layer_forward_ops(llama_layer(KernelFusion::fused)), "repeat_kv") == nullptr);
  LayerShape mha = llama_layer(KernelFusion::eager);
  mha.kv_heads = mha.heads;
  mha.repeat_kv = false;
  CHECK(test::find_op(layer_forward_ops(mha), "repeat_kv") == nullptr);
  // torchtitan compiled (training.repeat_kv: true with fused kernels): the copy still runs, and the
  // attention kernel reads every head's K and V: 2 x 8 x 64 elements a token instead of 2 x 2 x 64.
  LayerShape compiled = llama_layer(KernelFusion::fused);
  const Op* shared = test::find_op(layer_forward_ops(compiled), "flash_attention");
  REQUIRE(shared != nullptr);
  compiled.repeat_kv = true;
  const OpList compiled_ops = layer_forward_ops(compiled);
  REQUIRE(test::find_op(compiled_ops, "repeat_kv") != nullptr);
  CHECK(test::find_op(compiled_ops, "repeat_kv")->bytes.value() == doctest::Approx(op->bytes.value()));
  const Op* repeated = test::find_op(compiled_ops, "flash_attention");
  REQUIRE(repeated != nullptr);
  CHECK(repeated->bytes.value() - shared->bytes.value() == doctest::Approx(1024.0 * 2.0 * (8 - 2) * 64 * 2.0));
  CHECK(repeated->flops.value() == doctest::Approx(shared->flops.value()));
}

TEST_CASE("training.repeat_kv resolves to the kernels' default and only for GQA without MLA") {
  TrainingWorkload w;
  w.seq_len = 4096;
  const ParallelConfig p;
  const TransformerSpec& llama = test::catalog_model("llama3-8b");  // 32 heads, 8 KV heads
  w.kernels = KernelFusion::fused;
  CHECK_FALSE(make_layer_shape(llama, w, p, PrecisionConfig{}).repeat_kv);
  w.repeat_kv = true;
  CHECK(make_layer_shape(llama, w, p, PrecisionConfig{}).repeat_kv);
  w.kernels = KernelFusion::eager;
  w.repeat_kv.reset();
  CHECK(make_layer_shape(llama, w, p, PrecisionConfig{}).repeat_kv);
  w.repeat_kv = false;
  CHECK_FALSE(make_layer_shape(llama, w, p, PrecisionConfig{}).repeat_kv);
  w.repeat_kv = true;
  CHECK_FALSE(make_layer_shape(test::catalog_model("deepseek-v3"), w, p, PrecisionConfig{}).repeat_kv);  // MLA
}

TEST_CASE("eager SwiGLU is silu then mul (5e per FFN element), its backward 9e; fused 3e and 5e") {
  const double elements = 1024.0 * 1536.0;
  CHECK(test::find_op(layer_forward_ops(llama_layer(KernelFusion::eager)), "swiglu")->bytes.value() ==
        doctest::Approx(elements * 10.0));
  CHECK(test::find_op(layer_backward_ops(llama_layer(KernelFusion::eager)), "swiglu.backward")->bytes.value() ==
        doctest::Approx(elements * 18.0));
  CHECK(test::find_op(layer_forward_ops(llama_layer(KernelFusion::fused)), "swiglu")->bytes.value() ==
        doctest::Approx(elements * 6.0));
}

TEST_CASE("eager and fused layers do the same GEMM and attention work; eager moves more bytes and stores more") {
  const LayerShape e = llama_layer(KernelFusion::eager);
  const LayerShape f = llama_layer(KernelFusion::fused);
  CHECK(total_flops(layer_forward_ops(e)) == doctest::Approx(total_flops(layer_forward_ops(f))));
  CHECK(total_flops(layer_backward_ops(e)) == doctest::Approx(total_flops(layer_backward_ops(f))));
  CHECK(total_bytes(layer_forward_ops(e)) > total_bytes(layer_forward_ops(f)));
  CHECK(total_bytes(layer_backward_ops(e)) > total_bytes(layer_backward_ops(f)));
  // Stored: the two norms' FP32 copies of x (4 bytes x 1024 x 512 each), silu(a) (2 x 1024 x 1536) and the
  // repeated K and V beyond the shared heads (2 x 2 x 1024 x (512 - 128)).
  const double extra = 2.0 * 4.0 * 1024.0 * 512.0 + 2.0 * 1024.0 * 1536.0 + 2.0 * 2.0 * 1024.0 * (512.0 - 128.0);
  CHECK(layer_activation_bytes(e, Recompute::none).stored.value() -
            layer_activation_bytes(f, Recompute::none).stored.value() ==
        doctest::Approx(extra));
  // Full recomputation keeps only the layer input either way.
  CHECK(layer_activation_bytes(e, Recompute::full).stored.value() ==
        doctest::Approx(layer_activation_bytes(f, Recompute::full).stored.value()));
}

TEST_CASE("a GPT layer (LayerNorm, GELU, no GQA) costs the same eager or fused but for the residual gradient add") {
  LayerShape g = llama_layer(KernelFusion::eager);
  g.mlp = MlpKind::gelu;
  g.norm = NormKind::layernorm;
  g.position = PositionEmbedding::learned;
  g.kv_heads = g.heads;
  LayerShape f = g;
  f.kernels = KernelFusion::fused;
  CHECK(total_bytes(layer_forward_ops(g)) == doctest::Approx(total_bytes(layer_forward_ops(f))));
  // Two residual gradient adds of 3e per element each, which a fused norm backward folds in.
  CHECK(total_bytes(layer_backward_ops(g)) - total_bytes(layer_backward_ops(f)) ==
        doctest::Approx(2.0 * 1024.0 * 512.0 * 3.0 * 2.0));
}

TEST_CASE("training.kernels reads fused or eager and rejects anything else by name") {
  const char* const base = R"(schema_version: 1
model: llama3-8b
system: {gpu: h100-sxm-80gb, gpus: 8}
training: {seq_len: 4096, global_batch: 64, micro_batch: 1, kernels: KERNELS}
)";
  const auto with = [&](const std::string& k) {
    std::string y = base;
    y.replace(y.find("KERNELS"), 7, k);
    return y;
  };
  CHECK(parse_scenario(with("eager"), "t.yaml").training().kernels == KernelFusion::eager);
  CHECK(parse_scenario(with("fused"), "t.yaml").training().kernels == KernelFusion::fused);
  std::string error;
  try {
    parse_scenario(with("compiled"), "t.yaml");
  } catch (const InputError& e) {
    error = e.what();
  }
  CHECK(error.find("kernels") != std::string::npos);
  CHECK(error.find("eager") != std::string::npos);
  // The catalog's Llama models use RoPE.
  CHECK(parse_scenario(with("fused"), "t.yaml").model.position == PositionEmbedding::rotary);
}

TEST_CASE("YaRN RoPE runs Megatron-Core's unfused rotation: 12e per element forward in 6 kernels, 10e backward in 5, per tensor") {
  // Megatron-Bridge turns apply_rope_fusion off for position_embedding_type yarn
  // (utils/fusions.py validate_rope_fusion_compatibility); rope_utils.py _apply_rotary_pos_emb_bshd
  // runs t * cos (2e), -x2 (e), cat(-x2, x1) (2e), * sin (2e), the add (3e) and cat((t, t_pass))
  // (2e) = 12e forward; autograd's g * sin (2e), the negation (e), chunk's cat (2e), g * cos (2e)
  // and the sum of t's two gradients (3e) = 10e backward. The fused kernel moves 2e in 1.
  // Q and K elements on the rank: 1024 tokens x (8 + 2) heads x 64 = 655360, e = 2.
  LayerShape s = llama_layer(KernelFusion::fused);
  const double elements = 1024.0 * 10.0 * 64.0;
  const OpList fused_forward = layer_forward_ops(s);
  const Op* fused = test::find_op(fused_forward, "rope");
  REQUIRE(fused != nullptr);
  CHECK(fused->bytes.value() == doctest::Approx(2.0 * 2.0 * elements));
  CHECK(fused->launches == 2.0);
  s.position = PositionEmbedding::yarn;
  const auto yarn = test::forward_and_backward_op(s, "rope");
  REQUIRE(yarn);
  CHECK(yarn->forward.bytes.value() == doctest::Approx(12.0 * 2.0 * elements));
  CHECK(yarn->backward.bytes.value() == doctest::Approx(10.0 * 2.0 * elements));
  CHECK(yarn->forward.launches == 2.0 * 6.0);
  CHECK(yarn->backward.launches == 2.0 * 5.0);
  CHECK(yarn->forward.kind == OpKind::data_movement);
  // Eager stacks price RoPE their own way whatever the scaling.
  LayerShape eager = llama_layer(KernelFusion::eager);
  const double eager_bytes = test::find_op(layer_forward_ops(eager), "rope")->bytes.value();
  eager.position = PositionEmbedding::yarn;
  CHECK(test::find_op(layer_forward_ops(eager), "rope")->bytes.value() == doctest::Approx(eager_bytes));
  // The catalog's GPT-OSS is YaRN; a scenario can say so for any model.
  const std::string oss = "schema_version: 1\nmodel: gpt-oss-120b\nsystem: {gpu: h100-sxm-80gb, gpus: 64}\n"
                          "training: {seq_len: 4096, global_batch: 64, micro_batch: 1}\nparallel: {ep: 8}\n";
  CHECK(parse_scenario(oss, "oss.yaml").model.position == PositionEmbedding::yarn);
  const std::string llama = "schema_version: 1\nmodel: {preset: llama3-8b, position: yarn}\n"
                            "system: {gpu: h100-sxm-80gb, gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8, micro_batch: 1}\n";
  CHECK(parse_scenario(llama, "llama.yaml").model.position == PositionEmbedding::yarn);
}
