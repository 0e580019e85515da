#include "kernels/cuda_check.h"
#include "kernels/timing.h"

namespace stepcast::kernels {

namespace {

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(unsigned long long duration_ns) {
  const unsigned long long start = global_timer_ns();
  while (global_timer_ns() - start < duration_ns) {
  }
}

__global__ void blocking_kernel(const volatile int* release, int* timed_out, unsigned long long timeout_ns) {
  const unsigned long long start = global_timer_ns();
  while (*release == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      *reinterpret_cast<volatile int*>(timed_out) = 1;
      return;
    }
    __nanosleep(1000);
  }
}

__global__ void clock_probe_kernel(ClockSample* out) {
  const unsigned long long t0 = global_timer_ns();
  const long long c0 = clock64();
  unsigned long long t1 = t0;
  long long c1 = c0;
  while (t1 - t0 < kClockProbeNs) {
    t1 = global_timer_ns();
    c1 = clock64();
  }
  out->start_ns = t0;
  out->start_cycles = c0;
  out->end_ns = t1;
  out->end_cycles = c1;
}

}  // namespace

void launch_spin(cudaStream_t stream, std::uint64_t duration_ns) {
  spin_kernel<<<1, 1, 0, stream>>>(duration_ns);
  STEPCAST_CUDA_LAUNCHED();
}

void launch_blocking(cudaStream_t stream, const volatile int* release, int* timed_out, std::uint64_t timeout_ns) {
  blocking_kernel<<<1, 1, 0, stream>>>(release, timed_out, timeout_ns);
  STEPCAST_CUDA_LAUNCHED();
}

void launch_clock_probe(cudaStream_t stream, ClockSample* out) {
  clock_probe_kernel<<<1, 1, 0, stream>>>(out);
  STEPCAST_CUDA_LAUNCHED();
}

}  // namespace stepcast::kernels
