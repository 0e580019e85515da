#include <doctest/doctest.h>

#include <vector>

#include "simulator/pipeline_schedule.h"
#include "tests/support/pipeline_specs.h"

using namespace stepcast;

TEST_CASE("1F1B and GPipe makespans on identical stages equal (m + p - 1)(f + b): bubble (p-1)/m") {
  PipelineSimulator sim;
  for (int p : {2, 4, 8}) {
    for (int m : {1, 4, 8, 32}) {
      const test::UniformStages u(p, 1, 1.0, 2.0);
      for (auto schedule : {PipelineSchedule::one_f_one_b, PipelineSchedule::gpipe}) {
        const auto& r = sim.run(test::uniform_spec(u, schedule, p, 1, m));
        CHECK(r.makespan.value() == doctest::Approx((m + p - 1) * 3.0));
        CHECK(r.makespan.value() ==
              doctest::Approx(closed_form_makespan(schedule, p, 1, m, Seconds(1.0), Seconds(2.0)).value()));
        const double bubble = r.makespan.value() / (m * 3.0) - 1.0;
        CHECK(bubble == doctest::Approx(closed_form_bubble_fraction(schedule, p, 1, m)));
      }
    }
  }
}

TEST_CASE("interleaved 1F1B shrinks the bubble to (p-1)/(v m)") {
  PipelineSimulator sim;
  for (int p : {2, 4, 8}) {
    for (int v : {2, 3}) {
      for (int m : {p, 2 * p, 4 * p}) {
        CAPTURE(p);
        CAPTURE(v);
        CAPTURE(m);
        const test::UniformStages u(p, v, 1.0, 2.0);
        const auto& r = sim.run(test::uniform_spec(u, PipelineSchedule::one_f_one_b, p, v, m));
        const double bubble = r.makespan.value() / (m * 3.0) - 1.0;
        CHECK(bubble == doctest::Approx(static_cast<double>(p - 1) / (v * m)));
      }
    }
  }
}

TEST_CASE("1F1B keeps p - s micro-batches in flight on stage s, GPipe all m") {
  PipelineSimulator sim;
  const int p = 8, m = 32;
  const test::UniformStages u(p, 1, 1.0, 2.0);
  const auto& r = sim.run(test::uniform_spec(u, PipelineSchedule::one_f_one_b, p, 1, m));
  for (int s = 0; s < p; ++s) CHECK(r.peak_in_flight[static_cast<std::size_t>(s)] == p - s);
  const auto& g = sim.run(test::uniform_spec(u, PipelineSchedule::gpipe, p, 1, m));
  CHECK(g.peak_in_flight[0] == m);
}

TEST_CASE("interleaving multiplies stage 0's activation memory by 1 + (p-1)/(p v)") {
  // Korthikanti et al. 2022, Sec. 4.2.3: stage 0 holds (p - 1) 2 + (v - 1) p + 1 chunk
  // micro-batches of L/(p v) layers each, i.e. L (1 + (p - 1)/(p v)) layers' worth.
  PipelineSimulator sim;
  const int p = 8, v = 3, m = 24;
  const test::UniformStages u(p, v, 1.0, 2.0);  // 1 byte per chunk micro-batch
  const auto& r = sim.run(test::uniform_spec(u, PipelineSchedule::one_f_one_b, p, v, m));
  const double per_layer = 1.0;  // chunk of L/(p v) layers holds one unit
  const double expected_units = p * v * (1.0 + (p - 1.0) / (p * v));  // in chunk units: v p + p - 1
  CHECK(r.peak_in_flight[0] == v * p + p - 1);
  CHECK(r.peak_activations[0].value() == doctest::Approx(expected_units * per_layer));
}

TEST_CASE("p2p latency lengthens the pipeline and unequal stages are bounded by the slowest") {
  PipelineSimulator sim;
  const int p = 4, m = 16;
  test::UniformStages u(p, 1, 1.0, 2.0);
  PipelineSpec s = test::uniform_spec(u, PipelineSchedule::one_f_one_b, p, 1, m);
  const double free = sim.run(s).makespan.value();
  s.p2p = Seconds(0.1);
  const double with_p2p = sim.run(s).makespan.value();
  CHECK(with_p2p > free);
  CHECK(with_p2p >= free + 2 * (p - 1) * 0.1 - 1e-12);  // fill and drain cross every boundary
  // A slow last stage (the logits): the makespan is at least m times its per-micro-batch time.
  u.forward.back() = Seconds(2.0);
  s.p2p = Seconds(0.0);
  s.forward = u.forward;
  const auto& r = sim.run(s);
  CHECK(r.makespan.value() >= m * 4.0);
  // Event simulation and the flow-shop bound agree when one stage dominates:
  // sum of the stages' f + b plus (m - 1) times the slowest stage's f + b.
  CHECK(r.makespan.value() == doctest::Approx(3.0 * (p - 1) + 4.0 + (m - 1) * 4.0));
}

TEST_CASE("the timeline has one forward and one backward bar per micro-batch, chunk and stage") {
  PipelineSimulator sim;
  const int p = 4, v = 2, m = 8;
  const test::UniformStages u(p, v, 1.0, 2.0);
  PipelineSpec s = test::uniform_spec(u, PipelineSchedule::one_f_one_b, p, v, m);
  s.record_timeline = true;
  const auto& r = sim.run(s);
  CHECK(r.timeline.size() == static_cast<std::size_t>(2 * p * v * m));
  for (const auto& e : r.timeline) CHECK(e.end > e.start);
}

TEST_CASE("interleaved 1F1B starts chunk c's first forward on stage 0 after p forwards of each earlier chunk") {
  // Megatron's interleaved order sends groups of p micro-batches through chunk 0, then chunk 1, ...:
  // on stage 0 (no upstream wait), with chunk forwards of f / v, chunk c's first forward runs in
  // [c p f / v, (c p + 1) f / v).
  const int p = 4;
  const int v = 3;
  const double f = 1.0;
  const test::UniformStages u(p, v, f, 2.0);  // each chunk: f / v forward, 2 / v backward
  PipelineSimulator sim;
  const PipelineResult& r = sim.run(test::uniform_spec(u, PipelineSchedule::one_f_one_b, p, v, 8));
  const double chunk_forward = f / v;
  for (int c = 0; c < v; ++c) {
    CAPTURE(c);
    CHECK(r.chunk_first_forward_start[static_cast<std::size_t>(c * p)].value() == doctest::Approx(c * p * chunk_forward));
    CHECK(r.chunk_first_forward_end[static_cast<std::size_t>(c * p)].value() == doctest::Approx((c * p + 1) * chunk_forward));
  }
  // Stage s waits for s upstream chunk-0 forwards (no transfer time): its chunk 0 starts at s f / v.
  CHECK(r.chunk_first_forward_start[2].value() == doctest::Approx(2 * chunk_forward));
}
