// Megatron-Core's EP all-to-all overlap (combined 1F1B): the paired layer's four phases
// (model/ep_overlap.h), the passes that run alone (simulator/pipeline_schedule_orders.h
// combined_unpaired_passes), and what the predictor makes of both.
#include <doctest/doctest.h>

#include <span>
#include <tuple>
#include <vector>

#include "model/cost_parameters.h"
#include "model/ep_overlap.h"
#include "simulator/pipeline_schedule.h"
#include "simulator/pipeline_schedule_orders.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/pipeline_specs.h"

using namespace stepcast;

namespace {
constexpr double kMs = 1e-3;
}  // namespace

TEST_CASE("a paired MoE layer runs four phases, each as long as its compute node or its exchange") {
  // F.attn 1 | B.combine 1.5;  B.mlp 4 | F.dispatch 1.5;  F.mlp 2 | B.dispatch 1.5;
  // B.attn 2 | F.combine 1.5 (ms). Without the SM cost only the first phase exposes anything:
  // B.combine outlasts F.attn by 0.5 — though the whole forward (3 ms) is longer than it, an
  // exchange hides only behind the node it is paired with.
  EpOverlapLayer l;
  l.forward_attention = Seconds(1 * kMs);
  l.forward_experts = Seconds(2 * kMs);
  l.backward_attention = Seconds(2 * kMs);
  l.backward_experts = Seconds(4 * kMs);
  l.forward_dispatch = l.forward_combine = l.backward_dispatch = l.backward_combine = Seconds(1.5 * kMs);
  const EpOverlapExposure free = paired_layer_exposure(l, 0.0, 0.0);
  CHECK(free.forward.value() == doctest::Approx(0.0));
  CHECK(free.backward.value() == doctest::Approx(0.5 * kMs));
  // Compute slowed by f = 0.2 while an exchange runs: max(c, C + f min(c, C)) - C per phase:
  //   B.combine vs F.attn:   max(1.5, 1 + 0.2) - 1  = 0.5
  //   F.dispatch vs B.mlp:   max(1.5, 4 + 0.3) - 4  = 0.3
  //   B.dispatch vs F.mlp:   max(1.5, 2 + 0.3) - 2  = 0.3
  //   F.combine vs B.attn:   max(1.5, 2 + 0.3) - 2  = 0.3
  // forward (its dispatch and combine) 0.6, backward 0.8.
  const EpOverlapExposure slowed = paired_layer_exposure(l, 0.2, 0.0);
  CHECK(slowed.forward.value() == doctest::Approx(0.6 * kMs));
  CHECK(slowed.backward.value() == doctest::Approx(0.8 * kMs));
}

TEST_CASE("an exchange longer than its paired compute node is exposed by the difference") {
  // Compute 1 ms under a 3 ms exchange, f = 0.2: max(3, 1 + 0.2 x 1) - 1 = 2 ms.
  CHECK(overlapped_phase_exposure(Seconds(3 * kMs), Seconds(1 * kMs), 0.2, 0.0).value() == doctest::Approx(2 * kMs));
  // No exchange, nothing exposed.
  CHECK(overlapped_phase_exposure(Seconds(0.0), Seconds(1 * kMs), 0.2, 0.0).value() == doctest::Approx(0.0));
}

TEST_CASE("an exchange beside compute runs (1 + g) times its time alone") {
  // g = 0.5, f = 0.2. A 1 ms exchange beside 2 ms of compute becomes 1.5 ms, still hidden:
  // max(1.5, 2 + 0.2 x 1.5) - 2 = 0.3 ms (0.2 ms with g = 0).
  CHECK(overlapped_phase_exposure(Seconds(1 * kMs), Seconds(2 * kMs), 0.2, 0.5).value() ==
        doctest::Approx(0.3 * kMs));
  CHECK(overlapped_phase_exposure(Seconds(1 * kMs), Seconds(2 * kMs), 0.2, 0.0).value() ==
        doctest::Approx(0.2 * kMs));
  // A 1.5 ms exchange beside 2 ms becomes 2.25 ms and outlasts it: max(2.25, 2 + 0.4) - 2 = 0.4 ms.
  CHECK(overlapped_phase_exposure(Seconds(1.5 * kMs), Seconds(2 * kMs), 0.2, 0.5).value() ==
        doctest::Approx(0.4 * kMs));
  // Beside no compute nothing runs next to it: 2 ms stretched to 3 ms, all of it exposed.
  CHECK(overlapped_phase_exposure(Seconds(2 * kMs), Seconds(0.0), 0.2, 0.5).value() == doctest::Approx(3 * kMs));
}

TEST_CASE("the default exchange slowdown is the A/B profiles' ratio of communication time") {
  const CostParameters params;
  CHECK(params.ep_overlap_comm_slowdown == doctest::Approx(10.832 / 8.254 - 1.0).epsilon(1e-3));
}

TEST_CASE("combined 1F1B runs the warm-up forwards and one more alone, and as many cool-down backwards") {
  // Interleaved p = 8, v = 4, m = 128 (Megatron: warm-up (p - s - 1) 2 + (v - 1) p, + 1 with the
  // overlap): stage 0 14 + 24 + 1 = 39, stage 7 0 + 24 + 1 = 25 of 512 forwards.
  CHECK(combined_unpaired_passes(PipelineSchedule::one_f_one_b, 8, 4, 128, 0) == 39);
  CHECK(combined_unpaired_passes(PipelineSchedule::one_f_one_b, 8, 4, 128, 7) == 25);
  // Without a pipeline: the first forward and the last backward (combined_1f1b.py).
  CHECK(combined_unpaired_passes(PipelineSchedule::one_f_one_b, 1, 1, 32, 0) == 1);
  // 1F1B p = 4: p - s - 1 + 1 = p - s.
  CHECK(combined_unpaired_passes(PipelineSchedule::one_f_one_b, 4, 1, 16, 1) == 3);
  // Never more than the stage's passes; GPipe never pairs.
  CHECK(combined_unpaired_passes(PipelineSchedule::one_f_one_b, 8, 4, 8, 0) == 32);
  CHECK(combined_unpaired_passes(PipelineSchedule::gpipe, 4, 1, 16, 2) == 16);
}

TEST_CASE("DualPipe's unpaired passes are the forwards its order does not issue as F&B pairs") {
  for (const auto& [p, m] : std::vector<std::pair<int, int>>{{4, 8}, {4, 20}, {8, 16}, {8, 40}}) {
    std::vector<PipelinePass> passes;
    std::vector<int> begin;
    build_stage_orders(PipelineSchedule::dualpipe, p, 2, m, passes, begin);
    for (int s = 0; s < p; ++s) {
      int forwards = 0;
      int paired = 0;
      for (int i = begin[static_cast<std::size_t>(s)]; i < begin[static_cast<std::size_t>(s) + 1]; ++i) {
        const PipelinePass& pass = passes[static_cast<std::size_t>(i)];
        if (pass.kind != PassKind::forward) continue;
        ++forwards;
        if (pass.paired_with_next) ++paired;
      }
      CAPTURE(p);
      CAPTURE(m);
      CAPTURE(s);
      CHECK(forwards == m);
      CHECK(combined_unpaired_passes(PipelineSchedule::dualpipe, p, 2, m, s) == forwards - paired);
    }
  }
}

TEST_CASE("with ep_comm_overlap a step exposes m - 1 overlapped pairs and one lone forward and backward") {
  // Mixtral 8x7B on 16 H100s, tp 2, ep 8, no pipeline: m = global batch / dp micro-batches. The
  // step's exposed all-to-all time is L ((m - 1) P + U): P per overlapped pair, U for the first
  // forward and the last backward, which run alone and expose their exchanges as without the
  // overlap (U = the non-overlapped exposure per micro-batch).
  Scenario sc = load_scenario("mixtral-8x7b-ep");
  TrainingPredictor predictor;
  const double layers = sc.model.layers;
  auto& training = std::get<TrainingWorkload>(sc.workload);
  training.global_batch = 256;  // dp 8: m = 32
  const double plain = predictor.predict(sc).time.ep_comm_exposed.value() / (32 * layers);
  sc.parallel.ep_comm_overlap = true;
  const double e32 = predictor.predict(sc).time.ep_comm_exposed.value() / layers;
  training.global_batch = 512;  // m = 64
  const double e64 = predictor.predict(sc).time.ep_comm_exposed.value() / layers;
  const double paired = (e64 - e32) / 32.0;
  const double alone = e32 - 31.0 * paired;
  CHECK(paired > 0.0);  // the compute slowed by the exchanges' SMs, at least
  CHECK(paired < plain);
  CHECK(alone == doctest::Approx(plain).epsilon(1e-6));
}

namespace {
// 1F1B over `u`'s identical stages with `extra` more warm-up forwards per stage (1: Megatron-Core's
// combined 1F1B).
PipelineSpec one_f_one_b_spec(const test::UniformStages& u, int p, int v, int m, int extra) {
  PipelineSpec s = test::uniform_spec(u, PipelineSchedule::one_f_one_b, p, v, m);
  s.extra_warmup = extra;
  return s;
}
}  // namespace

TEST_CASE("combined 1F1B holds what 1F1B holds: the extra warm-up forward is freed layer by layer by its merged backward") {
  // 1F1B holds p - s micro-batches on stage s (warm-up p - s - 1, plus the one in the steady
  // state). Combined 1F1B warms up with p - s forwards, then runs each steady forward merged with
  // a backward, forward layer i beside backward layer n - 1 - i (Megatron-Core
  // model_chunk_schedule_plan.py, TransformerModelChunkSchedulePlan.run): the forward fills as the
  // backward frees, so the stage never holds more than the p - s of its warm-up, not p - s + 1.
  // Interleaved stage 0: (p - 1) 2 + (v - 1) p + 1 chunk micro-batches either way.
  PipelineSimulator sim;
  const int p = 8;
  const test::UniformStages one_chunk(p, 1, 1.0, 2.0);
  const auto& combined = sim.run(one_f_one_b_spec(one_chunk, p, 1, 32, 1));
  for (int s = 0; s < p; ++s) CHECK(combined.peak_in_flight[static_cast<std::size_t>(s)] == p - s);
  // No pipeline (Megatron's forward_backward_no_pipelining with the overlap): one micro-batch.
  const test::UniformStages alone(1, 1, 1.0, 2.0);
  CHECK(sim.run(one_f_one_b_spec(alone, 1, 1, 8, 1)).peak_in_flight[0] == 1);
  const int v = 3;
  const test::UniformStages three_chunks(p, v, 1.0, 2.0);
  const auto& interleaved = sim.run(one_f_one_b_spec(three_chunks, p, v, 24, 1));
  CHECK(interleaved.peak_in_flight[0] == v * p + p - 1);
  CHECK(sim.run(one_f_one_b_spec(three_chunks, p, v, 24, 0)).peak_in_flight[0] == v * p + p - 1);
  // The periodic hold pattern agrees with walking the orders.
  for (const auto& [pp, vv, m] : std::vector<std::tuple<int, int, int>>{{4, 1, 8}, {4, 2, 8}, {8, 4, 32}, {2, 3, 4}}) {
    const test::UniformStages u(pp, vv, 1.0, 2.0);
    const PipelineSpec spec = one_f_one_b_spec(u, pp, vv, m, 1);
    const std::vector<Bytes> walked = detail::peak_activations_by_walking(spec);
    const std::span<const Bytes> periodic = sim.peak_activations(spec);
    for (int s = 0; s < pp; ++s) {
      CAPTURE(pp);
      CAPTURE(vv);
      CAPTURE(s);
      CHECK(periodic[static_cast<std::size_t>(s)].value() == doctest::Approx(walked[static_cast<std::size_t>(s)].value()));
    }
  }
}

TEST_CASE("the extra warm-up forward keeps the step's work and never shortens the pipeline") {
  PipelineSimulator sim;
  for (const auto& [p, v, m] : std::vector<std::tuple<int, int, int>>{{4, 1, 16}, {8, 4, 64}, {1, 1, 8}}) {
    const test::UniformStages u(p, v, 1.0, 2.0);
    const double plain = sim.run(one_f_one_b_spec(u, p, v, m, 0)).makespan.value();
    const PipelineSpec spec = one_f_one_b_spec(u, p, v, m, 1);
    const PipelineResult& r = sim.run(spec);
    CAPTURE(p);
    CAPTURE(v);
    CHECK(r.busy[0].value() == doctest::Approx(m * 3.0));
    CHECK(r.makespan.value() >= plain - 1e-9);
    CHECK(r.makespan.value() >= PipelineSimulator::makespan_lower_bound(spec).value() - 1e-9);
  }
}

TEST_CASE("combined 1F1B pairs a forward chunk with a backward chunk layer by layer; the extra layers of the longer run alone") {
  // p 2, v 2, m 4 (8 passes per stage); layers per virtual stage (chunk * p + stage): 2, 3, 3, 2,
  // all MoE. Forward order per stage: chunks 0 0 1 1 0 0 1 1 (groups of p), backward 1 1 0 0 1 1 0 0.
  // Stage 0: warm-up 2 + 2 + 1 = 5 forwards alone (chunks 0 0 1 1 0: 3 x 2 + 2 x 3 layers), the
  //   last 5 backwards alone (chunks 0 0 1 1 0 from the end: 3 x 2 + 2 x 3); steady steps pair
  //   F5 (chunk 0, 2 layers) with B0 (chunk 1, 3): one backward layer of vs 2 alone; F6 with B1
  //   (3, 3): none; F7 (chunk 1, 3) with B2 (chunk 0, 2): one forward layer of vs 2 alone.
  // Stage 1: warm-up 0 + 2 + 1 = 3 (chunks 0 0 1: 2 x 3 + 2), as many cool-down backwards; steady
  //   F4 (3) with B1 (2): one forward layer of vs 1; F6 (2) with B3 (3): one backward layer of vs 1.
  const std::vector<int> layers = {2, 3, 3, 2};
  std::vector<double> forward, backward;
  combined_unpaired_layer_passes(PipelineSchedule::one_f_one_b, 2, 2, 4, layers, layers, forward, backward);
  CHECK(forward == std::vector<double>{6, 7, 7, 2});
  CHECK(backward == std::vector<double>{6, 7, 7, 2});
  // Equal chunks: only the warm-up forwards and cool-down backwards, combined_unpaired_passes of them.
  const std::vector<int> even(static_cast<std::size_t>(8 * 4), 3);
  combined_unpaired_layer_passes(PipelineSchedule::one_f_one_b, 8, 4, 64, even, even, forward, backward);
  for (int s = 0; s < 8; ++s) {
    double f = 0.0;
    double b = 0.0;
    for (int c = 0; c < 4; ++c) {
      f += forward[static_cast<std::size_t>(c * 8 + s)];
      b += backward[static_cast<std::size_t>(c * 8 + s)];
    }
    CHECK(f == 3.0 * combined_unpaired_passes(PipelineSchedule::one_f_one_b, 8, 4, 64, s));
    CHECK(b == f);
  }
}
