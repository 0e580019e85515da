// parallel.recompute_layers: full recomputation of only some of each model chunk's layers
// (Megatron's --recompute-method block --recompute-num-layers; torchtitan's every-k-th-layer AC).
#include <doctest/doctest.h>

#include <string>

#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/gpt3_scenario.h"
#include "tests/support/scenario_errors.h"

using namespace stepcast;

namespace {
// GPT-3 175B on 1024 GPUs, TP 8, PP 8 (12 layers per stage), no interleaving.
Scenario layout(Recompute recompute, int recompute_layers) {
  Scenario sc = test::gpt3_175b(1024, 8, 8, 1, 1536, 1);
  sc.parallel.recompute = recompute;
  sc.parallel.recompute_layers = recompute_layers;
  return sc;
}
}  // namespace

TEST_CASE("recomputing every layer of a chunk is plain full recomputation") {
  TrainingPredictor predictor;
  const TrainingPrediction all = predictor.predict(layout(Recompute::full, 0));
  const TrainingPrediction twelve = predictor.predict(layout(Recompute::full, 12));
  CHECK(twelve.step_time.value() == doctest::Approx(all.step_time.value()).epsilon(1e-12));
  CHECK(twelve.memory.activations.value() == doctest::Approx(all.memory.activations.value()).epsilon(1e-12));
  CHECK(twelve.hardware_flops_per_step.value() == doctest::Approx(all.hardware_flops_per_step.value()).epsilon(1e-12));
}

TEST_CASE("recomputing half the layers re-runs half the forward work and keeps half the activations") {
  TrainingPredictor predictor;
  const TrainingPrediction none = predictor.predict(layout(Recompute::none, 0));
  const TrainingPrediction full = predictor.predict(layout(Recompute::full, 0));
  const TrainingPrediction half = predictor.predict(layout(Recompute::full, 6));
  // Recompute time and the recomputed FLOPs scale with the share of layers (6 of 12).
  CHECK(half.time.recompute.value() == doctest::Approx(0.5 * full.time.recompute.value()).epsilon(1e-9));
  const double recomputed_flops = full.hardware_flops_per_step.value() - full.model_flops_per_step.value();
  CHECK(half.hardware_flops_per_step.value() - half.model_flops_per_step.value() ==
        doctest::Approx(0.5 * recomputed_flops).epsilon(1e-12));
  CHECK(half.step_time > none.step_time);
  CHECK(half.step_time < full.step_time);
  // Activations on a stage without the recompute working set: the mean of kept and recomputed
  // layers' (stage 1 of 8; full recomputation adds one layer's working set on top).
  CHECK(half.memory.activations > full.memory.activations);
  CHECK(half.memory.activations < none.memory.activations);
}

TEST_CASE("recompute_layers needs full recomputation and at most a chunk's layers") {
  const auto errors = [](const std::string& parallel) {
    return test::scenario_errors(test::llama3_8b_training_document(parallel));
  };
  CHECK(errors("{tp: 1, pp: 2, recompute: full, recompute_layers: 16}").empty());
  CHECK(errors("{tp: 1, pp: 2, recompute: selective, recompute_layers: 4}").find("needs recompute: full") !=
        std::string::npos);
  CHECK(errors("{tp: 1, pp: 2, recompute: full, recompute_layers: 17}").find("exceeds the layers of a model chunk (16)") !=
        std::string::npos);
  CHECK(errors("{tp: 1, pp: 2, recompute: full, recompute_layers: -1}").find("recompute_layers") != std::string::npos);
}
