#include "validation/throttle.h"

#include <algorithm>

namespace stepcast {

namespace {
// nvbench measure_cold.cu: the pause grows by at most half a second per throttled sample.
constexpr double kMaxPauseGrowthSeconds = 0.5;
}  // namespace

ThrottleMonitor::ThrottleMonitor(ThrottleRule rule, double reference_mhz)
    : m_rule(rule), m_reference_mhz(reference_mhz), m_pause(rule.recovery_delay) {}

bool ThrottleMonitor::should_discard(double clock_mhz) {
  if (!is_throttled(clock_mhz, m_reference_mhz, m_rule.threshold)) {
    m_consecutive = 0;
    return false;
  }
  if (m_consecutive > 2) {
    m_pause += units::seconds(std::min(m_pause.value() * 1.5, kMaxPauseGrowthSeconds));
  }
  ++m_consecutive;
  ++m_discarded;
  return true;
}

}  // namespace stepcast
