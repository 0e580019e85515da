#pragma once
// Throttle detection: a sample taken while the SM clock sagged is discarded, then the harness
// pauses to let the GPU recover.
//
// Our own version of nvbench's rule (nvbench/detail/measure_cold.cu, gpu_frequency.cxx, defaults
// --throttle-threshold 0.75 and --throttle-recovery-delay 0.05 s): a sample is throttled when the
// SM clock measured across it is below `threshold` times the reference clock (the device's
// default boost clock). After more than two throttled samples in a row, the pause grows by
// min(1.5 x pause, 0.5 s) each time. Clocks in MHz, pauses in seconds.

#include "model/units.h"

namespace stepcast {

struct ThrottleRule {
  double threshold = 0.75;
  Seconds recovery_delay = units::seconds(0.05);
};

[[nodiscard]] constexpr bool is_throttled(double clock_mhz, double reference_mhz, double threshold) {
  return reference_mhz > 0.0 && clock_mhz > 0.0 && clock_mhz < threshold * reference_mhz;
}

class ThrottleMonitor {
 public:
  ThrottleMonitor(ThrottleRule rule, double reference_mhz);

  // Call once per sample with the SM clock measured across it. Returns true when the sample must
  // be discarded; pause() then says how long to wait before the next one.
  bool should_discard(double clock_mhz);

  [[nodiscard]] Seconds pause() const { return m_pause; }
  [[nodiscard]] int discarded() const { return m_discarded; }
  [[nodiscard]] double reference_mhz() const { return m_reference_mhz; }

 private:
  ThrottleRule m_rule;
  double m_reference_mhz;
  Seconds m_pause;
  int m_consecutive = 0;
  int m_discarded = 0;
};

}  // namespace stepcast
