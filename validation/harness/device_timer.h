#pragma once
// Times work on one CUDA stream the way nvbench does (nvbench/detail/measure_cold.cu,
// measure_hot.cu), with our own code:
//
// cold   per sample: flush L2 (write a buffer the size of L2), synchronise, hold the stream with
//        the blocking kernel, record a clock probe and the start event, enqueue the work, record
//        the stop event and a second probe, release the stream, synchronise. Because everything
//        is queued before the GPU starts, the events bracket the work alone, without launch
//        latency. The two probes give the SM clock across the sample; a sample whose clock is
//        below the throttle threshold is discarded and the harness pauses (validation/throttle.h).
// hot    per sample: `batch` back-to-back calls between the events (caches warm), time / batch;
//        for kernels too short for one event pair to time well.
// Samples are added to the stopping rule (validation/stopping_criterion.h) until it says stop.
// Warm-up precedes the samples: one call with nothing holding the stream (it loads the kernels;
// with lazy module loading a first launch behind the blocking kernel could deadlock), then one
// discarded sample taken like the others.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>

#include "kernels/device_buffer.h"
#include "kernels/timing.h"
#include "validation/measurement_records.h"
#include "validation/stopping_criterion.h"
#include "validation/throttle.h"

namespace stepcast::harness {

struct TimerSettings {
  StoppingRule stopping;
  ThrottleRule throttle;
  bool l2_flush = true;
  int warmup_runs = 1;
  double reference_clock_mhz = 0.0;  // the device's default SM clock; 0 disables throttle checks
};

class DeviceTimer {
 public:
  DeviceTimer(TimerSettings settings, cudaStream_t stream, std::size_t l2_bytes);
  ~DeviceTimer();
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;

  // `work` enqueues the operation on the timer's stream and must not synchronise.
  TimingResult cold(const std::function<void()>& work);
  // `launches_per_call` bounds how many calls one sample may queue behind the blocking kernel.
  TimingResult hot(const std::function<void()>& work, double cold_estimate_s, int launches_per_call = 1);

  [[nodiscard]] cudaStream_t stream() const { return m_stream; }
  [[nodiscard]] const TimerSettings& settings() const { return m_settings; }

 private:
  struct Sample {
    double seconds;
    double clock_mhz;  // 0 when the sample was too short to estimate the clock
  };
  Sample timed_sample(const std::function<void()>& work, std::int64_t calls, bool flush);
  void unblocked_warmup(const std::function<void()>& work);
  TimingResult sample_until_done(const std::function<void()>& work, std::int64_t calls, bool flush, const char* mode);

  TimerSettings m_settings;
  cudaStream_t m_stream;
  kernels::DeviceBuffer m_flush;
  kernels::MappedHostBuffer m_flags;   // [0] release, [1] blocking kernel timed out
  kernels::MappedHostBuffer m_probes;  // two ClockSample
  cudaEvent_t m_start = nullptr;
  cudaEvent_t m_stop = nullptr;
};

}  // namespace stepcast::harness
