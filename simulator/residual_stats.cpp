#include "simulator/residual_stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace stepcast {

std::optional<double> ResidualStats::half_width(double level) const {
  for (std::size_t i = 0; i < kIntervalLevels.size(); ++i) {
    if (std::fabs(kIntervalLevels[i] - level) < 1e-9) return abs_quantiles[i];
  }
  return std::nullopt;
}

std::optional<double> conformal_abs_quantile(std::span<const double> relative_errors, double level) {
  const auto n = static_cast<double>(relative_errors.size());
  const auto rank = static_cast<std::size_t>(std::ceil((n + 1.0) * level - 1e-12));
  if (relative_errors.empty() || rank > relative_errors.size() || rank == 0) return std::nullopt;
  std::vector<double> sorted;
  sorted.reserve(relative_errors.size());
  for (double e : relative_errors) sorted.push_back(std::fabs(e));
  std::sort(sorted.begin(), sorted.end());
  return sorted[rank - 1];
}

ResidualStats summarize_residuals(std::span<const double> relative_errors) {
  ResidualStats s;
  s.n = static_cast<int>(relative_errors.size());
  if (s.n == 0) return s;
  double sum_abs = 0.0;
  double sum = 0.0;
  double sum_sq = 0.0;
  for (double e : relative_errors) {
    sum_abs += std::fabs(e);
    sum += e;
    sum_sq += e * e;
    s.max_abs = std::max(s.max_abs, std::fabs(e));
  }
  s.mean_abs = sum_abs / s.n;
  s.bias = sum / s.n;
  s.rms = std::sqrt(sum_sq / s.n);
  for (std::size_t i = 0; i < kIntervalLevels.size(); ++i) {
    s.abs_quantiles[i] = conformal_abs_quantile(relative_errors, kIntervalLevels[i]);
  }
  return s;
}

}  // namespace stepcast
