#pragma once
// Kernels the measurement loop itself needs (kernels/timing.cu):
//   - a spin kernel that runs for a known wall-clock duration (the selftest's yardstick);
//   - a blocking kernel that holds a stream until the host releases it, so the work queued behind
//     it starts back to back and CUDA-event timing excludes launch latency (nvbench's
//     blocking_kernel); it gives up after `timeout_ns` and says so, rather than hang;
//   - a clock probe that measures the SM clock where it runs: it spins ~20 us reading the GPU's
//     nanosecond timer and the SM's cycle counter at both ends (cycles / ns = GHz). nvbench's
//     gpu_frequency compares the counters of two probes around the sample instead; measuring
//     within one probe does not depend on the cycle counters of different SMs agreeing.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace stepcast::kernels {

struct ClockSample {
  unsigned long long start_ns;
  long long start_cycles;
  unsigned long long end_ns;
  long long end_cycles;
};

// Spin time of one clock probe.
inline constexpr unsigned long long kClockProbeNs = 20'000;

void launch_spin(cudaStream_t stream, std::uint64_t duration_ns);

// `release` and `timed_out` are device pointers to host-mapped memory (MappedHostBuffer).
void launch_blocking(cudaStream_t stream, const volatile int* release, int* timed_out, std::uint64_t timeout_ns);

void launch_clock_probe(cudaStream_t stream, ClockSample* out);

}  // namespace stepcast::kernels
