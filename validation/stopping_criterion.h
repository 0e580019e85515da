#pragma once
// When to stop sampling one measurement point.
//
// Our own implementation of the rule nvbench uses by default (NVIDIA/nvbench,
// nvbench/detail/stdrel_criterion.cxx and measure_cold.cu), with its defaults:
//   1. never before `min_samples` samples, and never before the measured times add up to
//      `min_time` (so a 2 us kernel is sampled many times);
//   2. then stop when the relative standard deviation of the samples ("noise") is below
//      `max_noise` (0.5%): converged;
//   3. or when the noise has stopped changing: among the last `plateau_window` noise values, their
//      standard deviation about the current noise is under `plateau_tolerance` (5%) of it, checked
//      every `plateau_check_every` samples: a kernel that is inherently noisier than 0.5% ends
//      without burning the timeout;
//   4. and in any case when the wall-clock time spent on the point exceeds `timeout`, or after
//      `max_samples` samples.
// Times are seconds. Host-only code: tested on synthetic samples without a GPU.

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "model/units.h"

namespace stepcast {

struct StoppingRule {
  double max_noise = 0.005;                      // nvbench --max-noise default (0.5%)
  Seconds min_time = units::seconds(0.5);        // nvbench --min-time default
  int min_samples = 10;                          // nvbench --min-samples default
  Seconds timeout = units::seconds(15.0);        // nvbench --timeout default (wall clock)
  int max_samples = 100000;
  int plateau_window = 64;                       // nvbench: noise tracker must hold > 64 values
  int plateau_check_every = 16;                  // nvbench: checked every 16 samples
  double plateau_tolerance = 0.05;               // nvbench: noise_threshold 0.05
  bool operator==(const StoppingRule&) const = default;
};

enum class StopReason { running, converged, plateau, timeout, max_samples };

std::string_view to_string(StopReason reason);
std::optional<StopReason> parse_stop_reason(std::string_view text);

class StdrelCriterion {
 public:
  explicit StdrelCriterion(StoppingRule rule = {});

  void add_sample(Seconds measured);

  // The decision after the samples so far; `wall` is the wall-clock time spent on this point.
  [[nodiscard]] StopReason decide(Seconds wall) const;

  [[nodiscard]] double noise() const;  // current relative standard deviation; 0 before 2 samples
  [[nodiscard]] std::span<const double> samples() const { return m_samples; }
  [[nodiscard]] Seconds total_measured() const { return units::seconds(m_total); }
  [[nodiscard]] const StoppingRule& rule() const { return m_rule; }

 private:
  [[nodiscard]] bool noise_has_plateaued() const;

  StoppingRule m_rule;
  std::vector<double> m_samples;
  std::vector<double> m_noise_history;  // noise after each sample (from the second on)
  double m_total = 0.0;
  // Welford's running mean and sum of squared deviations: O(1) per sample, so a 2 us kernel
  // sampled 250000 times costs no more than its kernel time.
  double m_mean = 0.0;
  double m_m2 = 0.0;
};

}  // namespace stepcast
