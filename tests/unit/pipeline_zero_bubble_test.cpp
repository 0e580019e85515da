// Zero-bubble (ZB-H1, ZB-H2; Qi et al. 2023, arXiv:2401.10241) and DualPipe (DeepSeek-V3 report,
// arXiv:2412.19437, Sec. 3.2.1) in the event simulation: their bubbles against the papers' closed
// forms, their activation memory against the papers' in-flight counts, and the shape of their orders.
//
// Notation: f forward, b the whole backward of one micro-batch on one stage, w the weight-gradient
// part of b (the papers' T_B is b - w). Identical stages, free p2p, times in arbitrary units.

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "simulator/pipeline_schedule.h"
#include "tests/support/pipeline_specs.h"

using namespace stepcast;

namespace {

struct Stages {
  std::vector<Seconds> forward, backward, weight;
  std::vector<Bytes> activations;
  Stages(int virtual_stages, double f, double b, double w)
      : forward(static_cast<std::size_t>(virtual_stages), Seconds(f)),
        backward(static_cast<std::size_t>(virtual_stages), Seconds(b)),
        weight(static_cast<std::size_t>(virtual_stages), Seconds(w)),
        activations(static_cast<std::size_t>(virtual_stages), Bytes(1.0)) {}
};

PipelineSpec spec_of(const Stages& s, PipelineSchedule schedule, int p, int m) {
  PipelineSpec spec = test::pipeline_spec(schedule, p, pipeline_chunks(schedule, 1), m, s.forward, s.backward);
  spec.weight_gradient = s.weight;
  spec.activations = s.activations;
  return spec;
}

// Makespan minus the ideal m (f + b): the bubble of a step whose stages start together.
double bubble(const PipelineResult& r, int m, double f, double b) { return r.makespan.value() - m * (f + b); }

// The longest stage span (first pass start to last pass end) minus the ideal: the bubble when
// stages need not start together (ZB's optimizer post-validation: the "parallelogram").
double span_bubble(const PipelineResult& r, int m, double f, double b) {
  double span = 0.0;
  for (std::size_t s = 0; s < r.finish.size(); ++s) span = std::max(span, (r.finish[s] - r.first_start[s]).value());
  return span - m * (f + b);
}

int max_in_flight(const PipelineResult& r) { return *std::max_element(r.peak_in_flight.begin(), r.peak_in_flight.end()); }

}  // namespace

TEST_CASE("ZB-H1's bubble is (p-1)(T_F + T_B - T_W), 1F1B's (p-1)(T_F + T_B + T_W) (Qi et al. 2023, Table 1)") {
  // With T_B = b - w: ZB-H1 (p-1)(f + b - 2w), 1F1B (p-1)(f + b), exactly in the simulation.
  PipelineSimulator sim;
  for (int p : {2, 4, 8, 16}) {
    for (int m : {p, 2 * p, 64}) {
      for (double w : {0.0, 0.5, 0.8, 1.0}) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(w);
        const double f = 1.0, b = 2.0;
        const Stages st(p, f, b, w);
        const double zb = bubble(sim.run(spec_of(st, PipelineSchedule::zb_h1, p, m)), m, f, b);
        CHECK(zb == doctest::Approx((p - 1) * (f + b - 2.0 * w)));
        CHECK(zb == doctest::Approx(closed_form_bubble(PipelineSchedule::zb_h1, p, 1, Seconds(f), Seconds(b), Seconds(w)).value()));
        const double one = bubble(sim.run(spec_of(st, PipelineSchedule::one_f_one_b, p, m)), m, f, b);
        CHECK(one == doctest::Approx((p - 1) * (f + b)));
      }
    }
  }
}

TEST_CASE("with T_F = T_B = T_W, ZB-H1 has a third of 1F1B's bubble: (p-1)/(3m) of the step (the ZB README table)") {
  PipelineSimulator sim;
  const int p = 8, m = 24;
  const Stages st(p, 1.0, 2.0, 1.0);
  const double ideal = m * 3.0;
  const double zb = bubble(sim.run(spec_of(st, PipelineSchedule::zb_h1, p, m)), m, 1.0, 2.0) / ideal;
  const double one = bubble(sim.run(spec_of(st, PipelineSchedule::one_f_one_b, p, m)), m, 1.0, 2.0) / ideal;
  CHECK(zb == doctest::Approx((p - 1) / (3.0 * m)));
  CHECK(one == doctest::Approx((p - 1) / static_cast<double>(m)));
}

TEST_CASE("ZB-H2's stage span has the bubble (p-1)(T_F + T_B - 2T_W), zero when the three are equal") {
  // Qi et al. 2023, Table 1, for a schedule whose stages need not start together ("parallelogram",
  // optimizer post-validation). With stages synchronised at the step start (how the predictor
  // counts a step), the last stage still waits (p-1) f for its first input:
  // bubble (p-1) max(f, f + b - 3w).
  PipelineSimulator sim;
  for (int p : {2, 4, 8, 16}) {
    for (int m : {2 * p, 64}) {
      for (double w : {0.5, 0.6, 0.8, 1.0}) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(w);
        const double f = 1.0, b = 2.0;
        const PipelineResult& r = sim.run(spec_of(Stages(p, f, b, w), PipelineSchedule::zb_h2, p, m));
        const double paper = std::max(0.0, (p - 1) * (f + b - 3.0 * w));
        CHECK(span_bubble(r, m, f, b) == doctest::Approx(paper).epsilon(1e-9).scale(1.0));
        CHECK(paper == doctest::Approx(closed_form_bubble(PipelineSchedule::zb_h2, p, 1, Seconds(f), Seconds(b), Seconds(w)).value()));
        CHECK(bubble(r, m, f, b) == doctest::Approx((p - 1) * std::max(f, f + b - 3.0 * w)));
      }
    }
  }
}

TEST_CASE("DualPipe's bubble is (PP/2 - 1)(F&B + B - 3W) when F = B_input = W (DeepSeek-V3 report, Table 2)") {
  // F&B, an overlapped forward-backward pair, takes f + b on the stage here (its overlap hides
  // communication). With f = b - w = w = 1: (p/2 - 1)(3 + 2 - 3) = 2 (p/2 - 1).
  PipelineSimulator sim;
  for (int p : {2, 4, 8, 16}) {
    for (int m : {2 * p, 4 * p, 64}) {
      CAPTURE(p);
      CAPTURE(m);
      const double f = 1.0, b = 2.0, w = 1.0;
      const double simulated = bubble(sim.run(spec_of(Stages(2 * p, f, b, w), PipelineSchedule::dualpipe, p, m)), m, f, b);
      CHECK(simulated == doctest::Approx((p / 2.0 - 1.0) * ((f + b) + b - 3.0 * w)).scale(1.0));
      CHECK(simulated == doctest::Approx(closed_form_bubble(PipelineSchedule::dualpipe, p, 2, Seconds(f), Seconds(b), Seconds(w)).value()).scale(1.0));
    }
  }
}

TEST_CASE("DualPipe never exceeds the paper's bubble for other weight-gradient shares") {
  // The table's expression is what DeepSeek quote for the schedule; the simulation may fill a few
  // idle slots better where W is not equal to F (up to (p/2 - 1)/2 here), never worse.
  PipelineSimulator sim;
  for (int p : {4, 8, 16}) {
    for (double w : {0.5, 0.6, 0.8}) {
      CAPTURE(p);
      CAPTURE(w);
      const int m = 64;
      const double f = 1.0, b = 2.0;
      const double simulated = bubble(sim.run(spec_of(Stages(2 * p, f, b, w), PipelineSchedule::dualpipe, p, m)), m, f, b);
      const double paper = closed_form_bubble(PipelineSchedule::dualpipe, p, 2, Seconds(f), Seconds(b), Seconds(w)).value();
      CHECK(simulated <= paper + 1e-9);
      CHECK(simulated >= paper - (p / 2.0 - 1.0) * 0.5 - 1e-9);
    }
  }
}

TEST_CASE("activation memory in micro-batches held: 1F1B and ZB-H1 p, ZB-H2 2p - 1, DualPipe p + 1") {
  // Qi et al. 2023, Table 1 (peak memory p M_B, p M_B, (2p - 1) M_B) and DeepSeek-V3 Table 2
  // (activation PP, PP and PP + 1 for 1F1B, ZB1P and DualPipe; DualPipe's chunk is one stage).
  PipelineSimulator sim;
  for (int p : {2, 4, 8, 16}) {
    const int m = 4 * p;
    CAPTURE(p);
    const Stages one(p, 1.0, 2.0, 1.0);
    const Stages two(2 * p, 1.0, 2.0, 1.0);
    const PipelineResult& a = sim.run(spec_of(one, PipelineSchedule::one_f_one_b, p, m));
    CHECK(max_in_flight(a) == p);
    CHECK(a.peak_in_flight[0] == p);
    const PipelineResult& h1 = sim.run(spec_of(one, PipelineSchedule::zb_h1, p, m));
    CHECK(max_in_flight(h1) == p);
    CHECK(h1.peak_activations[0].value() == doctest::Approx(p));
    const PipelineResult& h2 = sim.run(spec_of(one, PipelineSchedule::zb_h2, p, m));
    CHECK(max_in_flight(h2) == 2 * p - 1);
    CHECK(h2.peak_activations[0].value() == doctest::Approx(2 * p - 1));
    const PipelineResult& dual = sim.run(spec_of(two, PipelineSchedule::dualpipe, p, m));
    CHECK(max_in_flight(dual) == p + 1);
    // Both ends hold the most; each middle rank one chunk more than its 1F1B counterpart at most.
    CHECK(dual.peak_in_flight.front() == p + 1);
    CHECK(dual.peak_in_flight.back() == p + 1);
  }
}

TEST_CASE("16 stages, 64 micro-batches: ZB-H1, ZB-H2 and DualPipe have less bubble than 1F1B (issue 8's bar)") {
  // Realistic pass times: backward twice the forward, weight gradients half the backward (a
  // transformer layer's dgrad and wgrad GEMMs have equal FLOPs).
  PipelineSimulator sim;
  const int p = 16, m = 64;
  const double f = 1.0, b = 2.0, w = 1.0;
  const Stages one(p, f, b, w);
  const Stages two(2 * p, f, b, w);
  const double b1f1b = bubble(sim.run(spec_of(one, PipelineSchedule::one_f_one_b, p, m)), m, f, b);
  const double h1 = bubble(sim.run(spec_of(one, PipelineSchedule::zb_h1, p, m)), m, f, b);
  const double h2 = bubble(sim.run(spec_of(one, PipelineSchedule::zb_h2, p, m)), m, f, b);
  const double dual = bubble(sim.run(spec_of(two, PipelineSchedule::dualpipe, p, m)), m, f, b);
  MESSAGE("bubble per step (units of f): 1F1B " << b1f1b << ", ZB-H1 " << h1 << ", ZB-H2 " << h2 << ", DualPipe " << dual);
  CHECK(b1f1b == doctest::Approx(45.0));  // 15 * 3
  CHECK(h1 == doctest::Approx(15.0));     // 15 * (1 + 2 - 2)
  CHECK(h2 == doctest::Approx(15.0));     // 15 * max(1, 0): the start-up wait only
  CHECK(dual == doctest::Approx(14.0));   // 7 * (3 + 2 - 3)
  CHECK(h1 < b1f1b);
  CHECK(dual < b1f1b);
}

TEST_CASE("every pass runs once, a W after its B_input, and the timeline labels split passes") {
  PipelineSimulator sim;
  for (auto schedule : {PipelineSchedule::zb_h1, PipelineSchedule::zb_h2, PipelineSchedule::dualpipe}) {
    const int p = 4, m = 8;
    const int v = pipeline_chunks(schedule, 1);
    const int mbc = microbatches_per_chunk(schedule, m);
    const Stages st(p * v, 1.0, 2.0, 0.8);
    PipelineSpec spec = spec_of(st, schedule, p, m);
    spec.record_timeline = true;
    const PipelineResult& r = sim.run(spec);
    // (stage, chunk, micro-batch) -> end of its B_input or whole B, and of its W.
    std::map<std::tuple<int, int, int>, double> input_end, weight_start;
    int forwards = 0, gradients = 0;
    for (const TimelineEntry& e : r.timeline) {
      const auto key = std::make_tuple(e.stage, e.chunk, e.microbatch);
      if (e.kind == TimelineEntry::Kind::forward) ++forwards;
      if (e.kind == TimelineEntry::Kind::backward || e.kind == TimelineEntry::Kind::backward_weight) ++gradients;
      if (e.kind == TimelineEntry::Kind::backward_input || e.kind == TimelineEntry::Kind::backward) {
        CHECK(input_end.count(key) == 0);
        input_end[key] = e.end.value();
      }
      if (e.kind == TimelineEntry::Kind::backward_weight) weight_start[key] = e.start.value();
    }
    CAPTURE(static_cast<int>(schedule));
    CHECK(forwards == p * v * mbc);
    CHECK(gradients == p * v * mbc);
    CHECK(static_cast<int>(input_end.size()) == p * v * mbc);
    CHECK(!weight_start.empty());
    for (const auto& [key, start] : weight_start) CHECK(start >= input_end[key] - 1e-12);
    // Every stage is busy for all of its work: m (f + b) in total.
    for (int s = 0; s < p; ++s) CHECK(r.busy[static_cast<std::size_t>(s)].value() == doctest::Approx(m * 3.0));
  }
}

TEST_CASE("DualPipe feeds micro-batches from both ends: the last stage starts at once, in reverse") {
  PipelineSimulator sim;
  const int p = 8, m = 16;
  const Stages st(2 * p, 1.0, 2.0, 1.0);
  PipelineSpec spec = spec_of(st, PipelineSchedule::dualpipe, p, m);
  spec.record_timeline = true;
  const PipelineResult& r = sim.run(spec);
  CHECK(r.first_start.front().value() == doctest::Approx(0.0));
  CHECK(r.first_start.back().value() == doctest::Approx(0.0));
  // The reverse direction (chunk 1) enters at stage p - 1 and leaves at stage 0.
  CHECK(upstream_virtual_stage(PipelineSchedule::dualpipe, p, 2, 2 * p - 1) == -1);
  CHECK(downstream_virtual_stage(PipelineSchedule::dualpipe, p, 2, p) == -1);
  CHECK(model_position(PipelineSchedule::dualpipe, p, 2, p) == p - 1);  // chunk 1 of stage 0: the loss
  for (const TimelineEntry& e : r.timeline) {
    if (e.stage == p - 1 && e.chunk == 1 && e.microbatch == 0 && e.kind == TimelineEntry::Kind::forward) {
      CHECK(e.start.value() == doctest::Approx(0.0));
    }
  }
}

TEST_CASE("schedules name the shapes they cannot run") {
  CHECK(pipeline_shape_problem(PipelineSchedule::dualpipe, 3, 2, 12) ==
        "DualPipe needs an even number of pipeline stages (pp = 3)");
  CHECK(pipeline_shape_problem(PipelineSchedule::dualpipe, 4, 2, 6) ==
        "DualPipe needs an even number of micro-batches, at least 2*pp = 8 (it has 6)");
  CHECK(pipeline_shape_problem(PipelineSchedule::dualpipe, 4, 2, 8).empty());
  CHECK(pipeline_shape_problem(PipelineSchedule::zb_h1, 16, 1, 3).empty());
  CHECK(!pipeline_shape_problem(PipelineSchedule::zb_h1, 4, 2, 8).empty());
}
