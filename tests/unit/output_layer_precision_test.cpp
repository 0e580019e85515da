// The output projection (logits) keeps 16-bit GEMMs under FP8, MXFP8 and NVFP4 training
// (model/layer_ops.cpp output_layer_shape: Megatron-Core's output layer is a plain
// ColumnParallelLinear outside the per-layer FP8 context), while the transformer layers' GEMMs
// run in the quantized format.
#include <doctest/doctest.h>

#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "tests/support/op_lookup.h"

using namespace stepcast;
using stepcast::test::find_op;

namespace {

// One rank of a Llama-like model: b = 1, s = 4096, h = 4096, 32 heads of 128, FFN 14336,
// vocabulary 128256; 16-bit activations.
LayerShape llama_shape(DataType compute) {
  LayerShape s;
  s.micro_batch = 1;
  s.seq = 4096;
  s.context = 4096;
  s.hidden = 4096;
  s.heads = 32;
  s.kv_heads = 8;
  s.head_dim = 128;
  s.ffn = 14336;
  s.vocab = 128256;
  s.mlp = MlpKind::swiglu;
  s.compute = compute;
  s.activation_bytes = 2.0;
  return s;
}

}  // namespace

TEST_CASE("the logits GEMMs run in BF16 under FP8, MXFP8 and NVFP4 training; the layers' GEMMs do not") {
  for (DataType compute : {DataType::fp8, DataType::mxfp8, DataType::nvfp4}) {
    CAPTURE(to_string(compute));
    const LayerShape s = llama_shape(compute);
    const OpList forward = output_forward_ops(s);
    const OpList backward = output_backward_ops(s);
    const Op* logits = find_op(forward, "logits");
    const Op* dgrad = find_op(backward, "logits.dgrad");
    const Op* wgrad = find_op(backward, "logits.wgrad");
    REQUIRE(logits != nullptr);
    REQUIRE(dgrad != nullptr);
    REQUIRE(wgrad != nullptr);
    CHECK(logits->dtype == DataType::bf16);
    CHECK(dgrad->dtype == DataType::bf16);
    CHECK(wgrad->dtype == DataType::bf16);
    // Inputs read at 2 bytes: (T h + h V) x 2 + T V x 2 for the forward GEMM.
    const double T = 4096.0, h = 4096.0, V = 128256.0;
    CHECK(logits->bytes.value() == doctest::Approx((T * h + h * V) * 2.0 + T * V * 2.0));
    // The transformer layer's projections stay in the quantized format.
    const Op* qkv = find_op(layer_forward_ops(s), "qkv_proj");
    REQUIRE(qkv != nullptr);
    CHECK(qkv->dtype == compute);
  }
}

TEST_CASE("16-bit and FP32 training run the logits GEMMs in their compute format") {
  for (DataType compute : {DataType::bf16, DataType::fp16, DataType::fp32}) {
    CAPTURE(to_string(compute));
    const Op* logits = find_op(output_forward_ops(llama_shape(compute)), "logits");
    REQUIRE(logits != nullptr);
    CHECK(logits->dtype == compute);
  }
}
