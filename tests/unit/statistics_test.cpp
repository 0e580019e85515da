#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "validation/statistics.h"

using namespace stepcast;

TEST_CASE("summary statistics of a small sample follow the documented definitions") {
  // 1..10: mean 5.5; sample variance = sum((x - 5.5)^2) / 9 = 82.5 / 9; stdev = 3.0277.
  const std::vector<double> x = {3, 1, 4, 10, 5, 9, 2, 6, 8, 7};
  const SampleSummary s = summarize(x);
  CHECK(s.count == 10);
  CHECK(s.min == 1.0);
  CHECK(s.max == 10.0);
  CHECK(s.mean == doctest::Approx(5.5));
  CHECK(s.stdev == doctest::Approx(3.0276503541));
  CHECK(s.rel_stdev == doctest::Approx(3.0276503541 / 5.5));
  // Linear interpolation between ranks: rank = q (n - 1). Median: rank 4.5 -> (5 + 6) / 2.
  CHECK(s.median == doctest::Approx(5.5));
  // p10: rank 0.9 -> 1 + 0.9 (2 - 1) = 1.9; p90: rank 8.1 -> 9 + 0.1 (10 - 9) = 9.1.
  CHECK(s.p10 == doctest::Approx(1.9));
  CHECK(s.p90 == doctest::Approx(9.1));
}

TEST_CASE("a single sample has zero spread and is every percentile") {
  const std::vector<double> x = {2.5e-6};
  const SampleSummary s = summarize(x);
  CHECK(s.median == 2.5e-6);
  CHECK(s.p10 == 2.5e-6);
  CHECK(s.p90 == 2.5e-6);
  CHECK(s.stdev == 0.0);
  CHECK(s.rel_stdev == 0.0);
}

TEST_CASE("summarizing no samples is an error") {
  const std::vector<double> none;
  CHECK_THROWS_AS(summarize(none), std::invalid_argument);
}

TEST_CASE("standard deviation is taken about the given centre") {
  // About 0 instead of the mean 2: sqrt((1 + 9) / 1) for {1, 3}.
  const std::vector<double> x = {1.0, 3.0};
  CHECK(standard_deviation(x, 0.0) == doctest::Approx(std::sqrt(10.0)));
  CHECK(standard_deviation(x, 2.0) == doctest::Approx(std::sqrt(2.0)));
}
