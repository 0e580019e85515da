#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/counter_hash.h"
#include "validation/reference_ops.h"

using namespace stepcast;

namespace {

std::vector<float> random_values(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = kernels::uniform_symmetric(seed, i, scale);
  return v;
}

}  // namespace

TEST_CASE("rmsnorm scales a row to unit root mean square before gamma") {
  // x = (3, 4): mean square 12.5, y = x / sqrt(12.5) with eps 0.
  const std::vector<float> x = {3, 4};
  const std::vector<float> gamma = {1, 2};
  std::vector<double> y(2);
  rmsnorm_reference(x, gamma, 0.0, y);
  CHECK(y[0] == doctest::Approx(3 / std::sqrt(12.5)));
  CHECK(y[1] == doctest::Approx(2 * 4 / std::sqrt(12.5)));
}

TEST_CASE("layernorm centres and scales with the biased variance") {
  // x = (1, 3): mean 2, variance 1; y = (x - 2) / 1 * gamma + beta.
  const std::vector<float> x = {1, 3};
  const std::vector<float> gamma = {2, 2};
  const std::vector<float> beta = {0.5f, 0.5f};
  std::vector<double> y(2);
  layernorm_reference(x, gamma, beta, 0.0, y);
  CHECK(y[0] == doctest::Approx(-1.5));
  CHECK(y[1] == doctest::Approx(2.5));
}

TEST_CASE("softmax sums to one and is shift invariant") {
  const auto x = random_values(100, 3, 10.0f);
  std::vector<float> shifted(x);
  for (float& v : shifted) v += 1000.0f;
  std::vector<double> y(100);
  std::vector<double> y2(100);
  softmax_reference(x, y);
  softmax_reference(shifted, y2);
  CHECK(std::accumulate(y.begin(), y.end(), 0.0) == doctest::Approx(1.0));
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(y2[i]).epsilon(1e-4));
}

TEST_CASE("swiglu multiplies silu of the gate half by the up half") {
  // gate 0 -> silu 0; gate 2 -> 2 / (1 + e^-2) = 1.7616; times up 3.
  const std::vector<float> gate_up = {0, 2, 5, 3};
  std::vector<double> y(2);
  swiglu_reference(gate_up, y);
  CHECK(y[0] == 0.0);
  CHECK(y[1] == doctest::Approx(2 / (1 + std::exp(-2.0)) * 3));
}

TEST_CASE("gelu (tanh form) is near zero for large negative inputs and near x for large positive") {
  CHECK(gelu_reference(0.0) == 0.0);
  CHECK(gelu_reference(6.0) == doctest::Approx(6.0));
  CHECK(std::fabs(gelu_reference(-6.0)) < 1e-6);
  // At x = 1: 0.5 (1 + tanh(0.79788 (1.044715))) = 0.841192.
  CHECK(gelu_reference(1.0) == doctest::Approx(0.841192).epsilon(1e-5));
}

TEST_CASE("rope is the identity at position 0 and preserves each pair's norm") {
  const auto x = random_values(256, 5);  // 2 heads of 128
  std::vector<double> y(256);
  rope_reference(x, 0, 128, 10000.0, y);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(y[i] == doctest::Approx(x[i]));
  rope_reference(x, 777, 128, 10000.0, y);
  for (int head = 0; head < 2; ++head) {
    for (int i = 0; i < 64; ++i) {
      const std::size_t a = head * 128 + i;
      const std::size_t b = a + 64;
      CHECK(y[a] * y[a] + y[b] * y[b] == doctest::Approx(double(x[a]) * x[a] + double(x[b]) * x[b]));
    }
  }
  // Pair 0 rotates by exactly `position` radians (frequency theta^0 = 1).
  CHECK(y[0] == doctest::Approx(x[0] * std::cos(777.0) - x[64] * std::sin(777.0)));
}

TEST_CASE("bias-dropout-add drops about p of the elements and rescales the rest") {
  const std::size_t n = 100000;
  const std::vector<float> x(n, 1.0f);
  const std::vector<float> bias(n, 0.5f);
  const std::vector<float> residual(n, 2.0f);
  std::vector<double> y(n);
  bias_dropout_add_reference(x, bias, residual, 42, 0, 0.1f, y);
  std::size_t dropped = 0;
  for (double v : y) {
    if (v == 2.0) {
      ++dropped;
    } else {
      CHECK(v == doctest::Approx(2.0 + 1.5 / 0.9));
    }
  }
  CHECK(static_cast<double>(dropped) / n == doctest::Approx(0.1).epsilon(0.05));
}

TEST_CASE("attention over a single key returns that key's value") {
  const std::vector<float> q = {1, 2};
  const std::vector<float> k = {3, 4};
  const std::vector<float> v = {5, 6};
  const AttentionRow r = attention_row_reference(q, k, v, 2, 1, 0.5);
  CHECK(r.o[0] == doctest::Approx(5.0));
  CHECK(r.o[1] == doctest::Approx(6.0));
  CHECK(r.lse == doctest::Approx(0.5 * 11.0));  // log(exp(s)) with s = 0.5 (1x3 + 2x4)
}

TEST_CASE("causal visibility is bottom-right aligned") {
  CHECK(visible_keys(0, 4, 4, true) == 1);
  CHECK(visible_keys(3, 4, 4, true) == 4);
  CHECK(visible_keys(0, 2, 5, true) == 4);
  CHECK(visible_keys(0, 4, 4, false) == 4);
}

TEST_CASE("the attention backward reference matches finite differences of the forward") {
  // Loss L = sum_i dO_i . O_i; dL/dQ, dL/dK, dL/dV by central differences must equal the
  // analytic gradients of FlashAttention-2's backward pass.
  const int d = 4;
  const std::int64_t sq = 5;
  const std::int64_t skv = 6;
  const double scale = 0.5;
  for (bool causal : {false, true}) {
    auto q = random_values(sq * d, 1);
    auto k = random_values(skv * d, 2);
    auto v = random_values(skv * d, 3);
    const auto d_o = random_values(sq * d, 4);
    const auto forward = [&](const std::vector<float>& qq, const std::vector<float>& kk, const std::vector<float>& vv) {
      double loss = 0.0;
      std::vector<float> o(sq * d);
      for (std::int64_t i = 0; i < sq; ++i) {
        const AttentionRow r = attention_row_reference(std::span<const float>(qq).subspan(i * d, d), kk, vv, d,
                                                       visible_keys(i, sq, skv, causal), scale);
        for (int c = 0; c < d; ++c) {
          o[i * d + c] = static_cast<float>(r.o[c]);
          loss += d_o[i * d + c] * r.o[c];
        }
      }
      return std::pair{loss, o};
    };
    const auto o = forward(q, k, v).second;
    const std::vector<std::int64_t> q_rows = {0, 4};
    const std::vector<std::int64_t> kv_rows = {0, 5};
    const AttentionGradRows g = attention_backward_reference(q, k, v, o, d_o, sq, skv, d, causal, scale, q_rows, kv_rows);
    const float h = 1e-2f;
    const auto numeric = [&](std::vector<float>& t, std::size_t at) {
      const float keep = t[at];
      t[at] = keep + h;
      const double up = forward(q, k, v).first;
      t[at] = keep - h;
      const double down = forward(q, k, v).first;
      t[at] = keep;
      return (up - down) / (2 * h);
    };
    for (std::size_t r = 0; r < q_rows.size(); ++r) {
      for (int c = 0; c < d; ++c) CHECK(g.dq[r][c] == doctest::Approx(numeric(q, q_rows[r] * d + c)).epsilon(1e-3));
    }
    for (std::size_t r = 0; r < kv_rows.size(); ++r) {
      for (int c = 0; c < d; ++c) {
        CHECK(g.dk[r][c] == doctest::Approx(numeric(k, kv_rows[r] * d + c)).epsilon(1e-3));
        CHECK(g.dv[r][c] == doctest::Approx(numeric(v, kv_rows[r] * d + c)).epsilon(1e-3));
      }
    }
  }
}

TEST_CASE("comparisons pass within atol + rtol |expected| and remember the worst error") {
  Comparison c;
  c.add(1.005, 1.0, 0.0, 0.01);
  CHECK(c.passed());
  c.add(2.5, 2.0, 0.0, 0.01);
  CHECK_FALSE(c.passed());
  CHECK(c.max_abs_error == doctest::Approx(0.5));
  CHECK(c.max_rel_error == doctest::Approx(0.25));
  Comparison nan;
  nan.add(std::nan(""), 1.0, 1.0, 1.0);
  CHECK_FALSE(nan.passed());
}
