#pragma once
// Goodput: what a training run delivers per day once the terms outside the step are counted.
//
// A prediction's step time is the time of one optimizer step when every rank is on time, the input
// pipeline keeps up and nothing fails. Real runs lose time four ways (issue 8, item 6):
//
//   data loading    the loader prefetches while the GPUs compute, so it costs only what it is
//                   slower than the step: per replica it must deliver global_batch / dp samples
//                   each step; step' = max(step, (global_batch / dp) / rate).
//   stragglers      a synchronous step ends when the slowest rank ends: with per-rank step times
//                   N(mu, (cv mu)^2), the step is E[max of n ranks] = mu + cv mu E[Z_(n:n)], the
//                   expected largest of n standard normals, by Blom's approximation
//                   Phi^-1((n - 0.375) / (n + 0.25)) (Blom 1958, "Statistical estimates and
//                   transformed beta-variables"; within 1% of the exact values for n >= 2).
//   checkpoints     a blocking save of `size` bytes written by every node in parallel at its
//                   write bandwidth takes delta = size / (nodes x bandwidth); once per interval
//                   tau it costs delta / tau of the time.
//   failures        the job fails at rate lambda = gpus / MTBF_gpu; each failure costs the restart
//                   R plus the work since the last checkpoint, tau / 2 on average. First-order
//                   waste per unit of useful work: delta / tau + lambda (R + tau / 2) (Young 1974,
//                   "A first order approximation to the optimum checkpoint interval", CACM 17(9),
//                   whose optimum is tau* = sqrt(2 delta / lambda)).
//
// Effective throughput per day = ideal tokens per day x (step / step') x 1 / (1 + waste).
// Units: SI seconds and bytes; rates per second; MTBF in hours as the scenario states it.

#include "model/units.h"
#include "model/workload.h"

namespace stepcast {

struct GoodputInputs {
  Seconds step_time;         // the predicted (ideal) step
  double tokens_per_step = 0.0;
  int global_batch = 1;      // sequences per step
  int dp = 1;                // data-parallel replicas (each with its own loader)
  int gpus = 1;              // ranks that synchronise every step
  int nodes = 1;             // nodes writing the checkpoint in parallel
  Bytes checkpoint_size;     // whole job; used when the config gives none
  TrainingWorkload::Goodput config;
};

struct GoodputEstimate {
  Seconds step_time;            // ideal
  Seconds data_wait;            // per step, beyond the step itself
  Seconds straggler_delay;      // per step: E[max over ranks] - mean
  Seconds effective_step;       // step + data wait + straggler delay
  Seconds checkpoint_save;      // one blocking save
  double checkpoint_waste = 0.0;  // save / interval
  double failures_per_day = 0.0;
  double failure_waste = 0.0;     // lambda (restart + interval / 2)
  Seconds optimal_checkpoint_interval;  // Young's tau*; zero without failures or saves
  double goodput_fraction = 1.0;  // effective over ideal throughput
  double ideal_tokens_per_day = 0.0;
  double effective_tokens_per_day = 0.0;
  [[nodiscard]] bool any() const { return goodput_fraction < 1.0; }
};

// Expected largest of n independent standard normal samples (Blom's approximation); 0 for n <= 1.
double expected_max_standard_normal(int n);

// Inverse of the standard normal CDF, for 0 < p < 1.
double inverse_normal_cdf(double p);

GoodputEstimate estimate_goodput(const GoodputInputs& in);

}  // namespace stepcast
