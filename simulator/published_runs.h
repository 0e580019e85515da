#pragma once
// Training rows of a published-runs file (the format of tests/fixtures/reference/published_runs.yaml)
// as stepcast scenarios: shared by the training fidelity test and `stepcast validate`.
//
// Mapping rules (one rule per field, the same for every row; never tuned per row):
//   model        layers, hidden, heads, kv_heads (default heads), ffn_hidden (default 4h), vocab,
//                seq_len; GPT architecture: GELU MLP, LayerNorm, linear biases, dropout, tied
//                input/output embeddings (Megatron-LM's GPT default in both eras).
//   parallel     tp, pp, dp, vpp, micro_batch, global_batch as stated. Unstated (null):
//                vpp -> 1 (no interleaving) and micro_batch -> 1, Megatron-LM's defaults
//                (no --num-layers-per-virtual-pipeline-stage; the smallest micro-batch).
//   recompute    "full ..." -> full; "not stated" -> none (Megatron's default).
//   precision    "fp16 ..." -> fp16 with loss scaling; otherwise bf16 (the rows' MFU matches
//                the BF16 dense peak).
//   software     Narayanan et al. 2021 rows: Megatron-LM of 2021, before fused (flash)
//                attention existed (FlashAttention: May 2022), no sequence parallelism, no
//                distributed optimizer, gradients all-reduced; torch DDP (overlapped with
//                backward) for models <= 18.4B, "local" DDP (after backward) above, as the
//                row notes say. Megatron-Core 2024 rows: their stated flags --overlap-grad-reduce,
//                --overlap-param-gather (which requires the distributed optimizer: ZeRO-1) and
//                --tp-comm-overlap (which requires sequence parallelism when tp > 1), flash
//                attention (Transformer Engine).
//   hardware     A100-SXM4-80GB and H100 SXM5 from the file's `hardware` rows (dense peaks,
//                HBM bandwidth, SMs, NVLink), named by their catalog keys (a100-sxm-80gb,
//                h100-sxm-80gb) so calibration profiles can be matched. Selene nodes: 8 GPUs, 8x
//                HDR 200 Gb/s NICs (row `system`): a DGX A100 ("dgx-a100"); the H100 rows state
//                no system: DGX H100 (8x NDR 400 Gb/s, "dgx-h100") assumed.
//   reference    Narayanan rows: derived.iteration_time_s. Megatron-Core rows: iteration time
//                derived the same way from tflops_per_gpu with their FLOP convention (Megatron
//                num_floating_point_operations of mid-2024: model FLOPs, full s^2 attention),
//                which stepcast's training_step_flops(..., AttentionCount::full).model equals.

// A file that cannot be read or lacks a field a row needs is an InputError naming file:line.

#include <string>
#include <vector>

#include "model/scenario.h"

namespace stepcast {

struct PublishedTrainingRun {
  std::string id;
  Scenario scenario;
  double measured_step_s = 0.0;
  std::string reference_note;  // how measured_step_s was obtained
};

// Every training row with a single configuration (rows that state only scaling endpoints are
// skipped and listed in `skipped`).
std::vector<PublishedTrainingRun> load_published_training_runs(const std::string& path,
                                                               std::vector<std::string>* skipped);

// Inference rows (TensorRT-LLM v0.6.1's performance tables in the reference file) as scenarios,
// built through the scenario loader. One mapping rule per field, the same for every row:
//   model      the row's layers, hidden, heads, kv_heads, ffn_hidden and vocab (null: Llama 2's
//              32000); Llama architecture: SwiGLU MLP, RMSNorm, no linear biases, untied
//              embeddings.
//   precision  "FP8 ..." -> W8A8 FP8 GEMMs, FP8 weights and FP8 KV cache (the rows say
//              "weights+KV"); "FP16" -> FP16 everything.
//   hardware   H100-SXM-80GB -> h100-sxm-80gb; H200 -> h200-sxm-141gb; L40S -> l40s; "A100 (SKU
//              not stated)" -> a100-sxm-80gb (the Llama 2 70B FP16 TP4 rows need 80 GB per GPU:
//              34.5 GB of weights each plus the batch's KV cache); the catalog's default system.
//   workload   static mode with the row's batch, input and output lengths; tp and pp as given.
//   runtime    gptSessionBenchmark is TensorRT-LLM's C++ runtime: a prebuilt engine enqueued
//              ahead of the GPU, so host launch cost is hidden as with CUDA graphs
//              (cuda_graphs: true). v0.6.1 predates the XQA generation kernels (v0.8,
//              docs/source/blogs/XQA-kernel.md): its masked multi-head attention reads a GQA
//              model's KV head once per query head (decode_attention: per-query-head).
// Throughput rows compare output tokens/s per GPU; first-token rows (batch 1, output 1)
// compare the time to first token.
struct PublishedInferenceRun {
  std::string id;
  Scenario scenario;
  double measured_tokens_per_s_per_gpu = 0.0;  // 0: a first-token row
  double measured_ttft_s = 0.0;                // 0: a throughput row
};

std::vector<PublishedInferenceRun> load_published_inference_runs(const std::string& path);

}  // namespace stepcast
