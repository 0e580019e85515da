#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/attention.h"
#include "kernels/cuda_check.h"

namespace stepcast::kernels {

namespace {

namespace wmma = nvcuda::wmma;

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kFwdQueries = 64;  // queries per forward block, 16 per warp
constexpr int kKeyTile = 64;     // keys per forward tile
constexpr int kBwdKeys = 64;     // keys per backward block, 16 per warp
constexpr int kBwdQueries = 32;  // queries per backward step
constexpr int kPartitionTokens = 512;  // paged decode: tokens per partition (vLLM v2 uses 512)

__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffU, v, offset);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffU, v, offset));
  return v;
}

// Copies `rows` rows of D elements (global row stride `stride` elements) into dense shared rows,
// zero-filling rows at and beyond `valid`. 16-byte vectors: D * sizeof(T) is a multiple of 16.
template <class T, int D>
__device__ void load_tile(T* dst, const T* src, std::int64_t stride, int rows, int valid) {
  constexpr int kVectorsPerRow = D * static_cast<int>(sizeof(T)) / 16;
  for (int i = threadIdx.x; i < rows * kVectorsPerRow; i += blockDim.x) {
    const int r = i / kVectorsPerRow;
    const int c = i % kVectorsPerRow;
    uint4 value = make_uint4(0U, 0U, 0U, 0U);
    if (r < valid) value = reinterpret_cast<const uint4*>(src + r * stride)[c];
    reinterpret_cast<uint4*>(dst + r * D)[c] = value;
  }
}

template <class T, int D>
constexpr std::size_t forward_smem_bytes() {
  return 2 * kKeyTile * D * sizeof(T)                 // K, V tiles (Q staged in the K tile first)
         + kFwdQueries * kKeyTile * sizeof(float)     // scores
         + kFwdQueries * kKeyTile * sizeof(T)         // probabilities
         + kFwdQueries * D * sizeof(float)            // output accumulator
         + 2 * kFwdQueries * sizeof(float);           // running max and sum
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_forward_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                         T* __restrict__ o, float* __restrict__ lse, AttentionShape s) {
  extern __shared__ __align__(128) unsigned char smem[];
  T* sK = reinterpret_cast<T*>(smem);
  T* sV = sK + kKeyTile * D;
  float* sS = reinterpret_cast<float*>(sV + kKeyTile * D);
  T* sP = reinterpret_cast<T*>(sS + kFwdQueries * kKeyTile);
  float* sO = reinterpret_cast<float*>(sP + kFwdQueries * kKeyTile);
  float* sM = sO + kFwdQueries * D;
  float* sL = sM + kFwdQueries;

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int q0 = blockIdx.x * kFwdQueries;
  const int h = blockIdx.y;
  const int b = blockIdx.z;
  const int hk = h / (s.heads / s.kv_heads);
  const std::int64_t q_stride = static_cast<std::int64_t>(s.heads) * D;
  const std::int64_t kv_stride = static_cast<std::int64_t>(s.kv_heads) * D;
  const T* k_base = k + static_cast<std::int64_t>(b) * s.seq_kv * kv_stride + static_cast<std::int64_t>(hk) * D;
  const T* v_base = v + static_cast<std::int64_t>(b) * s.seq_kv * kv_stride + static_cast<std::int64_t>(hk) * D;

  // Stage this block's queries through the K tile and keep each warp's 16 rows in registers.
  load_tile<T, D>(sK, q + (static_cast<std::int64_t>(b) * s.seq_q + q0) * q_stride + static_cast<std::int64_t>(h) * D,
                  q_stride, kFwdQueries, min(kFwdQueries, s.seq_q - q0));
  for (int i = threadIdx.x; i < kFwdQueries * D; i += blockDim.x) sO[i] = 0.0f;
  for (int i = threadIdx.x; i < kFwdQueries; i += blockDim.x) {
    sM[i] = -INFINITY;
    sL[i] = 0.0f;
  }
  __syncthreads();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> q_frag[D / 16];
  for (int kk = 0; kk < D / 16; ++kk) wmma::load_matrix_sync(q_frag[kk], sK + warp * 16 * D + kk * 16, D);

  const int offset = s.seq_kv - s.seq_q;
  int tiles = (s.seq_kv + kKeyTile - 1) / kKeyTile;
  if (s.causal) {
    const int last_visible = q0 + kFwdQueries - 1 + offset;  // the last key the block's last query sees
    tiles = last_visible < 0 ? 0 : min(tiles, last_visible / kKeyTile + 1);
  }
  for (int t = 0; t < tiles; ++t) {
    const int k0 = t * kKeyTile;
    __syncthreads();  // everyone is done with the previous tile (and with the staged queries)
    load_tile<T, D>(sK, k_base + k0 * kv_stride, kv_stride, kKeyTile, min(kKeyTile, s.seq_kv - k0));
    load_tile<T, D>(sV, v_base + k0 * kv_stride, kv_stride, kKeyTile, min(kKeyTile, s.seq_kv - k0));
    __syncthreads();

    // Scores of this warp's 16 queries against the 64 keys: Q K^T.
    for (int n = 0; n < kKeyTile / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int kk = 0; kk < D / 16; ++kk) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> k_frag;
        wmma::load_matrix_sync(k_frag, sK + n * 16 * D + kk * 16, D);
        wmma::mma_sync(acc, q_frag[kk], k_frag, acc);
      }
      wmma::store_matrix_sync(sS + warp * 16 * kKeyTile + n * 16, acc, kKeyTile, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax for each row: new max, rescale factor, probabilities, rescaled output.
    for (int r = 0; r < 16; ++r) {
      const int row = warp * 16 + r;
      const int qi = q0 + row;
      float x[2];
      float tile_max = -INFINITY;
      for (int e = 0; e < 2; ++e) {
        const int col = lane + 32 * e;
        const int kj = k0 + col;
        const bool visible = qi < s.seq_q && kj < s.seq_kv && (!s.causal || kj <= qi + offset);
        x[e] = visible ? sS[row * kKeyTile + col] * s.scale : -INFINITY;
        tile_max = fmaxf(tile_max, x[e]);
      }
      tile_max = warp_max(tile_max);
      const float m_old = sM[row];
      const float m_new = fmaxf(m_old, tile_max);
      float alpha = 1.0f;
      float p[2] = {0.0f, 0.0f};
      if (m_new != -INFINITY) {
        alpha = __expf(m_old - m_new);  // 0 when m_old is -inf
        for (int e = 0; e < 2; ++e) p[e] = __expf(x[e] - m_new);
      }
      const float p_sum = warp_sum(p[0] + p[1]);
      for (int e = 0; e < 2; ++e) sP[row * kKeyTile + lane + 32 * e] = from_float<T>(p[e]);
      for (int c = lane; c < D; c += 32) sO[row * D + c] *= alpha;
      const float l_old = sL[row];
      __syncwarp();  // every lane has read the old statistics
      if (lane == 0) {
        sM[row] = m_new;
        sL[row] = alpha * l_old + p_sum;
      }
    }
    __syncwarp();

    // O += P V for this warp's rows.
    for (int n = 0; n < D / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::load_matrix_sync(acc, sO + warp * 16 * D + n * 16, D, wmma::mem_row_major);
      for (int kk = 0; kk < kKeyTile / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> p_frag;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> v_frag;
        wmma::load_matrix_sync(p_frag, sP + warp * 16 * kKeyTile + kk * 16, kKeyTile);
        wmma::load_matrix_sync(v_frag, sV + kk * 16 * D + n * 16, D);
        wmma::mma_sync(acc, p_frag, v_frag, acc);
      }
      wmma::store_matrix_sync(sO + warp * 16 * D + n * 16, acc, D, wmma::mem_row_major);
    }
    __syncwarp();
  }
  __syncwarp();

  for (int r = 0; r < 16; ++r) {
    const int row = warp * 16 + r;
    const int qi = q0 + row;
    if (qi >= s.seq_q) break;
    const float l = sL[row];
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    T* out = o + (static_cast<std::int64_t>(b) * s.seq_q + qi) * q_stride + static_cast<std::int64_t>(h) * D;
    for (int c = lane; c < D; c += 32) out[c] = from_float<T>(sO[row * D + c] * inv);
    if (lane == 0) {
      lse[(static_cast<std::int64_t>(b) * s.heads + h) * s.seq_q + qi] = l > 0.0f ? sM[row] + logf(l) : -INFINITY;
    }
  }
}

// D_i = dO_i . O_i, one warp per (batch, query, head) row; stored like the statistics [b, h, s_q].
template <class T>
__global__ void flash_delta_kernel(const T* __restrict__ o, const T* __restrict__ d_o, float* __restrict__ delta,
                                   AttentionShape s) {
  const std::int64_t rows = static_cast<std::int64_t>(s.batch) * s.seq_q * s.heads;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  const int lane = threadIdx.x % 32;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; row < rows;
       row += warps) {
    const T* o_row = o + row * s.head_dim;
    const T* do_row = d_o + row * s.head_dim;
    float sum = 0.0f;
    for (int c = lane; c < s.head_dim; c += 32) sum += to_float(o_row[c]) * to_float(do_row[c]);
    sum = warp_sum(sum);
    if (lane == 0) {
      const std::int64_t h = row % s.heads;
      const std::int64_t qi = (row / s.heads) % s.seq_q;
      const std::int64_t b = row / (static_cast<std::int64_t>(s.heads) * s.seq_q);
      delta[(b * s.heads + h) * s.seq_q + qi] = sum;
    }
  }
}

template <class T, int D>
constexpr std::size_t backward_smem_bytes() {
  return 2 * kBwdKeys * D * sizeof(T)                                 // K, V of this block's keys
         + 2 * kBwdQueries * D * sizeof(T)                            // Q, dO of the current query tile
         + kWarps * (16 * kBwdQueries * 2 + 16 * 16) * sizeof(float)  // per warp: S/P, dP, staging
         + kWarps * 2 * 16 * kBwdQueries * sizeof(T)                  // per warp: P^T, dS^T in T
         + 2 * kBwdQueries * sizeof(float);                           // statistics and D of the tile
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_backward_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                          const T* __restrict__ d_o, const float* __restrict__ lse, const float* __restrict__ delta,
                          float* __restrict__ dq_acc, float* __restrict__ dk_acc, float* __restrict__ dv_acc,
                          AttentionShape s) {
  constexpr int kScratchFloats = 16 * kBwdQueries * 2 + 16 * 16;
  extern __shared__ __align__(128) unsigned char smem[];
  T* sK = reinterpret_cast<T*>(smem);
  T* sV = sK + kBwdKeys * D;
  T* sQ = sV + kBwdKeys * D;
  T* sdO = sQ + kBwdQueries * D;
  float* scratch = reinterpret_cast<float*>(sdO + kBwdQueries * D);
  T* scratch_t = reinterpret_cast<T*>(scratch + kWarps * kScratchFloats);
  float* sLse = reinterpret_cast<float*>(scratch_t + kWarps * 2 * 16 * kBwdQueries);
  float* sDelta = sLse + kBwdQueries;

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int k0 = blockIdx.x * kBwdKeys;
  const int h = blockIdx.y;
  const int b = blockIdx.z;
  const int hk = h / (s.heads / s.kv_heads);
  const std::int64_t q_stride = static_cast<std::int64_t>(s.heads) * D;
  const std::int64_t kv_stride = static_cast<std::int64_t>(s.kv_heads) * D;
  const std::int64_t q_offset = static_cast<std::int64_t>(b) * s.seq_q * q_stride + static_cast<std::int64_t>(h) * D;
  const std::int64_t kv_offset =
      (static_cast<std::int64_t>(b) * s.seq_kv + k0) * kv_stride + static_cast<std::int64_t>(hk) * D;
  float* wS = scratch + warp * kScratchFloats;  // S^T, then P^T (16 keys x 32 queries)
  float* wdP = wS + 16 * kBwdQueries;           // dP^T
  float* wStage = wdP + 16 * kBwdQueries;       // one 16x16 fragment on its way to global memory
  T* wP = scratch_t + warp * 2 * 16 * kBwdQueries;
  T* wdS = wP + 16 * kBwdQueries;
  const int my_key0 = k0 + warp * 16;

  load_tile<T, D>(sK, k + kv_offset, kv_stride, kBwdKeys, min(kBwdKeys, s.seq_kv - k0));
  load_tile<T, D>(sV, v + kv_offset, kv_stride, kBwdKeys, min(kBwdKeys, s.seq_kv - k0));

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> dk_frag[D / 16];
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> dv_frag[D / 16];
  for (int n = 0; n < D / 16; ++n) {
    wmma::fill_fragment(dk_frag[n], 0.0f);
    wmma::fill_fragment(dv_frag[n], 0.0f);
  }

  const int offset = s.seq_kv - s.seq_q;
  const int first_query = s.causal ? max(0, k0 - offset) : 0;  // earliest query that sees key k0
  const int q_tiles = (s.seq_q + kBwdQueries - 1) / kBwdQueries;
  for (int t = first_query / kBwdQueries; t < q_tiles; ++t) {
    const int q0 = t * kBwdQueries;
    __syncthreads();  // the previous tile is consumed (and K, V are loaded on the first pass)
    load_tile<T, D>(sQ, q + q_offset + q0 * q_stride, q_stride, kBwdQueries, min(kBwdQueries, s.seq_q - q0));
    load_tile<T, D>(sdO, d_o + q_offset + q0 * q_stride, q_stride, kBwdQueries, min(kBwdQueries, s.seq_q - q0));
    for (int i = threadIdx.x; i < kBwdQueries; i += blockDim.x) {
      const int qi = q0 + i;
      const std::int64_t at = (static_cast<std::int64_t>(b) * s.heads + h) * s.seq_q + qi;
      sLse[i] = qi < s.seq_q ? lse[at] : INFINITY;  // exp(score - inf) = 0 for padding rows
      sDelta[i] = qi < s.seq_q ? delta[at] : 0.0f;
    }
    __syncthreads();

    // S^T = K_w Q^T and dP^T = V_w dO^T (16 keys x 32 queries each).
    for (int n = 0; n < kBwdQueries / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> s_acc;
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> dp_acc;
      wmma::fill_fragment(s_acc, 0.0f);
      wmma::fill_fragment(dp_acc, 0.0f);
      for (int kk = 0; kk < D / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> bt;
        wmma::load_matrix_sync(a, sK + warp * 16 * D + kk * 16, D);
        wmma::load_matrix_sync(bt, sQ + n * 16 * D + kk * 16, D);
        wmma::mma_sync(s_acc, a, bt, s_acc);
        wmma::load_matrix_sync(a, sV + warp * 16 * D + kk * 16, D);
        wmma::load_matrix_sync(bt, sdO + n * 16 * D + kk * 16, D);
        wmma::mma_sync(dp_acc, a, bt, dp_acc);
      }
      wmma::store_matrix_sync(wS + n * 16, s_acc, kBwdQueries, wmma::mem_row_major);
      wmma::store_matrix_sync(wdP + n * 16, dp_acc, kBwdQueries, wmma::mem_row_major);
    }
    __syncwarp();

    // P^T = exp(scale S^T - lse) on visible pairs; dS^T = scale P^T (dP^T - D).
    for (int i = lane; i < 16 * kBwdQueries; i += 32) {
      const int kr = i / kBwdQueries;
      const int qc = i % kBwdQueries;
      const int kj = my_key0 + kr;
      const int qi = q0 + qc;
      const bool visible = kj < s.seq_kv && qi < s.seq_q && (!s.causal || kj <= qi + offset);
      const float p = visible ? __expf(wS[i] * s.scale - sLse[qc]) : 0.0f;
      wP[i] = from_float<T>(p);
      wdS[i] = from_float<T>(p * (wdP[i] - sDelta[qc]) * s.scale);
    }
    __syncwarp();

    // dV += P^T dO and dK += dS^T Q.
    for (int n = 0; n < D / 16; ++n) {
      for (int kk = 0; kk < kBwdQueries / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> bm;
        wmma::load_matrix_sync(a, wP + kk * 16, kBwdQueries);
        wmma::load_matrix_sync(bm, sdO + kk * 16 * D + n * 16, D);
        wmma::mma_sync(dv_frag[n], a, bm, dv_frag[n]);
        wmma::load_matrix_sync(a, wdS + kk * 16, kBwdQueries);
        wmma::load_matrix_sync(bm, sQ + kk * 16 * D + n * 16, D);
        wmma::mma_sync(dk_frag[n], a, bm, dk_frag[n]);
      }
    }

    // dQ += dS K_w: this warp's 16 keys contribute to all 32 queries; added atomically in fp32.
    if (my_key0 < s.seq_kv) {
      for (int mq = 0; mq < kBwdQueries / 16; ++mq) {
        if (q0 + mq * 16 >= s.seq_q) break;
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::col_major> ds;  // (dS^T)^T
        wmma::load_matrix_sync(ds, wdS + mq * 16, kBwdQueries);
        for (int n = 0; n < D / 16; ++n) {
          wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> kf;
          wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
          wmma::fill_fragment(acc, 0.0f);
          wmma::load_matrix_sync(kf, sK + warp * 16 * D + n * 16, D);
          wmma::mma_sync(acc, ds, kf, acc);
          wmma::store_matrix_sync(wStage, acc, 16, wmma::mem_row_major);
          __syncwarp();
          for (int i = lane; i < 256; i += 32) {
            const int qi = q0 + mq * 16 + i / 16;
            if (qi < s.seq_q) atomicAdd(dq_acc + q_offset + qi * q_stride + n * 16 + i % 16, wStage[i]);
          }
          __syncwarp();
        }
      }
    }
  }

  // dK and dV of this warp's keys; query heads sharing a KV head add into the same rows.
  for (int n = 0; n < D / 16; ++n) {
    for (int which = 0; which < 2; ++which) {
      wmma::store_matrix_sync(wStage, which == 0 ? dk_frag[n] : dv_frag[n], 16, wmma::mem_row_major);
      __syncwarp();
      float* target = which == 0 ? dk_acc : dv_acc;
      for (int i = lane; i < 256; i += 32) {
        const int kj = my_key0 + i / 16;
        if (kj < s.seq_kv) {
          atomicAdd(target + kv_offset + static_cast<std::int64_t>(warp * 16 + i / 16) * kv_stride + n * 16 + i % 16,
                    wStage[i]);
        }
      }
      __syncwarp();
    }
  }
}

template <class T>
__global__ void round_kernel(const float* __restrict__ in, T* __restrict__ out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = from_float<T>(in[i]);
  }
}

// Partition `blockIdx.z` of one sequence's context for the query heads of one KV head, one warp
// per query head; writes (max, sum, unnormalised output) to the workspace.
template <class T>
__global__ void paged_decode_partition_kernel(const T* __restrict__ q, const T* __restrict__ k_cache,
                                              const T* __restrict__ v_cache, const int* __restrict__ block_table,
                                              const int* __restrict__ context_lens, float* __restrict__ workspace,
                                              PagedDecodeShape s) {
  constexpr int kMaxPerLane = 8;  // head_dim <= 256
  const int hk = blockIdx.x;
  const int b = blockIdx.y;
  const int part = blockIdx.z;
  const int group = s.heads / s.kv_heads;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int h = hk * group + warp;
  const int d = s.head_dim;
  const int per_lane = d / 32;
  const int partitions = (s.max_context + kPartitionTokens - 1) / kPartitionTokens;
  const int context = context_lens[b];
  const int t_begin = part * kPartitionTokens;
  const int t_end = min(context, t_begin + kPartitionTokens);

  float qv[kMaxPerLane];
  float acc[kMaxPerLane];
  const T* q_row = q + (static_cast<std::int64_t>(b) * s.heads + h) * d;
  for (int e = 0; e < per_lane; ++e) {
    qv[e] = to_float(q_row[lane + 32 * e]);
    acc[e] = 0.0f;
  }
  float m = -INFINITY;
  float l = 0.0f;
  for (int t = t_begin; t < t_end; ++t) {
    const int block = block_table[static_cast<std::int64_t>(b) * s.max_blocks_per_seq + t / s.block_size];
    const std::int64_t row = (static_cast<std::int64_t>(block) * s.block_size + t % s.block_size) * s.kv_heads + hk;
    const T* k_row = k_cache + row * d;
    const T* v_row = v_cache + row * d;
    float dot = 0.0f;
    for (int e = 0; e < per_lane; ++e) dot += qv[e] * to_float(k_row[lane + 32 * e]);
    const float score = warp_sum(dot) * s.scale;
    const float m_new = fmaxf(m, score);
    const float alpha = __expf(m - m_new);
    const float p = __expf(score - m_new);
    l = l * alpha + p;
    for (int e = 0; e < per_lane; ++e) acc[e] = acc[e] * alpha + p * to_float(v_row[lane + 32 * e]);
    m = m_new;
  }
  float* state = workspace + ((static_cast<std::int64_t>(b) * s.heads + h) * partitions + part) * (d + 2);
  if (lane == 0) {
    state[0] = m;
    state[1] = l;
  }
  for (int e = 0; e < per_lane; ++e) state[2 + lane + 32 * e] = acc[e];
}

template <class T>
__global__ void paged_decode_reduce_kernel(const float* __restrict__ workspace, const int* __restrict__ context_lens,
                                           T* __restrict__ o, PagedDecodeShape s) {
  constexpr int kMaxPerLane = 8;
  const int h = blockIdx.x;
  const int b = blockIdx.y;
  const int lane = threadIdx.x;
  const int d = s.head_dim;
  const int per_lane = d / 32;
  const int partitions = (s.max_context + kPartitionTokens - 1) / kPartitionTokens;
  const int used = (context_lens[b] + kPartitionTokens - 1) / kPartitionTokens;
  const float* states = workspace + (static_cast<std::int64_t>(b) * s.heads + h) * partitions * (d + 2);
  float max = -INFINITY;
  for (int p = 0; p < used; ++p) max = fmaxf(max, states[p * (d + 2)]);
  float sum = 0.0f;
  float acc[kMaxPerLane] = {};
  for (int p = 0; p < used && max != -INFINITY; ++p) {
    const float* state = states + p * (d + 2);
    const float w = __expf(state[0] - max);
    sum += state[1] * w;
    for (int e = 0; e < per_lane; ++e) acc[e] += state[2 + lane + 32 * e] * w;
  }
  T* out = o + (static_cast<std::int64_t>(b) * s.heads + h) * d;
  for (int e = 0; e < per_lane; ++e) out[lane + 32 * e] = from_float<T>(sum > 0.0f ? acc[e] / sum : 0.0f);
}

template <class F>
void dispatch(ElementFormat format, int head_dim, F&& f) {
  if (format == ElementFormat::bf16) {
    if (head_dim == 64) return f(__nv_bfloat16{}, std::integral_constant<int, 64>{});
    if (head_dim == 128) return f(__nv_bfloat16{}, std::integral_constant<int, 128>{});
  } else if (format == ElementFormat::fp16) {
    if (head_dim == 64) return f(__half{}, std::integral_constant<int, 64>{});
    if (head_dim == 128) return f(__half{}, std::integral_constant<int, 128>{});
  }
  throw std::invalid_argument("stepcast flash attention handles fp16/bf16 with head_dim 64 or 128");
}

int grid_1d(std::int64_t work, int threads) {
  const std::int64_t blocks = (work + threads - 1) / threads;
  return static_cast<int>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

}  // namespace

void check_flash_shape(ElementFormat format, const AttentionShape& s) {
  if (format != ElementFormat::fp16 && format != ElementFormat::bf16) {
    throw std::invalid_argument("stepcast flash attention takes fp16 or bf16");
  }
  if (s.head_dim != 64 && s.head_dim != 128) throw std::invalid_argument("stepcast flash attention needs head_dim 64 or 128");
  if (s.batch < 1 || s.heads < 1 || s.kv_heads < 1 || s.seq_q < 1 || s.seq_kv < 1 || s.heads % s.kv_heads != 0) {
    throw std::invalid_argument("attention shape: positive sizes and heads a multiple of kv_heads required");
  }
  if (s.batch > 65535 || s.heads > 65535) throw std::invalid_argument("attention shape: batch and heads up to 65535");
}

void launch_flash_forward(cudaStream_t stream, ElementFormat format, const AttentionShape& shape, const void* q,
                          const void* k, const void* v, void* o, float* lse) {
  check_flash_shape(format, shape);
  dispatch(format, shape.head_dim, [&](auto t, auto d) {
    using T = decltype(t);
    constexpr int D = decltype(d)::value;
    constexpr std::size_t smem = forward_smem_bytes<T, D>();
    STEPCAST_CUDA(cudaFuncSetAttribute(flash_forward_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(smem)));
    const dim3 grid((shape.seq_q + kFwdQueries - 1) / kFwdQueries, shape.heads, shape.batch);
    flash_forward_kernel<T, D><<<grid, kThreads, smem, stream>>>(static_cast<const T*>(q), static_cast<const T*>(k),
                                                                 static_cast<const T*>(v), static_cast<T*>(o), lse,
                                                                 shape);
  });
  STEPCAST_CUDA_LAUNCHED();
}

std::size_t flash_backward_workspace_bytes(const AttentionShape& s) {
  const std::size_t rows_q = static_cast<std::size_t>(s.batch) * s.seq_q * s.heads;
  const std::size_t rows_kv = static_cast<std::size_t>(s.batch) * s.seq_kv * s.kv_heads;
  return sizeof(float) * (rows_q + rows_q * s.head_dim + 2 * rows_kv * s.head_dim);
}

void launch_flash_backward(cudaStream_t stream, ElementFormat format, const AttentionShape& shape, const void* q,
                           const void* k, const void* v, const void* o, const void* d_o, const float* lse,
                           void* workspace, void* dq, void* dk, void* dv) {
  check_flash_shape(format, shape);
  const std::int64_t rows_q = static_cast<std::int64_t>(shape.batch) * shape.seq_q * shape.heads;
  const std::int64_t rows_kv = static_cast<std::int64_t>(shape.batch) * shape.seq_kv * shape.kv_heads;
  float* delta = static_cast<float*>(workspace);
  float* dq_acc = delta + rows_q;
  float* dk_acc = dq_acc + rows_q * shape.head_dim;
  float* dv_acc = dk_acc + rows_kv * shape.head_dim;
  STEPCAST_CUDA(cudaMemsetAsync(dq_acc, 0, sizeof(float) * (rows_q + 2 * rows_kv) * shape.head_dim, stream));
  dispatch(format, shape.head_dim, [&](auto t, auto d) {
    using T = decltype(t);
    constexpr int D = decltype(d)::value;
    flash_delta_kernel<T><<<grid_1d(rows_q * 32, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(o), static_cast<const T*>(d_o), delta, shape);
    STEPCAST_CUDA_LAUNCHED();
    constexpr std::size_t smem = backward_smem_bytes<T, D>();
    STEPCAST_CUDA(cudaFuncSetAttribute(flash_backward_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(smem)));
    const dim3 grid((shape.seq_kv + kBwdKeys - 1) / kBwdKeys, shape.heads, shape.batch);
    flash_backward_kernel<T, D><<<grid, kThreads, smem, stream>>>(
        static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), static_cast<const T*>(d_o), lse,
        delta, dq_acc, dk_acc, dv_acc, shape);
    STEPCAST_CUDA_LAUNCHED();
    round_kernel<T><<<grid_1d(rows_q * D, 256), 256, 0, stream>>>(dq_acc, static_cast<T*>(dq), rows_q * D);
    round_kernel<T><<<grid_1d(rows_kv * D, 256), 256, 0, stream>>>(dk_acc, static_cast<T*>(dk), rows_kv * D);
    round_kernel<T><<<grid_1d(rows_kv * D, 256), 256, 0, stream>>>(dv_acc, static_cast<T*>(dv), rows_kv * D);
  });
  STEPCAST_CUDA_LAUNCHED();
}

std::size_t paged_decode_workspace_bytes(const PagedDecodeShape& s) {
  const std::size_t partitions = (static_cast<std::size_t>(s.max_context) + kPartitionTokens - 1) / kPartitionTokens;
  return sizeof(float) * static_cast<std::size_t>(s.batch) * s.heads * partitions * (s.head_dim + 2);
}

void launch_paged_decode(cudaStream_t stream, ElementFormat format, const PagedDecodeShape& shape, const void* q,
                         const void* k_cache, const void* v_cache, const int* block_table, const int* context_lens,
                         void* workspace, void* o) {
  if (shape.head_dim % 32 != 0 || shape.head_dim > 256 || shape.heads % shape.kv_heads != 0 ||
      shape.heads / shape.kv_heads > 32 || shape.max_context < 1) {
    throw std::invalid_argument(
        "paged decode: head_dim a multiple of 32 up to 256, heads a multiple of kv_heads, at most 32 query heads per KV "
        "head");
  }
  const int partitions = (shape.max_context + kPartitionTokens - 1) / kPartitionTokens;
  const dim3 grid(shape.kv_heads, shape.batch, partitions);
  const int threads = 32 * (shape.heads / shape.kv_heads);
  auto run = [&](auto t) {
    using T = decltype(t);
    paged_decode_partition_kernel<T><<<grid, threads, 0, stream>>>(
        static_cast<const T*>(q), static_cast<const T*>(k_cache), static_cast<const T*>(v_cache), block_table,
        context_lens, static_cast<float*>(workspace), shape);
    STEPCAST_CUDA_LAUNCHED();
    paged_decode_reduce_kernel<T><<<dim3(shape.heads, shape.batch), 32, 0, stream>>>(
        static_cast<const float*>(workspace), context_lens, static_cast<T*>(o), shape);
  };
  if (format == ElementFormat::bf16) {
    run(__nv_bfloat16{});
  } else if (format == ElementFormat::fp16) {
    run(__half{});
  } else {
    throw std::invalid_argument("paged decode takes fp16 or bf16");
  }
  STEPCAST_CUDA_LAUNCHED();
}

}  // namespace stepcast::kernels
