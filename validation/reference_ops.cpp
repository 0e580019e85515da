#include "validation/reference_ops.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numbers>

#include "kernels/counter_hash.h"

namespace stepcast {

double dot(std::span<const float> a, std::span<const float> b) {
  assert(a.size() == b.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return sum;
}

void rmsnorm_reference(std::span<const float> x, std::span<const float> gamma, double eps, std::span<double> y) {
  double sum_sq = 0.0;
  for (float v : x) sum_sq += static_cast<double>(v) * v;
  const double inv = 1.0 / std::sqrt(sum_sq / static_cast<double>(x.size()) + eps);
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * gamma[i];
}

void layernorm_reference(std::span<const float> x, std::span<const float> gamma, std::span<const float> beta,
                         double eps, std::span<double> y) {
  double mean = 0.0;
  for (float v : x) mean += v;
  mean /= static_cast<double>(x.size());
  double var = 0.0;
  for (float v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  const double inv = 1.0 / std::sqrt(var + eps);
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) * inv * gamma[i] + beta[i];
}

void softmax_reference(std::span<const float> x, std::span<double> y) {
  double max = -std::numeric_limits<double>::infinity();
  for (float v : x) max = std::max(max, static_cast<double>(v));
  double sum = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    y[i] = std::exp(x[i] - max);
    sum += y[i];
  }
  for (double& v : y) v /= sum;
}

void swiglu_reference(std::span<const float> gate_up, std::span<double> y) {
  const std::size_t n = gate_up.size() / 2;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = gate_up[i];
    const double u = gate_up[n + i];
    y[i] = g / (1.0 + std::exp(-g)) * u;
  }
}

double gelu_reference(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

void rope_reference(std::span<const float> x, std::int64_t position, int head_dim, double theta, std::span<double> y) {
  const int half = head_dim / 2;
  for (std::size_t head = 0; head * static_cast<std::size_t>(head_dim) < x.size(); ++head) {
    const std::size_t base = head * static_cast<std::size_t>(head_dim);
    for (int i = 0; i < half; ++i) {
      const double angle = static_cast<double>(position) * std::pow(theta, -2.0 * i / head_dim);
      const double c = std::cos(angle);
      const double s = std::sin(angle);
      const double a = x[base + i];
      const double b = x[base + i + half];
      y[base + i] = a * c - b * s;
      y[base + i + half] = b * c + a * s;
    }
  }
}

void bias_dropout_add_reference(std::span<const float> x, std::span<const float> bias, std::span<const float> residual,
                                std::uint64_t seed, std::uint64_t first_index, float p, std::span<double> y) {
  const double scale = 1.0 / (1.0 - p);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const bool keep = kernels::dropout_keep(seed, first_index + i, p);
    y[i] = residual[i] + (keep ? (static_cast<double>(x[i]) + bias[i]) * scale : 0.0);
  }
}

std::int64_t visible_keys(std::int64_t row, std::int64_t seq_q, std::int64_t seq_kv, bool causal) {
  if (!causal) return seq_kv;
  return std::clamp<std::int64_t>(row + 1 + seq_kv - seq_q, 0, seq_kv);
}

AttentionRow attention_row_reference(std::span<const float> q, std::span<const float> keys,
                                     std::span<const float> values, int head_dim, std::int64_t visible,
                                     double scale) {
  AttentionRow out;
  out.o.assign(static_cast<std::size_t>(head_dim), 0.0);
  if (visible == 0) {
    out.lse = -std::numeric_limits<double>::infinity();
    return out;
  }
  const auto d = static_cast<std::size_t>(head_dim);
  std::vector<double> scores(static_cast<std::size_t>(visible));
  double max = -std::numeric_limits<double>::infinity();
  for (std::int64_t j = 0; j < visible; ++j) {
    scores[static_cast<std::size_t>(j)] = scale * dot(q, keys.subspan(static_cast<std::size_t>(j) * d, d));
    max = std::max(max, scores[static_cast<std::size_t>(j)]);
  }
  double sum = 0.0;
  for (double& s : scores) {
    s = std::exp(s - max);
    sum += s;
  }
  for (std::int64_t j = 0; j < visible; ++j) {
    const double p = scores[static_cast<std::size_t>(j)] / sum;
    for (std::size_t c = 0; c < d; ++c) out.o[c] += p * values[static_cast<std::size_t>(j) * d + c];
  }
  out.lse = max + std::log(sum);
  return out;
}

AttentionGradRows attention_backward_reference(std::span<const float> q, std::span<const float> k,
                                               std::span<const float> v, std::span<const float> o,
                                               std::span<const float> d_o, std::int64_t seq_q, std::int64_t seq_kv,
                                               int head_dim, bool causal, double scale,
                                               std::span<const std::int64_t> q_rows,
                                               std::span<const std::int64_t> kv_rows) {
  const auto d = static_cast<std::size_t>(head_dim);
  const auto row = [d](std::span<const float> m, std::int64_t r) { return m.subspan(static_cast<std::size_t>(r) * d, d); };
  // Per query: the log-sum-exp of its scaled scores and D_i = dO_i . O_i (FlashAttention-2, Alg. 2),
  // computed only for the queries the requested rows need: dQ rows need their own, dK and dV rows
  // need every query's (so ask for dK/dV rows on small problems only).
  std::vector<double> lse(static_cast<std::size_t>(seq_q), std::numeric_limits<double>::quiet_NaN());
  std::vector<double> delta(static_cast<std::size_t>(seq_q), 0.0);
  const auto prepare = [&](std::int64_t i) {
    if (!std::isnan(lse[static_cast<std::size_t>(i)])) return;
    const std::int64_t visible = visible_keys(i, seq_q, seq_kv, causal);
    double max = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < visible; ++j) max = std::max(max, scale * dot(row(q, i), row(k, j)));
    double sum = 0.0;
    for (std::int64_t j = 0; j < visible; ++j) sum += std::exp(scale * dot(row(q, i), row(k, j)) - max);
    lse[static_cast<std::size_t>(i)] = visible > 0 ? max + std::log(sum) : 0.0;
    delta[static_cast<std::size_t>(i)] = dot(row(d_o, i), row(o, i));
  };
  // dS_ij = P_ij (dP_ij - D_i) with P_ij = exp(scale s_ij - lse_i), dP_ij = dO_i . V_j; the scale
  // of the scores carries into dQ = scale dS K and dK = scale dS^T Q.
  const auto p_of = [&](std::int64_t i, std::int64_t j) {
    prepare(i);
    return std::exp(scale * dot(row(q, i), row(k, j)) - lse[static_cast<std::size_t>(i)]);
  };
  AttentionGradRows out;
  for (std::int64_t i : q_rows) {
    std::vector<double> dq(d, 0.0);
    prepare(i);
    const std::int64_t visible = visible_keys(i, seq_q, seq_kv, causal);
    for (std::int64_t j = 0; j < visible; ++j) {
      const double ds = p_of(i, j) * (dot(row(d_o, i), row(v, j)) - delta[static_cast<std::size_t>(i)]);
      for (std::size_t c = 0; c < d; ++c) dq[c] += scale * ds * row(k, j)[c];
    }
    out.dq.push_back(std::move(dq));
  }
  for (std::int64_t j : kv_rows) {
    std::vector<double> dk(d, 0.0);
    std::vector<double> dv(d, 0.0);
    for (std::int64_t i = 0; i < seq_q; ++i) {
      if (j >= visible_keys(i, seq_q, seq_kv, causal)) continue;
      const double p = p_of(i, j);
      const double ds = p * (dot(row(d_o, i), row(v, j)) - delta[static_cast<std::size_t>(i)]);
      for (std::size_t c = 0; c < d; ++c) {
        dv[c] += p * row(d_o, i)[c];
        dk[c] += scale * ds * row(q, i)[c];
      }
    }
    out.dk.push_back(std::move(dk));
    out.dv.push_back(std::move(dv));
  }
  return out;
}

void Comparison::add(double measured, double expected, double atol, double rtol) {
  ++checked;
  const double error = std::fabs(measured - expected);
  const bool ok = std::isfinite(measured) && error <= atol + rtol * std::fabs(expected);
  if (!ok) ++failed;
  max_abs_error = std::max(max_abs_error, std::isfinite(error) ? error : std::numeric_limits<double>::max());
  const double rel = error / std::max(std::fabs(expected), atol);
  max_rel_error = std::max(max_rel_error, std::isfinite(rel) ? rel : std::numeric_limits<double>::max());
}

}  // namespace stepcast
