#pragma once
// Summary statistics of timing samples (seconds in, seconds out; rel_stdev is a plain ratio).
//
// Conventions, stated so readers of measurement files know what the numbers mean:
//   - stdev is the sample standard deviation (divides by n - 1), as nvbench's
//     detail/statistics.cuh computes it; 0 for a single sample;
//   - rel_stdev = stdev / mean (nvbench's "noise");
//   - percentiles interpolate linearly between the two closest ranks
//     (Hyndman & Fan 1996 definition 7, numpy's default): rank = q * (n - 1);
//   - median = the 0.5 percentile by that rule.

#include <cstddef>
#include <span>

namespace stepcast {

struct SampleSummary {
  std::size_t count = 0;
  double min = 0.0;
  double max = 0.0;
  double mean = 0.0;
  double median = 0.0;
  double p10 = 0.0;
  double p90 = 0.0;
  double stdev = 0.0;
  double rel_stdev = 0.0;
};

// Throws std::invalid_argument for an empty sample set.
SampleSummary summarize(std::span<const double> samples);

double mean_of(std::span<const double> values);

// sqrt(sum((x - about)^2) / (n - 1)); 0 when fewer than two values.
double standard_deviation(std::span<const double> values, double about);

// `sorted` must be ascending and non-empty; q in [0, 1].
double percentile_of_sorted(std::span<const double> sorted, double q);

}  // namespace stepcast
