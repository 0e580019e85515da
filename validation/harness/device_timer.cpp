#include "validation/harness/device_timer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "kernels/cuda_check.h"

namespace stepcast::harness {

namespace {

// The blocking kernel gives up after this long: the host enqueues a sample in microseconds, so
// hitting it means something is wrong (a queue too deep to enqueue, a hung kernel).
constexpr std::uint64_t kBlockingTimeoutNs = 20'000'000'000ULL;
// A clock estimate outside this range of the reference is a measuring artefact, not throttling,
// and is ignored rather than allowed to discard samples.
constexpr double kPlausibleClockLow = 0.1;
constexpr double kPlausibleClockHigh = 3.0;
// A hot sample aims to last this long, so one event pair's resolution (~0.5 us) is negligible.
constexpr double kHotSampleTargetSeconds = 1e-3;
// Launches queued behind the blocking kernel per hot sample, well inside CUDA's launch queue.
constexpr std::int64_t kMaxQueuedLaunches = 512;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

DeviceTimer::DeviceTimer(TimerSettings settings, cudaStream_t stream, std::size_t l2_bytes)
    : m_settings(settings),
      m_stream(stream),
      m_flush(settings.l2_flush ? std::max<std::size_t>(l2_bytes, 1) : 0),
      m_flags(2 * sizeof(int)),
      m_probes(2 * sizeof(kernels::ClockSample)) {
  STEPCAST_CUDA(cudaEventCreate(&m_start));
  STEPCAST_CUDA(cudaEventCreate(&m_stop));
  // Load the timing kernels now, with nothing waiting on them: with lazy module loading (CUDA's
  // default since 12.2) a kernel's first launch may wait for the device to go idle, which a
  // stream held by the blocking kernel never does.
  volatile int* flags = m_flags.host<int>();
  flags[0] = 1;
  flags[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  kernels::launch_blocking(m_stream, m_flags.device<int>(), m_flags.device<int>() + 1, kBlockingTimeoutNs);
  kernels::launch_clock_probe(m_stream, m_probes.device<kernels::ClockSample>());
  STEPCAST_CUDA(cudaStreamSynchronize(m_stream));
}

void DeviceTimer::unblocked_warmup(const std::function<void()>& work) {
  // The first call loads the work's kernels (lazy loading, cuBLASLt and cuDNN kernel selection)
  // with no blocking kernel in the stream, for the reason above.
  work();
  STEPCAST_CUDA(cudaStreamSynchronize(m_stream));
}

DeviceTimer::~DeviceTimer() {
  if (m_start != nullptr) STEPCAST_CUDA_NOEXCEPT(cudaEventDestroy(m_start));
  if (m_stop != nullptr) STEPCAST_CUDA_NOEXCEPT(cudaEventDestroy(m_stop));
}

DeviceTimer::Sample DeviceTimer::timed_sample(const std::function<void()>& work, std::int64_t calls, bool flush) {
  if (flush && m_flush.bytes() > 0) {
    STEPCAST_CUDA(cudaMemsetAsync(m_flush.get(), 0, m_flush.bytes(), m_stream));
  }
  STEPCAST_CUDA(cudaStreamSynchronize(m_stream));
  volatile int* flags = m_flags.host<int>();
  flags[0] = 0;
  flags[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  kernels::launch_blocking(m_stream, m_flags.device<int>(), m_flags.device<int>() + 1, kBlockingTimeoutNs);
  auto* probes = m_probes.device<kernels::ClockSample>();
  kernels::launch_clock_probe(m_stream, probes);
  STEPCAST_CUDA(cudaEventRecord(m_start, m_stream));
  for (std::int64_t i = 0; i < calls; ++i) work();
  STEPCAST_CUDA(cudaEventRecord(m_stop, m_stream));
  kernels::launch_clock_probe(m_stream, probes + 1);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  flags[0] = 1;  // release the stream
  STEPCAST_CUDA(cudaStreamSynchronize(m_stream));
  if (flags[1] != 0) {
    throw kernels::CudaError("the blocking kernel timed out before the host released it: the work queued behind it "
                             "could not be enqueued (too many launches per sample?)");
  }
  float ms = 0.0f;
  STEPCAST_CUDA(cudaEventElapsedTime(&ms, m_start, m_stop));
  const volatile kernels::ClockSample* p = m_probes.host<kernels::ClockSample>();
  double clock_sum = 0.0;
  int clocks = 0;
  for (int i = 0; i < 2; ++i) {
    const double span_ns = static_cast<double>(p[i].end_ns - p[i].start_ns);
    const double cycles = static_cast<double>(p[i].end_cycles - p[i].start_cycles);
    if (span_ns <= 0.0 || cycles <= 0.0) continue;
    const double mhz = cycles / span_ns * 1e3;
    const double reference = m_settings.reference_clock_mhz;
    if (reference > 0.0 && (mhz < kPlausibleClockLow * reference || mhz > kPlausibleClockHigh * reference)) continue;
    clock_sum += mhz;
    ++clocks;
  }
  return {static_cast<double>(ms) * 1e-3, clocks > 0 ? clock_sum / clocks : 0.0};
}

TimingResult DeviceTimer::sample_until_done(const std::function<void()>& work, std::int64_t calls, bool flush,
                                            const char* mode) {
  const auto t0 = Clock::now();
  StdrelCriterion criterion(m_settings.stopping);
  ThrottleMonitor throttle(m_settings.throttle, m_settings.reference_clock_mhz);
  TimingResult result;
  result.mode = mode;
  result.batch = calls;
  double clock_sum = 0.0;
  std::int64_t clock_count = 0;
  while (true) {
    const Sample s = timed_sample(work, calls, flush);
    if (s.clock_mhz > 0.0 && throttle.should_discard(s.clock_mhz)) {
      std::this_thread::sleep_for(std::chrono::duration<double>(throttle.pause().value()));
    } else {
      // The criterion sees whole samples (as nvbench's does); the record keeps time per call.
      criterion.add_sample(units::seconds(s.seconds));
      result.samples.push_back(s.seconds / static_cast<double>(calls));
      if (s.clock_mhz > 0.0) {
        clock_sum += s.clock_mhz;
        ++clock_count;
      }
    }
    const StopReason reason = criterion.decide(units::seconds(seconds_since(t0)));
    if (reason != StopReason::running) {
      result.stop_reason = reason;
      break;
    }
    if (result.samples.empty() && seconds_since(t0) > m_settings.stopping.timeout.value()) {
      throw kernels::CudaError("every sample was throttled for the whole timeout; the GPU never reached " +
                               std::to_string(m_settings.throttle.threshold * 100.0) + "% of its default clock");
    }
  }
  result.wall_s = seconds_since(t0);
  result.throttled_discarded = throttle.discarded();
  if (clock_count > 0) result.sm_clock_mhz = clock_sum / static_cast<double>(clock_count);
  return result;
}

TimingResult DeviceTimer::cold(const std::function<void()>& work) {
  unblocked_warmup(work);
  for (int i = 0; i < m_settings.warmup_runs; ++i) timed_sample(work, 1, m_settings.l2_flush);
  return sample_until_done(work, 1, m_settings.l2_flush, "cold");
}

TimingResult DeviceTimer::hot(const std::function<void()>& work, double cold_estimate_s, int launches_per_call) {
  const std::int64_t cap = std::max<std::int64_t>(1, kMaxQueuedLaunches / std::max(1, launches_per_call));
  const double wanted = cold_estimate_s > 0.0 ? std::ceil(kHotSampleTargetSeconds / cold_estimate_s) : 1.0;
  const std::int64_t batch = std::clamp<std::int64_t>(static_cast<std::int64_t>(wanted), 1, cap);
  unblocked_warmup(work);
  timed_sample(work, batch, false);  // warm-up at the batch size
  return sample_until_done(work, batch, false, "hot");
}

}  // namespace stepcast::harness
