#pragma once
// stepcast's own fused transformer kernels (kernels/fused_ops.cu). Each works on a row-major
// [rows, cols] tensor in fp32, fp16 or bf16, computes in fp32 and rounds once on output. The
// definitions are exactly those of the CPU references in validation/reference_ops.h:
//   rmsnorm(x, gamma)              one block per row
//   layernorm(x, gamma, beta)      one block per row, biased variance
//   softmax(x)                     one block per row
//   swiglu(gate_up) -> y           gate_up is [rows, 2 * cols] = [gate | up]; y is [rows, cols]
//   gelu(x)                        tanh approximation
//   rope(x)                        rotate-half per head of `head_dim`; position = row % seq_len
//   bias_dropout_add(x, bias, residual) with the counter-hash mask of kernels/counter_hash.h
// Each moves memory as framework kernels do (PyTorch's vectorized elementwise kernels, Apex and
// Transformer Engine's norms): 16-byte loads and stores, grid-stride loops over enough blocks to
// fill every SM, and the row kernels read their row once into registers. Shapes whose rows are
// not whole 16-byte vectors (or rows longer than 1024 threads x 4 vectors: 32768 bf16, 16384
// fp32) take scalar kernels that compute the same. Each records its minimum bytes
// (validation/work_counts.h).

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/element_format.h"

namespace stepcast::kernels {

struct RowShape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

void launch_rmsnorm(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, const void* gamma, float eps, void* y);
void launch_layernorm(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, const void* gamma,
                      const void* beta, float eps, void* y);
void launch_softmax(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, void* y);
void launch_swiglu(cudaStream_t s, ElementFormat f, RowShape shape, const void* gate_up, void* y);
void launch_gelu(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, void* y);
void launch_rope(cudaStream_t s, ElementFormat f, RowShape shape, int head_dim, std::int64_t seq_len, float theta,
                 const void* x, void* y);
void launch_bias_dropout_add(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, const void* bias,
                             const void* residual, std::uint64_t seed, float p, void* y);

}  // namespace stepcast::kernels
