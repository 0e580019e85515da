// `stepcast explain --ops` (simulator/explain_ops.h): the kernel tables of the critical stage add
// up to the prediction's compute and recompute lines, their rows carry the op's own shape and work,
// and the text shows the columns and counts it promises.

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "simulator/collective_models.h"
#include "simulator/explain_ops.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"

using namespace stepcast;

namespace {

StepKernels kernels_of(const Scenario& sc) {
  TrainingPredictor predictor;
  const auto net = make_collective_model(default_collective_model(), sc.system, predictor.parameters());
  return predictor.step_kernels(sc, *net);
}

// The tables' kernels x passes against the breakdown's compute and recompute lines. They are summed
// along different paths (each pass time times its passes here; per model chunk and layer kind in
// the predictor), so they agree to rounding.
void check_reconciles(const StepKernels& k) {
  const std::vector<KernelTable> tables = kernel_tables(k);
  const KernelReconciliation r = reconcile(tables);
  const TimeBreakdown& b = k.prediction.time;
  REQUIRE(b.compute.value() > 0.0);
  CHECK(r.compute.value() == doctest::Approx(b.compute.value()).epsilon(1e-9));
  CHECK(r.recompute.value() == doctest::Approx(b.recompute.value()).epsilon(1e-9));
  // Each table's rows (ops and host waits) add up to its passes' times, and their shares to 1.
  for (const KernelTable& t : tables) {
    Seconds rows(0.0);
    double shares = 0.0;
    for (const KernelRow& row : t.rows) {
      rows += row.time;
      shares += row.share;
    }
    CHECK(rows.value() == doctest::Approx(t.time().value()).epsilon(1e-9));
    CHECK(shares == doctest::Approx(1.0).epsilon(1e-9));
  }
}

const KernelRow* find_row(const KernelTable& t, const std::string& name, const std::string& phase) {
  for (const KernelRow& r : t.rows) {
    if (r.name == name && r.phase == phase) return &r;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("explain --ops: a dense scenario's layer kernels x layers x micro-batches equal its compute and recompute lines") {
  // GPT-3 175B on Selene: interleaved 1F1B, selective recompute; stage 0 holds the embedding.
  const Scenario sc = load_scenario("gpt3-175b-selene");
  const StepKernels k = kernels_of(sc);
  REQUIRE(k.layers.size() == 1);
  CHECK(k.layers[0].kind == "dense");
  // 96 layers over 8 stages x 3 chunks: 12 layers on every stage; 1536 / (16 x 1) = 96 micro-batches.
  CHECK(k.layers[0].layers == 12.0);
  CHECK(k.microbatches == 96);
  CHECK(k.layers[0].passes == 12.0 * 96.0);
  CHECK(k.layers[0].recompute_passes == 12.0 * 96.0);  // selective: every layer recomputes its attention core
  check_reconciles(k);

  SUBCASE("full recomputation of some layers, on a 16-stage 1F1B pipeline") {
    const std::vector<Override> edits = {{"parallel.pp", "16"}, {"parallel.vpp", "1"}, {"parallel.dp", "8"},
                                         {"parallel.recompute", "full"}, {"parallel.recompute_layers", "3"}};
    const Scenario full = load_scenario("gpt3-175b-selene", edits);
    const StepKernels f = kernels_of(full);
    // 96 / 16 = 6 layers per stage, 3 of them recomputed: half the passes recompute.
    REQUIRE(f.layers.size() == 1);
    CHECK(f.layers[0].recompute_passes == doctest::Approx(f.layers[0].passes * 0.5));
    check_reconciles(f);
  }
  SUBCASE("ZeRO-3 with FP8 compute over 16-bit parameters: the weight cast outside the dispatch bound") {
    const std::vector<Override> edits = {{"precision", "fp8"}};
    const StepKernels z = kernels_of(load_scenario("llama2-7b-zero3", edits));
    REQUIRE(z.layers.size() == 1);
    const KernelPass& forward = z.layers[0].kernels.forward;
    REQUIRE(forward.ops.size() > 0);
    CHECK(forward.ops[forward.ops.size() - 1].name == "weight_quantize");
    check_reconciles(z);
  }
}

TEST_CASE("explain --ops: a MoE scenario's layer kernels reconcile with its compute and recompute lines") {
  SUBCASE("Mixtral 8x7B with expert parallelism (catalog example)") {
    const StepKernels k = kernels_of(load_scenario("mixtral-8x7b-ep"));
    REQUIRE(k.layers.size() == 1);
    CHECK(k.layers[0].kind == "MoE");
    CHECK(k.layers[0].layers == 32.0);
    check_reconciles(k);
  }
  SUBCASE("DeepSeek-V3 in FP8 on 1024 H100s: MLA, a first dense layer kept in BF16, MoE layers, recompute modules") {
    const StepKernels k = kernels_of(load_scenario("tests/fixtures/dev_scenarios/mbridge2509_h100_deepseekv3_fp8_1024gpu.yaml"));
    bool moe = false;
    for (const StageLayerKernels& l : k.layers) moe = moe || l.kind == "MoE";
    CHECK(moe);
    CHECK(k.layers.size() >= 2);
    check_reconciles(k);
  }
  SUBCASE("Qwen3-30B-A3B in MXFP8 on 8 GB200s with grouped expert GEMMs (parallel.moe_grouped_gemm grouped)") {
    const std::vector<Override> grouped{{"parallel.moe_grouped_gemm", "grouped"}};
    const StepKernels k =
        kernels_of(load_scenario("tests/fixtures/dev_scenarios/mbridge2511_gb200_qwen3_30b_a3b_fp8-mx_8gpu.yaml", grouped));
    REQUIRE(k.layers.size() == 1);
    CHECK(k.layers[0].kind == "MoE");
    check_reconciles(k);
  }
}

TEST_CASE("explain --ops rows carry each GEMM's shape and FLOPs (2 m n k x batch) and what bounds it") {
  const Scenario sc = load_scenario("gpt3-175b-selene");
  const StepKernels k = kernels_of(sc);
  const std::vector<KernelTable> tables = kernel_tables(k);
  const KernelTable& dense = tables.front();
  // FC1 on one TP rank: m = b s = 1 x 2048 tokens, n = 4h / t = 49152 / 8, k = h = 12288.
  const KernelRow* fc1 = find_row(dense, "fc1", "fwd");
  REQUIRE(fc1 != nullptr);
  REQUIRE(fc1->op != nullptr);
  const double m = sc.training().micro_batch * static_cast<double>(sc.training().seq_len);
  const double n = sc.model.ffn_hidden / static_cast<double>(sc.parallel.tp);
  const double kk = sc.model.hidden;
  CHECK(fc1->op->gemm.m == m);
  CHECK(fc1->op->gemm.n == n);
  CHECK(fc1->op->gemm.k == kk);
  CHECK(fc1->op->flops.value() == doctest::Approx(2.0 * m * n * kk * fc1->op->gemm.batch));
  // 309 GFLOP at A100's 312 TFLOP/s takes ~1 ms against ~0.2 GB of operands at 2 TB/s (~0.1 ms):
  // compute-bound, and its time is that term plus one kernel gap.
  CHECK(fc1->bound == "compute");
  CHECK(fc1->timing.compute > fc1->timing.memory);
  CHECK(fc1->time.value() == doctest::Approx((fc1->timing.compute + fc1->timing.gap).value()));
  // Rows are sorted longest first.
  for (std::size_t i = 1; i < dense.rows.size(); ++i) CHECK(dense.rows[i - 1].time >= dense.rows[i].time);
  // A norm moves bytes and does no tensor work: memory-bound (or gap-bound).
  const KernelRow* norm = find_row(dense, "input_norm", "fwd");
  REQUIRE(norm != nullptr);
  CHECK(norm->bound != "compute");
}

TEST_CASE("explain --ops shows a host launch wait row where a pass's dispatch outlasts its kernels") {
  // Mixtral's embedding forward is two short kernels; with TE's per-launch host time the host takes
  // longer to dispatch them than they run.
  const StepKernels k = kernels_of(load_scenario("mixtral-8x7b-ep"));
  const KernelPass& embedding = k.embedding_output.embedding_forward;
  REQUIRE(embedding.stretch_count == 1);
  const KernelStretch& s = embedding.stretches[0];
  REQUIRE(s.host_bound());
  const std::vector<KernelTable> tables = kernel_tables(k);
  const KernelTable* table = nullptr;
  for (const KernelTable& t : tables) {
    if (t.title == "embedding") table = &t;
  }
  REQUIRE(table != nullptr);
  const KernelRow* wait = find_row(*table, "(host launch wait)", "fwd");
  REQUIRE(wait != nullptr);
  CHECK(wait->bound == "host launch");
  CHECK(wait->time.value() == doctest::Approx((s.host - s.gpu).value()));
  CHECK(table->forward.value() == doctest::Approx(s.host.value()));
}

TEST_CASE("explain --ops text: the columns, the top N rows, the passes per step and the reconciliation") {
  const Scenario sc = load_scenario("gpt3-175b-selene");
  const StepKernels k = kernels_of(sc);
  const std::string text = kernel_tables_text(sc, k, 5);
  for (const char* column : {"op", "phase", "kind", "shape (gemm m x n x k x batch)", "dtype", "GFLOP", "MB", "time",
                             "bound", "share"}) {
    CHECK(text.find(column) != std::string::npos);
  }
  CHECK(text.find("dense layer: fwd ") != std::string::npos);
  CHECK(text.find("runs 1152 times per step on this stage: 12 layers x 96 micro-batches") != std::string::npos);
  CHECK(text.find("\n      5 ") == std::string::npos);  // rows numbered from 1, at most 5 per table
  CHECK(text.find("\n      (") != std::string::npos);   // ... and the rest summed on one line
  CHECK(text.find(" fc1 ") != std::string::npos);
  CHECK(text.find("2048x6144x12288x1") != std::string::npos);
  CHECK(text.find("the compute line") != std::string::npos);
  CHECK(text.find("(+0.000%)") != std::string::npos);
  CHECK(text.find("Left out of the tables:") != std::string::npos);
  // Deterministic: the same scenario prints the same text.
  CHECK(kernel_tables_text(sc, kernels_of(sc), 5) == text);
}
