#pragma once
// Inference rows of tests/fixtures/reference/published_runs.yaml (TensorRT-LLM v0.6.1's
// performance tables) as stepcast scenarios, built through the scenario loader.
//
// One mapping rule per field, the same for every row (never tuned per row):
//   model      the row's layers, hidden, heads, kv_heads, ffn_hidden and vocab (null: Llama 2's
//              32000); Llama architecture: SwiGLU MLP, RMSNorm, no linear biases, untied
//              embeddings.
//   precision  "FP8 ..." -> W8A8 FP8 GEMMs, FP8 weights and FP8 KV cache (the rows say
//              "weights+KV"); "FP16" -> FP16 everything.
//   hardware   H100-SXM-80GB -> h100-sxm-80gb; L40S -> l40s; "A100 (SKU not stated)" ->
//              a100-sxm-80gb (the Llama 2 70B FP16 TP4 rows need 80 GB per GPU: 34.5 GB of
//              weights each plus the batch's KV cache); the catalog's default system for the GPU.
//   workload   static mode with the row's batch, input and output lengths; tp and pp as given.
//   runtime    gptSessionBenchmark is TensorRT-LLM's C++ runtime: a prebuilt engine enqueued
//              ahead of the GPU, so host launch cost is hidden as with CUDA graphs
//              (cuda_graphs: true). v0.6.1 predates the XQA generation kernels (v0.8,
//              docs/source/blogs/XQA-kernel.md): its masked multi-head attention reads a GQA
//              model's KV head once per query head (decode_attention: per-query-head).
// Throughput rows compare output tokens/s per GPU; first-token rows (batch 1, output 1)
// compare the time to first token.

#include <string>
#include <vector>

#include "model/scenario.h"

namespace stepcast::test {

struct InferenceReferenceRun {
  std::string id;
  Scenario scenario;
  double measured_tokens_per_s_per_gpu = 0.0;  // 0: a first-token row
  double measured_ttft_s = 0.0;                // 0: a throughput row
};

std::vector<InferenceReferenceRun> load_inference_reference_runs(const std::string& path);

}  // namespace stepcast::test
