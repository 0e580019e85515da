#pragma once
// Building measurement records from what the measuring loop produced. Host-only, so the exact
// code path the harness uses to fill a file is also what the schema tests exercise without a GPU.
//
// A TimingResult is the outcome of sampling one point (validation/harness/device_timer.h on a
// GPU); make_measurement adds the point's name, FLOPs and bytes (validation/work_counts.h) and
// the summary statistics (validation/statistics.h).

#include <optional>
#include <string>
#include <vector>

#include "validation/harness_options.h"
#include "validation/measurement.h"
#include "validation/stopping_criterion.h"

namespace stepcast {

struct TimingResult {
  std::vector<double> samples;           // seconds per operation, one per kept sample
  StopReason stop_reason = StopReason::converged;
  std::string mode = "cold";             // cold, hot or host_timer (MethodInfo)
  std::int64_t batch = 1;                // operations per sample
  double wall_s = 0.0;
  std::int64_t throttled_discarded = 0;
  std::optional<double> sm_clock_mhz;    // mean over kept samples
};

TimeStats time_stats(const std::vector<double>& samples);

// Fills name, FLOPs and bytes from the inputs, and the time and method from the timing.
// Throws std::invalid_argument when the timing holds no samples.
Measurement make_measurement(MeasurementInputs inputs, const TimingResult& timing, CheckInfo check, int device = 0);

// "2025-06-01T12:00:00Z" for the current time.
std::string utc_timestamp_now();

// The provenance fields the host knows: tool, version, git sha, argv, command, start time, host
// name and the measurement method; the device layer adds versions and devices.
Provenance host_provenance(const HarnessOptions& options, const std::string& tool_version, const std::string& git_sha);

}  // namespace stepcast
