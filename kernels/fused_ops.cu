#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>

#include "kernels/counter_hash.h"
#include "kernels/cuda_check.h"
#include "kernels/fused_ops.h"

namespace stepcast::kernels {

namespace {

constexpr int kRowThreads = 256;

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Sum (or max) over the block; every thread gets the result. Needs blockDim.x a multiple of 32.
template <bool kMax>
__device__ float block_reduce(float v) {
  __shared__ float partial[32];
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffU, v, offset);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  __syncthreads();  // partial[] may still be read from a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = blockDim.x / 32;
  v = lane < warps ? partial[lane] : (kMax ? -INFINITY : 0.0f);
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffU, v, offset);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  return v;
}

// 16-byte vectors: 8 bf16 or fp16, or 4 fp32, per load and store (one LDG.128 / STG.128), as
// PyTorch's vectorized elementwise kernels and Apex/Transformer Engine's norms move memory.
template <class T>
struct alignas(16) Vec {
  static constexpr int kSize = 16 / static_cast<int>(sizeof(T));
  T v[kSize];
};

template <class T>
__device__ __forceinline__ Vec<T> load_vec(const T* p) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  Vec<T> out;
  memcpy(&out, &raw, sizeof raw);
  return out;
}

template <class T>
__device__ __forceinline__ void store_vec(T* p, const Vec<T>& v) {
  uint4 raw;
  memcpy(&raw, &v, sizeof raw);
  *reinterpret_cast<uint4*>(p) = raw;
}

// Row kernels keep their row in registers: each thread holds up to this many vectors, so the
// row is read from memory once (the scalar kernels below read it two or three times).
constexpr int kRowVecsPerThread = 4;
constexpr int kMaxRowThreads = 1024;

// This thread's share of a row, loaded once into registers.
template <class T>
__device__ __forceinline__ void load_row(const T* row, int vecs, Vec<T> (&cache)[kRowVecsPerThread]) {
#pragma unroll
  for (int j = 0; j < kRowVecsPerThread; ++j) {
    const int v = threadIdx.x + j * blockDim.x;
    if (v < vecs) cache[j] = load_vec(row + v * Vec<T>::kSize);
  }
}

// acc = f(acc, element) over this thread's cached elements, in row order.
template <class T, class F>
__device__ __forceinline__ float fold_row(const Vec<T> (&cache)[kRowVecsPerThread], int vecs, float acc, F f) {
#pragma unroll
  for (int j = 0; j < kRowVecsPerThread; ++j) {
    const int v = threadIdx.x + j * blockDim.x;
    if (v >= vecs) continue;
#pragma unroll
    for (int e = 0; e < Vec<T>::kSize; ++e) acc = f(acc, to_float(cache[j].v[e]));
  }
  return acc;
}

// The folds the row kernels reduce their rows with.
struct AddSquare {
  __device__ float operator()(float acc, float f) const { return acc + f * f; }
};
struct Add {
  __device__ float operator()(float acc, float f) const { return acc + f; }
};
struct AddSquaredDeviation {
  float mean;
  __device__ float operator()(float acc, float f) const { return acc + (f - mean) * (f - mean); }
};
struct Max {
  __device__ float operator()(float acc, float f) const { return fmaxf(acc, f); }
};
struct AddExpAbove {
  float max;
  __device__ float operator()(float acc, float f) const { return acc + __expf(f - max); }
};

template <class T>
__global__ void rmsnorm_vec_kernel(const T* __restrict__ x, const T* __restrict__ gamma, float eps, T* __restrict__ y,
                                   std::int64_t cols) {
  constexpr int N = Vec<T>::kSize;
  const auto vecs = static_cast<int>(cols / N);
  T* out = y + blockIdx.x * cols;
  Vec<T> cache[kRowVecsPerThread];
  load_row(x + blockIdx.x * cols, vecs, cache);
  const float sum_sq = fold_row(cache, vecs, 0.0f, AddSquare{});
  const float inv = rsqrtf(block_reduce<false>(sum_sq) / static_cast<float>(cols) + eps);
#pragma unroll
  for (int j = 0; j < kRowVecsPerThread; ++j) {
    const int v = threadIdx.x + j * blockDim.x;
    if (v >= vecs) continue;
    const Vec<T> g = load_vec(gamma + v * N);
    Vec<T> o;
#pragma unroll
    for (int e = 0; e < N; ++e) o.v[e] = from_float<T>(to_float(cache[j].v[e]) * inv * to_float(g.v[e]));
    store_vec(out + v * N, o);
  }
}

template <class T>
__global__ void layernorm_vec_kernel(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta,
                                     float eps, T* __restrict__ y, std::int64_t cols) {
  constexpr int N = Vec<T>::kSize;
  const auto vecs = static_cast<int>(cols / N);
  T* out = y + blockIdx.x * cols;
  Vec<T> cache[kRowVecsPerThread];
  load_row(x + blockIdx.x * cols, vecs, cache);
  const float sum = fold_row(cache, vecs, 0.0f, Add{});
  const float mean = block_reduce<false>(sum) / static_cast<float>(cols);
  const float sum_sq = fold_row(cache, vecs, 0.0f, AddSquaredDeviation{mean});
  const float inv = rsqrtf(block_reduce<false>(sum_sq) / static_cast<float>(cols) + eps);
#pragma unroll
  for (int j = 0; j < kRowVecsPerThread; ++j) {
    const int v = threadIdx.x + j * blockDim.x;
    if (v >= vecs) continue;
    const Vec<T> g = load_vec(gamma + v * N);
    const Vec<T> b = load_vec(beta + v * N);
    Vec<T> o;
#pragma unroll
    for (int e = 0; e < N; ++e) {
      o.v[e] = from_float<T>((to_float(cache[j].v[e]) - mean) * inv * to_float(g.v[e]) + to_float(b.v[e]));
    }
    store_vec(out + v * N, o);
  }
}

template <class T>
__global__ void softmax_vec_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t cols) {
  constexpr int N = Vec<T>::kSize;
  const auto vecs = static_cast<int>(cols / N);
  T* out = y + blockIdx.x * cols;
  Vec<T> cache[kRowVecsPerThread];
  load_row(x + blockIdx.x * cols, vecs, cache);
  const float max = block_reduce<true>(fold_row(cache, vecs, -INFINITY, Max{}));
  const float sum = fold_row(cache, vecs, 0.0f, AddExpAbove{max});
  const float inv = 1.0f / block_reduce<false>(sum);
#pragma unroll
  for (int j = 0; j < kRowVecsPerThread; ++j) {
    const int v = threadIdx.x + j * blockDim.x;
    if (v >= vecs) continue;
    Vec<T> o;
#pragma unroll
    for (int e = 0; e < N; ++e) o.v[e] = from_float<T>(__expf(to_float(cache[j].v[e]) - max) * inv);
    store_vec(out + v * N, o);
  }
}

template <class T>
__global__ void swiglu_vec_kernel(const T* __restrict__ gate_up, T* __restrict__ y, std::int64_t rows,
                                  std::int64_t cols) {
  constexpr int N = Vec<T>::kSize;
  const std::int64_t row_vecs = cols / N;
  const std::int64_t n = rows * row_vecs;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::int64_t r = i / row_vecs;
    const std::int64_t c = (i % row_vecs) * N;
    const Vec<T> g = load_vec(gate_up + r * 2 * cols + c);
    const Vec<T> u = load_vec(gate_up + r * 2 * cols + cols + c);
    Vec<T> o;
#pragma unroll
    for (int e = 0; e < N; ++e) {
      const float gv = to_float(g.v[e]);
      o.v[e] = from_float<T>(gv / (1.0f + __expf(-gv)) * to_float(u.v[e]));
    }
    store_vec(y + r * cols + c, o);
  }
}

template <class T>
__global__ void gelu_vec_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t n) {
  constexpr int N = Vec<T>::kSize;
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  const std::int64_t vecs = n / N;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs; i += stride) {
    const Vec<T> in = load_vec(x + i * N);
    Vec<T> o;
#pragma unroll
    for (int e = 0; e < N; ++e) {
      const float v = to_float(in.v[e]);
      o.v[e] = from_float<T>(0.5f * v * (1.0f + tanhf(kSqrt2OverPi * (v + 0.044715f * v * v * v))));
    }
    store_vec(y + i * N, o);
  }
}

// N consecutive rotation pairs (i .. i + N - 1) of one head per iteration; needs head_dim / 2 a
// multiple of N.
template <class T>
__global__ void rope_vec_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t rows, std::int64_t cols,
                                int head_dim, std::int64_t seq_len, float theta) {
  constexpr int N = Vec<T>::kSize;
  const int half = head_dim / 2;
  const std::int64_t pair_vecs_per_row = cols / 2 / N;
  const std::int64_t n = rows * pair_vecs_per_row;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n; p += stride) {
    const std::int64_t r = p / pair_vecs_per_row;
    const std::int64_t within = (p % pair_vecs_per_row) * N;  // first pair of the vector
    const std::int64_t head = within / half;
    const int i0 = static_cast<int>(within % half);
    const std::int64_t base = r * cols + head * head_dim;
    const float position = static_cast<float>(r % seq_len);
    const Vec<T> a = load_vec(x + base + i0);
    const Vec<T> b = load_vec(x + base + i0 + half);
    Vec<T> oa;
    Vec<T> ob;
#pragma unroll
    for (int e = 0; e < N; ++e) {
      const float angle = position * powf(theta, -2.0f * static_cast<float>(i0 + e) / head_dim);
      float s = 0.0f;
      float c = 0.0f;
      sincosf(angle, &s, &c);
      const float av = to_float(a.v[e]);
      const float bv = to_float(b.v[e]);
      oa.v[e] = from_float<T>(av * c - bv * s);
      ob.v[e] = from_float<T>(bv * c + av * s);
    }
    store_vec(y + base + i0, oa);
    store_vec(y + base + i0 + half, ob);
  }
}

template <class T>
__global__ void bias_dropout_add_vec_kernel(const T* __restrict__ x, const T* __restrict__ bias,
                                            const T* __restrict__ residual, std::uint64_t seed, float p,
                                            T* __restrict__ y, std::int64_t rows, std::int64_t cols) {
  constexpr int N = Vec<T>::kSize;
  const float scale = 1.0f / (1.0f - p);
  const std::int64_t vecs = rows * cols / N;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < vecs; v += stride) {
    const std::int64_t i0 = v * N;
    const Vec<T> xv = load_vec(x + i0);
    const Vec<T> bv = load_vec(bias + i0 % cols);
    const Vec<T> rv = load_vec(residual + i0);
    Vec<T> o;
#pragma unroll
    for (int e = 0; e < N; ++e) {
      const bool keep = dropout_keep(seed, static_cast<std::uint64_t>(i0 + e), p);
      const float kept = keep ? (to_float(xv.v[e]) + to_float(bv.v[e])) * scale : 0.0f;
      o.v[e] = from_float<T>(to_float(rv.v[e]) + kept);
    }
    store_vec(y + i0, o);
  }
}

// The scalar kernels: any shape (the vectorized ones need rows of whole 16-byte vectors).
template <class T>
__global__ void rmsnorm_kernel(const T* __restrict__ x, const T* __restrict__ gamma, float eps, T* __restrict__ y,
                               std::int64_t cols) {
  const T* row = x + blockIdx.x * cols;
  T* out = y + blockIdx.x * cols;
  float sum_sq = 0.0f;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = to_float(row[c]);
    sum_sq += v * v;
  }
  const float inv = rsqrtf(block_reduce<false>(sum_sq) / static_cast<float>(cols) + eps);
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    out[c] = from_float<T>(to_float(row[c]) * inv * to_float(gamma[c]));
  }
}

template <class T>
__global__ void layernorm_kernel(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta,
                                 float eps, T* __restrict__ y, std::int64_t cols) {
  const T* row = x + blockIdx.x * cols;
  T* out = y + blockIdx.x * cols;
  float sum = 0.0f;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += to_float(row[c]);
  const float mean = block_reduce<false>(sum) / static_cast<float>(cols);
  float sum_sq = 0.0f;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = to_float(row[c]) - mean;
    sum_sq += d * d;
  }
  const float inv = rsqrtf(block_reduce<false>(sum_sq) / static_cast<float>(cols) + eps);
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    out[c] = from_float<T>((to_float(row[c]) - mean) * inv * to_float(gamma[c]) + to_float(beta[c]));
  }
}

template <class T>
__global__ void softmax_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t cols) {
  const T* row = x + blockIdx.x * cols;
  T* out = y + blockIdx.x * cols;
  float max = -INFINITY;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) max = fmaxf(max, to_float(row[c]));
  max = block_reduce<true>(max);
  float sum = 0.0f;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += __expf(to_float(row[c]) - max);
  const float inv = 1.0f / block_reduce<false>(sum);
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) out[c] = from_float<T>(__expf(to_float(row[c]) - max) * inv);
}

template <class T>
__global__ void swiglu_kernel(const T* __restrict__ gate_up, T* __restrict__ y, std::int64_t rows, std::int64_t cols) {
  const std::int64_t n = rows * cols;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::int64_t r = i / cols;
    const std::int64_t c = i % cols;
    const float g = to_float(gate_up[r * 2 * cols + c]);
    const float u = to_float(gate_up[r * 2 * cols + cols + c]);
    y[i] = from_float<T>(g / (1.0f + __expf(-g)) * u);
  }
}

template <class T>
__global__ void gelu_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t n) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = to_float(x[i]);
    y[i] = from_float<T>(0.5f * v * (1.0f + tanhf(kSqrt2OverPi * (v + 0.044715f * v * v * v))));
  }
}

template <class T>
__global__ void rope_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t rows, std::int64_t cols,
                            int head_dim, std::int64_t seq_len, float theta) {
  const int half = head_dim / 2;
  const std::int64_t pairs = rows * (cols / 2);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < pairs; p += stride) {
    const std::int64_t r = p / (cols / 2);
    const std::int64_t within = p % (cols / 2);
    const std::int64_t head = within / half;
    const int i = static_cast<int>(within % half);
    const std::int64_t base = r * cols + head * head_dim;
    const float angle = static_cast<float>(r % seq_len) * powf(theta, -2.0f * static_cast<float>(i) / head_dim);
    float s = 0.0f;
    float c = 0.0f;
    sincosf(angle, &s, &c);
    const float a = to_float(x[base + i]);
    const float b = to_float(x[base + i + half]);
    y[base + i] = from_float<T>(a * c - b * s);
    y[base + i + half] = from_float<T>(b * c + a * s);
  }
}

template <class T>
__global__ void bias_dropout_add_kernel(const T* __restrict__ x, const T* __restrict__ bias,
                                        const T* __restrict__ residual, std::uint64_t seed, float p, T* __restrict__ y,
                                        std::int64_t rows, std::int64_t cols) {
  const float scale = 1.0f / (1.0f - p);
  const std::int64_t n = rows * cols;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const bool keep = dropout_keep(seed, static_cast<std::uint64_t>(i), p);
    const float v = keep ? (to_float(x[i]) + to_float(bias[i % cols])) * scale : 0.0f;
    y[i] = from_float<T>(to_float(residual[i]) + v);
  }
}

int elementwise_grid(std::int64_t n) {
  const std::int64_t blocks = (n + kRowThreads - 1) / kRowThreads;
  return static_cast<int>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

// Pointers from cudaMalloc are 256-byte aligned; an offset view might not be.
bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <class T>
bool vectorizable(std::int64_t cols, std::initializer_list<const void*> pointers) {
  if (cols % Vec<T>::kSize != 0) return false;
  for (const void* p : pointers) {
    if (p != nullptr && !aligned16(p)) return false;
  }
  return true;
}

// Threads for a row kernel holding the row in registers: a multiple of 32 with at most
// kRowVecsPerThread vectors each; 0 when the row needs more than kMaxRowThreads threads.
template <class T>
int row_threads(std::int64_t cols) {
  const std::int64_t vecs = cols / Vec<T>::kSize;
  const std::int64_t threads = ((vecs + kRowVecsPerThread - 1) / kRowVecsPerThread + 31) / 32 * 32;
  if (threads > kMaxRowThreads) return 0;
  return static_cast<int>(threads < 32 ? 32 : threads);
}

int row_grid(RowShape shape) {
  if (shape.rows > 2147483647) throw std::invalid_argument("too many rows for one launch");
  return static_cast<int>(shape.rows);
}

// Calls f(T{}) with T the CUDA type of `format` (fp32, fp16, bf16).
template <class F>
void dispatch(ElementFormat format, F&& f) {
  switch (format) {
    case ElementFormat::fp32: f(float{}); return;
    case ElementFormat::fp16: f(__half{}); return;
    case ElementFormat::bf16: f(__nv_bfloat16{}); return;
    default: throw std::invalid_argument("fused kernels take fp32, fp16 or bf16");
  }
}

}  // namespace

void launch_rmsnorm(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, const void* gamma, float eps, void* y) {
  dispatch(f, [&](auto t) {
    using T = decltype(t);
    const int threads = vectorizable<T>(shape.cols, {x, gamma, y}) ? row_threads<T>(shape.cols) : 0;
    if (threads > 0) {
      rmsnorm_vec_kernel<T><<<row_grid(shape), threads, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(gamma),
                                                                 eps, static_cast<T*>(y), shape.cols);
    } else {
      rmsnorm_kernel<T><<<row_grid(shape), kRowThreads, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(gamma),
                                                                eps, static_cast<T*>(y), shape.cols);
    }
  });
  STEPCAST_CUDA_LAUNCHED();
}

void launch_layernorm(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, const void* gamma,
                      const void* beta, float eps, void* y) {
  dispatch(f, [&](auto t) {
    using T = decltype(t);
    const int threads = vectorizable<T>(shape.cols, {x, gamma, beta, y}) ? row_threads<T>(shape.cols) : 0;
    if (threads > 0) {
      layernorm_vec_kernel<T><<<row_grid(shape), threads, 0, s>>>(
          static_cast<const T*>(x), static_cast<const T*>(gamma), static_cast<const T*>(beta), eps, static_cast<T*>(y),
          shape.cols);
    } else {
      layernorm_kernel<T><<<row_grid(shape), kRowThreads, 0, s>>>(
          static_cast<const T*>(x), static_cast<const T*>(gamma), static_cast<const T*>(beta), eps, static_cast<T*>(y),
          shape.cols);
    }
  });
  STEPCAST_CUDA_LAUNCHED();
}

void launch_softmax(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, void* y) {
  dispatch(f, [&](auto t) {
    using T = decltype(t);
    const int threads = vectorizable<T>(shape.cols, {x, y}) ? row_threads<T>(shape.cols) : 0;
    if (threads > 0) {
      softmax_vec_kernel<T><<<row_grid(shape), threads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), shape.cols);
    } else {
      softmax_kernel<T><<<row_grid(shape), kRowThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), shape.cols);
    }
  });
  STEPCAST_CUDA_LAUNCHED();
}

void launch_swiglu(cudaStream_t s, ElementFormat f, RowShape shape, const void* gate_up, void* y) {
  dispatch(f, [&](auto t) {
    using T = decltype(t);
    if (vectorizable<T>(shape.cols, {gate_up, y})) {
      swiglu_vec_kernel<T><<<elementwise_grid(shape.rows * shape.cols / Vec<T>::kSize), kRowThreads, 0, s>>>(
          static_cast<const T*>(gate_up), static_cast<T*>(y), shape.rows, shape.cols);
    } else {
      swiglu_kernel<T><<<elementwise_grid(shape.rows * shape.cols), kRowThreads, 0, s>>>(
          static_cast<const T*>(gate_up), static_cast<T*>(y), shape.rows, shape.cols);
    }
  });
  STEPCAST_CUDA_LAUNCHED();
}

void launch_gelu(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, void* y) {
  dispatch(f, [&](auto t) {
    using T = decltype(t);
    if (vectorizable<T>(shape.rows * shape.cols, {x, y})) {
      gelu_vec_kernel<T><<<elementwise_grid(shape.rows * shape.cols / Vec<T>::kSize), kRowThreads, 0, s>>>(
          static_cast<const T*>(x), static_cast<T*>(y), shape.rows * shape.cols);
    } else {
      gelu_kernel<T><<<elementwise_grid(shape.rows * shape.cols), kRowThreads, 0, s>>>(
          static_cast<const T*>(x), static_cast<T*>(y), shape.rows * shape.cols);
    }
  });
  STEPCAST_CUDA_LAUNCHED();
}

void launch_rope(cudaStream_t s, ElementFormat f, RowShape shape, int head_dim, std::int64_t seq_len, float theta,
                 const void* x, void* y) {
  if (head_dim <= 0 || head_dim % 2 != 0 || shape.cols % head_dim != 0) {
    throw std::invalid_argument("rope: cols must be a multiple of an even head_dim");
  }
  dispatch(f, [&](auto t) {
    using T = decltype(t);
    if (vectorizable<T>(head_dim / 2, {x, y})) {
      rope_vec_kernel<T><<<elementwise_grid(shape.rows * shape.cols / 2 / Vec<T>::kSize), kRowThreads, 0, s>>>(
          static_cast<const T*>(x), static_cast<T*>(y), shape.rows, shape.cols, head_dim, seq_len, theta);
    } else {
      rope_kernel<T><<<elementwise_grid(shape.rows * shape.cols / 2), kRowThreads, 0, s>>>(
          static_cast<const T*>(x), static_cast<T*>(y), shape.rows, shape.cols, head_dim, seq_len, theta);
    }
  });
  STEPCAST_CUDA_LAUNCHED();
}

void launch_bias_dropout_add(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, const void* bias,
                             const void* residual, std::uint64_t seed, float p, void* y) {
  dispatch(f, [&](auto t) {
    using T = decltype(t);
    if (vectorizable<T>(shape.cols, {x, bias, residual, y})) {
      bias_dropout_add_vec_kernel<T><<<elementwise_grid(shape.rows * shape.cols / Vec<T>::kSize), kRowThreads, 0, s>>>(
          static_cast<const T*>(x), static_cast<const T*>(bias), static_cast<const T*>(residual), seed, p,
          static_cast<T*>(y), shape.rows, shape.cols);
    } else {
      bias_dropout_add_kernel<T><<<elementwise_grid(shape.rows * shape.cols), kRowThreads, 0, s>>>(
          static_cast<const T*>(x), static_cast<const T*>(bias), static_cast<const T*>(residual), seed, p,
          static_cast<T*>(y), shape.rows, shape.cols);
    }
  });
  STEPCAST_CUDA_LAUNCHED();
}

}  // namespace stepcast::kernels
