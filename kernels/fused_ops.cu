#include <cuda_bf16.h>
#include <cuda_fp16.h>

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
    rmsnorm_kernel<T><<<row_grid(shape), kRowThreads, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(gamma),
                                                              eps, static_cast<T*>(y), shape.cols);
  });
  STEPCAST_CUDA_LAUNCHED();
}

void launch_layernorm(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, const void* gamma,
                      const void* beta, float eps, void* y) {
  dispatch(f, [&](auto t) {
    using T = decltype(t);
    layernorm_kernel<T><<<row_grid(shape), kRowThreads, 0, s>>>(
        static_cast<const T*>(x), static_cast<const T*>(gamma), static_cast<const T*>(beta), eps, static_cast<T*>(y),
        shape.cols);
  });
  STEPCAST_CUDA_LAUNCHED();
}

void launch_softmax(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, void* y) {
  dispatch(f, [&](auto t) {
    using T = decltype(t);
    softmax_kernel<T><<<row_grid(shape), kRowThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), shape.cols);
  });
  STEPCAST_CUDA_LAUNCHED();
}

void launch_swiglu(cudaStream_t s, ElementFormat f, RowShape shape, const void* gate_up, void* y) {
  dispatch(f, [&](auto t) {
    using T = decltype(t);
    swiglu_kernel<T><<<elementwise_grid(shape.rows * shape.cols), kRowThreads, 0, s>>>(
        static_cast<const T*>(gate_up), static_cast<T*>(y), shape.rows, shape.cols);
  });
  STEPCAST_CUDA_LAUNCHED();
}

void launch_gelu(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, void* y) {
  dispatch(f, [&](auto t) {
    using T = decltype(t);
    gelu_kernel<T><<<elementwise_grid(shape.rows * shape.cols), kRowThreads, 0, s>>>(
        static_cast<const T*>(x), static_cast<T*>(y), shape.rows * shape.cols);
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
    rope_kernel<T><<<elementwise_grid(shape.rows * shape.cols / 2), kRowThreads, 0, s>>>(
        static_cast<const T*>(x), static_cast<T*>(y), shape.rows, shape.cols, head_dim, seq_len, theta);
  });
  STEPCAST_CUDA_LAUNCHED();
}

void launch_bias_dropout_add(cudaStream_t s, ElementFormat f, RowShape shape, const void* x, const void* bias,
                             const void* residual, std::uint64_t seed, float p, void* y) {
  dispatch(f, [&](auto t) {
    using T = decltype(t);
    bias_dropout_add_kernel<T><<<elementwise_grid(shape.rows * shape.cols), kRowThreads, 0, s>>>(
        static_cast<const T*>(x), static_cast<const T*>(bias), static_cast<const T*>(residual), seed, p,
        static_cast<T*>(y), shape.rows, shape.cols);
  });
  STEPCAST_CUDA_LAUNCHED();
}

}  // namespace stepcast::kernels
