// Weight-gradient GEMMs accumulate into the main gradient in its format (model/op_builders.h
// main_grad_accumulate_bytes): Megatron's gradient-accumulation fusion reads and writes one
// main-gradient element per output element, FP32 by default and BF16 when gradients are reduced
// in BF16 (precision.grads: bf16; Megatron's --grad-reduce-in-bf16 / grad_reduce_in_fp32 off).
#include <doctest/doctest.h>

#include <string_view>

#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "tests/support/op_lookup.h"

using namespace stepcast;

namespace {

// One rank of a small GPT layer: b = 2, s = 512, h = 256, 4 heads, FFN 1024, BF16 GEMMs.
LayerShape small_layer(double main_grad_bytes) {
  LayerShape s;
  s.micro_batch = 2;
  s.seq = 512;
  s.context = 512;
  s.hidden = 256;
  s.heads = 4;
  s.kv_heads = 4;
  s.head_dim = 64;
  s.ffn = 1024;
  s.vocab = 1000;
  s.main_grad_bytes = main_grad_bytes;
  return s;
}

double bytes_of(const OpList& ops, std::string_view name) {
  if (const Op* op = test::find_op(ops, name)) return op->bytes.value();
  FAIL("no op " << name);
  return 0.0;
}

}  // namespace

TEST_CASE("a weight-gradient GEMM reads and writes its FP32 main gradient: 8 bytes per weight element") {
  // fc1.wgrad: dW[h x f] = x^T[h x T] dy[T x f], T = 1024 tokens. Inputs x and dy in BF16
  // (2 bytes): (T h + T f) 2 = (262144 + 1048576) 2; output h f = 262144 elements x 8 bytes.
  const OpList backward = layer_backward_ops(small_layer(4.0));
  CHECK(bytes_of(backward, "fc1.wgrad") == doctest::Approx((262144.0 + 1048576.0) * 2.0 + 262144.0 * 8.0));
}

TEST_CASE("with BF16 main gradients the accumulation moves half the bytes: 4 per weight element") {
  const OpList fp32 = layer_backward_ops(small_layer(4.0));
  const OpList bf16 = layer_backward_ops(small_layer(2.0));
  for (std::string_view name : {"qkv_proj.wgrad", "out_proj.wgrad", "fc1.wgrad", "fc2.wgrad"}) {
    CAPTURE(name);
    // The difference is the weight matrix's elements x (8 - 4) bytes; fc1 (h x f): 262144 x 4.
    CHECK(bytes_of(fp32, name) > bytes_of(bf16, name));
  }
  CHECK(bytes_of(fp32, "fc1.wgrad") - bytes_of(bf16, "fc1.wgrad") == doctest::Approx(262144.0 * 4.0));
}

TEST_CASE("the layer shape takes its main-gradient format from precision.grads") {
  TransformerSpec model;
  model.layers = 2;
  model.hidden = 256;
  model.heads = 4;
  model.ffn_hidden = 1024;
  model.vocab = 1000;
  TrainingWorkload training;
  training.seq_len = 512;
  ParallelConfig parallel;
  PrecisionConfig precision;
  CHECK(make_layer_shape(model, training, parallel, precision).main_grad_bytes == 4.0);
  precision.grads = DataType::bf16;
  CHECK(make_layer_shape(model, training, parallel, precision).main_grad_bytes == 2.0);
}
