#pragma once
// The requests of a serving run: arrival times and prompt/answer lengths, drawn from the
// scenario's distributions with its seed (simulator/serving/random.h), or read from its trace.
//
// Arrivals (ServingWorkload::arrivals):
//   poisson      exponential gaps of mean 1/rate
//   gamma        gamma gaps of mean 1/rate and coefficient of variation gamma_cv
//                (shape 1/cv^2, scale cv^2/rate): cv > 1 is burstier than Poisson
//   all_at_once  every request at t = 0 (an offline, max-throughput run)
//   trace        the trace's times and lengths, as given
//   closed_loop  every time 0 here: the serving simulation (ServingSetup::closed_loop_concurrency)
//                releases request i + concurrency when a request finishes
// The first request arrives at t = 0 (poisson/gamma gaps are added after it).
//
// Lengths (LengthSpec), rounded to whole tokens and clamped to [max(min, 1), max] (max 0:
// unbounded):
//   fixed        mean
//   uniform      integers uniform on [min, max]
//   exponential  mean x Exp(1)
//   lognormal    exp(mu + sigma Z) with mean exp(mu + sigma^2/2) and 99th percentile
//                exp(mu + z99 sigma), z99 = 2.3263: sigma is the smaller root of
//                sigma^2/2 - z99 sigma + ln(p99/mean) = 0, which exists when
//                p99/mean <= exp(z99^2/2) ~ 14.95 (lognormal_sigma).
// Outputs longer than the workload's max_output_tokens (the request's max_tokens) are cut to it,
// traced ones included: generation stops there.
// Draw order is fixed: for each request its gap, then its input length, then its output length,
// from one generator, so the same seed always gives the same stream.

#include <optional>
#include <vector>

#include "model/workload.h"

namespace stepcast::serving {

struct RequestSpec {
  double arrival_s = 0.0;
  int input_len = 1;
  int output_len = 1;
};

// The 99th-percentile z-score of the standard normal distribution.
inline constexpr double kZ99 = 2.3263478740408408;

// sigma of a lognormal with this mean and 99th percentile; empty when p99/mean is too large for
// any lognormal (above exp(z99^2/2)) or p99 <= mean.
std::optional<double> lognormal_sigma(double mean, double p99);
// The largest p99/mean ratio a lognormal can have.
double lognormal_max_p99_ratio();

std::vector<RequestSpec> make_request_stream(const ServingWorkload& workload);

}  // namespace stepcast::serving
