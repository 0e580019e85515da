#pragma once
// A counter-based hash shared by device kernels and their CPU references, so both sides derive
// the same pseudo-random values (dropout masks, test inputs) from (seed, index) without storing
// them. Plain C++ that nvcc and the host compiler both accept; no CUDA headers needed.
//
// mix64 is the SplitMix64 finalizer (Steele, Lea, Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014); it is not cryptographic and does not need to be.

#include <cstdint>

#if defined(__CUDACC__)
#define STEPCAST_HOST_DEVICE __host__ __device__
#else
#define STEPCAST_HOST_DEVICE
#endif

namespace stepcast::kernels {

STEPCAST_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) with 24 random bits (exact in float).
STEPCAST_HOST_DEVICE inline float uniform01(std::uint64_t seed, std::uint64_t index) {
  return static_cast<float>(mix64(seed ^ mix64(index)) >> 40) * (1.0f / 16777216.0f);
}

// Uniform in [-scale, scale).
STEPCAST_HOST_DEVICE inline float uniform_symmetric(std::uint64_t seed, std::uint64_t index, float scale) {
  return (2.0f * uniform01(seed, index) - 1.0f) * scale;
}

// Dropout keeps element `index` with probability 1 - p.
STEPCAST_HOST_DEVICE inline bool dropout_keep(std::uint64_t seed, std::uint64_t index, float p) {
  return uniform01(seed, index) >= p;
}

}  // namespace stepcast::kernels
