#include "simulator/serving/serving_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace stepcast::serving {
namespace {

// Queue growth (per second of the arrival rate) above which the queue counts as growing.
constexpr double kGrowthShare = 0.02;
// Arrival rate over measured capacity above which the system counts as overloaded.
constexpr double kOverload = 1.05;

}  // namespace

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double h = (static_cast<double>(sorted.size()) - 1.0) * std::clamp(q, 0.0, 1.0);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

LatencyStats latency_stats(std::vector<double>& values) {
  LatencyStats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const double sum = std::accumulate(values.begin(), values.end(), 0.0);
  s.mean = Seconds(sum / static_cast<double>(values.size()));
  s.p50 = Seconds(quantile_sorted(values, 0.50));
  s.p90 = Seconds(quantile_sorted(values, 0.90));
  s.p99 = Seconds(quantile_sorted(values, 0.99));
  return s;
}

TimeSeriesRecorder::TimeSeriesRecorder(double start_s, double interval_s, std::size_t max_points)
    : m_interval(interval_s > 0.0 ? interval_s : 1.0), m_next(start_s), m_max(std::max<std::size_t>(max_points, 4)) {}

void TimeSeriesRecorder::advance(double now, const ServingSample& state) {
  while (m_next <= now) {
    ServingSample s = state;
    s.time = Seconds(m_next);
    m_samples.push_back(s);
    m_next += m_interval;
    if (m_samples.size() >= m_max) {
      // Keep samples 0, 2, 4, ... (every other sample time) and sample half as often.
      std::size_t kept = 0;
      for (std::size_t i = 0; i < m_samples.size(); i += 2) m_samples[kept++] = m_samples[i];
      m_samples.resize(kept);
      m_interval *= 2.0;
      m_next = m_samples.back().time.value() + m_interval;
    }
  }
}

SaturationVerdict assess_saturation(const SaturationInputs& in, const std::vector<ServingSample>& samples) {
  SaturationVerdict v;
  if (in.offline || in.arrival_rate <= 0.0 || in.requests < 2) return v;

  // Least-squares slope of the waiting queue over the arrival window.
  double n = 0.0, st = 0.0, sq = 0.0, stt = 0.0, stq = 0.0;
  for (const ServingSample& s : samples) {
    const double t = s.time.value();
    if (t < in.first_arrival || t > in.last_arrival) continue;
    n += 1.0;
    st += t;
    sq += s.queued;
    stt += t * t;
    stq += t * s.queued;
  }
  const double denominator = n * stt - st * st;
  if (n >= 3.0 && denominator > 0.0) v.queue_growth_per_s = (n * stq - st * sq) / denominator;

  const double backlog_floor = std::max(2.0 * in.max_batch, 0.05 * in.requests);
  const bool growing = v.queue_growth_per_s > kGrowthShare * in.arrival_rate && in.queue_at_last_arrival > backlog_floor;
  const bool overloaded =
      in.capacity > 0.0 && in.saturated_share >= kMinSaturatedShare && in.arrival_rate > kOverload * in.capacity;
  v.saturated = growing || overloaded;
  if (!v.saturated) return v;

  std::string capacity = in.capacity > 0.0 ? fmt::format("the measured capacity of {:.3g} requests/s", in.capacity)
                                           : std::string("what the engines can serve");
  v.statement = fmt::format(
      "saturated: the arrival rate {:.3g} requests/s exceeds {}; the waiting queue grew by {:.3g} requests/s "
      "and held {:.0f} requests at the last arrival, so latencies grow with the length of the run rather than "
      "settling (lower the arrival rate, or add capacity)",
      in.arrival_rate, capacity, std::max(v.queue_growth_per_s, 0.0), in.queue_at_last_arrival);
  return v;
}

}  // namespace stepcast::serving
