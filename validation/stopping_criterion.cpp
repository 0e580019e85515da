#include "validation/stopping_criterion.h"

#include <algorithm>
#include <cmath>

#include "validation/statistics.h"

namespace stepcast {

std::string_view to_string(StopReason reason) {
  switch (reason) {
    case StopReason::running: return "running";
    case StopReason::converged: return "converged";
    case StopReason::plateau: return "plateau";
    case StopReason::timeout: return "timeout";
    case StopReason::max_samples: return "max_samples";
  }
  return "?";
}

std::optional<StopReason> parse_stop_reason(std::string_view text) {
  for (StopReason r : {StopReason::running, StopReason::converged, StopReason::plateau, StopReason::timeout,
                       StopReason::max_samples}) {
    if (to_string(r) == text) return r;
  }
  return std::nullopt;
}

StdrelCriterion::StdrelCriterion(StoppingRule rule) : m_rule(rule) {}

void StdrelCriterion::add_sample(Seconds measured) {
  const double x = measured.value();
  m_samples.push_back(x);
  m_total += x;
  const double n = static_cast<double>(m_samples.size());
  const double delta = x - m_mean;
  m_mean += delta / n;
  m_m2 += delta * (x - m_mean);
  if (m_samples.size() >= 2) {
    const double rel = std::sqrt(std::max(m_m2, 0.0) / (n - 1.0)) / m_mean;
    if (std::isfinite(rel)) m_noise_history.push_back(rel);
  }
}

double StdrelCriterion::noise() const { return m_noise_history.empty() ? 0.0 : m_noise_history.back(); }

bool StdrelCriterion::noise_has_plateaued() const {
  const auto window = static_cast<std::size_t>(m_rule.plateau_window);
  if (m_noise_history.size() <= window) return false;
  if (m_samples.size() % static_cast<std::size_t>(m_rule.plateau_check_every) != 0) return false;
  const double current = m_noise_history.back();
  if (current <= 0.0) return true;  // identical samples: nothing left to learn
  const std::span<const double> recent(m_noise_history.data() + m_noise_history.size() - window, window);
  return standard_deviation(recent, current) / current < m_rule.plateau_tolerance;
}

StopReason StdrelCriterion::decide(Seconds wall) const {
  const auto n = static_cast<int>(m_samples.size());
  if (n >= m_rule.max_samples) return StopReason::max_samples;
  if (n >= m_rule.min_samples && n >= 2 && m_total > m_rule.min_time.value()) {
    if (noise() < m_rule.max_noise) return StopReason::converged;
    if (noise_has_plateaued()) return StopReason::plateau;
  }
  if (wall > m_rule.timeout) return StopReason::timeout;
  return StopReason::running;
}

}  // namespace stepcast
