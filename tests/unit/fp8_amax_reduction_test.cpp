// Transformer Engine's amax reductions (simulator/layer_costs.h): delayed scaling's all-reduce of a
// chunk's amaxes over the stage's tp x cp x dp ranks, once per chunk, micro-batch and pass; current
// scaling's (and NVFP4's) 4-byte TP all-reduce before each quantized sequence-parallel all-gather.
// Each case prices the collectives with fixed times (all-reduces only; the rest free), so the
// arithmetic is checked exactly and fails if a reduction is dropped, doubled or charged to the
// wrong recipe.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/cost_parameters.h"
#include "model/layer_ops.h"
#include "model/placement.h"
#include "simulator/diagnostics.h"
#include "simulator/layer_costs.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/fixed_collectives.h"
#include "tests/support/parallel_layout.h"
#include "tests/support/scenario_layer_inputs.h"

using namespace stepcast;

namespace {

using test::FixedCollectives;
using test::parallel_layout;

// llama3-8b-fp8 (delayed scaling, 8 x H100, dp 8, 4 micro-batches per step) with overrides.
Scenario fp8_8b(const std::vector<Override>& extra = {}) { return load_scenario("llama3-8b-fp8", extra); }

LayerCosts costs_of(const Scenario& sc, const CollectiveModel& net, const GroupLayout& tp_group) {
  static const CostParameters params;
  static LayerShape shape;
  LayerCostInputs in = test::scenario_layer_inputs(sc, shape, net, params);
  in.tp_group = tp_group;
  return layer_costs(in);
}

}  // namespace

TEST_CASE("the amax reduction group is one pipeline stage's ranks: tp x cp x dp, or tp x cp alone") {
  CHECK(amax_group_members(parallel_layout(2, 2, 2)) == std::vector<int>{0, 1, 2, 3});
  CHECK(amax_group_members(parallel_layout(2, 1, 2, 2)) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(amax_group_members(parallel_layout(1, 4, 1)) == std::vector<int>{0});
  // Megatron-Core --tp-only-amax-red: the tensor- and context-parallel ranks (dp is the slowest of the three).
  CHECK(tp_amax_group_members(parallel_layout(2, 1, 2, 2)) == std::vector<int>{0, 1, 2, 3});
  CHECK(tp_amax_group_members(parallel_layout(2, 2, 4)) == std::vector<int>{0, 1});
}

TEST_CASE("fp8_amax_group is read under FP8 delayed scaling, written back, and refused where no amax is reduced") {
  const Scenario tp_only = fp8_8b({{"precision", "{compute: fp8, fp8_amax_group: tp}"}});
  CHECK(tp_only.precision.fp8_amax_group == Fp8AmaxGroup::tp);
  CHECK(fp8_8b().precision.fp8_amax_group == Fp8AmaxGroup::stage);
  // The writer keeps it: the written scenario loads back equal.
  CHECK(parse_scenario(write_scenario_yaml(tp_only), "written.yaml").precision == tp_only.precision);
  for (const char* precision : {"{compute: fp8, fp8_scaling: current, fp8_amax_group: tp}",
                                "{compute: bf16, fp8_amax_group: stage}", "{compute: mxfp8, fp8_amax_group: tp}"}) {
    CAPTURE(precision);
    try {
      (void)fp8_8b({{"precision", precision}, {"system.gpu", "b200"}});
      FAIL("accepted fp8_amax_group without delayed scaling");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("fp8_amax_group says which ranks FP8 delayed scaling reduces") != std::string::npos);
    }
  }
}

TEST_CASE("with fp8_amax_group: tp the amax all-reduces run on the TP group and count as tensor-parallel traffic") {
  FixedCollectives net;
  net.m_reduce = 2e-3;
  TrainingPredictor predictor;
  // TP 2 with sequence parallelism (its gathers and scatters free here), DP 4, ZeRO-1, 8 micro-batches.
  // Delayed scaling's TP layers add no per-quantization all-reduce, so the TP row holds only the
  // chunk's amax reductions (and the vocab-parallel loss's three all-reduces per micro-batch).
  const std::vector<Override> base = {{"parallel.tp", "2"}, {"parallel.dp", "4"}, {"parallel.zero", "1"},
                                      {"parallel.sequence_parallel", "true"}};
  auto with = [&](const char* precision) {
    std::vector<Override> o = base;
    o.push_back({"precision", precision});
    return predictor.predict(fp8_8b(o), net);
  };
  const TrainingPrediction stage = with("{compute: fp8}");
  const TrainingPrediction tp = with("{compute: fp8, fp8_amax_group: tp}");
  const double per_step = 8 * 2 * 2e-3;  // 8 micro-batches x (forward + backward)
  CHECK(stage.time.dp_comm_exposed.value() == doctest::Approx(per_step));
  CHECK(tp.time.dp_comm_exposed.value() == 0.0);
  CHECK(tp.time.tp_comm_exposed.value() - stage.time.tp_comm_exposed.value() == doctest::Approx(per_step));
}

TEST_CASE("delayed scaling reduces three amaxes per FP8 GEMM forward and two backward") {
  FixedCollectives net;
  const Scenario delayed = fp8_8b();
  const LayerCosts c = costs_of(delayed, net, GroupLayout{});
  // A Llama layer runs four FP8 GEMMs forward: fused QKV, output projection, fused gate/up FC1, FC2.
  CHECK(c.amax_forward_bytes.value() == doctest::Approx(4 * 3 * 4.0));
  CHECK(c.amax_backward_bytes.value() == doctest::Approx(4 * 2 * 4.0));
  // Current scaling reduces nothing per chunk; BF16 has no amax at all.
  const LayerCosts current = costs_of(fp8_8b({{"precision", "{compute: fp8, fp8_scaling: current}"}}), net, GroupLayout{});
  CHECK(current.amax_forward_bytes.value() == 0.0);
  CHECK(current.amax_backward_bytes.value() == 0.0);
  const LayerCosts bf16 = costs_of(fp8_8b({{"precision", "bf16"}}), net, GroupLayout{});
  CHECK(bf16.amax_forward_bytes.value() == 0.0);
}

TEST_CASE("current scaling with sequence parallelism all-reduces each quantized all-gather's amax over TP") {
  FixedCollectives net;
  net.m_reduce = 1e-5;
  GroupLayout tp2;
  tp2.size = 2;
  tp2.ranks_per_node = 2;
  const std::vector<Override> tp_sp = {{"parallel.tp", "2"}, {"parallel.dp", "4"}, {"parallel.sequence_parallel", "true"}};
  auto with = [&](std::vector<Override> extra) {
    extra.insert(extra.end(), tp_sp.begin(), tp_sp.end());
    return costs_of(fp8_8b(extra), net, tp2);
  };
  // With SP every TP collective is a gather or scatter (free here), so what remains is the amaxes':
  // the QKV and FC1 inputs forward, the projection's and FC2's output gradients backward.
  const LayerCosts current = with({{"precision", "{compute: fp8, fp8_scaling: current}"}});
  CHECK(current.layer_forward.tp_exposed.value() == doctest::Approx(2 * 1e-5));
  CHECK(current.layer_backward.tp_exposed.value() == doctest::Approx(2 * 1e-5));
  const LayerCosts nvfp4 = with({{"precision", "{compute: nvfp4}"}, {"system.gpu", "b200"}});
  CHECK(nvfp4.layer_forward.tp_exposed.value() == doctest::Approx(2 * 1e-5));
  // Delayed scaling uses the previous step's scale; MXFP8's scales are per 32-element block.
  CHECK(with({}).layer_forward.tp_exposed.value() == 0.0);
  CHECK(with({{"precision", "{compute: mxfp8}"}, {"system.gpu", "b200"}}).layer_forward.tp_exposed.value() == 0.0);
  // Without sequence parallelism the input is not gathered: no shared scale is needed.
  // Its forward's TP collectives are the two activation all-reduces alone.
  const Scenario no_sp =
      fp8_8b({{"parallel.tp", "2"}, {"parallel.dp", "4"}, {"precision", "{compute: fp8, fp8_scaling: current}"}});
  CHECK(costs_of(no_sp, net, tp2).layer_forward.tp_exposed.value() == doctest::Approx(2 * 1e-5));
}

TEST_CASE("delayed scaling adds one exposed all-reduce per chunk, micro-batch and pass to the step") {
  FixedCollectives net;
  net.m_reduce = 2e-3;
  TrainingPredictor predictor;
  // dp 8, ZeRO-1 (gradient reduce-scatter and parameter all-gather: free here), 4 micro-batches,
  // one chunk: 4 x (forward + backward) reductions on the 8 data-parallel ranks.
  const std::vector<Override> zero1 = {{"parallel.zero", "1"}};
  const TrainingPrediction delayed = predictor.predict(fp8_8b(zero1), net);
  const TrainingPrediction current =
      predictor.predict(fp8_8b({{"parallel.zero", "1"}, {"precision", "{compute: fp8, fp8_scaling: current}"}}), net);
  CHECK(delayed.time.dp_comm_exposed.value() == doctest::Approx(4 * 2 * 2e-3));
  CHECK(current.time.dp_comm_exposed.value() == 0.0);
  // The report says where that time sits.
  const auto names_amax = [](const TrainingPrediction& p) {
    return std::any_of(p.notes.begin(), p.notes.end(), [](const std::string& n) {
      return n.find("FP8 delayed scaling: 16 ms per step in amax all-reduces over 8 ranks, every rank of a pipeline stage") != std::string::npos;
    });
  };
  CHECK(names_amax(delayed));
  CHECK_FALSE(names_amax(current));
  // One GPU has no one to reduce with.
  const TrainingPrediction alone = predictor.predict(
      fp8_8b({{"system.gpus", "1"}, {"parallel.dp", "1"}, {"training.global_batch", "8"}}), net);
  CHECK(alone.time.dp_comm_exposed.value() == 0.0);
}
