#pragma once
// stepcast's own attention kernels (kernels/attention.cu), used where cuDNN's fused attention is
// not available (cuDNN absent, or its heuristics refuse the shape) and for decode:
//
//   flash forward   FlashAttention-2 (Dao 2023, Alg. 1) on tensor cores through WMMA: a block of
//                   4 warps owns 64 queries, streams 64-key tiles of K and V through shared memory,
//                   keeps the running max and sum per row and rescales the fp32 output
//                   accumulator; writes O and the log-sum-exp statistics.
//   flash backward  FlashAttention-2 Alg. 2: a block owns 64 keys (16 per warp), loops over
//                   32-query tiles, recomputes P from the saved statistics, accumulates dK and dV in
//                   registers and adds dQ into an fp32 buffer with atomics; a pre-pass computes
//                   D = rowsum(dO * O) and a post-pass rounds dQ, dK, dV to the input format.
//   paged decode    one query per sequence over a KV cache of fixed-size blocks addressed through
//                   a block table, split into 512-token partitions whose partial softmax states
//                   are merged by a second kernel (the structure of vLLM's PagedAttention v2,
//                   Kwon et al. 2023).
//
// Layouts: Q, O, dQ, dO [batch, seq_q, heads, head_dim]; K, V, dK, dV [batch, seq_kv, kv_heads,
// head_dim] (BSHD); statistics [batch, heads, seq_q] fp32, natural-log log-sum-exp of the scaled
// scores. Grouped-query attention maps query head h to KV head h / (heads / kv_heads). Causal
// masking is bottom-right aligned: query i sees keys 0 .. i + seq_kv - seq_q. fp16 or bf16 inputs,
// fp32 accumulation; head_dim 64 or 128. These are clear reference-quality kernels, well short of
// FlashAttention-2's speed; measurement records name the implementation so calibration can tell.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/element_format.h"

namespace stepcast::kernels {

struct AttentionShape {
  int batch = 1;
  int heads = 1;
  int kv_heads = 1;
  int seq_q = 1;
  int seq_kv = 1;
  int head_dim = 128;
  bool causal = false;
  float scale = 1.0f;  // usually 1 / sqrt(head_dim)
};

// Throws std::invalid_argument for shapes the kernels do not handle (head_dim, formats, GQA ratio).
void check_flash_shape(ElementFormat format, const AttentionShape& shape);

void launch_flash_forward(cudaStream_t stream, ElementFormat format, const AttentionShape& shape, const void* q,
                          const void* k, const void* v, void* o, float* lse);

// fp32 scratch the backward needs: D, dQ, dK and dV accumulators.
std::size_t flash_backward_workspace_bytes(const AttentionShape& shape);

void launch_flash_backward(cudaStream_t stream, ElementFormat format, const AttentionShape& shape, const void* q,
                           const void* k, const void* v, const void* o, const void* d_o, const float* lse,
                           void* workspace, void* dq, void* dk, void* dv);

struct PagedDecodeShape {
  int batch = 1;
  int heads = 1;
  int kv_heads = 1;
  int head_dim = 128;
  int block_size = 16;          // tokens per KV-cache block
  int max_blocks_per_seq = 1;   // columns of the block table
  int max_context = 1;          // longest context_lens entry
  float scale = 1.0f;
};

// fp32 scratch for the partition states.
std::size_t paged_decode_workspace_bytes(const PagedDecodeShape& shape);

// q, o [batch, heads, head_dim]; k_cache, v_cache [blocks, block_size, kv_heads, head_dim];
// block_table [batch, max_blocks_per_seq] int32; context_lens [batch] int32 (all device memory).
void launch_paged_decode(cudaStream_t stream, ElementFormat format, const PagedDecodeShape& shape, const void* q,
                         const void* k_cache, const void* v_cache, const int* block_table, const int* context_lens,
                         void* workspace, void* o);

}  // namespace stepcast::kernels
