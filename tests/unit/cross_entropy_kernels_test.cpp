// The loss's logits-sized kernels per implementation (model/cross_entropy_kernels.h): each count
// against the code it is read from, the ops the output stage pushes, and the time they take on a
// large-vocabulary shape.
#include <doctest/doctest.h>

#include <string>

#include "model/cross_entropy_kernels.h"
#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "model/op_time.h"
#include "simulator/catalog.h"
#include "tests/support/op_lookup.h"

using namespace stepcast;
using stepcast::test::find_op;

namespace {

double forward_bytes(CrossEntropyFusion f, double e) { return cross_entropy_forward_kernels(f, e).bytes_per_logit(); }
double backward_bytes(CrossEntropyFusion f, double e) { return cross_entropy_backward_kernels(f, e).bytes_per_logit(); }

// Qwen3-30B-A3B's output stage on one rank: b = 4, s = 4096, hidden 2048, vocabulary 151936, tp 1,
// BF16 logits (the dev set's GB200 FP8-MX row: micro_batch 4, tp 1).
LayerShape qwen3_30b_output(CrossEntropyFusion fusion) {
  LayerShape s;
  s.micro_batch = 4;
  s.seq = 4096;
  s.context = 4096;
  s.hidden = 2048;
  s.heads = 32;
  s.kv_heads = 4;
  s.head_dim = 128;
  s.ffn = 6144;
  s.vocab = 151936;
  s.mlp = MlpKind::swiglu;
  s.norm = NormKind::rmsnorm;
  s.activation_bytes = 2.0;
  s.cross_entropy = fusion;
  return s;
}

double loss_seconds(const OpList& ops, const GpuSpec& gpu) {
  const CostParameters params;
  double seconds = 0.0;
  for (const Op& op : ops) {
    if (std::string(op.name).rfind("cross_entropy", 0) == 0) seconds += op_time(op, gpu, params).value();
  }
  return seconds;
}

}  // namespace

TEST_CASE("Transformer Engine's cross-entropy reads the 16-bit logits twice and writes them once forward, scales them in place backward") {
  // transformer_engine/pytorch/triton/cross_entropy.py @1b2b4a8e: online_softmax_kernel loads the
  // row for its max and sum (e); cross_entropy_kernel loads it again and stores the gradient over
  // it (e + e); element_mul_kernel loads and stores it once (e + e).
  const CrossEntropyPass fwd = cross_entropy_forward_kernels(CrossEntropyFusion::te, 2.0);
  REQUIRE(fwd.count == 2);
  CHECK(fwd.kernels[0].read_bytes == 2.0);
  CHECK(fwd.kernels[0].write_bytes == 0.0);
  CHECK(fwd.kernels[1].read_bytes == 2.0);
  CHECK(fwd.kernels[1].write_bytes == 2.0);
  CHECK(forward_bytes(CrossEntropyFusion::te, 2.0) == 6.0);  // 3 e
  const CrossEntropyPass bwd = cross_entropy_backward_kernels(CrossEntropyFusion::te, 2.0);
  REQUIRE(bwd.count == 1);
  CHECK(backward_bytes(CrossEntropyFusion::te, 2.0) == 4.0);  // 2 e
  // FP32 logits: the kernels load and store FP32.
  CHECK(forward_bytes(CrossEntropyFusion::te, 4.0) == 12.0);
  CHECK(backward_bytes(CrossEntropyFusion::te, 4.0) == 8.0);
}

TEST_CASE("Megatron's fused native cross-entropy: four kernels forward (e + 28), two backward (16 + e), Inductor's copy-backs counted") {
  // megatron/core/fusions/fused_cross_entropy.py @d086a2e3 under torch.compile: cast + max in one
  // reduction (e + 4); exp(x - max) with its row sum into a fresh buffer (4 + 4) and the copy back
  // into the mutated input (4 + 4); the in-place division (4 + 4).
  const CrossEntropyPass fwd = cross_entropy_forward_kernels(CrossEntropyFusion::fused, 2.0);
  REQUIRE(fwd.count == 4);
  CHECK(fwd.kernels[0].read_bytes == 2.0);
  CHECK(fwd.kernels[0].write_bytes == 4.0);
  CHECK(forward_bytes(CrossEntropyFusion::fused, 2.0) == 2.0 + 28.0);
  // Backward: the scatter's clone of the saved softmax (4 + 4), then one pointwise kernel reading
  // the clone (4), writing the BF16 gradient (e) and the scaled values back into the input (4).
  const CrossEntropyPass bwd = cross_entropy_backward_kernels(CrossEntropyFusion::fused, 2.0);
  REQUIRE(bwd.count == 2);
  CHECK(backward_bytes(CrossEntropyFusion::fused, 2.0) == 16.0 + 2.0);
}

TEST_CASE("Megatron's unfused cross-entropy (and PyTorch's, priced alike) runs its six forward kernels") {
  // megatron/core/tensor_parallel/cross_entropy.py: cast (e + 4), max (4), subtract (8), exp (8),
  // sum (4), divide (8) = e + 36, the max and the sum PyTorch row reductions. Backward: scale in
  // place (8), autograd's cast (4 + e).
  for (CrossEntropyFusion f : {CrossEntropyFusion::native, CrossEntropyFusion::pytorch}) {
    const CrossEntropyPass fwd = cross_entropy_forward_kernels(f, 2.0);
    REQUIRE(fwd.count == 6);
    CHECK(forward_bytes(f, 2.0) == 2.0 + 36.0);
    int reductions = 0;
    for (const CrossEntropyKernel& k : fwd) reductions += k.reduction ? 1 : 0;
    CHECK(reductions == 2);
    CHECK(fwd.kernels[1].reduction);
    CHECK(fwd.kernels[4].reduction);
    CHECK(cross_entropy_backward_kernels(f, 2.0).count == 2);
    CHECK(backward_bytes(f, 2.0) == 12.0 + 2.0);
  }
}

TEST_CASE("the output stage pushes each implementation's kernels, over T x V/t logits") {
  const double logits = 4.0 * 4096 * 151936;
  const OpList te = output_forward_ops(qwen3_30b_output(CrossEntropyFusion::te));
  REQUIRE(find_op(te, "cross_entropy.online_softmax") != nullptr);
  CHECK(find_op(te, "cross_entropy.online_softmax")->bytes.value() == doctest::Approx(2.0 * logits));
  CHECK(find_op(te, "cross_entropy.loss_and_grad")->bytes.value() == doctest::Approx(4.0 * logits));
  CHECK(find_op(te, "cross_entropy") == nullptr);
  const OpList te_back = output_backward_ops(qwen3_30b_output(CrossEntropyFusion::te));
  REQUIRE(find_op(te_back, "cross_entropy.backward.scale") != nullptr);
  CHECK(find_op(te_back, "cross_entropy.backward.scale")->bytes.value() == doctest::Approx(4.0 * logits));
  const OpList fused = output_forward_ops(qwen3_30b_output(CrossEntropyFusion::fused));
  CHECK(find_op(fused, "cross_entropy.copy_back") != nullptr);
  const OpList native = output_forward_ops(qwen3_30b_output(CrossEntropyFusion::native));
  REQUIRE(find_op(native, "cross_entropy.cast") != nullptr);
  CHECK(find_op(native, "cross_entropy.cast")->bytes.value() == doctest::Approx(6.0 * logits));
  REQUIRE(find_op(native, "cross_entropy.sum") != nullptr);
  CHECK(find_op(native, "cross_entropy.sum")->kind == OpKind::reduction);
  CHECK(find_op(native, "cross_entropy.exp")->kind == OpKind::memory_bound);
  // Sharded over tp = 2: half the vocabulary per rank.
  LayerShape sharded = qwen3_30b_output(CrossEntropyFusion::te);
  sharded.tp = 2;
  CHECK(find_op(output_forward_ops(sharded), "cross_entropy.online_softmax")->bytes.value() ==
        doctest::Approx(logits));
}

TEST_CASE("on a large-vocabulary shape Transformer Engine's cross-entropy beats both Megatron paths; the fused native one wins forward, loses backward") {
  // Qwen3-30B-A3B, 16384 tokens x 151936 vocabulary on one GPU. Bytes per logit: unfused 38
  // forward (8 of them in two PyTorch row reductions) + 14 backward, fused native 30 + 18
  // (Inductor's clone in the backward), Transformer Engine 6 + 4.
  for (const char* name : {"h100-sxm-80gb", "b200"}) {
    CAPTURE(name);
    const GpuSpec* gpu = Catalog::builtin().find_gpu(name);
    REQUIRE(gpu != nullptr);
    auto forward = [&](CrossEntropyFusion f) { return loss_seconds(output_forward_ops(qwen3_30b_output(f)), *gpu); };
    auto backward = [&](CrossEntropyFusion f) { return loss_seconds(output_backward_ops(qwen3_30b_output(f)), *gpu); };
    auto total = [&](CrossEntropyFusion f) { return forward(f) + backward(f); };
    const double native = total(CrossEntropyFusion::native);
    const double te = total(CrossEntropyFusion::te);
    CHECK(te < total(CrossEntropyFusion::fused));
    CHECK(te < native);
    CHECK(forward(CrossEntropyFusion::fused) < forward(CrossEntropyFusion::native));
    CHECK(backward(CrossEntropyFusion::fused) > backward(CrossEntropyFusion::native));
    // Memory-bound kernels: TE moves 10 / 52 of the unfused bytes, and the unfused path's two
    // reductions run at the slower reduction rate, so TE takes at most that fraction of the time.
    CHECK(te / native < 10.0 / 52.0);
    CHECK(te / native > 0.5 * 10.0 / 52.0);
  }
}
