#pragma once
// Builders for the ops of one layer, shared by the dense (model/layer_ops.cpp), mixture-of-experts
// (model/moe_ops.cpp) and multi-head latent attention (model/mla_ops.cpp) layers.
//
// A GEMM op C[m x n] = A[m x k] B[k x n] (`batch` independent products) counts 2 m n k batch
// FLOPs and reads A and B in the compute format and writes C in the activation format (or the
// given output bytes per element). Weight-gradient GEMMs accumulate into the main gradient
// (Megatron's gradient-accumulation fusion): read + write it per output element, in its format
// (FP32 by default; BF16 with grad_reduce_in_fp32 off, precision.grads: bf16).

#include <string_view>

#include "model/layer_shape.h"
#include "model/op.h"

namespace stepcast::ops {

// Bytes a weight-gradient GEMM moves per output element into the main gradient: it reads and
// writes one element (8 bytes for the default FP32 main gradient).
inline double main_grad_accumulate_bytes(const LayerShape& s) { return 2.0 * s.main_grad_bytes; }

// Bytes per element of GEMM inputs (the compute format).
inline double input_bytes(const LayerShape& s) { return bytes_per_element(s.compute); }

// The format attention kernels run in: FP8 training keeps attention in BF16 (Transformer
// Engine's default); everything else runs attention in its compute format.
inline DataType attention_dtype(const LayerShape& s) {
  return is_quantized_training_format(s.compute) ? DataType::bf16 : s.compute;
}

inline Op gemm(std::string_view name, const LayerShape& s, double m, double n, double k, double batch = 1.0,
               double output_bytes_per_element = 0.0) {
  Op op;
  op.kind = OpKind::gemm;
  op.name = name;
  op.dtype = s.compute;
  op.gemm = {m, n, k, batch};
  op.flops = Flops(2.0 * m * n * k * batch);
  const double out = output_bytes_per_element > 0.0 ? output_bytes_per_element : s.activation_bytes;
  op.bytes = Bytes(batch * ((m * k + k * n) * input_bytes(s) + m * n * out));
  return op;
}

inline Op memory_op(std::string_view name, double bytes) {
  Op op;
  op.kind = OpKind::memory_bound;
  op.name = name;
  op.bytes = Bytes(bytes);
  return op;
}

// A kernel that only moves bytes (copy, gather, permutation, padding, plain add): HBM-bound,
// not held to the SMs' elementwise byte rate (model/cost_parameters.h).
inline Op data_movement_op(std::string_view name, double bytes) {
  Op op = memory_op(name, bytes);
  op.kind = OpKind::data_movement;
  return op;
}

inline Op reduction_op(std::string_view name, double bytes) {
  Op op = memory_op(name, bytes);
  op.kind = OpKind::reduction;
  return op;
}

// The strides of a weight-gradient GEMM dW^T[in x out] = x^T[in x tokens] dy[tokens x out]
// (model/op.h, GemmShape::leading): 16-bit and wider formats read the saved x transposed (its
// stride is `in`, m) and dy as stored (`out`, n), so the token count is never a stride. 8-bit
// formats run only as "TN" GEMMs, both operands contiguous along k (kernels/gemm.h; cuBLASLt's
// FP8 and INT8 layout requirement): Transformer Engine stores transposed copies of x and dy,
// whose stride is then the token count (k).
// MXFP8 and NVFP4 count their data bytes (datatype.h value_bytes_per_element): Transformer
// Engine keeps their column-wise quantized copies for the weight gradient the same way.
inline std::uint8_t weight_gradient_leading(DataType compute) {
  return value_bytes_per_element(compute) <= 1.0 ? gemm_dim_n | gemm_dim_k : gemm_dim_m | gemm_dim_n;
}

// Forward GEMM (m, n, k) x batch -> backward data-gradient (m, k, n) and weight-gradient (k, n, m)
// GEMMs of the same batch.
inline void push_gemm_backward(OpList& ops, std::string_view dgrad, std::string_view wgrad, const LayerShape& s,
                               double m, double n, double k, double batch = 1.0) {
  ops.push(gemm(dgrad, s, m, k, n, batch));
  Op w = gemm(wgrad, s, k, n, m, batch, main_grad_accumulate_bytes(s));
  w.gemm.leading = weight_gradient_leading(s.compute);
  ops.push(w);
}

// A fused attention kernel (FlashAttention / cuDNN) of one rank over `heads` heads: queries and
// keys of width qk_dim, values and outputs of width v_dim, `queries` query tokens per sequence
// attending over `keys` key tokens. Work: QK^T (2 q k d_qk per head) and PV (2 q k d_v), halved
// by a causal mask; bytes: Q, K, V read and O written once. A share `windowed` of the layers
// attends over a sliding window of `window` keys per query instead (window >= keys: no change):
// query i (0-based) of a sequence sees min(i + 1, W) keys, W s - W (W - 1) / 2 pairs over the
// sequence of s = keys tokens, as cuDNN's benchmark counts them (tests/fixtures/reference/
// blackwell_compute.yaml, attention_windowed); a rank holding `queries` of them (context
// parallelism) does its share, queries (W - W (W - 1) / (2 keys)).
struct FlashShape {
  double sequences = 1.0;
  double heads = 1.0;
  double queries = 0.0;
  double keys = 0.0;
  double kv_heads = 1.0;   // K/V heads held (GQA: fewer than `heads`)
  double qk_dim = 0.0;
  double v_dim = 0.0;
  bool causal = true;
  double window = 0.0;    // sliding window in keys (0: none)
  double windowed = 0.0;  // share of layers using it
};
inline double flash_forward_flops(const FlashShape& f) {
  const double per_pair = 2.0 * f.sequences * f.heads * (f.qk_dim + f.v_dim);
  const double full = per_pair * f.queries * f.keys * (f.causal ? 0.5 : 1.0);
  if (f.window <= 0.0 || f.windowed <= 0.0 || f.window >= f.keys) return full;
  const double windowed = per_pair * f.queries * (f.window - f.window * (f.window - 1.0) / (2.0 * f.keys));
  return (1.0 - f.windowed) * full + f.windowed * windowed;
}
inline double flash_io_elements(const FlashShape& f) {
  const double q_and_o = f.sequences * f.queries * f.heads * (f.qk_dim + f.v_dim);
  const double k_and_v = f.sequences * f.keys * f.kv_heads * (f.qk_dim + f.v_dim);
  return q_and_o + k_and_v;
}

}  // namespace stepcast::ops
