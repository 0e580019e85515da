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

// The ids of the file's inference rows (predicted by the serving model where it exists).
std::vector<std::string> published_inference_run_ids(const std::string& path);

}  // namespace stepcast
