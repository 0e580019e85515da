#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "validation/stopping_criterion.h"

using namespace stepcast;

namespace {

// Feeds samples from `next` until the criterion stops; wall time advances by each sample plus a
// fixed overhead per sample (the flush, launch and sync a real cold sample costs).
template <class F>
std::pair<StopReason, int> run_until_stop(StdrelCriterion& c, F next, double overhead_s = 0.0) {
  double wall = 0.0;
  for (int i = 0; i < 10'000'000; ++i) {
    const double t = next();
    c.add_sample(units::seconds(t));
    wall += t + overhead_s;
    const StopReason r = c.decide(units::seconds(wall));
    if (r != StopReason::running) return {r, i + 1};
  }
  return {StopReason::running, -1};
}

}  // namespace

TEST_CASE("identical samples converge once both the minimum time and sample count are reached") {
  // 0.1 s per sample, min-time 0.5 s: the sum must exceed 0.5 s, so the 6th sample stops it
  // (5 x 0.1 = 0.5 is not more than 0.5); min_samples 3 is already met.
  StoppingRule rule;
  rule.min_samples = 3;
  StdrelCriterion c(rule);
  const auto [reason, n] = run_until_stop(c, [] { return 0.1; });
  CHECK(reason == StopReason::converged);
  CHECK(n == 6);
}

TEST_CASE("a tiny kernel is sampled until the minimum measured time, not just the minimum count") {
  // 2^-19 s (1.9 us) per sample, exact in binary: the sum passes 0.5 s after 2^18 + 1 samples.
  StoppingRule rule;
  rule.max_samples = 1'000'000;
  rule.timeout = units::seconds(1e9);
  StdrelCriterion c(rule);
  const auto [reason, n] = run_until_stop(c, [] { return std::ldexp(1.0, -19); });
  CHECK(reason == StopReason::converged);
  CHECK(n == 262145);
}

TEST_CASE("low noise converges below 0.5 percent relative standard deviation") {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(1e-3, 1e-6);  // 0.1% noise around 1 ms
  StdrelCriterion c;
  const auto [reason, n] = run_until_stop(c, [&] { return noise(rng); });
  CHECK(reason == StopReason::converged);
  CHECK(c.noise() < 0.005);
  CHECK(n >= 10);
}

TEST_CASE("inherently noisy kernels stop on the noise plateau before the timeout") {
  // 5% noise never gets below 0.5%, but its estimate settles: after enough samples the last 64
  // noise values vary by well under 5% of the current one.
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(1e-3, 5e-5);
  StdrelCriterion c;
  const auto [reason, n] = run_until_stop(c, [&] { return noise(rng); });
  CHECK(reason == StopReason::plateau);
  CHECK(c.noise() == doctest::Approx(0.05).epsilon(0.3));
  CHECK(n % 16 == 0);  // the plateau is only checked every 16 samples
  CHECK(n > 64);
}

TEST_CASE("the hard timeout ends a point that never settles") {
  // Samples that keep growing: the noise never plateaus nor falls below 0.5%. Each sample of
  // 1 ms costs 1 s of wall clock (a slow flush), so the 15 s timeout ends it after 15 samples.
  StoppingRule rule;
  rule.min_samples = 100;
  StdrelCriterion c(rule);
  double t = 1e-3;
  const auto [reason, n] = run_until_stop(c, [&] { return t *= 1.5; }, 1.0);
  CHECK(reason == StopReason::timeout);
  CHECK(n < 20);
}

TEST_CASE("max_samples bounds the sample count") {
  StoppingRule rule;
  rule.max_samples = 5;
  rule.min_time = units::seconds(100.0);
  StdrelCriterion c(rule);
  const auto [reason, n] = run_until_stop(c, [] { return 1e-3; });
  CHECK(reason == StopReason::max_samples);
  CHECK(n == 5);
}

TEST_CASE("stop reasons round-trip through their names") {
  for (StopReason r : {StopReason::converged, StopReason::plateau, StopReason::timeout, StopReason::max_samples}) {
    CHECK(parse_stop_reason(to_string(r)) == r);
  }
  CHECK_FALSE(parse_stop_reason("finished").has_value());
}
