#include <doctest/doctest.h>

#include "validation/harness_grids.h"
#include "validation/work_counts.h"

using namespace stepcast;

TEST_CASE("GEMM work is two operations per multiply-add, traffic is each operand once") {
  // bf16 4096 x 8192 x 4096: 2 m n k = 2.749e11; bytes (m k + k n + m n) x 2.
  const GemmInputs g = gemm_point(DataType::bf16, "TN", 4096, 8192, 4096);
  CHECK(gemm_flops(g).value() == doctest::Approx(2.0 * 4096 * 8192 * 4096));
  CHECK(gemm_bytes(g).value() == doctest::Approx((4096.0 * 4096 + 4096.0 * 8192 + 4096.0 * 8192) * 2));
  // FP8 reads one byte per input element and writes bf16.
  const GemmInputs f = gemm_point(DataType::fp8, "TN", 1024, 1024, 1024);
  CHECK(gemm_bytes(f).value() == doctest::Approx(1024.0 * 1024 * (1 + 1 + 2)));
  // An MoE group of 8 products counts 8 times.
  const GemmInputs moe = gemm_point(DataType::bf16, "TN", 28672, 2048, 4096, "", 8);
  CHECK(gemm_flops(moe).value() == doctest::Approx(8 * 2.0 * 28672 * 2048 * 4096));
}

TEST_CASE("causal attention counts the unmasked pairs, s (s + 1) / 2 for a square mask") {
  CHECK(attention_pairs(4, 4, false) == 16.0);
  CHECK(attention_pairs(4, 4, true) == 10.0);  // 1 + 2 + 3 + 4
  // Bottom-right alignment: 2 queries over 5 keys see 4 and 5 keys.
  CHECK(attention_pairs(2, 5, true) == 9.0);
  // A decode step (one query) sees the whole context.
  CHECK(attention_pairs(1, 1000, true) == 1000.0);
}

TEST_CASE("attention FLOPs: 4 d per visible pair forward, 2.5 times that backward") {
  AttentionInputs a;
  a.batch = 2;
  a.heads = 32;
  a.kv_heads = 8;
  a.seq_q = a.seq_kv = 1024;
  a.head_dim = 128;
  a.causal = false;
  const double forward = 4.0 * 128 * 1024.0 * 1024.0 * 2 * 32;
  CHECK(attention_flops(a).value() == doctest::Approx(forward));
  a.direction = AttentionDirection::backward;
  CHECK(attention_flops(a).value() == doctest::Approx(2.5 * forward));
  // Forward bytes: Q and O (2 x 32 heads), K and V (2 x 8 heads), bf16, plus fp32 statistics.
  a.direction = AttentionDirection::forward;
  const double q = 2.0 * 1024 * 32 * 128 * 2;
  const double kv = 2.0 * 1024 * 8 * 128 * 2;
  CHECK(attention_bytes(a).value() == doctest::Approx(2 * q + 2 * kv + 2.0 * 32 * 1024 * 4));
}

TEST_CASE("elementwise and memory traffic count every array once") {
  // rmsnorm bf16 16384 x 4096: read x, write y (2 x 128 MiB) and gamma (8 KiB).
  CHECK(elementwise_bytes({"rmsnorm", DataType::bf16, 16384, 4096}).value() ==
        doctest::Approx(2.0 * 16384 * 4096 * 2 + 4096 * 2));
  // swiglu reads [gate | up] (twice the output) and writes y.
  CHECK(elementwise_bytes({"swiglu", DataType::bf16, 10, 100}).value() == doctest::Approx(3.0 * 1000 * 2));
  // STREAM triad: three arrays of 4-byte floats.
  CHECK(memory_bytes({"triad", DataType::fp32, 1000}).value() == 12000.0);
  CHECK(memory_bytes({"copy", DataType::fp32, 1000}).value() == 8000.0);
  CHECK_THROWS_AS(memory_bytes({"scale", DataType::fp32, 1000}), std::invalid_argument);
}
