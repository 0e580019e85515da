#include "validation/statistics.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace stepcast {

double mean_of(std::span<const double> values) {
  if (values.empty()) return 0.0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double standard_deviation(std::span<const double> values, double about) {
  if (values.size() < 2) return 0.0;
  double sum = 0.0;
  for (double v : values) sum += (v - about) * (v - about);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

double percentile_of_sorted(std::span<const double> sorted, double q) {
  assert(!sorted.empty() && q >= 0.0 && q <= 1.0);
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(rank));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(lower);
  return sorted[lower] + fraction * (sorted[upper] - sorted[lower]);
}

SampleSummary summarize(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize: no samples");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  SampleSummary s;
  s.count = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = mean_of(sorted);
  s.median = percentile_of_sorted(sorted, 0.5);
  s.p10 = percentile_of_sorted(sorted, 0.1);
  s.p90 = percentile_of_sorted(sorted, 0.9);
  s.stdev = standard_deviation(sorted, s.mean);
  s.rel_stdev = s.mean > 0.0 ? s.stdev / s.mean : 0.0;
  return s;
}

}  // namespace stepcast
