#include <doctest/doctest.h>

#include "model/flops.h"
#include "model/layer_ops.h"
#include "model/layer_shape.h"

using namespace stepcast;

namespace {
TransformerSpec gpt(int layers, int hidden, int heads, int vocab) {
  TransformerSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.head_dim = hidden / heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = vocab;
  return m;
}
}  // namespace

TEST_CASE("hardware FLOPs with full recomputation equal Megatron's eq. 3 for GPT models") {
  // Narayanan et al. 2021 eq. 3: F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)). Per layer forward
  // 24 b s h^2 + 4 b s^2 h, four passes (forward, recompute, backward = 2x); logits 2 b s h V,
  // three passes.
  for (const auto& m : {gpt(96, 12288, 96, 51200), gpt(24, 2304, 24, 51200), gpt(128, 25600, 160, 51200)}) {
    const double batch = 1536;
    const double seq = 2048;
    const StepFlops f = training_step_flops(m, batch, seq, Recompute::full, AttentionCount::full);
    const Flops eq3 = megatron_eq3_flops(batch, seq, m.layers, m.hidden, m.vocab);
    CHECK(f.hardware.value() == doctest::Approx(eq3.value()).epsilon(1e-12));
    // Model FLOPs drop the recomputed forward of the layers: 72 b s l h^2 (1 + s/(6h)) + 6 b s h V.
    const double h = m.hidden;
    const double model = 72.0 * batch * seq * m.layers * h * h * (1.0 + seq / (6.0 * h)) + 6.0 * batch * seq * h * m.vocab;
    CHECK(f.model.value() == doctest::Approx(model).epsilon(1e-12));
  }
}

TEST_CASE("per-layer forward FLOPs follow DESIGN.md term by term, GQA and SwiGLU included") {
  TransformerSpec m = gpt(80, 8192, 64, 128256);
  m.kv_heads = 8;  // Llama-3 70B: GQA with 8 KV heads, d = 128
  m.ffn_hidden = 28672;
  m.mlp = MlpKind::swiglu;
  const double b = 2;
  const double s = 4096;
  const double h = 8192;
  const double d = 128;
  const LayerFlops f = layer_forward_flops(m, b, s);
  CHECK(f.qkv.value() == doctest::Approx(2 * b * s * h * (h + 2 * 8 * d)));  // 2bsh(h + 2gd)
  CHECK(f.attention.value() == doctest::Approx(4 * b * s * s * h));         // 4bs^2h
  CHECK(f.out_proj.value() == doctest::Approx(2 * b * s * h * h));          // 2bsh^2
  CHECK(f.mlp.value() == doctest::Approx(6 * b * s * h * 28672));           // 6bshf for SwiGLU
  const LayerFlops causal = layer_forward_flops(m, b, s, AttentionCount::causal);
  CHECK(causal.attention.value() == doctest::Approx(0.5 * f.attention.value()));
  CHECK(logits_forward_flops(m, b, s).value() == doctest::Approx(2 * b * s * h * 128256));  // 2bshV
}

TEST_CASE("selective recomputation adds exactly the attention core to the hardware FLOPs") {
  const TransformerSpec m = gpt(96, 12288, 96, 51200);
  const StepFlops none = training_step_flops(m, 8, 2048, Recompute::none);
  const StepFlops selective = training_step_flops(m, 8, 2048, Recompute::selective);
  CHECK(selective.model.value() == doctest::Approx(none.model.value()));
  // 96 layers x 4 b s^2 h
  CHECK((selective.hardware - none.hardware).value() == doctest::Approx(96.0 * 4 * 8 * 2048.0 * 2048 * 12288));
}

TEST_CASE("a layer's sharded GEMMs sum to the layer's FLOPs divided by the tensor-parallel size") {
  TransformerSpec m = gpt(32, 4096, 32, 32000);
  TrainingWorkload w;
  w.seq_len = 2048;
  w.micro_batch = 2;
  w.flash_attention = false;  // unfused: the batched GEMMs do the full (non-causal) s^2 work
  ParallelConfig p;
  p.tp = 4;
  const LayerShape shape = make_layer_shape(m, w, p, PrecisionConfig{});
  double gemm = 0.0;
  for (const Op& op : layer_forward_ops(shape)) {
    if (op.kind == OpKind::gemm) gemm += op.flops.value();
  }
  CHECK(gemm == doctest::Approx(layer_forward_flops(m, 2, 2048).total().value() / 4.0));
  double backward = 0.0;
  for (const Op& op : layer_backward_ops(shape)) {
    if (op.kind == OpKind::gemm) backward += op.flops.value();
  }
  CHECK(backward == doctest::Approx(2.0 * gemm));  // backward = 2x forward
}

TEST_CASE("a causal flash-attention kernel does half the s^2 work, its backward 2.5x its forward") {
  TransformerSpec m = gpt(32, 4096, 32, 32000);
  TrainingWorkload w;
  w.seq_len = 4096;
  ParallelConfig p;
  const LayerShape shape = make_layer_shape(m, w, p, PrecisionConfig{});
  const OpList forward = attention_core_forward_ops(shape);
  REQUIRE(forward.size() == 1);
  CHECK(forward[0].kind == OpKind::flash_forward);
  CHECK(forward[0].flops.value() == doctest::Approx(0.5 * 4 * 4096.0 * 4096 * 4096));
  for (const Op& op : layer_backward_ops(shape)) {
    if (op.kind == OpKind::flash_backward) CHECK(op.flops.value() == doctest::Approx(2.5 * forward[0].flops.value()));
  }
}
