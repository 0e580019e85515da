#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/counter_hash.h"
#include "kernels/cuda_check.h"
#include "kernels/memory_ops.h"

namespace stepcast::kernels {

namespace {

constexpr int kThreads = 256;

int grid_for(std::size_t work, int threads) {
  int device = 0;
  int sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  // Enough blocks to fill every SM several times over; the grid-stride loops cover the rest.
  const std::size_t wanted = (work + threads - 1) / threads;
  const std::size_t cap = static_cast<std::size_t>(sms > 0 ? sms : 108) * 32;
  return static_cast<int>(wanted < cap ? (wanted > 0 ? wanted : 1) : cap);
}

__global__ void copy_kernel(const float* __restrict__ src, float* __restrict__ dst, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t vectors = n / 4;
  const auto* s4 = reinterpret_cast<const float4*>(src);
  auto* d4 = reinterpret_cast<float4*>(dst);
  for (std::size_t i = first; i < vectors; i += stride) d4[i] = s4[i];
  for (std::size_t i = vectors * 4 + first; i < n; i += stride) dst[i] = src[i];
}

__global__ void triad_kernel(float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c,
                             float scalar, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t vectors = n / 4;
  auto* a4 = reinterpret_cast<float4*>(a);
  const auto* b4 = reinterpret_cast<const float4*>(b);
  const auto* c4 = reinterpret_cast<const float4*>(c);
  for (std::size_t i = first; i < vectors; i += stride) {
    const float4 x = b4[i];
    const float4 y = c4[i];
    a4[i] = make_float4(x.x + scalar * y.x, x.y + scalar * y.y, x.z + scalar * y.z, x.w + scalar * y.w);
  }
  for (std::size_t i = vectors * 4 + first; i < n; i += stride) a[i] = b[i] + scalar * c[i];
}

template <class T>
__device__ T convert_from_float(float v);
template <>
__device__ float convert_from_float<float>(float v) { return v; }
template <>
__device__ __half convert_from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __nv_bfloat16 convert_from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __nv_fp8_e4m3 convert_from_float<__nv_fp8_e4m3>(float v) { return __nv_fp8_e4m3(v); }
template <>
__device__ __nv_fp8_e5m2 convert_from_float<__nv_fp8_e5m2>(float v) { return __nv_fp8_e5m2(v); }
template <>
__device__ std::int8_t convert_from_float<std::int8_t>(float v) { return static_cast<std::int8_t>(__float2int_rn(v)); }
template <>
__device__ std::int32_t convert_from_float<std::int32_t>(float v) { return __float2int_rn(v); }

template <class T>
__global__ void fill_uniform_kernel(T* data, std::size_t count, std::uint64_t seed, float scale) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    data[i] = convert_from_float<T>(uniform_symmetric(seed, i, scale));
  }
}

template <class T>
__global__ void fill_constant_kernel(T* data, std::size_t count, float value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    data[i] = convert_from_float<T>(value);
  }
}

template <class T>
void fill_uniform_as(cudaStream_t stream, void* data, std::size_t count, std::uint64_t seed, float scale) {
  fill_uniform_kernel<T><<<grid_for(count, kThreads), kThreads, 0, stream>>>(static_cast<T*>(data), count, seed, scale);
  STEPCAST_CUDA_LAUNCHED();
}

template <class T>
void fill_constant_as(cudaStream_t stream, void* data, std::size_t count, float value) {
  fill_constant_kernel<T><<<grid_for(count, kThreads), kThreads, 0, stream>>>(static_cast<T*>(data), count, value);
  STEPCAST_CUDA_LAUNCHED();
}

__global__ void fill_pattern_kernel(float* data, std::size_t count, int rank) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    data[i] = collective_pattern(rank, i);
  }
}

__device__ float expected_value(CollectiveExpectation e, std::size_t g, std::size_t count, int ranks, int rank,
                                int source) {
  switch (e) {
    case CollectiveExpectation::sum_over_ranks: {
      float sum = 0.0f;
      for (int r = 0; r < ranks; ++r) sum += collective_pattern(r, g);
      return sum;
    }
    case CollectiveExpectation::gathered:
      return collective_pattern(static_cast<int>(g / count), g % count);
    case CollectiveExpectation::reduce_scattered: {
      float sum = 0.0f;
      for (int r = 0; r < ranks; ++r) sum += collective_pattern(r, static_cast<std::size_t>(rank) * count + g);
      return sum;
    }
    case CollectiveExpectation::all_to_all:
      return collective_pattern(static_cast<int>(g / count), static_cast<std::size_t>(rank) * count + g % count);
    case CollectiveExpectation::from_source:
      return collective_pattern(source, g);
  }
  return 0.0f;
}

__global__ void mismatch_kernel(const float* out, std::size_t elements, std::size_t count, CollectiveExpectation e,
                                int ranks, int rank, int source, unsigned long long* mismatches) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long bad = 0;
  for (std::size_t g = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < elements; g += stride) {
    if (out[g] != expected_value(e, g, count, ranks, rank, source)) ++bad;
  }
  if (bad > 0) atomicAdd(mismatches, bad);
}

}  // namespace

void launch_copy(cudaStream_t stream, const float* src, float* dst, std::size_t n) {
  copy_kernel<<<grid_for(n / 4 + 1, kThreads), kThreads, 0, stream>>>(src, dst, n);
  STEPCAST_CUDA_LAUNCHED();
}

void launch_triad(cudaStream_t stream, float* a, const float* b, const float* c, float scalar, std::size_t n) {
  triad_kernel<<<grid_for(n / 4 + 1, kThreads), kThreads, 0, stream>>>(a, b, c, scalar, n);
  STEPCAST_CUDA_LAUNCHED();
}

void fill_uniform(cudaStream_t stream, void* data, ElementFormat format, std::size_t count, std::uint64_t seed,
                  float scale) {
  switch (format) {
    case ElementFormat::fp32: fill_uniform_as<float>(stream, data, count, seed, scale); break;
    case ElementFormat::fp16: fill_uniform_as<__half>(stream, data, count, seed, scale); break;
    case ElementFormat::bf16: fill_uniform_as<__nv_bfloat16>(stream, data, count, seed, scale); break;
    case ElementFormat::e4m3: fill_uniform_as<__nv_fp8_e4m3>(stream, data, count, seed, scale); break;
    case ElementFormat::e5m2: fill_uniform_as<__nv_fp8_e5m2>(stream, data, count, seed, scale); break;
    case ElementFormat::int8: fill_uniform_as<std::int8_t>(stream, data, count, seed, scale); break;
    case ElementFormat::int32: fill_uniform_as<std::int32_t>(stream, data, count, seed, scale); break;
  }
}

void fill_constant(cudaStream_t stream, void* data, ElementFormat format, std::size_t count, float value) {
  switch (format) {
    case ElementFormat::fp32: fill_constant_as<float>(stream, data, count, value); break;
    case ElementFormat::fp16: fill_constant_as<__half>(stream, data, count, value); break;
    case ElementFormat::bf16: fill_constant_as<__nv_bfloat16>(stream, data, count, value); break;
    case ElementFormat::e4m3: fill_constant_as<__nv_fp8_e4m3>(stream, data, count, value); break;
    case ElementFormat::e5m2: fill_constant_as<__nv_fp8_e5m2>(stream, data, count, value); break;
    case ElementFormat::int8: fill_constant_as<std::int8_t>(stream, data, count, value); break;
    case ElementFormat::int32: fill_constant_as<std::int32_t>(stream, data, count, value); break;
  }
}

void fill_collective_pattern(cudaStream_t stream, float* data, std::size_t count, int rank) {
  fill_pattern_kernel<<<grid_for(count, kThreads), kThreads, 0, stream>>>(data, count, rank);
  STEPCAST_CUDA_LAUNCHED();
}

void count_collective_mismatches(cudaStream_t stream, const float* out, std::size_t elements, std::size_t count,
                                 CollectiveExpectation expectation, int ranks, int rank, int source,
                                 unsigned long long* mismatches) {
  STEPCAST_CUDA(cudaMemsetAsync(mismatches, 0, sizeof(unsigned long long), stream));
  mismatch_kernel<<<grid_for(elements, kThreads), kThreads, 0, stream>>>(out, elements, count, expectation, ranks,
                                                                          rank, source, mismatches);
  STEPCAST_CUDA_LAUNCHED();
}

}  // namespace stepcast::kernels
