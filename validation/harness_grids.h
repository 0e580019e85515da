#pragma once
// The points each harness suite measures: generic grids that calibration needs (square GEMM
// sweeps with tile-aligned and unaligned sizes for the wave-quantization fit, the GEMMs of real
// transformer layers, attention and decode shapes, elementwise and memory sizes, collective size
// sweeps). Host-only and deterministic, so `--list` and the tests see exactly what a GPU run
// would measure. Which points a GPU cannot run (FP8 before sm_89, sizes beyond its memory) is
// decided by the runner, which records them as skipped with the reason.
//
// Model shapes come from the published configurations: Llama 3 8B (hidden 4096, 32 heads, 8 KV
// heads, FFN 14336, vocab 128256), 70B (hidden 8192, 64 heads, 8 KV heads, FFN 28672) and 405B
// (hidden 16384, 128 heads, 8 KV heads, FFN 53248) (Meta, "The Llama 3 Herd of Models", 2024,
// Table 3); Mixtral 8x7B (8 experts, top-2, FFN 14336) (Jiang et al. 2024) and 8x22B; DeepSeek-V3
// (hidden 7168, 256 routed experts, top-8, expert FFN 2048, MLA) (DeepSeek-AI 2024, Sec. 4.2);
// Qwen3-30B-A3B; DBRX. The GEMM grid also holds shapes whose leading dimensions are not 16-byte
// multiples, where cuBLASLt cannot use its fastest kernels.

#include <cstdint>
#include <string>
#include <vector>

#include "model/collective.h"
#include "validation/harness_options.h"
#include "validation/measurement.h"

namespace stepcast {

std::vector<GemmInputs> gemm_grid(const HarnessOptions& options);
std::vector<AttentionInputs> attention_grid(const HarnessOptions& options);
std::vector<ElementwiseInputs> elementwise_grid(const HarnessOptions& options);
std::vector<MemoryInputs> memory_grid(const HarnessOptions& options);

// nccl-tests -b MIN -e MAX -f FACTOR: MIN, MIN*F, ... up to MAX.
std::vector<std::int64_t> collective_sizes(const HarnessOptions& options);
std::vector<CollectiveOp> collective_ops(const HarnessOptions& options);
// --ranks when given (those that fit); else 2, 4, 8, ... below `available`, and `available`.
std::vector<int> collective_group_sizes(const HarnessOptions& options, int available);

// Elements per rank for a collective of `size_bytes` (nccl-tests' size convention, fp32 data):
// the send buffer, the output, and nccl-tests' per-rank "count" where the op splits the buffer
// (all-gather: each rank's contribution; reduce-scatter: each rank's result; all-to-all: each
// peer's chunk). chunk == 0 means the size cannot give every rank one element (nccl-tests prints
// such rows with count 0); sizes that do not divide evenly are rounded down to a multiple of ranks.
struct CollectiveCounts {
  std::size_t send = 0;
  std::size_t recv = 0;
  std::size_t chunk = 0;
};
CollectiveCounts collective_counts(CollectiveOp op, std::int64_t size_bytes, int ranks);

// GemmInputs for `precision` with the operand formats the harness uses for it.
GemmInputs gemm_point(DataType precision, const std::string& layout, std::int64_t m, std::int64_t n, std::int64_t k,
                      const std::string& role = "", std::int64_t groups = 1);

// A short human-readable name: "gemm bf16 TN m=4096 n=8192 k=4096 qkv".
std::string point_name(const MeasurementInputs& inputs);

}  // namespace stepcast
