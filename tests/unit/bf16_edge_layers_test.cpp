// BF16 edge layers under a quantized compute format (PrecisionConfig::bf16_edge_layers): the recipe's
// default (one layer at each end under FP8 current scaling, as Megatron-Bridge's and NeMo's
// bf16_with_fp8_current_scaling_mixed set; none otherwise), an explicit count, and 0, which the
// performance scripts use (first_last_layers_bf16 = False) and the loader must accept.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "model/precision.h"
#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"

using namespace stepcast;

namespace {

Scenario fp8_8b(const std::string& precision) {
  return load_scenario("llama3-8b-fp8", std::vector<Override>{{"precision", precision}});
}

}  // namespace

TEST_CASE("BF16 edge layers: one at each end by default under current scaling, none under delayed, as set otherwise") {
  CHECK(fp8_8b("{compute: fp8, fp8_scaling: current}").precision.edge_layers_in_bf16() == 1);
  CHECK(fp8_8b("{compute: fp8}").precision.edge_layers_in_bf16() == 0);
  CHECK(fp8_8b("{compute: fp8, fp8_scaling: current, bf16_edge_layers: 0}").precision.edge_layers_in_bf16() == 0);
  CHECK(fp8_8b("{compute: fp8, bf16_edge_layers: 2}").precision.edge_layers_in_bf16() == 2);
  CHECK(fp8_8b("{compute: bf16, bf16_edge_layers: 2}").precision.edge_layers_in_bf16() == 0);  // nothing quantized
}

TEST_CASE("bf16_edge_layers: 0 loads and writes back; a negative count is refused") {
  const Scenario none = fp8_8b("{compute: fp8, fp8_scaling: current, bf16_edge_layers: 0}");
  CHECK(none.precision.bf16_edge_layers == 0);
  CHECK(parse_scenario(write_scenario_yaml(none), none.source) == none);
  CHECK_THROWS_AS(fp8_8b("{compute: fp8, fp8_scaling: current, bf16_edge_layers: -1}"), InputError);
}

TEST_CASE("turning the BF16 edge layers off runs every layer in FP8: a faster step") {
  const TrainingPrediction edges = predict_training(fp8_8b("{compute: fp8, fp8_scaling: current}"));
  const TrainingPrediction none = predict_training(fp8_8b("{compute: fp8, fp8_scaling: current, bf16_edge_layers: 0}"));
  MESSAGE("llama3-8b FP8 current scaling on 8 H100s: BF16 edge layers " << edges.step_time.value() << " s, none "
                                                                        << none.step_time.value() << " s");
  CHECK(none.step_time < edges.step_time);
}
