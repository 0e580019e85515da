// Goodput (model/goodput.h): data-loader bottleneck, stragglers as the maximum over ranks,
// checkpoint cost, failures and restarts, each against its source; and the predictor's report of
// effective tokens per day next to the ideal.

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "model/goodput.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"

using namespace stepcast;

namespace {

GoodputInputs base_inputs() {
  GoodputInputs in;
  in.step_time = Seconds(10.0);
  in.tokens_per_step = 1.0e6;
  in.global_batch = 512;
  in.dp = 64;
  in.gpus = 1024;
  in.nodes = 128;
  in.checkpoint_size = Bytes(1.0e12);
  return in;
}

}  // namespace

TEST_CASE("the expected largest of n standard normals matches the tabulated order statistics") {
  // Exact E[max of n] (Harter 1961, Biometrika 48, Table 1; Tippett 1925): n = 10: 1.53875,
  // n = 100: 2.50759, n = 1000: 3.24144. Blom's approximation is within 1% there; at n = 2 the exact
  // value is 1/sqrt(pi) = 0.56419 and Blom's 0.5894 is 4.5% high.
  CHECK(expected_max_standard_normal(1) == 0.0);
  CHECK(expected_max_standard_normal(10) == doctest::Approx(1.53875).epsilon(0.01));
  CHECK(expected_max_standard_normal(100) == doctest::Approx(2.50759).epsilon(0.01));
  CHECK(expected_max_standard_normal(1000) == doctest::Approx(3.24144).epsilon(0.01));
  CHECK(expected_max_standard_normal(2) == doctest::Approx(1.0 / std::sqrt(M_PI)).epsilon(0.05));
  // The inverse CDF itself: Phi^-1(0.975) = 1.959964, Phi^-1(0.5) = 0.
  CHECK(inverse_normal_cdf(0.975) == doctest::Approx(1.959964).epsilon(1e-6));
  CHECK(inverse_normal_cdf(0.5) == doctest::Approx(0.0).epsilon(1e-9));
}

TEST_CASE("no goodput terms: the effective throughput is the ideal one") {
  const GoodputEstimate e = estimate_goodput(base_inputs());
  CHECK(e.goodput_fraction == 1.0);
  CHECK(e.effective_step == Seconds(10.0));
  // 1e6 tokens per 10 s step: 8.64e9 tokens per day.
  CHECK(e.ideal_tokens_per_day == doctest::Approx(8.64e9));
  CHECK(e.effective_tokens_per_day == doctest::Approx(e.ideal_tokens_per_day));
}

TEST_CASE("a data loader slower than the step sets the step; a faster one costs nothing") {
  GoodputInputs in = base_inputs();
  // Each of the 64 replicas needs 512 / 64 = 8 samples per step.
  in.config.dataloader_samples_per_s = 0.5;  // 16 s for 8 samples: 6 s of waiting per step
  GoodputEstimate e = estimate_goodput(in);
  CHECK(e.data_wait.value() == doctest::Approx(6.0));
  CHECK(e.goodput_fraction == doctest::Approx(10.0 / 16.0));
  in.config.dataloader_samples_per_s = 1.0;  // 8 s < 10 s: prefetched under the step
  e = estimate_goodput(in);
  CHECK(e.data_wait.value() == 0.0);
  CHECK(e.goodput_fraction == 1.0);
}

TEST_CASE("stragglers: the step is the expected maximum over every rank of its step-time distribution") {
  GoodputInputs in = base_inputs();
  in.config.straggler_cv = 0.02;
  const GoodputEstimate e = estimate_goodput(in);
  // 1024 ranks: E[max] ~ 3.25 sigma (Blom) -> 10 s x 0.02 x 3.25 = 0.65 s per step.
  CHECK(e.straggler_delay.value() == doctest::Approx(10.0 * 0.02 * expected_max_standard_normal(1024)));
  CHECK(e.straggler_delay.value() == doctest::Approx(0.65).epsilon(0.01));
  // More ranks, slower steps.
  in.gpus = 16384;
  CHECK(estimate_goodput(in).straggler_delay > e.straggler_delay);
}

TEST_CASE("checkpoints cost their blocking save time once per interval") {
  GoodputInputs in = base_inputs();
  in.config.checkpoint_interval = Seconds(1800.0);
  in.config.checkpoint_write_bandwidth = Bandwidth(1.0e9);  // 1 GB/s per node
  const GoodputEstimate e = estimate_goodput(in);
  // 1 TB written by 128 nodes at 1 GB/s: 7.8125 s, once per 1800 s.
  CHECK(e.checkpoint_save.value() == doctest::Approx(7.8125));
  CHECK(e.checkpoint_waste == doctest::Approx(7.8125 / 1800.0));
  CHECK(e.goodput_fraction == doctest::Approx(1.0 / (1.0 + 7.8125 / 1800.0)));
}

TEST_CASE("failures: Llama 3's 419 unexpected interruptions in 54 days on 16,384 GPUs") {
  // Llama 3 paper (arXiv:2407.21783) Sec. 3.3.4: "During a 54-day snapshot period of pre-training,
  // we experienced a total of 466 job interruptions ... 419 unexpected". An MTBF per GPU of
  // 16384 x 54 x 24 h / 419 = 50,677 h gives the same failure rate back.
  GoodputInputs in = base_inputs();
  in.gpus = 16384;
  in.config.gpu_mtbf_hours = 16384.0 * 54.0 * 24.0 / 419.0;
  in.config.restart_time = Seconds(600.0);
  in.config.checkpoint_interval = Seconds(3600.0);
  in.config.checkpoint_write_bandwidth = Bandwidth(2.0e9);
  const GoodputEstimate e = estimate_goodput(in);
  CHECK(e.failures_per_day == doctest::Approx(419.0 / 54.0));
  // Each failure costs the restart plus half an interval: lambda (600 + 1800) s.
  const double rate = 419.0 / (54.0 * 86400.0);
  CHECK(e.failure_waste == doctest::Approx(rate * 2400.0));
  // Young's optimum sqrt(2 delta / lambda): delta = 1e12 / (128 x 2e9) = 3.906 s.
  CHECK(e.optimal_checkpoint_interval.value() == doctest::Approx(std::sqrt(2.0 * 3.90625 / rate)));
  // Llama 3 reports "higher than 90% effective training time" on this snapshot: the terms here
  // (a 10-minute restart, hourly checkpoints) lose 22%; the paper's restarts were faster.
  CHECK(e.goodput_fraction == doctest::Approx(1.0 / (1.0 + 3.90625 / 3600.0 + rate * 2400.0)));
  CHECK(e.effective_tokens_per_day < e.ideal_tokens_per_day);
}

TEST_CASE("the training prediction reports effective tokens per day next to the ideal") {
  const std::vector<Override> o = {{"training.goodput.straggler_cv", "0.01"},
                                   {"training.goodput.gpu_mtbf", "50000 h"},
                                   {"training.goodput.restart_time", "10 min"},
                                   {"training.goodput.checkpoint_interval", "1 h"},
                                   {"training.goodput.checkpoint_write_bandwidth", "1 GB/s"}};
  const TrainingPrediction ideal = predict_training(load_scenario("gpt3-175b-selene"));
  const TrainingPrediction real = predict_training(load_scenario("gpt3-175b-selene", o));
  CHECK(ideal.goodput.goodput_fraction == 1.0);
  CHECK(ideal.goodput.ideal_tokens_per_day == doctest::Approx(ideal.tokens_per_s * 86400.0));
  CHECK(real.step_time == ideal.step_time);  // the step itself is unchanged
  CHECK(real.goodput.ideal_tokens_per_day == doctest::Approx(ideal.goodput.ideal_tokens_per_day));
  CHECK(real.goodput.effective_tokens_per_day < 0.99 * real.goodput.ideal_tokens_per_day);
  CHECK(real.goodput.checkpoint_save.value() > 0.0);  // derived from the model states
  MESSAGE("GPT-3 175B on 1024 A100s: ideal " << real.goodput.ideal_tokens_per_day / 1e9 << " B tokens/day, effective "
                                             << real.goodput.effective_tokens_per_day / 1e9 << " ("
                                             << 100.0 * real.goodput.goodput_fraction << "%)");
}
