// parallel.cuda_graphs (model/parallel.h CudaGraphs): none by default; full_iteration replays the
// step from Megatron-Core's full-iteration CUDA graph, so a layer pass no longer waits for the
// host's launches (simulator/layer_kernels.cpp training_host_per_launch) while the GPU's own time,
// kernel gaps included, stays. The loader, writer and the check that refuses a MoE dispatcher that
// synchronizes the host (simulator/scenario_checks.cpp check_full_iteration_graph).
#include <doctest/doctest.h>

#include <string>

#include "model/layer_shape.h"
#include "model/moe_ops.h"
#include "simulator/catalog.h"
#include "simulator/diagnostics.h"
#include "simulator/layer_costs.h"
#include "simulator/layer_kernels.h"
#include "simulator/scenario_loader.h"
#include "tests/support/catalog_model.h"
#include "tests/support/scenario_errors.h"
#include "tests/support/compute_only_layer.h"

using namespace stepcast;

namespace {

const std::string kDense =
    "schema_version: 1\nmodel: llama3-8b\nsystem: {preset: dgx-b200, gpus: 8}\n"
    "training: {seq_len: 8192, global_batch: 128, micro_batch: 2}\n";

const std::string kMoe =
    "schema_version: 1\nmodel: qwen3-30b-a3b\nsystem: {preset: dgx-b200, gpus: 8}\n"
    "training: {seq_len: 4096, global_batch: 8}\n";

// One dense layer of `model` for micro-batch `mb` of `seq` tokens on one rank (tp 1).
LayerShape dense_layer(const TransformerSpec& model, int seq, int mb) {
  TrainingWorkload w;
  w.seq_len = seq;
  w.micro_batch = mb;
  w.global_batch = mb;
  return make_layer_shape(model, w, ParallelConfig{}, PrecisionConfig{});
}

// The layer's kernels on a B200, eager or replayed from a graph, with no communication priced.
LayerKernels kernels(const LayerShape& s, bool graph_replay) {
  const GpuSpec* gpu = Catalog::builtin().find_gpu("b200");
  REQUIRE(gpu != nullptr);
  static const CostParameters params;
  LayerCostInputs in = test::compute_only_inputs(s, *gpu, params);
  in.graph_replay = graph_replay;
  return layer_kernels(in);
}

}  // namespace

TEST_CASE("parallel.cuda_graphs: none by default, full_iteration when asked, written back, bad words refused") {
  const Scenario plain = parse_scenario(kDense + "parallel: {tp: 1}\n", "t.yaml");
  CHECK(plain.parallel.cuda_graphs == CudaGraphs::none);
  // The default is not written, so files from before the key stay as they were.
  CHECK(write_scenario_yaml(plain).find("cuda_graphs") == std::string::npos);

  const Scenario graphed = parse_scenario(kDense + "parallel: {tp: 1, cuda_graphs: full_iteration}\n", "t.yaml");
  CHECK(graphed.parallel.cuda_graphs == CudaGraphs::full_iteration);
  CHECK(write_scenario_yaml(graphed).find("cuda_graphs: full_iteration") != std::string::npos);
  CHECK(parse_scenario(write_scenario_yaml(graphed), graphed.source) == graphed);

  const std::string typo = test::scenario_errors(kDense + "parallel: {tp: 1, cuda_graphs: full-iteration}\n");
  CHECK(typo.find("parallel.cuda_graphs") != std::string::npos);
  CHECK(typo.find("none") != std::string::npos);
  CHECK(typo.find("did you mean 'full_iteration'?") != std::string::npos);
  CHECK(test::scenario_errors(kDense + "parallel: {tp: 1, cuda_graphs: true}\n").find("parallel.cuda_graphs") !=
        std::string::npos);
}

TEST_CASE("a full-iteration graph refuses dropless MoE whose dispatcher syncs the host, and says what to change") {
  // Dropless, all-to-all dispatcher, EP 8: the token counts are read on the host before the dispatch.
  const std::string refused = test::scenario_errors(kMoe + "parallel: {ep: 8, cuda_graphs: full_iteration}\n");
  CHECK(refused.find("parallel.cuda_graphs") != std::string::npos);
  CHECK(refused.find("dropless") != std::string::npos);
  CHECK(refused.find("capacity_factor") != std::string::npos);
  CHECK(refused.find("moe_grouped_gemm: grouped") != std::string::npos);
  // Token drop at a fixed capacity: static shapes, capturable.
  CHECK(test::scenario_errors("schema_version: 1\nmodel: {preset: qwen3-30b-a3b, capacity_factor: 1.0}\n"
                  "system: {preset: dgx-b200, gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n"
                  "parallel: {ep: 8, cuda_graphs: full_iteration}\n") == "");
  // The device-side grouped GEMM behind a flex dispatcher: no host sync, capturable.
  CHECK(test::scenario_errors(kMoe + "parallel: {ep: 8, ep_dispatcher: hybridep, moe_grouped_gemm: grouped, "
                         "cuda_graphs: full_iteration}\n") == "");
  // Without expert parallelism nothing crosses ranks and nothing syncs.
  CHECK(test::scenario_errors(kMoe + "parallel: {ep: 1, cuda_graphs: full_iteration}\n") == "");
}

TEST_CASE("a full-iteration graph refuses GPT-OSS's clamped expert activation, which syncs the host") {
  // weighted_bias_quick_geglu_impl copies its linear offset to the device on every call
  // (model/moe_ops.h moe_activation_host_sync): a blocking synchronization, even with token drop.
  const std::string refused =
      test::scenario_errors("schema_version: 1\nmodel: {preset: gpt-oss-120b, capacity_factor: 1.0}\n"
                "system: {preset: dgx-b200, gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n"
                "parallel: {ep: 8, cuda_graphs: full_iteration}\nprecision: bf16\n");
  CHECK(refused.find("parallel.cuda_graphs") != std::string::npos);
  CHECK(refused.find("clamped expert activation") != std::string::npos);
  // The same model without the graph loads.
  CHECK(test::scenario_errors("schema_version: 1\nmodel: {preset: gpt-oss-120b, capacity_factor: 1.0}\n"
                  "system: {preset: dgx-b200, gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n"
                  "parallel: {ep: 8}\nprecision: bf16\n") == "");
}

TEST_CASE("full_iteration removes the host's launch bound: a host-bound pass speeds up, a GPU-bound one does not") {
  // Host-bound: a small layer (gpt-1.7b, 1024 tokens) on a B200 runs its kernels faster than the
  // host launches them at 12 us x 2.69 each.
  const LayerShape small = dense_layer(test::catalog_model("gpt-1.7b"), 1024, 1);
  const LayerKernels eager_small = kernels(small, false);
  const LayerKernels graph_small = kernels(small, true);
  REQUIRE(eager_small.forward.time() > eager_small.forward.gpu_time());  // the premise: host bound
  CHECK(graph_small.forward.time().value() == doctest::Approx(graph_small.forward.gpu_time().value()));
  CHECK(graph_small.forward.time() < eager_small.forward.time());
  CHECK(graph_small.backward.time() < eager_small.backward.time());
  // The GPU's own time, kernel gaps included, is the same kernels' either way.
  CHECK(graph_small.forward.gpu_time().value() == doctest::Approx(eager_small.forward.gpu_time().value()));

  // GPU-bound: a Llama 3 70B layer over 2 x 8192 tokens takes far longer than its launches.
  const LayerShape big = dense_layer(test::catalog_model("llama3-70b"), 8192, 2);
  const LayerKernels eager_big = kernels(big, false);
  const LayerKernels graph_big = kernels(big, true);
  REQUIRE(eager_big.forward.time().value() == doctest::Approx(eager_big.forward.gpu_time().value()));
  CHECK(graph_big.forward.time().value() == doctest::Approx(eager_big.forward.time().value()));
  CHECK(graph_big.backward.time().value() == doctest::Approx(eager_big.backward.time().value()));
}
