// Fidelity on issue 8's development set: the rows of tests/fixtures/reference/dev_training_runs.yaml
// (Megatron-Bridge performance tables, Llama 3 Table 4) that scripts/dev_scenarios.py maps, each as
// the scenario it writes to tests/fixtures/dev_scenarios/ (its docstring states the mapping rules,
// one per field, and the rows it leaves out with their reasons): the mixture-of-experts and
// context-parallel rows, and since stop 23 the dense rows (Llama 3 8B / 70B / 405B, Llama 3.1 405B
// without CP). No constant is tuned to these rows. The figures below up to stop 23 are over the 20
// MoE and CP rows; that mean is still printed on its own ("MoE+CP"), beside the dense rows' and
// all rows'.
//
// Reference step time: the row's derived.iteration_time_s (Megatron-Bridge: global batch x
// sequence / (tokens/s/GPU x GPUs)); for Llama 3 Table 4 rows, which give TFLOP/s per GPU under
// the PaLM MFU convention (Chowdhery et al. 2023 App. B: 6N + 12 L H Q T per token, full
// attention), the model FLOPs of the step (training_step_flops, full attention) over GPUs x
// TFLOP/s.
//
// Tolerances: the bar (10% mean absolute error, 20% on any row) is reported by cases
// allowed to fail while the model misses it (it does: at stop 33, mean 13.3% over the 16 MoE and CP
// rows, 11.7% over all 24, three rows beyond 20%; 26.1% over the then 20 MoE and CP rows when this
// was first written; see the guard's table); a regression guard fails when any row drifts 10
// points from its recorded error.
// The table was moved by pricing Transformer Engine's per-expert GEMM loop, the experts' FP8
// casts and the all-to-all dispatcher's host synchronization (model/moe_ops.h): mean 29.8% ->
// 28.5%; then by Qwen3's QK-norm (model/layer_ops.cpp push_qk_norm; 28.3% on main before it ->
// 28.0%, Qwen3 rows 1-2 points slower); then by the FP8 experts' padding copies (model/moe_ops.cpp
// pads_expert_rows; 28.0% -> 27.3%, the FP8 MoE rows 2-5 points slower); then by GPT-OSS's
// experts' FC2 bias, added per expert in PyTorch (moe_ops.cpp expert_bias_op; 27.3% -> 26.0%, the
// GPT-OSS rows 3.5-8 points slower); then by attention's head-dim cost (model/op_time.h
// flash_head_dim_efficiency: GPT-OSS's head dim 64 pays the softmax's exponentials, 0.4-2.8 points
// slower; MLA's mean width 160 gains, DeepSeek-V3 0.6-1.3 points faster; 26.0% -> 25.9%); then by
// the fine-grained recomputation the rows' Megatron-Bridge recipes set, where the recipe's layout is
// the row's (scripts/dev_scenarios.py RECIPES; parallel.recompute_modules): three DeepSeek-V3 rows
// recompute mla_up_proj (H100 also mlp) and now fit in memory, 1.6-2.3 points slower; GPT-OSS H100
// 26.02 recomputes layernorm and moe_act, 0.7 points slower; 25.9% -> 25.7%; then by the
// mapping's precision rules (scripts/dev_scenarios.py: FP8-CS is current scaling with FP8 primary
// weights, FP8-MX is MXFP8, and Megatron-Bridge reduces gradients in BF16, as its performance
// scripts set): 25.7% -> 25.1%. The three Llama 3.1 405B rows now fit in memory (FP8 weights, BF16
// gradient buffers); B200 GPT-OSS is 13.7 points faster (its exposed gradient reduce-scatter, 816
// -> 271 ms), GB200 Qwen3-30B-A3B 12.3 points slower (MXFP8's casts and scales); then by the
// communication overlaps of the recipes whose layout is the row's (scripts/dev_scenarios.py
// RECIPES): DeepSeek-V3 H100 and the two Qwen3-235B H100 rows overlap their all-to-alls
// (overlap_moe_expert_parallel_comm), which were 12-49 s exposed: +35%, +13%, +16% -> -20%, -31%,
// -30%; 25.1% -> 25.8%. Every MoE row is now too fast, which points at one missing MoE cost. Then
// weight-gradient GEMMs accumulate into BF16 main gradients where the rows reduce in BF16
// (model/op_builders.h main_grad_accumulate_bytes): B200 DeepSeek-V3 4.2 points faster, the others
// under 1 point; 25.8% -> 26.1%; then by the Llama 3.1 recipes' TP communication overlap
// (tp_comm_overlap, scripts/dev_scenarios.py): the three Llama 3.1 405B rows go from +2.2%, +6.9%,
// -2.8% to -14.5%, -10.8%, -12.0%: with FP8 current scaling the overlapped TP collectives leave
// less GEMM time than the model's overlap needs, or FP8's per-TP-group costs are missing (open);
// 26.1% -> 27.4%; then by the host's dispatch rate through Transformer Engine modules
// (CostParameters::te_host_dispatch_factor, TransformerEngine#2053: a te.Linear forward costs the
// CPU 2.69x a torch.nn.Linear's), which binds where the all-to-all dispatcher's host
// synchronization leaves the GPU waiting on the host for the rest of a MoE forward of small
// micro-batches: B200 Qwen3-30B-A3B (micro-batch 1, 16 local experts) -46.5% -> -14.6%, H100
// Qwen3-30B-A3B 26.02 -55.5% -> -45.8%, B200 Qwen3-235B -20.8% -> -16.1%, B200 DeepSeek-V3
// -29.0% -> -24.5%, four others under 1.2 points; 27.4% -> 24.7%; then by the flex dispatcher
// with DeepEP / HybridEP where the row's recipe runs it (parallel.ep_dispatcher deepep,
// scripts/dev_scenarios.py `dispatcher` rule; model/moe_ops.h moe_deepep_bytes: each token crosses
// the network once per destination node, DeepSeek-V3's node limit keeping it to 3.6 of 8 nodes on
// average): DeepSeek-V3 H100 -19.9% -> -36.3% (its overlapped dispatch, 3.1 s exposed, now hides
// entirely behind the other micro-batch's compute), B200 DeepSeek-V3 -24.5% -> -29.0%, GB200
// DeepSeek-V3 BF16 -18.6% -> -19.6%, GB200 Qwen3-30B-A3B -9.7% -> -15.7%; 24.7% -> 26.1%. Fewer
// bytes can only make these already too-fast rows faster; what they miss is not the dispatch's
// bytes. Not modelled: the SMs the DeepEP/HybridEP kernels take from compute running beside them
// (24 in DeepEP's examples, 32 in Megatron-Bridge's performance overrides, moe_hybridep_num_sms),
// and the flex dispatcher's permutation after the dispatch in place of the all-to-all's before it
// (priced as the all-to-all dispatcher's). The MoE
// rows stay too fast (Qwen3-30B-A3B on H100 by 46-55%, GPT-OSS
// by 18-51%), see the guard's table. What is still missing grows with the micro-batch's tokens
// (per layer and micro-batch, reference minus prediction: GPT-OSS ~23 ms at 16K tokens, ~6 ms at
// 4-8K; Qwen3-30B-A3B on H100 the same per token at micro-batch 1 and 2), so beyond the host
// bound above it is not a fixed host cost per layer; and the benchmarks' forced balancing (random
// router logits, Megatron's RandomSTE) leaves the busiest EP rank within ~1% of the mean, so it is
// not routing imbalance either. On the seven H100 rows (four models, EP 8-64, micro-batch 1-4,
// BF16 and FP8) it is 0.23-0.32 us per routed token copy per layer (forward and backward),
// whatever the hidden size (2048-7168): no memory pass or GEMM of the MoE block scales that way,
// and the Blackwell rows spread 0.01-0.43 us; the mechanism is not identified. It is not H100
// physics: on NeMo AutoModel's H100 BF16 rows (NVIDIA-NeMo/Automodel docs/performance-summary.md,
// April 2026: TE + DeepEP, FSDP, no pipeline) the model predicts Qwen3-30B-A3B (8 GPUs, EP 8,
// micro-batch 4, global batch 512) at 20.9 s against 21.77 s measured and GPT-OSS-120B (64 GPUs,
// EP 64, micro-batch 2) at 4.76 s against 4.30 s, so the shortfall belongs to the Megatron-Bridge
// recipes' path (all-to-all dispatcher, pipeline, FP8 current scaling: not separable from these rows).
// Stop 31: the Qwen3-30B-A3B H100 and B200 rows of 25.11 and 26.02 were runs of a filed regression
// (Megatron-Bridge #1998: dropless 2x slower than 25.09's token-drop; 26.02.01 runs the H100 row's
// scenario in 28.94 s, 27.4 s predicted, against 26.02's 51.27 s) and left the set; the per-token
// figure above leaned on them, so what is left of the missing MoE cost is the GPT-OSS and B200 rows'.
// Then by Blackwell's own compute constants (model/cost_parameters.h, from published kernel
// measurements, tests/fixtures/reference/blackwell_compute.yaml): sustained derate 0.935 -> 0.853
// (a B200 throttling under back-to-back tensor-core load, flashinfer PR #2899) and flash etas
// 0.42/0.33 -> 0.40/0.315 (cuDNN's GB200-over-H200 attention efficiency): the ten B200/GB200 rows
// 0.6-7.1 points slower (B200 Llama 3.1 405B -12.0% -> -4.9%, GB200 Qwen3-235B BF16 -11.3% ->
// -5.2%, GB200 DeepSeek-V3 BF16 -19.6% -> -13.3%); H100 rows unchanged; 25.3% -> 23.1%.
// Then by the flex dispatcher's measured link rates (CostParameters::deepep_network_eta 0.70 of
// the NIC, deepep_nvlink_eta 0.68 Hopper / 0.52 Blackwell: what DeepEP's authors measure through
// the PyTorch API Megatron-Core calls, tests/fidelity/deepep_fidelity_test.cpp) in place of NCCL's
// point-to-point rates: DeepSeek-V3 H100 -28.3% -> -25.8%, B200 DeepSeek-V3 -25.1% -> -24.0%,
// GB200 DeepSeek-V3 BF16 -13.3% -> -7.2%, GB200 Qwen3-30B-A3B -11.4% -> -5.1%; 23.1% -> 22.4%.
// Evidence gathered on the H100 Qwen3-30B-A3B shortfall (-46% / -55%), not modelled for want of a
// sourced figure: (1) the same workload on the same hardware ran 2.5x faster with a later stack:
// 16 H100, BF16, EP 16 with HybridEP, micro-batch 1, global batch 1024: 20.147 s per step, 299.4
// model TFLOP/s/GPU (NVIDIA-NeMo/Megatron-Bridge pull request #5123, NeMo 26.08.rc2, Bridge
// 3a9559f0) against these rows' 118-121; stepcast predicts that layout at 23.2 s (18.6 s with
// ep_comm_overlap, which the PR does not state), so the rows' missing time belongs to the 25.11 /
// 26.02 software path, not to the hardware's physics. (2) It is not the host's dispatch of the
// attention, router and dispatcher preprocessing: on 16 H100 (Qwen3-30B-A3B BF16, all-to-all, EP
// 16, micro-batch 1) CUDA graphs over attn, moe_router and moe_preprocess ran slightly slower than
// eager (Megatron-Bridge pull request #3868), so pricing Megatron-Core's router kernel counts
// (72 unfused, 31 with --moe-router-fusion, 17 for router and preprocess with DeepEP: NVIDIA/
// Megatron-LM docs/discussions/deepseek-v3-gb200-optimization/deepseek-v3-gb200-optimization.md
// @1d9edcf8, Sec. 2.1.4 and 2.2.1, DeepSeek-V3) as host launches would contradict it there.
// (3) Megatron-Bridge files the software these two rows ran as a regression: issue #1998
// ("[Regression] Low QWEN3 30B B200 and H100 performance with dropless", 2026-01-20) reports the
// 25.11 dropless runs of Qwen3-30B-A3B on H100 and B200 twice as slow as 25.09's token-drop runs,
// with a fix targeted at 26.02. The model's 11.5 s for the 25.11 row is 2.15x under its 24.8 s,
// about the factor the issue names. No constant is fitted to close that gap: the rows stay in the
// guard as measured, a record of a software defect rather than of the hardware.
// Two more rows whose software Megatron-Bridge's tracker describes (sources only; nothing changed):
// B200 Qwen3-235B-A22B MXFP8 25.11 (-21.7%, PP 8, vpp 2): pull request #1760 (2025-12-17; issue
// #1705 classifies it as a recipe problem) reports that B200 MXFP8 recipe at 20.1 s per step and
// at 16.9 s once moe_a2a_overlap ("CPU overhead") and virtual pipelining are turned off. The row's
// 20.05 s is the first figure; the model, mapped without the overlap (no matching recipe), gives
// 15.7 s, 7% under the second. What the combined 1F1B costs the host is not priced. Under
// ep_comm_overlap the all-to-all dispatcher's token-count sync (token_dispatch opens with
// _maybe_dtoh_and_synchronize("before_ep_alltoall"), megatron/core/transformer/moe/
// token_dispatcher.py; the dispatch node is issued after the paired backward's combine) stops the
// host in the middle of the paired backward ("A host sync serializes the schedule regardless of
// which dispatcher backend caused it", NVIDIA/Megatron-LM docs/user-guide/features/
// moe_a2a_overlap.md @fc81b209, "Troubleshooting"), so that backward's launches join the forward's
// host-bound stretch. Launches alone do not give the PR's slowdown: on this row the backward's GPU
// time exceeds its launches' host time (12 us x 2.69 each), so the shared stretch is less
// host-bound than the forward's alone, and the overhead the PR names is the schedule's own per-node
// host work, for which no figure is published. On this set's H100 overlap rows the forward waits
// 5 us for the host per layer.
// B200 Qwen3-30B-A3B 25.11 (-15.5%, micro-batch 1): pull request #2499 (2026-02-23) says the B200
// config of that period ran the all-to-all dispatcher (flex hard-coded off), left the micro-batch
// unset and had no attention CUDA graph, which is the scenario the mapping writes; its fixed
// config (HybridEP, micro-batch 4) is another workload.
// Whether a larger host (CPU) cost per kernel launch explains the MoE rows' shortfall: no (nothing
// changed). scripts/host_dispatch_sensitivity.py predicts the 16 MoE rows with
// kernel.te_host_dispatch_factor raised from 2.69 (32 us a launch) to 4, 6 and 9, and prints each
// row's shortfall per layer pass (fwd + bwd of one layer and micro-batch) in launches. (1) The
// shortfall is not a per-pass cost: on the same model, GPU, precision and layout family the model
// counts the same 206 launches per Qwen3-30B-A3B MoE layer pass (86 forward, 120 backward at 16
// local experts), yet closing the rows would take 537 more launches per pass on H100 25.11
// (micro-batch 2, 17.3 ms short), 229 on H100 26.02 (micro-batch 1, 7.4 ms) and 44 on B200 (1.4
// ms): the H100 pair's shortfall grows with the micro-batch's tokens (17.3 / 7.4 = 2.3 for 2x the
// tokens), which a launch cost, fixed per pass, cannot do; a factor of 6 takes H100 26.02 to +2.4%
// while H100 25.11 stays at -38%. (2) Where passes are already host-bound the rows overshoot
// first: at factor 4, B200 Qwen3-30B-A3B -15.5% -> +19.3% (GB200 -6.9% -> +0.7%, +29.9% at 6)
// while H100 Qwen3-30B 25.11 moves -53.5% -> -50.0% and the H100 Qwen3-235B and DeepSeek-V3 rows
// not at all (their passes are GPU-bound by a wide margin). The MoE-only mean goes 21.5% -> 17.2% (4), 23.9% (6), 40.7% (9): a
// factor fitted to the set would trade rows against each other, with no measurement behind it. An
// FP8-only host premium (TransformerEngine#761, 2024: an FP8 te.Linear took >2x the CPU time of a
// BF16 one; #445, 2023: 2.07 vs 0.57 ms at 1024 tokens) is contradicted the same way: the
// Blackwell FP8 rows are the ones that overshoot. (3) CUDA graphs would take host time away, not
// add it: of the rows' matching recipes only GB200 Qwen3-30B-A3B FP8-MX captures graphs
// (cuda_graph_impl transformer_engine, cuda_graph_scope [moe_router, moe_preprocess]:
// QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1, scripts/performance/configs/qwen/
// qwen3_workload_base_configs.py @f29a269f8728, which also graphs B200's router and preprocess
// and none of H100 FP8-CS's), and the model already prices that scope as the two launches a graph
// replay roughly costs (router GEMM, top-k), so a cuda_graphs field would move the row by under
// 0.5 point, faster (parallel.cuda_graphs prices only the full-iteration graph, which no MoE row's
// recipe captures; this partial scope stays eager in the mapping). Measured against the hypothesis as well: graphing attn, moe_router and
// moe_preprocess on 16 H100 (Qwen3-30B-A3B BF16, all-to-all, micro-batch 1) ran no faster than
// eager (Megatron-Bridge pull request #3868, above). The missing time scales with routed tokens
// (0.23-0.32 us per token copy per layer on H100, above), which points at a per-token cost of the
// 25.11 / 26.02 all-to-all path (Megatron-Bridge issue #1998), not at the host.
//
// Memory: seven rows that ran were predicted not to fit. Transformer Engine keeps a quantized
// GEMM's input for the weight gradient as its FP8/MXFP8 copy (model/activation_memory.h
// saved_gemm_input_bytes), and the DeepSeek-V3 recipe's precision-aware optimizer keeps BF16
// moments and the FP32 master as a 16-bit remainder, 6 bytes instead of 12 (PrecisionConfig::
// moments, master_remainders; scripts/dev_scenarios.py). Peak GB per GPU, before -> after: B200
// Qwen3-235B MXFP8 201.5 -> 179.2 (of 180), GB200 DeepSeek-V3 MXFP8 208.6 -> 175.4 (of 186),
// GB200 Qwen3-30B MXFP8 188.5 -> 171.5 (of 186), H100 Qwen3-30B FP8-CS 25.11 89.0 -> 80.3 (of
// 85.5): these four now fit; step times unchanged. Three still did not. Then the Llama 3 rows'
// FSDP as the paper states it: "Our use of FSDP for Llama 3 shards optimizer states and
// gradients, but for model shards we do not reshard after forward computation" (Sec. 3.3.2,
// p. 10), which is ZeRO-2, not the mapping's ZeRO-1 (scripts/dev_scenarios.py, zero: 2): Llama 3
// 405B CP 16 at 128K keeps 1/128 of its FP32 gradients instead of all of them, 96.6 -> 83.9 GB
// of 85.5 at vpp 8 (step time unchanged, ZeRO-2's traffic being priced as the distributed
// optimizer's).
// Two rows still do not fit (the fit test's list). Their per-layer tally is what Megatron-Core
// keeps (GPT-OSS 120B at micro-batch 4 x 4096 tokens, recompute none: 180 KB a token a layer, of
// which 138 KB are the 4 routed copies' FC1 input, FC1 output, its clamped copy and FC2's input;
// model/activation_memory.cpp), so what is missing is the rows' memory settings, not a
// mechanism: with the recompute_modules [layernorm, moe_act] every stored GPT-OSS perf recipe
// sets, B200 needs 174 GB of 180 but H100 25.11 still 112 GB of 85.5 at micro-batch 4, and that
// row's columns contradict each other (docs/performance-summary.md @00b7660b, 25.11 DGX-H100:
// PP 4, MBS 4, GBS 512 and GA 2, where GBS / (MBS x DP 16) = 8; its B200 row has the same MBS
// and GA at DP 64, and the H100 recipe of that period, PP 4 and EP 8, runs micro-batch 1:
// scripts/performance/configs/gpt_oss/workload_base_configs.py, code index id 26286882719).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "model/flops.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"

using namespace stepcast;

namespace {

struct Row {
  std::string id;
  double reference_s = 0.0;
  double predicted_s = 0.0;
  double error = 0.0;  // predicted / reference - 1
  bool moe = false;
  bool cp = false;
  bool dense() const { return !moe && !cp; }
  bool fits = true;
  TimeBreakdown time;
  bool ep_overlap = false;  // parallel.ep_comm_overlap
};

double reference_step(const YAML::Node& row, const Scenario& sc) {
  const YAML::Node derived = row["derived"]["iteration_time_s"];
  if (derived) return derived["value"].as<double>();
  const double tflops = row["measured"]["tflops_per_gpu"].as<double>();
  const TrainingWorkload& t = sc.training();
  const StepFlops f = training_step_flops(sc.model, t.global_batch, t.seq_len, Recompute::none, AttentionCount::full);
  return f.model.value() / (row["gpus"].as<double>() * tflops * 1e12);
}

const std::vector<Row>& rows() {
  static const std::vector<Row> result = [] {
    std::vector<Row> out;
    std::map<std::string, YAML::Node> by_id;
    const YAML::Node runs = YAML::LoadFile("tests/fixtures/reference/dev_training_runs.yaml")["training_runs"];
    for (std::size_t i = 0; i < runs.size(); ++i) by_id[runs[i]["id"].as<std::string>()] = runs[i];
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator("tests/fixtures/dev_scenarios")) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    TrainingPredictor predictor;
    std::printf("\n%-48s %9s %9s %8s %6s %8s %8s %8s\n", "dev-set row", "ref_s", "pred_s", "error", "mfu", "bubble",
                "ep_exp", "cp_exp");
    for (const auto& path : files) {
      Row r;
      r.id = path.stem().string();
      REQUIRE_MESSAGE(by_id.count(r.id) == 1, r.id);
      const Scenario sc = load_scenario(path.string());
      r.reference_s = reference_step(by_id[r.id], sc);
      const TrainingPrediction p = predictor.predict(sc);
      r.predicted_s = p.step_time.value();
      r.error = r.predicted_s / r.reference_s - 1.0;
      r.moe = sc.model.is_moe();
      r.cp = sc.parallel.cp > 1;
      r.time = p.time;
      r.fits = p.fits;
      char fit[80] = "";
      if (!p.fits) {
        std::snprintf(fit, sizeof fit, "  (does not fit: %.1f of %.1f GB)", p.memory.peak.value() / 1e9,
                      sc.system.gpu.memory.value() / 1e9);
      }
      r.ep_overlap = sc.parallel.ep_comm_overlap;
      std::printf("%-48s %9.3f %9.3f %+7.1f%% %6.3f %8.3f %8.3f %8.3f%s\n", r.id.c_str(), r.reference_s, r.predicted_s,
                  100.0 * r.error, p.mfu, p.bubble_fraction, p.time.ep_comm_exposed.value(),
                  p.time.cp_comm_exposed.value(), fit);
      out.push_back(r);
    }
    // Mean |error| over the MoE and CP rows (the figure quoted since issue 8 began), over the
    // dense rows, and over all rows.
    double sum[3] = {0.0, 0.0, 0.0};
    int n[3] = {0, 0, 0};
    for (const Row& r : out) {
      const int group = r.dense() ? 1 : 0;
      sum[group] += std::fabs(r.error);
      ++n[group];
      sum[2] += std::fabs(r.error);
      ++n[2];
    }
    const char* names[3] = {"MoE+CP", "dense", "all"};
    for (int g = 0; g < 3; ++g) {
      std::printf("%s rows: %d  mean |error|: %.1f%%\n", names[g], n[g], n[g] > 0 ? 100.0 * sum[g] / n[g] : 0.0);
    }
    return out;
  }();
  return result;
}

double mean_abs_error(bool (*keep)(const Row&)) {
  double sum = 0.0;
  int n = 0;
  for (const Row& r : rows()) {
    if (!keep(r)) continue;
    sum += std::fabs(r.error);
    ++n;
  }
  return n > 0 ? sum / n : 0.0;
}

}  // namespace

TEST_CASE("every development-set row the mapping's rules cover has a scenario that scripts/dev_scenarios.py wrote") {
  // 12 MoE rows: Qwen3 30B-A3B / 235B-A22B, GPT-OSS 120B and DeepSeek-V3 on H100, B200 and GB200
  // (Qwen3-30B-A3B on GB200 only: its H100 and B200 rows of 25.11 and 26.02 ran a filed regression,
  // Megatron-Bridge #1998, as did B200 Qwen3-235B MXFP8 25.11, #1705; they left the set at stop 31).
  // 4 CP rows: Llama 3.1 405B with CP 2 and Llama 3 405B with CP 16 at 128K.
  // 8 dense rows: Llama 3 8B on H100, B200, GB200; Llama 3 70B on H100 (25.11, 26.02); Llama 3.1
  // 405B on GB200 (no CP); Llama 3 405B at 8K on 8192 and 16384 GPUs (Table 4). Left out (the
  // script's SKIP, with reasons): DeepSeek-V3 on H800, Llama 3 70B on GB200 (Megatron-FSDP), and
  // the four regressed Qwen3 rows above (its FILED_REGRESSIONS, which the held-out rules share).
  CHECK(rows().size() == 24);
  int moe = 0;
  int cp = 0;
  int dense = 0;
  for (const Row& r : rows()) {
    moe += r.moe ? 1 : 0;
    cp += r.cp ? 1 : 0;
    dense += r.dense() ? 1 : 0;
    // Each MoE row prices its expert dispatch and combine as a component; a row that overlaps
    // them with another micro-batch's compute may hide them entirely.
    if (r.moe && !r.ep_overlap) CHECK_MESSAGE(r.time.ep_comm_exposed.value() > 0.0, r.id);
  }
  CHECK(moe == 12);
  CHECK(cp == 4);
  CHECK(dense == 8);
}

TEST_CASE("development-set rows: regression guard") {
  // The error each row had when this test was written (predicted / reference - 1), and a band of
  // 10 points around it: a model change that moves a row further must say why (and update this
  // table). These are measurements of the model's error, not targets.
  // Stop 17 (lead): two precision fixes moved the quantized rows. (1) MXFP8 GEMMs were priced as
  // misaligned whenever a width x 1.03125 bytes (data plus E8M0 scales) was not a multiple of 16;
  // TMA strides count the data bytes only (datatype.h value_bytes_per_element): Qwen3's vocabulary
  // 151936 and 30B-A3B's experts (768) sped up, -0.124 -> -0.192 and -0.051 -> -0.135 on the
  // MXFP8 rows. (2) The logits GEMMs run in 16 bits under FP8 recipes (Megatron-Core's output layer
  // is a plain ColumnParallelLinear outside the per-layer FP8 context, layer_ops.cpp
  // output_layer_shape): every FP8 and MXFP8 row slowed by its LM head's share (e.g. 405B FP8-CS
  // B200 -0.049 -> -0.025, Qwen3-235B FP8 H100 -0.311 -> -0.235).
  // Stop 18 (lead): the GB200 catalog entry gained its SM count (152; it was unknown, which priced
  // every GEMM as one perfect wave and left memory-bound kernels without the SM-rate limit the
  // 148-SM B200 has): the GB200 rows slowed by 9-18% (Qwen3-30B-A3B MXFP8 -0.135 -> +0.047).
  // Attention pricing (issue 8, GPT-OSS fidelity): flash kernels now pay their CTA split
  // (flash_schedule_efficiency on by default, fitted on cuDNN's seq 2K-32K rows), relative to the
  // shapes the flash etas were measured at. Llama 3 405B at 128K with CP 16 runs its ring as whole
  // (chunk x chunk) blocks over 8192-token chunks, well split: its attention got 1.6x faster,
  // +0.406 -> +0.132. The other rows moved by at most 4 points (e.g. the Llama 3.1 405B FP8 rows
  // -0.025 -> -0.064 and -0.125 -> -0.157 (CP 2); GPT-OSS: head dim 64 and 128-key windows cost
  // more, full layers at micro-batch 4 less: -0.169 -> -0.183 on GB200); their entries stand.
  // Then the CTA split went back off by default (cost_parameters.h flash_shape_tile: published
  // long-context training runs read 15-35 points too fast with it), so the CP16 row is back at
  // +0.406; and kernels that only move bytes (MoE permutations, padding, plain adds) became
  // HBM-bound data movement, which sped the MoE rows by up to 4 points.
  // Stop 19 (sched): GPT-OSS's clamped activation as Megatron-Core runs it (model.activation_clamp:
  // the PyTorch clamps and cat before the fused quick-GEGLU, their backward, and the blocking
  // offset-tensor copy that synchronizes the host; model/moe_ops.h): the four GPT-OSS rows slowed,
  // B200 -0.501 -> -0.491, GB200 -0.159 -> -0.122, H100 25.11 -0.181 -> -0.140, 26.02 -0.224 -> -0.157
  // (before: main at d98d138 with the clamp off). Then YaRN RoPE (model.position yarn) as
  // Megatron-Bridge runs it, unfused: -0.491 -> -0.486, -0.122 -> -0.106, -0.140 -> -0.123,
  // -0.157 -> -0.140.
  // Stop 19 (MoE permutations by dispatcher, model/moe_ops.h): the flex dispatcher sorts no
  // received chunks (Megatron-Core's _DeepepManager permutes the received tokens into expert order
  // itself), and HybridEP permutes inside its dispatch and combine kernels (_HybridEPManager
  // dispatch_with_permute / combine_with_unpermute), so the rows whose recipes name hybridep now
  // say parallel.ep_dispatcher hybridep (scripts/dev_scenarios.py) and lose those copies:
  // GB200 Qwen3-30B-A3B +0.047 -> -0.069 (16 local experts, micro-batch 4: 8 copies of 32768 x
  // 4 rows a layer), GB200 DeepSeek-V3 BF16 +0.015 -> -0.067, B200 DeepSeek-V3 -0.249 -> -0.300,
  // and DeepSeek-V3 H100 (DeepEP) -0.258 -> -0.272 (its chunk sorts only).
  // Then the flex dispatcher's network leg became a fixed time plus its bytes at a rate
  // (CostParameters::deepep_network_latency_s 636 us, deepep_network_eta 0.70 -> 0.86, fitted to
  // HybridEP's H100 rows at 2-8 nodes, scripts/fit_deepep_network.py): of these rows only
  // DeepSeek-V3 H100 crosses the network with DeepEP, and its large exchanges (h = 7168, EP 64 over
  // 8 nodes) sped up, -0.272 -> -0.262.
  // Issue 8, CP fidelity: (1) the Llama 3 paper row runs the interleaved schedule the paper states
  // (Sec. 3.3.2, bubble (PP-1)/(V*M)) with V = 8, inferred from its one-layer edge chunks holding
  // only the embedding and only the loss (an assumption; scripts/dev_scenarios.py): its bubble fell
  // from 11.6 s (plain 1F1B, PP 16, M 16) to 2.6 s, +0.406 -> -0.180 (21.48 s -> 12.54 s against
  // 15.28 s). (2) The ring (cp_kind ring) runs a kernel per step and merges partial results into
  // FP32 accumulators, and its FP32 dK/dV make a last exposed hop home (model/context_parallel.h,
  // read from PyTorch's context_parallel): the Megatron-Bridge Llama 3.1 405B CP 2 rows slowed,
  // H100 25.11 -0.132 -> -0.111, H100 26.02 -0.088 -> -0.066, B200 -0.034 -> -0.018 (the entries
  // below were -0.125, -0.087, -0.025 from an older main). Dev-set MAE 20.5% -> 19.1%.
  // Issue 8, multi-token prediction: DeepSeek-V3 runs one MTP module on the last pipeline stage
  // (model.mtp_depth 1: its own embedding lookup, norms and 2h -> h projection, one MoE block and the
  // shared head with its loss, every micro-batch; the DeepSeek-V3 report Sec. 2.2, Megatron-Core's
  // MultiTokenPredictionLayer, Megatron-Bridge's recipe mtp_num_layers = 1). The rows that ran it
  // (scripts/dev_scenarios.py `mtp` rule) slowed: H100 -0.262 -> -0.105 (its last chunk holds only
  // the module and the loss), B200 -0.300 -> -0.000. The GB200 rows, labelled "w/o MTP" in the
  // archive, keep mtp_depth 0 and are unchanged. Dev-set MAE 19.0% -> 16.7%.
  // Then the layer split of the rows whose matching recipe fixes the pipeline layout follows it
  // (scripts/dev_scenarios.py `layers` rule, RECIPE_LAYERS): B200 and GB200 BF16 run the recipe's
  // layout_map, 4 decoder layers in the first chunk and 1 in the last (with the MTP module and the
  // loss), not 3 and 2: B200 -0.000 -> -0.150 (its last stage now 1 layer + the module), GB200 BF16
  // -0.067 -> -0.066. Dev-set MAE 16.7% -> 17.5%.
  // The dense rows' entries (the second block) were recorded when the rows were added (stop 23, main
  // d42bc8a), as the model then predicted them; nothing was changed to move them. Dense MAE 13.2%
  // over 8 rows; MoE+CP unchanged at 17.5%; all 28 rows 16.3%.
  // Then Megatron-Bridge rows name their loss kernels (scripts/dev_scenarios.py `loss` rule; model/
  // cross_entropy_kernels.h): Transformer Engine's cross-entropy for Llama 3, Qwen3 MoE and
  // DeepSeek-V3 (10 bytes per BF16 logit forward and backward instead of the unfused 46), the
  // fused native path for GPT-OSS (48). Every row so mapped gets faster but GPT-OSS; the largest
  // moves are DeepSeek-V3 B200 -0.150 -> -0.255 (its loss-carrying last stage, with the MTP head's
  // second loss, was the critical one) and Qwen3-235B GB200 BF16 +0.052 -> -0.011 (recorded +0.090).
  // Dev-set MoE+CP MAE 17.5% -> 19.0%, dense 13.2% -> 11.0%, all 28 rows 16.3% -> 16.7%.
  // Then parallel.cuda_graphs (issue 8): rows whose matching recipe captures the full iteration run
  // cuda_graphs: full_iteration (scripts/dev_scenarios.py `cuda_graphs` rule), which removes each
  // layer pass's host-launch bound. Only B200 Llama 3 8B FP8-CS (LLAMA3_8B_B200_FP8_CS_BASE_CONFIG,
  // local, full_iteration) is such a row, and it does not move: +0.206 -> +0.206. Its passes were
  // GPU-bound already (a layer's forward is 5.79 ms of kernels over 2 x 8192 tokens, against a few
  // dozen launches at 32 us), so its overshoot is not host dispatch. Nothing else moved.
  // Then the EP overlap's exchanges run longer beside the compute they hide behind (model/
  // ep_overlap.h; CostParameters::ep_overlap_comm_slowdown, 0.312: the Megatron-Bridge A/B pair's
  // Nsight communication time, 10.83 s with the overlap against 8.25 s without). Only the rows
  // whose recipe runs the overlap move: Qwen3-235B H100 25.11 -0.260 -> -0.124, 26.02 -0.258 ->
  // -0.113, DeepSeek-V3 H100 -0.141 -> -0.102. Dev-set MoE+CP MAE 19.0% -> 17.4%, all 28 rows
  // 16.7% -> 15.6%.
  // Stop 29 (Transformer Engine's amax reductions, simulator/layer_costs.h): the FP8 current-scaling
  // rows with sequence parallelism all-reduce each quantized all-gather's amax over TP (4 per layer
  // and micro-batch); every row within 0.3 point; dense MAE 11.0% -> 11.1%, MoE+CP and all unchanged.
  // Stop 30: the FP8 current-scaling rows run every Transformer layer in FP8 (scripts/dev_scenarios.py
  // `precision` rule: the performance scripts' get_precision_config("fp8_cs") sets
  // first_last_layers_bf16 = False, so bf16_edge_layers: 0): Llama 3 8B H100 / B200 / GB200
  // +0.067 / +0.206 / +0.118 -> +0.045 / +0.184 / +0.098, 70B H100 +0.067 / +0.063 -> +0.023 / +0.021,
  // Llama 3.1 405B B200 / GB200 / H100 25.11 / H100 26.02 -0.029 / +0.032 / -0.101 / -0.055 ->
  // -0.062 / -0.039 / -0.123 / -0.079 (the recorded values above are these). The MXFP8 rows keep MXFP8
  // weights (params: mxfp8) and DeepSeek-V3's the full FP32 master, and the BF16 rows the FP32 master as
  // remainders (the performance scripts' precision-aware optimizer): time within 0.1 point. Dense MAE
  // 11.1% -> 9.3%, MoE+CP 17.4% -> 17.8%, all 28 rows 15.6% -> 15.4%; B200 Llama 3 8B is now within 20%.
  // Stop 31: the Qwen3-30B-A3B rows on H100 (25.11, 26.02) and B200 (25.11) left the set (scripts/
  // dev_scenarios.py SKIP: Megatron-Bridge #1998, "2X slower performance in QWEN3 30B on H100 and B200
  // with the dropless schedule ... 25.11 is 2X slower than 25.09"; 26.02.01 runs the H100 row's
  // scenario, unchanged, in 28.94 s against 26.02's 51.27 s, 27.4 s predicted). Their errors were
  // -0.557, -0.465, -0.172. MoE+CP MAE 17.8% -> 13.9% over 17 rows, all 25 rows 15.4% -> 12.4%. Then
  // B200 Qwen3-235B MXFP8 25.11 (Megatron-Bridge #1705, "QWEN3 235B B200 MXFP8 performance regression",
  // fixed by disabling the EP A2A overlap, PR #1760: 20.1 s -> 16.9 s; 25.09 ran the same scenario in
  // 15.33 s, 14.75 s predicted), error -0.264: MoE+CP 13.1% over 16 rows, all 24 rows 11.8%.
  const std::map<std::string, double> measured = {
      {"llama3_405b_t4_16384gpu_cp16_seq131072", -0.180},      // interleaved, V 8 (inferred)
      {"mbridge2509_h100_deepseekv3_fp8_1024gpu", -0.102},     // overlapped DeepEP dispatch; MTP
      {"mbridge2511_b200_deepseekv3_fp8-mx_256gpu", -0.255},   // HybridEP; MTP; recipe layout 4/1
      {"mbridge2511_b200_gpt_oss_120b_bf16_64gpu", -0.485},  // clamp, YaRN
      {"mbridge2511_b200_llama31_405b_fp8-cs_128gpu", -0.062},  // 16-bit logits; ring merges
      {"mbridge2511_gb200_deepseekv3_bf16_256gpu", -0.066},    // HybridEP; 152 SMs; recipe layout 4/1
      {"mbridge2511_gb200_deepseekv3_fp8-mx_256gpu", +0.039},  // 152 SMs
      {"mbridge2511_gb200_gpt_oss_120b_bf16_64gpu", -0.106},  // 152 SMs; clamp, YaRN
      {"mbridge2511_gb200_qwen3_235b_a22b_bf16_256gpu", -0.011},  // 152 SMs
      {"mbridge2511_gb200_qwen3_30b_a3b_fp8-mx_8gpu", -0.107},  // HybridEP; stride fix; 152 SMs
      {"mbridge2511_h100_gpt_oss_120b_bf16_64gpu", -0.123},  // clamp, YaRN
      {"mbridge2511_h100_llama31_405b_fp8-cs_1024gpu", -0.123},  // ring merges, last dK/dV hop
      {"mbridge2511_h100_qwen3_235b_a22b_fp8-cs_256gpu", -0.124},  // EP overlap, stretched exchanges
      {"mbridge2602_h100_gpt_oss_120b_bf16_64gpu", -0.140},  // clamp, YaRN
      {"mbridge2602_h100_llama31_405b_fp8_1024gpu", -0.079},  // ring merges, last dK/dV hop
      {"mbridge2602_h100_qwen3_235b_a22b_fp8_256gpu", -0.113},  // EP overlap, stretched exchanges
      // Dense rows, recorded when added (stop 23, main d42bc8a).
      {"llama3_405b_t4_8192gpu_cp1_seq8192", -0.166},         // interleaved, V 8 (inferred); ZeRO-2
      {"llama3_405b_t4_16384gpu_cp1_seq8192", -0.169},        // interleaved, V 8 (inferred); ZeRO-2
      {"mbridge2511_h100_llama3_8b_fp8-cs_8gpu", +0.045},
      {"mbridge2511_b200_llama3_8b_fp8-cs_8gpu", +0.184},   // full-iteration CUDA graph; GPU-bound
      {"mbridge2511_gb200_llama3_8b_fp8-cs_8gpu", +0.098},
      {"mbridge2511_h100_llama3_70b_fp8-cs_64gpu", +0.023},   // TP overlap
      {"mbridge2602_h100_llama3_70b_fp8_64gpu", +0.021},      // TP overlap
      {"mbridge2511_gb200_llama31_405b_fp8-cs_256gpu", -0.039},  // TP overlap
  };
  for (const Row& r : rows()) {
    CAPTURE(r.id);
    REQUIRE(measured.count(r.id) == 1);
    CHECK(std::fabs(r.error - measured.at(r.id)) <= 0.10);
  }
}

TEST_CASE("every development-set row ran, so each fits in its GPU's memory but three with unknown memory settings") {
  // Every row is a published measurement, so its configuration fit. The model predicts so for all
  // but two rows, whose memory settings the public record does not give for the row's layout
  // (scripts/dev_scenarios.py keeps recompute: none without a layout-matched recipe):
  //   B200 GPT-OSS 120B BF16 (EP 8, micro-batch 4): every stored GPT-OSS B200/H100 recipe sets
  //     recompute_modules [layernorm, moe_act], but with EP 64, not the row's 8.
  //   H100 GPT-OSS 120B 25.11 (PP 4, micro-batch 4): the stored H100 recipe has micro-batch 1.
  //   Llama 3 405B at 8K on 8192 GPUs (Table 4, DP 64): 91.7 of 85.5 GB predicted with the
  //     mapping's ZeRO-2 over DP 64 (its 16384-GPU row, DP 128, fits); the paper states no
  //     micro-batch or recomputation for the row, so how the run fit is not known.
  // Llama 3 405B CP 16 at 128K fits since the mapping shards its gradients as the paper says
  // (zero: 2, 83.9 of 85.5 GB). A memory term that drifts up (or down past these three) changes
  // this list.
  const std::map<std::string, bool> misses = {
      {"llama3_405b_t4_8192gpu_cp1_seq8192", true},
      {"mbridge2511_b200_gpt_oss_120b_bf16_64gpu", true},
      {"mbridge2511_h100_gpt_oss_120b_bf16_64gpu", true},
  };
  for (const Row& r : rows()) {
    CAPTURE(r.id);
    CHECK(r.fits == (misses.count(r.id) == 0));
  }
}

TEST_CASE("development-set MoE rows within 10% mean absolute error (the issue's bar)" * doctest::may_fail()) {
  CHECK(mean_abs_error([](const Row& r) { return r.moe; }) <= 0.10);
}

TEST_CASE("development-set CP rows within 10% mean absolute error (the issue's bar)" * doctest::may_fail()) {
  CHECK(mean_abs_error([](const Row& r) { return r.cp; }) <= 0.10);
}

TEST_CASE("development-set dense rows within 10% mean absolute error" * doctest::may_fail()) {
  CHECK(mean_abs_error([](const Row& r) { return r.dense(); }) <= 0.10);
}

TEST_CASE("every development-set row within 20% (the issue's bar)" * doctest::may_fail()) {
  for (const Row& r : rows()) {
    CAPTURE(r.id);
    CHECK(std::fabs(r.error) <= 0.20);
  }
}
