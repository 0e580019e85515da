// Memory per GPU against published MEASURED peaks: the rows of
// tests/fixtures/reference/published_memory.yaml, each with the layout it ran (its `scenario`, the
// file's header states the mapping rules) and what the source measured (`kind`).
//
// The prediction's peak (model/prediction.h MemoryBreakdown) counts everything on the GPU. What a
// source measures is one of three views of it (training_predictor.cpp stage_memory() builds the
// buffers):
//   device         the peak itself (nvidia-smi)
//   max_reserved   the PyTorch caching allocator's segments: the peak less what lies outside
//                  the allocator, the CUDA context (memory.cuda_context_bytes) and NCCL's buffers
//                  (memory.nccl_buffer_bytes_per_communicator per communicator kind, as
//                  stage_memory counts them: tp, pp, dp, cp groups larger than 1, these rows being
//                  dense); cuBLAS workspaces, ZeRO-3's gathered layers and pipeline buffers are
//                  allocator tensors and stay in
//   max_allocated  max_reserved less the allocator's fragmentation (memory.allocator_fragmentation)
//
// Before this test (main at 171eba1) the model predicted the torchtitan rows 42.6-43.0% (Llama 3.1
// 8B, full recomputation, 32K-256K tokens with CP) and 43.6% (70B, FSDP 32 x TP 8) under their
// measured reserved peaks: it kept Megatron's FP32 logits for the loss (4 s b V / t) but not the two FP32
// gradients PyTorch's cross-entropy allocates beside them in its backward. With
// training.cross_entropy_fusion: pytorch (model/workload.h; 8 s b V / t more while the loss's
// backward runs, 31 GiB at 32K tokens and Llama 3's 128K vocabulary) the 8B rows are 6.4-7.1% under;
// the 70B row stayed 25.2% under. Its TP 8 runs the loss on vocab-sharded DTensors (torchtitan's
// default loss parallelism), whose nll_loss backward is PyTorch's own decomposition:
// zeros_like(x), then (grad_input + torch.exp(x)) * grad_output (pytorch/pytorch
// torch/distributed/tensor/parallel/loss.py @02eef6b8, _nll_loss_and_log_softmax_backward), three
// FP32 vocab-sized tensors beside the saved log-probabilities instead of the fused kernels' two
// (model/workload.h CrossEntropyFusion::pytorch; 4 x 131072 x 16032 bytes = 7.8 GiB more at its
// 16 x 8192 tokens): 53.8 -> 62.4 GiB, -25.2% -> -13.2%; the 8B rows (tp 1) unchanged. The 70B
// row's remaining 9.5 GiB is not explained by a cited mechanism.
//
// Tolerances: a regression guard holds each row within 5 points of its recorded error; the bar a
// memory model should meet (every row within 10% of what it measured) is reported by a case
// allowed to fail while the 70B row misses it.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "simulator/catalog.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/published_memory_rows.h"

using namespace stepcast;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct MemoryRow {
  std::string id;
  std::string kind;             // max_allocated, max_reserved or device
  double measured_gib = 0.0;
  double predicted_gib = 0.0;   // the prediction's view that matches `kind`
  double error = 0.0;           // predicted / measured - 1
  MemoryBreakdown memory;
  int tokens_per_rank = 0;      // micro-batch x sequence / cp
};

// The prediction as the source's instrument sees it (the header's three views).
double view_bytes(const MemoryBreakdown& m, const std::string& kind, const Scenario& sc, const CostParameters& params) {
  const ParallelConfig& par = sc.parallel;
  // A MoE row adds the expert groups' communicators (stage_memory counts ep, expert tp and expert
  // dp too): extend this count before adding one.
  REQUIRE(!sc.model.is_moe());
  int communicators = 0;
  for (int size : {par.tp, par.pp, par.dp, par.cp}) communicators += size > 1 ? 1 : 0;
  const double outside = params.cuda_context_bytes + params.nccl_buffer_bytes_per_communicator * communicators;
  if (kind == "device") return m.peak.value();
  if (kind == "max_reserved") return m.peak.value() - outside;
  REQUIRE(kind == "max_allocated");
  return m.peak.value() - outside - m.fragmentation.value();
}

const std::vector<MemoryRow>& memory_rows() {
  static const std::vector<MemoryRow> result = [] {
    std::vector<MemoryRow> out;
    const YAML::Node runs = test::published_memory_runs();
    TrainingPredictor predictor;
    std::printf("\n%-48s %-13s %8s %8s %7s | %7s %7s %7s %7s %7s %7s (GiB)\n", "published memory row", "kind",
                "measured", "pred", "error", "weights", "grads", "optim", "activ", "buffers", "frag");
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const YAML::Node row = runs[i];
      MemoryRow r;
      r.id = row["id"].as<std::string>();
      r.kind = row["kind"].as<std::string>();
      r.measured_gib = row["measured_gib"].as<double>();
      const Scenario sc = test::published_memory_scenario(row, r.id);
      const TrainingPrediction p = predictor.predict(sc);
      r.memory = p.memory;
      r.predicted_gib = view_bytes(p.memory, r.kind, sc, predictor.parameters()) / kGiB;
      r.error = r.predicted_gib / r.measured_gib - 1.0;
      r.tokens_per_rank = sc.training().micro_batch * sc.training().seq_len / sc.parallel.cp;
      const MemoryBreakdown& m = p.memory;
      std::printf("%-48s %-13s %8.1f %8.1f %+6.1f%% | %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f\n", r.id.c_str(),
                  r.kind.c_str(), r.measured_gib, r.predicted_gib, 100.0 * r.error, m.weights.value() / kGiB,
                  m.gradients.value() / kGiB, m.optimizer_states.value() / kGiB, m.activations.value() / kGiB,
                  m.buffers.value() / kGiB, m.fragmentation.value() / kGiB);
      out.push_back(r);
    }
    return out;
  }();
  return result;
}

}  // namespace

TEST_CASE("every published memory row names its source, a known kind and a scenario that predicts") {
  const YAML::Node runs = test::published_memory_runs();
  REQUIRE(runs.size() == memory_rows().size());
  CHECK(memory_rows().size() == 11);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    CAPTURE(runs[i]["id"].as<std::string>());
    CHECK(!runs[i]["source"].as<std::string>().empty());
    CHECK(!runs[i]["kind_source"].as<std::string>().empty());
    const std::string kind = runs[i]["kind"].as<std::string>();
    CHECK((kind == "max_allocated" || kind == "max_reserved" || kind == "device"));
    CHECK(memory_rows()[i].predicted_gib > 0.0);
  }
}

TEST_CASE("published memory rows: regression guard") {
  // Each row's error when this test was written (predicted view / measured - 1), and a band of 5
  // points around it: a model change that moves a row further must say why (and update this
  // table). These are measurements of the model's error, not targets. The 8B rows moved +2.1 GiB
  // (the 70B row +0.8) when FSDP's buffers followed FSDP2: its two gathered layers held in the
  // format they are gathered in (BF16, param_dtype; PrecisionConfig::gathered_weights), not the
  // FP32 they are stored in (-0.81 GiB), and its root unit (embedding and output layer, 1.05 B of
  // the 8B's parameters) held unsharded in BF16 from the forward's start to the backward's end,
  // with the output layer's BF16 gradient (+2.93 GiB; training_predictor.cpp). Mean |error| of the
  // eleven rows 5.3% -> 5.0%.
  const std::map<std::string, double> recorded = {
      {"torchtitan-2024-12-llama3.1-8b-fsdp8-cp1-32k", -0.039},
      {"torchtitan-2024-12-llama3.1-8b-fsdp4-cp2-64k", -0.042},
      {"torchtitan-2024-12-llama3.1-8b-fsdp2-cp4-128k", -0.040},
      {"torchtitan-2024-12-llama3.1-8b-fsdp1-cp8-256k", -0.045},
      {"torchtitan-2024-12-llama3.1-70b-fsdp32-tp8", -0.127},  // -0.252 before loss parallelism's third copy
      // Table 1, torchtitan's per-op selective checkpointing (recompute: selective_op). Eager and
      // compiled predict the same peak: the policy re-runs the eager-only saved tensors (FP32 norm
      // copies, repeat_kv's K/V, silu(a)); the measured eager peak is 5.4 GiB higher, unexplained.
      {"torchtitan-2024-12-llama3.1-8b-fsdp8-sac-op-eager", -0.030},
      {"torchtitan-2024-12-llama3.1-8b-fsdp8-sac-op-compile", 0.038},
      {"torchtitan-2024-12-llama3.1-8b-fsdp8-sac-op-compile-fp8", 0.041},
      // Table 3, the same three runs on 128 GPUs (FSDP 128, global batch 256): the FP32 states shard
      // 16 ways more, 14.96 -> 0.93 GiB predicted, 14.0 GiB less against 15.0-15.4 GiB measured
      // (82.4/77.0/76.8 -> 67.0/62.0/61.8); the activations are the same per rank.
      {"torchtitan-2024-12-llama3.1-8b-fsdp128-sac-op-eager", -0.016},
      {"torchtitan-2024-12-llama3.1-8b-fsdp128-sac-op-compile", 0.063},
      {"torchtitan-2024-12-llama3.1-8b-fsdp128-sac-op-compile-fp8", 0.066},
  };
  for (const MemoryRow& r : memory_rows()) {
    CAPTURE(r.id);
    REQUIRE(recorded.count(r.id) == 1);
    CHECK(std::fabs(r.error - recorded.at(r.id)) <= 0.05);
  }
}

TEST_CASE("rows whose ranks hold the same tokens and the same parameter shard predict the same memory, as measured") {
  // torchtitan's Table 2 grows the sequence with CP at a fixed 8 GPUs: every rank keeps 32768
  // tokens and 1/8 of the FP32 states (FSDP shards over FSDP x CP), and the measured peaks agree
  // within 0.7% (83.9-84.5 GiB). The prediction's must agree as closely: 1%.
  double lo = 1e30, hi = 0.0;
  int n = 0;
  for (const MemoryRow& r : memory_rows()) {
    if (r.id.find("llama3.1-8b") == std::string::npos || r.id.find("-cp") == std::string::npos) continue;  // Table 2
    CHECK(r.tokens_per_rank == 32768);
    lo = std::min(lo, r.predicted_gib);
    hi = std::max(hi, r.predicted_gib);
    ++n;
  }
  REQUIRE(n == 4);
  CHECK(hi / lo - 1.0 <= 0.01);
}

TEST_CASE("every published memory row within 10% of its measured peak (the bar)" * doctest::may_fail()) {
  for (const MemoryRow& r : memory_rows()) {
    CAPTURE(r.id);
    CHECK(std::fabs(r.error) <= 0.10);
  }
}

TEST_CASE("Blackwell capacity is what the device reports: the GB200 Llama 3.1 405B FP8-CS run, which ran, fits") {
  // The catalog's memory is the device's own report (scenarios/catalog/gpus.yaml conventions):
  // nvidia-smi prints 189471MiB for a GB200 and CUDA 182642 MiB for a B200 (sources there). The
  // datasheets' "186 GB" and "180 GB" are GiB-scale capacities; read as decimal GB they were 6-7%
  // short.
  constexpr double kMiB = 1024.0 * 1024.0;
  const Catalog& c = Catalog::builtin();
  CHECK(c.find_gpu("gb200")->memory.value() == 189471.0 * kMiB);
  CHECK(c.find_gpu("b200")->memory.value() == 182642.0 * kMiB);
  // Megatron-Bridge 25.11's GB200 row (tests/fixtures/reference/dev_training_runs.yaml
  // mbridge2511_gb200_llama31_405b_fp8-cs_256gpu), as scripts/dev_scenarios.py maps it: the recipe
  // LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_CS_V2 (NVIDIA-NeMo/Megatron-Bridge scripts/performance/
  // configs/llama/llama31_workload_base_configs.py @0013c9a8ed4d: TP 4, PP 16, VP 4, no recompute,
  // no offload; llama31_llm_pretrain.py: grad_reduce_in_fp32 False) ran on 256 GPUs. Its peak
  // (stage 2: 77 micro-batch chunks of 2 layers in flight, Megatron-Core's interleaved warm-up
  // (p - r - 1) 2 + (v - 1) p + 1) is above 186e9 bytes and below the device's 189471 MiB.
  const Scenario sc = parse_scenario(R"(schema_version: 1
name: dev-mbridge2511_gb200_llama31_405b_fp8-cs_256gpu
model: llama3-405b
system: {preset: gb200-nvl72, gpus: 256}
training: {seq_len: 8192, global_batch: 1536, micro_batch: 1}
parallel: {tp: 4, pp: 16, dp: 4, vpp: 4, first_stage_layers: 1, last_stage_layers: 1,
           sequence_parallel: true, tp_comm_overlap: true, zero: 1, recompute: none}
precision: {compute: fp8, fp8_scaling: current, params: fp8, grads: bf16}
)",
                                     "mbridge2511_gb200_llama31_405b_fp8-cs_256gpu");
  const TrainingPrediction p = TrainingPredictor().predict(sc);
  CAPTURE(p.memory.peak.value() / kGiB);
  CHECK(p.fits);
  CHECK(p.memory.peak.value() > 186e9);
}
