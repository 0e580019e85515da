// parallel.fsdp: fsdp2 (model/parallel.h FsdpImplementation): PyTorch FSDP2's copies around each
// all-gather and reduce-scatter, priced as memory-bound kernels in the layers' and the root
// module's passes (simulator/layer_kernels.cpp), and the loader's rules for the field.

#include <doctest/doctest.h>

#include <string>

#include "model/parameter_count.h"
#include "simulator/collective_models.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/llama3_8b_step.h"
#include "tests/support/scenario_errors.h"

using namespace stepcast;

namespace {

StepKernels kernels_of(const std::string& parallel) {
  const Scenario sc = parse_scenario(test::llama3_8b_training_document(parallel), "t.yaml");
  TrainingPredictor predictor;
  const auto net = make_collective_model(default_collective_model(), sc.system, predictor.parameters());
  return predictor.step_kernels(sc, *net);
}

double bytes_named(const KernelPass& pass, std::string_view name) {
  double sum = 0.0;
  for (int i = 0; i < pass.ops.size(); ++i) {
    if (pass.ops[i].name == name) sum += pass.ops[i].bytes.value();
  }
  return sum;
}

}  // namespace

TEST_CASE("fsdp2 copies: a layer's gathers and reduce-scatter move the bytes FSDP2's code copies") {
  // llama3_8b_training_document: Llama 3 8B in BF16 compute with its precision defaults; the
  // document's parallel mapping is the test's. Per unsharded parameter P over N ranks, stored
  // format p bytes, gathered g, reduced r: each gather (p + g)/N + 2g/N + 2g, the reduce-scatter
  // g + r, plus 2r on one rank.
  const StepKernels eight = kernels_of("{dp: 8, zero: 3, fsdp: fsdp2}");
  const Scenario sc = parse_scenario(test::llama3_8b_training_document("{dp: 8, zero: 3, fsdp: fsdp2}"), "t.yaml");
  const double p = bytes_per_element(sc.precision.params);
  const double g = bytes_per_element(sc.precision.gathered_weights());
  const double r = bytes_per_element(sc.precision.grads);
  REQUIRE(!eight.layers.empty());
  const LayerKernels& layer = eight.layers.front().kernels;
  const double parameters = layer_parameters_per_rank(sc.model, 1).total();
  const double gather = parameters * ((p + g) / 8.0 + 2.0 * g / 8.0 + 2.0 * g);
  CHECK(bytes_named(layer.forward, "fsdp2.all_gather_copies") == doctest::Approx(gather));
  CHECK(bytes_named(layer.backward, "fsdp2.all_gather_copies") == doctest::Approx(gather));
  CHECK(bytes_named(layer.backward, "fsdp2.reduce_scatter_copies") == doctest::Approx(parameters * (g + r)));
  // The recomputed forward runs inside the backward's gather: no copies of its own.
  const StepKernels full = kernels_of("{dp: 8, zero: 3, fsdp: fsdp2, recompute: full}");
  CHECK(bytes_named(full.layers.front().kernels.recompute, "fsdp2.all_gather_copies") == 0.0);

  // One data-parallel rank (TP 8 over the 8 GPUs): the reduce-scatter is a copy.
  const StepKernels one = kernels_of("{tp: 8, dp: 1, zero: 3, fsdp: fsdp2}");
  const double per_tp_rank = layer_parameters_per_rank(sc.model, 8).total();
  CHECK(bytes_named(one.layers.front().kernels.backward, "fsdp2.reduce_scatter_copies") ==
        doctest::Approx(per_tp_rank * (g + r + 2.0 * r)));
  // The root module: one gather in the embedding's and the output layer's forward, one reduce in
  // their backward.
  CHECK(bytes_named(one.embedding_output.embedding_forward, "fsdp2.all_gather_copies") > 0.0);
  CHECK(bytes_named(one.embedding_output.output_backward, "fsdp2.reduce_scatter_copies") > 0.0);
}

TEST_CASE("fsdp2 copies make a step slower than Megatron's in-place buffers, and only under zero 3") {
  const auto step = test::llama3_8b_step_time;
  CHECK(step("{dp: 8, zero: 3, fsdp: fsdp2}") > step("{dp: 8, zero: 3}"));
  CHECK(step("{dp: 8, zero: 3, fsdp: megatron}") == doctest::Approx(step("{dp: 8, zero: 3}")));
  const StepKernels megatron = kernels_of("{dp: 8, zero: 3}");
  CHECK(bytes_named(megatron.layers.front().kernels.forward, "fsdp2.all_gather_copies") == 0.0);
}

TEST_CASE("the loader reads parallel.fsdp with any ZeRO stage, names its values, and the writer keeps it") {
  const Scenario sc = parse_scenario(test::llama3_8b_training_document("{dp: 8, zero: 3, fsdp: fsdp2}"), "t.yaml");
  CHECK(sc.parallel.fsdp == FsdpImplementation::fsdp2);
  const std::string written = write_scenario_yaml(sc);
  CHECK(written.find("fsdp: fsdp2") != std::string::npos);
  CHECK(parse_scenario(written, sc.source) == sc);
  const Scenario plain = parse_scenario(test::llama3_8b_training_document("{dp: 8, zero: 3}"), "t.yaml");
  CHECK(write_scenario_yaml(plain).find("fsdp:") == std::string::npos);
  // It describes the trainer: a ZeRO-1 scenario takes it (a sweep over zero stays valid) and
  // prices no copies, since nothing is gathered.
  const auto step = test::llama3_8b_step_time;
  CHECK(step("{dp: 8, zero: 1, fsdp: fsdp2}") == doctest::Approx(step("{dp: 8, zero: 1}")));
  const std::string typo = test::scenario_errors(test::llama3_8b_training_document("{dp: 8, zero: 3, fsdp: fsdp3}"));
  CAPTURE(typo);
  CHECK(typo.find("parallel.fsdp") != std::string::npos);
  CHECK(typo.find("fsdp2") != std::string::npos);
}
