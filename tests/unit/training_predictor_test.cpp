#include <doctest/doctest.h>

#include "simulator/training_predictor.h"
#include "tests/support/gpt3_scenario.h"

using namespace stepcast;

namespace {
Scenario gpt3(int gpus, int tp, int pp, int vpp, int global_batch, int micro_batch) {
  return test::gpt3_175b(gpus, tp, pp, vpp, global_batch, micro_batch);
}
// The same scenario with `vpp` chunks per stage.
Scenario gpt3_with(Scenario sc, int vpp) {
  sc.parallel.vpp = vpp;
  return sc;
}
}  // namespace

TEST_CASE("the time breakdown sums to the step time") {
  TrainingPredictor predictor;
  for (const Scenario& sc : {gpt3(1024, 8, 8, 3, 1536, 1), gpt3(64, 8, 8, 1, 64, 1), gpt3(512, 8, 16, 2, 512, 1)}) {
    const TrainingPrediction p = predictor.predict(sc);
    CHECK(p.time.total().value() == doctest::Approx(p.step_time.value()).epsilon(1e-9));
    CHECK(p.time.compute.value() > 0.0);
    CHECK(p.time.recompute.value() > 0.0);  // selective recomputation re-runs the attention core
    CHECK(p.hfu > p.mfu);
    CHECK(p.mfu > 0.1);
    CHECK(p.mfu < 0.9);
    CHECK(p.tokens_per_s == doctest::Approx(sc.training().global_batch * 2048.0 / p.step_time.value()));
    CHECK(p.per_stage.size() == static_cast<std::size_t>(sc.parallel.pp));
  }
}

TEST_CASE("more micro-batches and interleaving shrink the pipeline bubble") {
  TrainingPredictor predictor;
  const double few = predictor.predict(gpt3(1024, 8, 8, 1, 256, 1)).bubble_fraction;
  const double many = predictor.predict(gpt3(1024, 8, 8, 1, 1536, 1)).bubble_fraction;
  const double interleaved = predictor.predict(gpt3(1024, 8, 8, 3, 1536, 1)).bubble_fraction;
  CHECK(many < few);
  CHECK(interleaved < many);
  // Near the closed form (p-1)/(m + p - 1) of the step for 1F1B with m = 96, p = 8: ~6.8%.
  CHECK(many == doctest::Approx(7.0 / (96 + 7)).epsilon(0.25));
}

TEST_CASE("memory: the first stage holds the most activations and ZeRO-1 shrinks optimizer states") {
  TrainingPredictor predictor;
  Scenario sc = gpt3(1024, 8, 8, 1, 1536, 1);
  sc.parallel.zero = 0;
  const TrainingPrediction plain = predictor.predict(sc);
  sc.parallel.zero = 1;
  const TrainingPrediction zero1 = predictor.predict(sc);
  CHECK(zero1.memory.optimizer_states.value() < plain.memory.optimizer_states.value() / 10.0);
  CHECK(zero1.per_stage[0].activations > zero1.per_stage[7].activations);
  // 1F1B: stage 0 holds p = 8 micro-batches of 12 layers = 96 layers' worth of sbh 34/t bytes.
  const double layer = 2048.0 * 12288 * 34 / 8;
  CHECK(zero1.per_stage[1].activations.value() == doctest::Approx(7 * 12 * layer));
  CHECK(zero1.fits);
  // 175B on 8 GPUs does not fit in 80 GB.
  const TrainingPrediction tiny = predictor.predict(gpt3(8, 8, 1, 1, 8, 1));
  CHECK_FALSE(tiny.fits);
}

TEST_CASE("hiding the data-parallel reduction behind the last backward helps") {
  TrainingPredictor predictor;
  Scenario sc = gpt3(1024, 8, 8, 1, 512, 1);
  sc.parallel.zero = 0;
  sc.parallel.overlap_grad_reduce = false;
  const TrainingPrediction exposed = predictor.predict(sc);
  sc.parallel.overlap_grad_reduce = true;
  const TrainingPrediction hidden = predictor.predict(sc);
  CHECK(hidden.time.dp_comm_exposed < exposed.time.dp_comm_exposed);
  CHECK(hidden.step_time < exposed.step_time);
}

TEST_CASE("interleaving hides the parameter gather behind earlier chunks' forwards") {
  // ZeRO-1 with overlap_param_gather: one chunk's gather hides behind the stage's first forward
  // only; interleaved, chunk c's behind p forwards of chunk c - 1 (Megatron-Core schedules.py,
  // param_sync_func per chunk). The reduce-scatter is the same un-overlapped collective in both.
  TrainingPredictor predictor;
  Scenario sc = gpt3(1024, 8, 8, 1, 1536, 1);
  sc.parallel.zero = 1;
  sc.parallel.overlap_grad_reduce = false;
  sc.parallel.overlap_param_gather = true;
  const TrainingPrediction one_chunk = predictor.predict(sc);
  const TrainingPrediction three_chunks = predictor.predict(gpt3_with(sc, 3));
  CHECK(three_chunks.time.dp_comm_exposed < one_chunk.time.dp_comm_exposed);
  sc.parallel.overlap_param_gather = false;
  const TrainingPrediction unhidden = predictor.predict(gpt3_with(sc, 3));
  CHECK(three_chunks.time.dp_comm_exposed < unhidden.time.dp_comm_exposed);
}

TEST_CASE("TP collectives are exposed without overlap, full recompute costs more than selective") {
  TrainingPredictor predictor;
  Scenario sc = gpt3(64, 8, 8, 1, 64, 1);
  const TrainingPrediction selective = predictor.predict(sc);
  CHECK(selective.time.tp_comm_exposed.value() > 0.0);
  sc.parallel.tp_comm_overlap = true;
  CHECK(predictor.predict(sc).time.tp_comm_exposed < selective.time.tp_comm_exposed);
  sc.parallel.tp_comm_overlap = false;
  sc.parallel.recompute = Recompute::full;
  const TrainingPrediction full = predictor.predict(sc);
  CHECK(full.time.recompute > selective.time.recompute);
  CHECK(full.memory.activations < selective.memory.activations);
}

TEST_CASE("placement and timeline are reported when asked") {
  TrainingPredictor predictor;
  TrainingPredictorOptions options;
  options.timeline = true;
  const TrainingPrediction p = predictor.predict(gpt3(1024, 8, 8, 3, 1536, 1), options);
  CHECK(p.timeline.size() == static_cast<std::size_t>(2 * 8 * 3 * 96));
  REQUIRE(p.placement.size() == 3);
  CHECK(p.placement[0].group == "tp");
  CHECK(p.placement[0].description == "inside NVLink (8 GPUs of one node)");
}

TEST_CASE("uneven first and last stages move layers off the stages holding embedding and loss") {
  const auto even = layers_per_virtual_stage(96, [] {
    ParallelConfig p;
    p.pp = 8;
    return p;
  }());
  CHECK(even == std::vector<int>(8, 12));
  ParallelConfig p;
  p.pp = 8;
  p.first_stage_layers = 10;
  p.last_stage_layers = 8;
  const auto uneven = layers_per_virtual_stage(96, p);
  CHECK(uneven.front() == 10);
  CHECK(uneven.back() == 8);
  int total = 0;
  for (int n : uneven) total += n;
  CHECK(total == 96);
}
