#pragma once
// How far predictions were from measurements, summarised so that an interval can be drawn from it.
//
// An error is the relative error of a time, predicted / measured - 1: +0.05 means the model
// predicted 5% longer than was measured (pessimistic), -0.05 shorter (optimistic). Throughout
// stepcast's calibration and validation reports errors are of times, never of bandwidths.
//
// Interval half-widths are split-conformal quantiles of |error| (Lei, G'Sell, Rinaldo, Tibshirani
// & Wasserman 2018, "Distribution-Free Predictive Inference for Regression", JASA, Sec. 2.2):
// with n held-out errors, the level-q half-width is the ceil((n + 1) q)-th smallest |error|.
// A new point exchangeable with those n then falls within it with probability >= q. When
// ceil((n + 1) q) > n there are too few points for that level and the quantile is absent, not
// guessed: at 90% that takes at least 9 points, at 95% 19.

#include <array>
#include <optional>
#include <span>

namespace stepcast {

// The levels a profile stores (ResidualStats::abs_quantiles, in this order).
inline constexpr std::array<double, 4> kIntervalLevels{0.5, 0.8, 0.9, 0.95};

struct ResidualStats {
  int n = 0;
  double mean_abs = 0.0;  // mean |error|
  double max_abs = 0.0;
  double bias = 0.0;      // mean signed error
  double rms = 0.0;
  std::array<std::optional<double>, kIntervalLevels.size()> abs_quantiles{};  // conformal, per level

  // The half-width at `level` (one of kIntervalLevels), or nullopt when too few points gave one.
  [[nodiscard]] std::optional<double> half_width(double level) const;
  bool operator==(const ResidualStats&) const = default;
};

// Summary of relative errors (predicted / measured - 1). Empty input gives n = 0.
ResidualStats summarize_residuals(std::span<const double> relative_errors);

// The conformal quantile of |errors| at `level` in (0, 1), or nullopt when there are too few.
std::optional<double> conformal_abs_quantile(std::span<const double> relative_errors, double level);

}  // namespace stepcast
