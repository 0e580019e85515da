#pragma once
// Statistics of a serving run: latency percentiles, a bounded time series, and the saturation
// verdict.
//
// Percentiles interpolate linearly between order statistics (the "linear" method, numpy's and
// R type 7's default): p_q = x[floor(h)] + (h - floor(h)) (x[floor(h)+1] - x[floor(h)]),
// h = (n - 1) q.
//
// Time series: the run's state is sampled every `interval` seconds of simulated time. When the
// buffer holds max_points samples, every other one is dropped and the interval doubles, so a run
// of any length keeps between max_points/2 and max_points evenly spaced samples.
//
// Saturation: a queue that grows without bound means latencies depend on how long the run is,
// not on the system. The verdict combines
//   - the trend: the least-squares slope of the waiting queue over the arrival window (samples
//     between the first and last arrival), in requests per second;
//   - the backlog left: requests still waiting when the last one arrives;
//   - the measured capacity: the engines' completions per second over the iterations that
//     started with requests left waiting (their service rate when they cannot keep up).
// It is saturated when the queue grew by more than 2% of the arrival rate per second and
// still held more than max(2 x max_batch, 5% of the requests) at the last arrival, or when the
// engines were saturated for at least a quarter of the arrival window and the arrival rate
// exceeds the measured capacity by 5%. An offline run (every request in one burst) is a
// throughput measurement, never a saturation warning.

#include <string>
#include <vector>

#include "model/prediction.h"

namespace stepcast::serving {

// Mean and percentiles of `values` (sorted in place); zeros when empty.
LatencyStats latency_stats(std::vector<double>& values);
// The q-quantile (0 <= q <= 1) of sorted values.
double quantile_sorted(const std::vector<double>& sorted, double q);

class TimeSeriesRecorder {
 public:
  TimeSeriesRecorder(double start_s, double interval_s, std::size_t max_points);
  // Records every sample time up to and including `now` with `state` (the state that held since
  // the previous call).
  void advance(double now, const ServingSample& state);
  [[nodiscard]] const std::vector<ServingSample>& samples() const { return m_samples; }
  [[nodiscard]] double interval() const { return m_interval; }

 private:
  std::vector<ServingSample> m_samples;
  double m_interval;
  double m_next = 0.0;
  std::size_t m_max;
};

// The engines must have been saturated this much of the arrival window for their saturated
// service rate to count as the capacity.
inline constexpr double kMinSaturatedShare = 0.25;

struct SaturationInputs {
  double arrival_rate = 0.0;         // requests per second offered (0 when all arrive at once)
  bool offline = false;
  double first_arrival = 0.0;
  double last_arrival = 0.0;
  double queue_at_last_arrival = 0.0;
  double capacity = 0.0;             // measured completions per second while saturated (0: none)
  double saturated_share = 0.0;      // share of the arrival window the engines were saturated
  int requests = 0;
  int max_batch = 1;
};

struct SaturationVerdict {
  bool saturated = false;
  double queue_growth_per_s = 0.0;
  std::string statement;             // empty when not saturated
};

SaturationVerdict assess_saturation(const SaturationInputs& in, const std::vector<ServingSample>& samples);

}  // namespace stepcast::serving
