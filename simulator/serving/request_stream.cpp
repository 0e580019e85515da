#include "simulator/serving/request_stream.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "simulator/serving/random.h"

namespace stepcast::serving {
namespace {

int clamp_length(double value, const LengthSpec& spec) {
  const double lo = std::max(spec.min, 1.0);
  const double hi = spec.max > 0.0 ? spec.max : std::numeric_limits<double>::max();
  return static_cast<int>(std::clamp(std::round(value), lo, std::max(lo, hi)));
}

class LengthSampler {
 public:
  explicit LengthSampler(const LengthSpec& spec) : m_spec(spec) {
    if (spec.dist == LengthDistribution::lognormal) {
      m_sigma = lognormal_sigma(spec.mean, spec.p99).value_or(0.0);
      m_mu = std::log(spec.mean) - m_sigma * m_sigma / 2.0;
    }
  }

  int draw(Random& rng) const {
    switch (m_spec.dist) {
      case LengthDistribution::fixed:
        return clamp_length(m_spec.mean, m_spec);
      case LengthDistribution::uniform: {
        const double lo = std::max(m_spec.min, 1.0);
        const double hi = std::max(m_spec.max, lo);
        return clamp_length(std::floor(rng.uniform(lo, hi + 1.0)), m_spec);
      }
      case LengthDistribution::exponential:
        return clamp_length(rng.exponential(m_spec.mean), m_spec);
      case LengthDistribution::lognormal:
        return clamp_length(std::exp(m_mu + m_sigma * rng.normal()), m_spec);
    }
    return clamp_length(m_spec.mean, m_spec);
  }

 private:
  LengthSpec m_spec;
  double m_mu = 0.0;
  double m_sigma = 0.0;
};

}  // namespace

std::optional<double> lognormal_sigma(double mean, double p99) {
  if (!(mean > 0.0) || !(p99 > mean)) return std::nullopt;
  const double c = std::log(p99 / mean);
  const double discriminant = kZ99 * kZ99 - 2.0 * c;
  if (discriminant < 0.0) return std::nullopt;
  return kZ99 - std::sqrt(discriminant);
}

double lognormal_max_p99_ratio() { return std::exp(kZ99 * kZ99 / 2.0); }

namespace {

std::vector<RequestSpec> draw_request_stream(const ServingWorkload& w) {
  std::vector<RequestSpec> out;
  if (w.arrivals == ArrivalProcess::trace) {
    out.reserve(w.trace.size());
    for (const TraceRequest& r : w.trace) out.push_back({r.arrival.value(), r.input_len, r.output_len});
    return out;
  }
  const int n = std::max(w.requests, 0);
  out.reserve(static_cast<std::size_t>(n));
  Random rng(w.seed);
  const LengthSampler input(w.input_len);
  const LengthSampler output(w.output_len);
  const double rate = w.arrival_rate_per_s > 0.0 ? w.arrival_rate_per_s : 1.0;
  const double cv = w.gamma_cv > 0.0 ? w.gamma_cv : 1.0;
  const double shape = 1.0 / (cv * cv);
  double t = 0.0;
  for (int i = 0; i < n; ++i) {
    if (i > 0) {
      switch (w.arrivals) {
        case ArrivalProcess::poisson: t += rng.exponential(1.0 / rate); break;
        case ArrivalProcess::gamma: t += rng.gamma(shape, 1.0 / (rate * shape)); break;
        case ArrivalProcess::all_at_once:
        case ArrivalProcess::closed_loop:  // the simulation sets these times as requests finish
        case ArrivalProcess::trace: break;
      }
    }
    RequestSpec r;
    r.arrival_s = t;
    r.input_len = input.draw(rng);
    r.output_len = output.draw(rng);
    out.push_back(r);
  }
  return out;
}

}  // namespace

std::vector<RequestSpec> make_request_stream(const ServingWorkload& w) {
  std::vector<RequestSpec> stream = draw_request_stream(w);
  // Generation stops at the request's max_tokens (ServingWorkload::max_output_tokens; 0: no cap).
  if (w.max_output_tokens > 0) {
    for (RequestSpec& r : stream) r.output_len = std::min(r.output_len, w.max_output_tokens);
  }
  return stream;
}

}  // namespace stepcast::serving
