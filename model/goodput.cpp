#include "model/goodput.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace stepcast {

double inverse_normal_cdf(double p) {
  assert(p > 0.0 && p < 1.0);
  // Newton's method on Phi(x) - p from a logistic start; Phi from std::erfc (exact to double
  // precision), so the result is as exact as the iteration converges (|dx| < 1e-12).
  const double kSqrt2 = std::sqrt(2.0);
  const double kInvSqrt2Pi = 1.0 / std::sqrt(2.0 * M_PI);
  double x = std::log(p / (1.0 - p)) / 1.702;  // the logistic approximation of the normal
  for (int i = 0; i < 60; ++i) {
    const double cdf = 0.5 * std::erfc(-x / kSqrt2);
    const double pdf = kInvSqrt2Pi * std::exp(-0.5 * x * x);
    if (pdf <= 0.0) break;
    const double dx = (cdf - p) / pdf;
    x -= std::clamp(dx, -1.0, 1.0);
    if (std::abs(dx) < 1e-12) break;
  }
  return x;
}

double expected_max_standard_normal(int n) {
  if (n <= 1) return 0.0;
  const double p = (n - 0.375) / (n + 0.25);
  return inverse_normal_cdf(p);
}

GoodputEstimate estimate_goodput(const GoodputInputs& in) {
  const TrainingWorkload::Goodput& g = in.config;
  GoodputEstimate e;
  e.step_time = in.step_time;
  const double step = in.step_time.value();

  if (g.dataloader_samples_per_s > 0.0) {
    const double per_replica = static_cast<double>(in.global_batch) / std::max(in.dp, 1);
    e.data_wait = Seconds(std::max(0.0, per_replica / g.dataloader_samples_per_s - step));
  }
  if (g.straggler_cv > 0.0) {
    e.straggler_delay = Seconds(step * g.straggler_cv * expected_max_standard_normal(in.gpus));
  }
  e.effective_step = in.step_time + e.data_wait + e.straggler_delay;

  const double interval = g.checkpoint_interval.value();
  const Bytes size = g.checkpoint_size.value() > 0.0 ? g.checkpoint_size : in.checkpoint_size;
  if (interval > 0.0 && g.checkpoint_write_bandwidth.value() > 0.0) {
    e.checkpoint_save = Seconds(size.value() / (std::max(in.nodes, 1) * g.checkpoint_write_bandwidth.value()));
    e.checkpoint_waste = e.checkpoint_save.value() / interval;
  }
  if (g.gpu_mtbf_hours > 0.0) {
    const double rate = in.gpus / (g.gpu_mtbf_hours * 3600.0);  // failures per second
    e.failures_per_day = rate * 86400.0;
    // Without checkpoints a failure loses everything since the start: not a steady state; only
    // the restart is counted then, and the report says so (the caller adds the note).
    e.failure_waste = rate * (g.restart_time.value() + 0.5 * interval);
    if (e.checkpoint_save.value() > 0.0) e.optimal_checkpoint_interval = Seconds(std::sqrt(2.0 * e.checkpoint_save.value() / rate));
  }
  const double step_ratio = e.effective_step.value() > 0.0 ? step / e.effective_step.value() : 1.0;
  e.goodput_fraction = step_ratio / (1.0 + e.checkpoint_waste + e.failure_waste);
  e.ideal_tokens_per_day = step > 0.0 ? in.tokens_per_step / step * 86400.0 : 0.0;
  e.effective_tokens_per_day = e.ideal_tokens_per_day * e.goodput_fraction;
  return e;
}

}  // namespace stepcast
