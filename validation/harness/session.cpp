#include "validation/harness/session.h"

#include <cstdio>

#include "kernels/cuda_check.h"
#include "validation/harness/device.h"

namespace stepcast::harness {

Session::Session(const HarnessOptions& options, MeasurementFile& file, const Nvml& nvml, int device)
    : m_options(options), m_file(file), m_nvml(nvml), m_device(device), m_started(std::chrono::steady_clock::now()) {
  STEPCAST_CUDA(cudaSetDevice(device));
  m_compute_capability = harness::compute_capability(device);
  STEPCAST_CUDA(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
  TimerSettings settings;
  settings.stopping = options.stopping;
  settings.throttle = options.throttle;
  settings.l2_flush = options.l2_flush;
  settings.reference_clock_mhz = device_info().max_sm_clock_mhz;
  m_timer = std::make_unique<DeviceTimer>(settings, m_stream, static_cast<std::size_t>(device_info().l2_cache_bytes));
}

Session::~Session() {
  m_timer.reset();
  if (m_stream != nullptr) STEPCAST_CUDA_NOEXCEPT(cudaStreamDestroy(m_stream));
}

std::size_t Session::free_memory() const {
  std::size_t free = 0;
  std::size_t total = 0;
  STEPCAST_CUDA(cudaMemGetInfo(&free, &total));
  return free;
}

void Session::record(Measurement m) {
  const double t = m.time.median_s;
  std::string rate;
  if (m.flops.value() > 0.0) {
    rate = std::to_string(m.flops.value() / t / 1e12);
    rate = rate.substr(0, rate.find('.') + 2) + " TFLOP/s";
  } else if (m.bytes.value() > 0.0) {
    rate = std::to_string(m.bytes.value() / t / 1e9);
    rate = rate.substr(0, rate.find('.') + 2) + " GB/s";
  }
  std::printf("  %-72s %10.4f ms  +-%5.2f%%  n=%-6lld %-16s %s%s\n", m.name.c_str(), t * 1e3, m.time.rel_stdev * 100.0,
              static_cast<long long>(m.time.samples), rate.c_str(), m.method.mode == "cold" ? "" : "[hot] ",
              m.check.passed ? "check ok" : "CHECK FAILED");
  std::fflush(stdout);
  if (!m.check.passed) ++m_failed_checks;
  m_file.records.push_back(std::move(m));
}

void Session::skip(const std::string& kind, const std::string& name, const std::string& reason) {
  std::printf("  %-72s skipped: %s\n", name.c_str(), reason.c_str());
  std::fflush(stdout);
  m_file.skipped.push_back({kind, name, reason});
}

bool Session::out_of_time() {
  if (m_options.max_wall_s <= 0.0) return false;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
  if (elapsed < m_options.max_wall_s) return false;
  if (m_file.complete) {
    std::printf("  --max-wall %.0f s reached: no new points; the file says complete=false\n", m_options.max_wall_s);
    m_file.complete = false;
  }
  return true;
}

}  // namespace stepcast::harness
