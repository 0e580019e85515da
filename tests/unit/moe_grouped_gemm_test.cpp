// parallel.moe_grouped_gemm (model/parallel.h, model/moe_ops.h): per_expert is Transformer
// Engine's GroupedLinear loop (one GEMM per local expert, the default); grouped is one grouped
// kernel per expert GEMM with on-device group sizes (TE >= 2.14, PRs #2748 / #2669), and for MXFP8
// SwiGLU experts TE's fused grouped MLP (PR #2769). The loader and writer, the op lists each one
// builds, what the host waits for, and the time of a Qwen3-30B-A3B layer under both.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "model/moe_ops.h"
#include "model/op_time.h"
#include "simulator/catalog.h"
#include "simulator/diagnostics.h"
#include "simulator/layer_costs.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/catalog_model.h"
#include "tests/support/compute_only_layer.h"
#include "tests/support/moe_layer.h"
#include "tests/support/op_lookup.h"

using namespace stepcast;

namespace {

// Qwen3-30B-A3B's MoE layer on one rank of EP 8 (tp 1), one 4096-token sequence: 16 local
// experts of 2048 token copies each (4096 x top-8 x 8 / 128), 32768 rows, expert width 768.
LayerShape qwen3_layer(DataType compute, MoeGroupedGemm grouped, ExpertDispatcher dispatcher) {
  ParallelConfig p;
  p.ep = 8;
  p.expert_tp = 1;
  p.ep_dispatcher = dispatcher;
  p.moe_grouped_gemm = grouped;
  LayerShape s = test::one_sequence_moe_layer(test::catalog_model("qwen3-30b-a3b"), p);
  s.compute = compute;
  return s;
}

constexpr double kRows = 32768.0;
constexpr double kHidden = 2048.0;
constexpr double kExpertFfn = 768.0;
constexpr double kLocalExperts = 16.0;

// Forward + backward compute of one layer pass on a B200 (the layer's kernels, host bound included).
double layer_compute(const LayerShape& s) {
  const GpuSpec* gpu = Catalog::builtin().find_gpu("b200");
  REQUIRE(gpu != nullptr);
  static const CostParameters params;
  const LayerCosts c = layer_costs(test::compute_only_inputs(s, *gpu, params));
  return c.layer_forward.compute.value() + c.layer_backward.compute.value();
}

}  // namespace

TEST_CASE("parallel.moe_grouped_gemm: per_expert by default, grouped when asked; the loader names the allowed values") {
  const std::string head =
      "schema_version: 1\nmodel: qwen3-30b-a3b\nsystem: {preset: dgx-b200, gpus: 8}\n"
      "training: {seq_len: 4096, global_batch: 8}\n";
  const Scenario plain = parse_scenario(head + "parallel: {ep: 8}\n", "t.yaml");
  CHECK(plain.parallel.moe_grouped_gemm == MoeGroupedGemm::per_expert);
  // The default is not written, so files from before the key stay as they were.
  CHECK(write_scenario_yaml(plain).find("moe_grouped_gemm") == std::string::npos);

  const Scenario grouped = parse_scenario(head + "parallel: {ep: 8, moe_grouped_gemm: grouped}\n", "t.yaml");
  CHECK(grouped.parallel.moe_grouped_gemm == MoeGroupedGemm::grouped);
  CHECK(write_scenario_yaml(grouped).find("moe_grouped_gemm: grouped") != std::string::npos);
  CHECK(parse_scenario(write_scenario_yaml(grouped), grouped.source) == grouped);

  try {
    parse_scenario(head + "parallel: {ep: 8, moe_grouped_gemm: fused}\n", "t.yaml");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("parallel.moe_grouped_gemm") != std::string::npos);
    CHECK(what.find("per_expert") != std::string::npos);
    CHECK(what.find("grouped") != std::string::npos);
  }
}

TEST_CASE("grouped expert GEMMs are one launch each over all local experts, with the per-expert products as its batch") {
  // BF16: no casts or padding either way; only the launches change. The FLOPs and bytes are the
  // same products: 2 x 2048 rows x (2 x 768) x 2048 x 16 experts for FC1.
  const LayerShape per_expert = qwen3_layer(DataType::bf16, MoeGroupedGemm::per_expert, ExpertDispatcher::alltoall);
  const LayerShape grouped = qwen3_layer(DataType::bf16, MoeGroupedGemm::grouped, ExpertDispatcher::alltoall);
  const OpList a = layer_forward_ops(per_expert);
  const OpList b = layer_forward_ops(grouped);
  for (const char* name : {"experts_fc1", "experts_fc2"}) {
    const Op* x = test::find_op(a, name);
    const Op* y = test::find_op(b, name);
    REQUIRE(x != nullptr);
    REQUIRE(y != nullptr);
    CHECK(x->launches == kLocalExperts);
    CHECK(y->launches == 1.0);
    CHECK(y->gemm.batch == kLocalExperts);  // the tiles of all 16 experts in one grid
    CHECK(y->flops.value() == doctest::Approx(x->flops.value()));
    CHECK(y->bytes.value() == doctest::Approx(x->bytes.value()));
  }
  CHECK(test::find_op(b, "experts_fc1")->flops.value() == doctest::Approx(2.0 * 2048.0 * 2.0 * kExpertFfn * kHidden * 16.0));
  const OpList back = layer_backward_ops(grouped);
  for (const char* name : {"experts_fc2.dgrad", "experts_fc2.wgrad", "experts_fc1.dgrad", "experts_fc1.wgrad"}) {
    const Op* op = test::find_op(back, name);
    REQUIRE(op != nullptr);
    CHECK(op->launches == 1.0);
  }
  // BF16 grouped still runs the activation as its own kernel (the fused MLP is MXFP8 only).
  CHECK(test::find_op(b, "experts_swiglu") != nullptr);
  CHECK(test::find_op(back, "experts_swiglu.backward") != nullptr);

  // One launch pays one kernel gap; the per-expert loop pays one per round of 4 streams (16 / 4).
  const GpuSpec* gpu = Catalog::builtin().find_gpu("b200");
  REQUIRE(gpu != nullptr);
  const CostParameters params;
  const OpTiming loop = op_timing(*test::find_op(a, "experts_fc1"), *gpu, params);
  const OpTiming one = op_timing(*test::find_op(b, "experts_fc1"), *gpu, params);
  CHECK(one.gap.value() == doctest::Approx(params.kernel_gap_s));
  CHECK(loop.gap.value() == doctest::Approx(params.kernel_gap_s * 16.0 / params.grouped_gemm_streams));
}

TEST_CASE("MXFP8 grouped experts run the fused grouped MLP: SwiGLU and FC2's input cast in FC1's epilogue, no padding") {
  const LayerShape s = qwen3_layer(DataType::mxfp8, MoeGroupedGemm::grouped, ExpertDispatcher::deepep);
  const LayerShape loop = qwen3_layer(DataType::mxfp8, MoeGroupedGemm::per_expert, ExpertDispatcher::deepep);
  const OpList forward = layer_forward_ops(s);
  const OpList backward = layer_backward_ops(s);
  // Gone: the separate activation and its backward, the Fp8Padding / Fp8Unpadding copies.
  for (const char* name : {"experts_swiglu", "experts_fp8_padding", "experts_fp8_unpadding"}) {
    CHECK_MESSAGE(test::find_op(forward, name) == nullptr, name);
  }
  for (const char* name : {"experts_swiglu.backward", "experts_fp8_padding.backward", "experts_fp8_unpadding.backward"}) {
    CHECK_MESSAGE(test::find_op(backward, name) == nullptr, name);
  }
  // The per-expert loop has them.
  CHECK(test::find_op(layer_forward_ops(loop), "experts_swiglu") != nullptr);
  CHECK(test::find_op(layer_forward_ops(loop), "experts_fp8_padding") != nullptr);
  // Still there: the router, the flex dispatcher's permutations (tests/unit/moe_permutation_test.cpp),
  // both GEMMs.
  for (const char* name : {"router", "router_topk", "moe_permute", "experts_fp8_casts", "experts_fc1", "experts_fc2",
                           "moe_unpermute"}) {
    CHECK_MESSAGE(test::find_op(forward, name) != nullptr, name);
  }
  // One cast kernel each way, of FC1's input (forward) and FC2's output gradient (backward) only:
  // rows x h x (2 read + 2 (1 + 1/32) row- and column-wise MXFP8 written).
  const double mxfp8_cast = 2.0 + 2.0 * (1.0 + 1.0 / 32.0);
  const auto cast = test::forward_and_backward_op(s, "experts_fp8_casts");
  REQUIRE(cast);
  CHECK(cast->forward.launches == 1.0);
  CHECK(cast->forward.bytes.value() == doctest::Approx(kRows * kHidden * mxfp8_cast));
  CHECK(cast->backward.launches == 1.0);
  CHECK(cast->backward.bytes.value() == doctest::Approx(kRows * kHidden * mxfp8_cast));
  // FC1's epilogue writes, besides its 16-bit output, FC2's MXFP8 input row- and column-wise:
  // rows x ffn x 2 (1 + 1/32) bytes more than the loop's FC1 (same operands, same 16-bit output).
  const Op* fc1 = test::find_op(forward, "experts_fc1");
  const Op* fc1_loop = test::find_op(layer_forward_ops(loop), "experts_fc1");
  REQUIRE(fc1 != nullptr);
  REQUIRE(fc1_loop != nullptr);
  CHECK(fc1->launches == 1.0);
  CHECK(fc1->bytes.value() - fc1_loop->bytes.value() ==
        doctest::Approx(kRows * kExpertFfn * 2.0 * (1.0 + 1.0 / 32.0)));
  // FC2's data gradient reads the saved FC1 output (2 x 16 bits) and writes FC1's gradient as
  // MXFP8 row- and column-wise (2 x 2 (1 + 1/32)) instead of its 16-bit gradient (2 bytes).
  const Op* dgrad = test::find_op(backward, "experts_fc2.dgrad");
  const Op* dgrad_loop = test::find_op(layer_backward_ops(loop), "experts_fc2.dgrad");
  REQUIRE(dgrad != nullptr);
  REQUIRE(dgrad_loop != nullptr);
  CHECK(dgrad->bytes.value() - dgrad_loop->bytes.value() ==
        doctest::Approx(kRows * kExpertFfn * (2.0 * (2.0 + 2.0 * (1.0 + 1.0 / 32.0)) - 2.0)));
}

TEST_CASE("grouped experts with the flex dispatcher keep the token counts on the device: no host sync before the dispatch") {
  const LayerShape loop = qwen3_layer(DataType::mxfp8, MoeGroupedGemm::per_expert, ExpertDispatcher::deepep);
  const LayerShape grouped = qwen3_layer(DataType::mxfp8, MoeGroupedGemm::grouped, ExpertDispatcher::deepep);
  CHECK(moe_forward_host_sync(loop));
  CHECK_FALSE(moe_forward_host_sync(grouped));
  // NCCL's all_to_all_single still takes host split lists: the all-to-all dispatcher syncs.
  CHECK(moe_forward_host_sync(qwen3_layer(DataType::mxfp8, MoeGroupedGemm::grouped, ExpertDispatcher::alltoall)));
  // No sync: the forward is one stretch the host dispatches without a standing start mid-layer.
  const GpuSpec* gpu = Catalog::builtin().find_gpu("b200");
  REQUIRE(gpu != nullptr);
  const CostParameters params;
  const LayerCostInputs in = test::compute_only_inputs(grouped, *gpu, params);
  const OpList forward = layer_forward_ops(grouped);
  CHECK(layer_costs(in).layer_forward.compute.value() ==
        doctest::Approx(ops_time(forward.begin(), forward.end(), *gpu, params,
                                 Seconds(params.training_host_dispatch_s())).value()));
}

TEST_CASE("a Qwen3-30B-A3B layer is no slower with grouped expert GEMMs than with the per-expert loop") {
  // Same FLOPs and fewer (or equal) bytes, one launch and one gap per GEMM instead of 16 and 4,
  // and no host-bound stretch after a sync: the grouped layer cannot be slower.
  for (DataType t : {DataType::bf16, DataType::mxfp8}) {
    for (ExpertDispatcher d : {ExpertDispatcher::alltoall, ExpertDispatcher::deepep}) {
      CAPTURE(static_cast<int>(t));
      CAPTURE(static_cast<int>(d));
      const double loop = layer_compute(qwen3_layer(t, MoeGroupedGemm::per_expert, d));
      const double grouped = layer_compute(qwen3_layer(t, MoeGroupedGemm::grouped, d));
      CHECK(grouped > 0.0);
      CHECK(grouped <= loop);
    }
  }
}
