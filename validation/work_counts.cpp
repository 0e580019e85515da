#include "validation/work_counts.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace stepcast {

double format_bytes(std::string_view format) {
  if (format == "fp32" || format == "int32" || format == "tf32") return 4.0;
  if (format == "fp16" || format == "bf16") return 2.0;
  if (format == "e4m3" || format == "e5m2" || format == "int8" || format == "fp8") return 1.0;
  throw std::invalid_argument("unknown element format '" + std::string(format) + "'");
}

Flops gemm_flops(const GemmInputs& g) {
  return Flops(2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) *
               static_cast<double>(g.batch * g.groups));
}

Bytes gemm_bytes(const GemmInputs& g) {
  const double m = static_cast<double>(g.m);
  const double n = static_cast<double>(g.n);
  const double k = static_cast<double>(g.k);
  const double per_product = m * k * format_bytes(g.a_type) + k * n * format_bytes(g.b_type) + m * n * format_bytes(g.c_type);
  return Bytes(per_product * static_cast<double>(g.batch * g.groups));
}

double attention_pairs(std::int64_t seq_q, std::int64_t seq_kv, bool causal) {
  if (!causal) return static_cast<double>(seq_q) * static_cast<double>(seq_kv);
  // Query i (0-based) sees clamp(i + 1 + seq_kv - seq_q, 0, seq_kv) keys.
  const std::int64_t offset = seq_kv - seq_q;
  double pairs = 0.0;
  for (std::int64_t i = 0; i < seq_q; ++i) {
    pairs += static_cast<double>(std::clamp<std::int64_t>(i + 1 + offset, 0, seq_kv));
  }
  return pairs;
}

namespace {
// FlashAttention-2 (Dao 2023), Sec. 4.1: backward FLOPs = 2.5 x forward (5 matmuls vs 2).
constexpr double kAttentionBackwardFlopRatio = 2.5;
}  // namespace

Flops attention_flops(const AttentionInputs& a) {
  const double pairs = attention_pairs(a.seq_q, a.seq_kv, a.causal);
  const double forward = 4.0 * static_cast<double>(a.head_dim) * pairs * static_cast<double>(a.batch * a.heads);
  return Flops(a.direction == AttentionDirection::backward ? kAttentionBackwardFlopRatio * forward : forward);
}

Bytes attention_bytes(const AttentionInputs& a) {
  const double e = bytes_per_element(a.dtype);
  const double q = static_cast<double>(a.batch * a.seq_q * a.heads * a.head_dim) * e;   // Q, O, dO, dQ each
  const double kv = static_cast<double>(a.batch * a.seq_kv * a.kv_heads * a.head_dim) * e;  // K, V, dK, dV each
  const double lse = static_cast<double>(a.batch * a.heads * a.seq_q) * 4.0;             // fp32 statistics
  switch (a.direction) {
    case AttentionDirection::forward:
    case AttentionDirection::decode:
      return Bytes(2.0 * q + 2.0 * kv + lse);  // read Q, K, V; write O and the statistics
    case AttentionDirection::backward:
      // read Q, K, V, O, dO and the statistics; write dQ, dK, dV
      return Bytes(4.0 * q + 4.0 * kv + lse);
  }
  return Bytes(0.0);
}

Bytes elementwise_bytes(const ElementwiseInputs& e) {
  const double x = static_cast<double>(e.rows * e.cols) * bytes_per_element(e.dtype);
  const double vec = static_cast<double>(e.cols) * bytes_per_element(e.dtype);  // a per-column parameter
  if (e.op == "rmsnorm") return Bytes(2.0 * x + vec);                       // x, gamma -> y
  if (e.op == "layernorm") return Bytes(2.0 * x + 2.0 * vec);               // x, gamma, beta -> y
  if (e.op == "softmax") return Bytes(2.0 * x);                             // x -> y
  if (e.op == "swiglu") return Bytes(3.0 * x);                              // [gate, up] (2x) -> y
  if (e.op == "gelu") return Bytes(2.0 * x);                                // x -> y
  if (e.op == "rope") return Bytes(2.0 * x);                                // x -> y (angles computed)
  if (e.op == "bias_dropout_add") return Bytes(3.0 * x + vec);              // x, residual, bias -> y
  throw std::invalid_argument("unknown elementwise op '" + e.op + "'");
}

Bytes memory_bytes(const MemoryInputs& m) {
  const double array = static_cast<double>(m.elements) * bytes_per_element(m.dtype);
  if (m.op == "copy" || m.op == "memcpy_d2d") return Bytes(2.0 * array);  // read a, write b
  if (m.op == "triad") return Bytes(3.0 * array);                         // read b, c; write a
  throw std::invalid_argument("unknown memory op '" + m.op + "'");
}

}  // namespace stepcast
