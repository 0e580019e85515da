#pragma once
// CPU references for the harness's kernels. The harness copies a sample of inputs and outputs back
// from the device, decodes them to float (validation/float_formats.h), and compares each output with
// these functions, which compute in double. They mirror the definitions the kernels implement:
//   rmsnorm     y = x / sqrt(mean(x^2) + eps) * gamma                     (Zhang & Sennrich 2019)
//   layernorm   y = (x - mean) / sqrt(var + eps) * gamma + beta           (Ba et al. 2016), biased var
//   softmax     y_i = exp(x_i - max) / sum_j exp(x_j - max)
//   swiglu      y = silu(gate) * up, silu(g) = g / (1 + exp(-g)), input row = [gate | up]
//                                                                         (Shazeer 2020)
//   gelu        tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//                                                                         (Hendrycks & Gimpel 2016)
//   rope        rotate-half (GPT-NeoX/Llama) per head: for i < d/2, angle = pos * theta^(-2i/d):
//               y_i = x_i cos - x_{i+d/2} sin, y_{i+d/2} = x_{i+d/2} cos + x_i sin   (Su et al. 2021)
//   bias_dropout_add  y = residual + keep(i) * (x + bias) / (1 - p)
//   attention   o = softmax(scale q K^T) V over the visible keys, lse = log-sum-exp of the scaled
//               scores (natural log), the statistic flash attention keeps for its backward.
// Host-only; no CUDA.

#include <cstdint>
#include <span>
#include <vector>

namespace stepcast {

double dot(std::span<const float> a, std::span<const float> b);

void rmsnorm_reference(std::span<const float> x, std::span<const float> gamma, double eps, std::span<double> y);
void layernorm_reference(std::span<const float> x, std::span<const float> gamma, std::span<const float> beta,
                         double eps, std::span<double> y);
void softmax_reference(std::span<const float> x, std::span<double> y);
void swiglu_reference(std::span<const float> gate_up, std::span<double> y);  // |y| = |gate_up| / 2
double gelu_reference(double x);
void rope_reference(std::span<const float> x, std::int64_t position, int head_dim, double theta, std::span<double> y);
void bias_dropout_add_reference(std::span<const float> x, std::span<const float> bias, std::span<const float> residual,
                                std::uint64_t seed, std::uint64_t first_index, float p, std::span<double> y);

// One query row of attention over keys [0, visible): K and V rows are head_dim floats each.
struct AttentionRow {
  std::vector<double> o;
  double lse = 0.0;
};
AttentionRow attention_row_reference(std::span<const float> q, std::span<const float> keys,
                                     std::span<const float> values, int head_dim, std::int64_t visible,
                                     double scale);

// Gradients of one attention head, given Q, K, V, dO (rows of head_dim floats, seq_q and seq_kv rows)
// and the forward output O. Causal masking is bottom-right aligned (query i sees keys up to
// i + seq_kv - seq_q). Computes the rows of dQ listed in `q_rows` and of dK, dV in `kv_rows`.
struct AttentionGradRows {
  std::vector<std::vector<double>> dq;  // one per q_rows entry
  std::vector<std::vector<double>> dk;  // one per kv_rows entry
  std::vector<std::vector<double>> dv;
};
AttentionGradRows attention_backward_reference(std::span<const float> q, std::span<const float> k,
                                               std::span<const float> v, std::span<const float> o,
                                               std::span<const float> d_o, std::int64_t seq_q, std::int64_t seq_kv,
                                               int head_dim, bool causal, double scale,
                                               std::span<const std::int64_t> q_rows,
                                               std::span<const std::int64_t> kv_rows);

// Keys visible to query `row` (bottom-right causal alignment), in [0, seq_kv].
std::int64_t visible_keys(std::int64_t row, std::int64_t seq_q, std::int64_t seq_kv, bool causal);

// |a - b| against a tolerance that scales with the magnitude: passes when
// |a - b| <= atol + rtol * |b|.
struct Comparison {
  std::int64_t checked = 0;
  std::int64_t failed = 0;
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;  // |a - b| / max(|b|, atol)
  void add(double measured, double expected, double atol, double rtol);
  [[nodiscard]] bool passed() const { return checked > 0 && failed == 0; }
};

}  // namespace stepcast
