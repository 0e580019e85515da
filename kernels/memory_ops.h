#pragma once
// Memory kernels and buffer utilities (kernels/memory_ops.cu).
//   copy:  b[i] = a[i]                 (STREAM "copy": 2 x 4 bytes per element)
//   triad: a[i] = b[i] + s * c[i]      (STREAM "triad": 3 x 4 bytes per element; McCalpin 1995)
// Both move float4 vectors through a grid-stride loop, a tail handled element-wise.
// fill_uniform gives every element a value from kernels/counter_hash.h, so a CPU reference can
// recompute inputs from (seed, index) when it does not copy them back.
//
// Collective checks: rank r's send buffer holds pattern(r, i) (small integers, exact in fp32 and
// in every sum of up to 64 ranks); after a collective, count_collective_mismatches compares each
// output element with what nccl-tests' definition of the operation says it must hold.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/counter_hash.h"
#include "kernels/element_format.h"

namespace stepcast::kernels {

void launch_copy(cudaStream_t stream, const float* src, float* dst, std::size_t n);
void launch_triad(cudaStream_t stream, float* a, const float* b, const float* c, float scalar, std::size_t n);

// Values uniform in [-scale, scale), converted to `format` (rounded for integer formats).
void fill_uniform(cudaStream_t stream, void* data, ElementFormat format, std::size_t count, std::uint64_t seed,
                  float scale);
void fill_constant(cudaStream_t stream, void* data, ElementFormat format, std::size_t count, float value);

// pattern(rank, i) = ((rank * 7 + i * 3) mod 31) - 15, an integer in [-15, 15].
STEPCAST_HOST_DEVICE constexpr float collective_pattern(int rank, std::uint64_t i) {
  return static_cast<float>(static_cast<int>((static_cast<std::uint64_t>(rank) * 7U + i * 3U) % 31U) - 15);
}

enum class CollectiveExpectation {
  sum_over_ranks,      // all_reduce: out[i] = sum_r pattern(r, i)
  gathered,            // all_gather: out[r * count + i] = pattern(r, i)
  reduce_scattered,    // reduce_scatter: out[i] = sum_r pattern(r, rank * count + i)
  all_to_all,          // out[j * count + i] = pattern(j, rank * count + i)
  from_source,         // broadcast / send_recv: out[i] = pattern(source, i)
};

void fill_collective_pattern(cudaStream_t stream, float* data, std::size_t count, int rank);

// Counts output elements that differ from the expectation; `elements` is the output length,
// `count` the per-rank chunk (nccl-tests' count). The result lands in *mismatches (device memory).
void count_collective_mismatches(cudaStream_t stream, const float* out, std::size_t elements, std::size_t count,
                                 CollectiveExpectation expectation, int ranks, int rank, int source,
                                 unsigned long long* mismatches);

}  // namespace stepcast::kernels
