// The search's fast path (TrainingPredictor::screen): its memory must be exactly predict()'s, and
// its step-time bound must never exceed predict()'s step time; otherwise a search could drop the
// optimum. The pipeline bound rests on the closed form being exact for identical stages, which is
// checked here against the event simulation over every valid shape up to 40 micro-batches.

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "simulator/collective_models.h"
#include "simulator/diagnostics.h"
#include "simulator/pipeline_schedule.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/pipeline_specs.h"

using namespace stepcast;

namespace {

// Valid shapes: interleaving needs 1F1B and a micro-batch count that is a multiple of p.
bool valid_shape(PipelineSchedule schedule, int p, int v, int m) {
  if (v > 1 && (p == 1 || schedule != PipelineSchedule::one_f_one_b || m % p != 0)) return false;
  return true;
}

}  // namespace

TEST_CASE("identical stages: GPipe, 1F1B and interleaved 1F1B simulate to exactly the closed form") {
  PipelineSimulator sim;
  int shapes = 0;
  for (auto schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    for (int p : {1, 2, 3, 4, 8, 16}) {
      for (int v : {1, 2, 3, 4}) {
        for (int m = 1; m <= 40; ++m) {
          if (!valid_shape(schedule, p, v, m)) continue;
          for (double ratio : {1.0, 2.0, 2.7, 3.0}) {  // backward/forward: plain, selective, full recompute
            const std::vector<Seconds> f(static_cast<std::size_t>(p * v), Seconds(1.0));
            const std::vector<Seconds> b(static_cast<std::size_t>(p * v), Seconds(ratio));
            const double simulated = sim.run(test::pipeline_spec(schedule, p, v, m, f, b)).makespan.value();
            const double closed = closed_form_makespan(schedule, p, v, m, Seconds(v * 1.0), Seconds(v * ratio)).value();
            CAPTURE(p);
            CAPTURE(v);
            CAPTURE(m);
            CHECK(simulated == doctest::Approx(closed).epsilon(1e-12));
            ++shapes;
          }
        }
      }
    }
  }
  CHECK(shapes > 1000);
}

TEST_CASE("the makespan lower bound never exceeds the simulation, for any stage times and transfers") {
  PipelineSimulator sim;
  std::mt19937 rng(20240611);
  std::uniform_real_distribution<double> time(0.5, 3.0);
  std::uniform_real_distribution<double> transfer(0.0, 0.4);
  const PipelineSchedule schedules[] = {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::zb_h1,
                                        PipelineSchedule::zb_h2, PipelineSchedule::dualpipe};
  int cases = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const PipelineSchedule schedule = schedules[trial % 5];
    const bool dualpipe = schedule == PipelineSchedule::dualpipe;
    const int p = dualpipe ? 2 * (1 + static_cast<int>(rng() % 4)) : 1 + static_cast<int>(rng() % 8);
    const int v = dualpipe ? 2 : schedule == PipelineSchedule::one_f_one_b && p > 1 ? 1 + static_cast<int>(rng() % 3) : 1;
    const int m = dualpipe ? 2 * p + 2 * static_cast<int>(rng() % 8)
                  : v > 1  ? p * (1 + static_cast<int>(rng() % 4))
                           : 1 + static_cast<int>(rng() % 24);
    REQUIRE(pipeline_shape_problem(schedule, p, v, m).empty());
    std::vector<Seconds> f(static_cast<std::size_t>(p * v));
    std::vector<Seconds> b(static_cast<std::size_t>(p * v));
    for (auto& x : f) x = Seconds(time(rng));
    for (auto& x : b) x = Seconds(2.0 * time(rng));
    std::vector<Seconds> w(static_cast<std::size_t>(p * v));
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = b[i] * 0.4;
    PipelineSpec spec = test::pipeline_spec(schedule, p, v, m, f, b);
    spec.p2p = Seconds(transfer(rng));
    spec.weight_gradient = w;
    const double bound = PipelineSimulator::makespan_lower_bound(spec).value();
    const double simulated = sim.run(spec).makespan.value();
    CAPTURE(trial);
    CHECK(bound <= simulated * (1.0 + 1e-12));
    ++cases;
  }
  CHECK(cases == 3000);
}

TEST_CASE("screen() gives predict()'s memory exactly and a step-time bound that is never above the step") {
  // Layouts of three catalog scenarios (dense MHA with tied embeddings, GQA/SwiGLU, MoE), across
  // TP, PP, interleaving, micro-batch, recompute, ZeRO, schedule and sequence parallelism.
  TrainingPredictor predictor;
  TrainingPredictor screener;
  int checked = 0;
  double tightest = 0.0;
  for (const char* base : {"gpt3-175b-selene", "llama3-70b-h100", "mixtral-8x7b-ep"}) {
    for (const char* tp : {"2", "8"}) {
      for (const char* pp : {"1", "2", "4"}) {
        for (const char* vpp : {"1", "2"}) {
          for (const char* mb : {"1", "2"}) {
            for (const char* rc : {"none", "selective", "full"}) {
              for (const char* zero : {"0", "1", "3"}) {
                for (const char* schedule : {"1f1b", "gpipe"}) {
                  const std::vector<Override> o = {{"parallel.tp", tp},          {"parallel.pp", pp},
                                                   {"parallel.vpp", vpp},        {"training.micro_batch", mb},
                                                   {"parallel.recompute", rc},   {"parallel.zero", zero},
                                                   {"parallel.schedule", schedule}};
                  Scenario sc;
                  try {
                    sc = load_scenario(base, o);
                  } catch (const InputError&) {
                    continue;  // an inconsistent combination
                  }
                  const auto net = make_collective_model(default_collective_model(), sc.system, predictor.parameters());
                  const TrainingPrediction full = predictor.predict(sc, *net);
                  const TrainingScreen quick = screener.screen(sc, *net);
                  CAPTURE(base);
                  CAPTURE(tp);
                  CAPTURE(pp);
                  CAPTURE(vpp);
                  CAPTURE(mb);
                  CAPTURE(rc);
                  CAPTURE(zero);
                  CAPTURE(schedule);
                  CHECK(quick.memory.peak == full.memory.peak);
                  CHECK(quick.memory.activations == full.memory.activations);
                  CHECK(quick.memory.weights == full.memory.weights);
                  CHECK(quick.memory.optimizer_states == full.memory.optimizer_states);
                  CHECK(quick.peak_stage == full.peak_stage);
                  CHECK(quick.fits == full.fits);
                  CHECK(quick.step_time_lower_bound <= full.step_time);
                  tightest = std::max(tightest, quick.step_time_lower_bound / full.step_time);
                  ++checked;
                }
              }
            }
          }
        }
      }
    }
  }
  CHECK(checked > 300);
  // The bound is useful, not only valid: for some layouts it is within 10% of the step.
  CHECK(tightest > 0.9);
}

TEST_CASE("the periodic hold pattern gives the same peak activations as walking every pass") {
  // Every valid shape up to p = 16, v = 4, m = 64, with distinct activation sizes per virtual stage
  // (first and last heavier, as with embeddings and logits), for each schedule's order.
  PipelineSimulator sim;
  int shapes = 0;
  for (auto schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::zb_h1}) {
    for (int p : {1, 2, 3, 4, 8, 16}) {
      for (int v : {1, 2, 3, 4}) {
        for (int m = 1; m <= 64; m += (m < 12 ? 1 : 7)) {
          if (v > 1 && (p == 1 || schedule != PipelineSchedule::one_f_one_b || m % p != 0)) continue;
          const auto n = static_cast<std::size_t>(p * v);
          std::vector<Seconds> f(n, Seconds(1.0));
          std::vector<Seconds> b(n, Seconds(2.0));
          std::vector<Bytes> a(n);
          for (std::size_t i = 0; i < n; ++i) a[i] = Bytes(1000.0 + 37.0 * static_cast<double>(i * i % 11));
          a.front() += Bytes(500.0);
          a.back() += Bytes(900.0);
          PipelineSpec spec = test::pipeline_spec(schedule, p, v, m, f, b);
          spec.activations = a;
          const std::vector<Bytes> walked = detail::peak_activations_by_walking(spec);
          const auto fast = sim.peak_activations(spec);
          CAPTURE(p);
          CAPTURE(v);
          CAPTURE(m);
          REQUIRE(fast.size() == walked.size());
          for (std::size_t s = 0; s < walked.size(); ++s) CHECK(fast[s] == walked[s]);
          ++shapes;
        }
      }
    }
  }
  CHECK(shapes > 300);
}
