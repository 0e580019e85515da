// parallel.activation_offload_layers in the training step: memory, host memory, exposed copy time,
// the loader's checks and the writer's round trip.
#include <doctest/doctest.h>

#include <string>

#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/scenario_errors.h"

using namespace stepcast;

namespace {
// Llama 3 70B, 64 GB200, FSDP, FP8 current scaling, micro-batch 2 of 256: 2 micro-batches per GPU.
Scenario gb200_70b(int offloaded) {
  Scenario sc = load_scenario("llama3-70b-activation-offload");
  sc.parallel.activation_offload_layers = offloaded;
  return sc;
}
std::string load_errors(const std::string& parallel) {
  return test::scenario_errors(test::llama3_8b_training_document(parallel));
}
}  // namespace

TEST_CASE("offloaded layers' activations leave the GPU and occupy host memory instead") {
  TrainingPredictor predictor;
  const TrainingPrediction none = predictor.predict(gb200_70b(0));
  const TrainingPrediction thirty = predictor.predict(gb200_70b(30));
  const Bytes moved = none.memory.activations - thirty.memory.activations;
  CHECK(moved.value() > 0.0);
  CHECK(thirty.activation_offloaded.value() == doctest::Approx(moved.value()).epsilon(1e-9));
  // pp = 1 holds one micro-batch at a time: the host keeps one micro-batch's 30 layers.
  CHECK(thirty.host_memory.value() == doctest::Approx(moved.value()).epsilon(1e-9));
  CHECK(none.host_memory.value() == 0.0);
  // The peak drops by the moved bytes and their fragmentation share.
  CHECK((none.memory.peak - thirty.memory.peak).value() ==
        doctest::Approx(moved.value() * (1.0 + predictor.parameters().allocator_fragmentation)).epsilon(1e-9));
  // Layers 1..79 are alike (the dense FP8 layer), so 60 layers move twice 30's bytes past layer 0.
  const TrainingPrediction one = predictor.predict(gb200_70b(1));
  const TrainingPrediction sixty = predictor.predict(gb200_70b(60));
  const double per_layer = (thirty.activation_offloaded - one.activation_offloaded).value() / 29.0;
  CHECK(sixty.activation_offloaded.value() == doctest::Approx(one.activation_offloaded.value() + 59.0 * per_layer).epsilon(1e-9));
}

TEST_CASE("with 50 layers kept, the copies of 30 hide behind the compute: the step time does not change") {
  TrainingPredictor predictor;
  const TrainingPrediction none = predictor.predict(gb200_70b(0));
  const TrainingPrediction thirty = predictor.predict(gb200_70b(30));
  CHECK(thirty.time.offload_exposed.value() == 0.0);
  CHECK(thirty.step_time.value() == doctest::Approx(none.step_time.value()).epsilon(1e-12));
}

TEST_CASE("with one layer kept every copy is exposed: bytes over the C2C rates, per micro-batch") {
  // N = L - 1 = 79: layer i's copy must finish before layer i+1 starts and its reload starts when
  // its backward is due, so each moved byte costs 1/297e9 s down (C2C 450 GB/s x 297/450) and
  // 1/375e9 s up (x 375/450), for each of the 2 micro-batches.
  TrainingPredictor predictor;
  const TrainingPrediction p = predictor.predict(gb200_70b(79));
  const double expected = 2.0 * p.activation_offloaded.value() * (1.0 / 297e9 + 1.0 / 375e9);
  CHECK(p.time.offload_exposed.value() == doctest::Approx(expected).epsilon(1e-9));
  const TrainingPrediction none = predictor.predict(gb200_70b(0));
  CHECK(p.step_time.value() == doctest::Approx(none.step_time.value() + expected).epsilon(1e-9));
}

TEST_CASE("activation_offload_layers: below the model's layers, pp 1, no recompute, not negative") {
  CHECK(load_errors("{dp: 8, recompute: none, activation_offload_layers: 31}").empty());
  CHECK(load_errors("{dp: 8, recompute: none, activation_offload_layers: 32}")
            .find("activation_offload_layers (32) must be less than the model's layers (32)") != std::string::npos);
  CHECK(load_errors("{dp: 4, pp: 2, recompute: none, activation_offload_layers: 8}").find("needs pp = 1") !=
        std::string::npos);
  CHECK(load_errors("{dp: 8, recompute: selective, activation_offload_layers: 8}").find("needs recompute: none") !=
        std::string::npos);
  CHECK(load_errors("{dp: 8, recompute: none, activation_offload_layers: -1}").find("activation_offload_layers") !=
        std::string::npos);
}

TEST_CASE("activation_offload_layers is written back and reads to an equal scenario") {
  const Scenario sc = gb200_70b(30);
  const std::string yaml = write_scenario_yaml(sc);
  CHECK(yaml.find("activation_offload_layers: 30") != std::string::npos);
  CHECK(parse_scenario(yaml, sc.source) == sc);
  CHECK(write_scenario_yaml(gb200_70b(0)).find("activation_offload_layers") == std::string::npos);
}
