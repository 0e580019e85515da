#pragma once
// The state one harness run shares across its suites: the options, the measurement file being
// filled, the GPU and its stream, the timer, the --max-wall deadline, and a count of failed
// checks. Each measured point is recorded and printed as one line as it completes.

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "validation/harness/device_timer.h"
#include "validation/harness/nvml.h"
#include "validation/harness_options.h"
#include "validation/measurement.h"

namespace stepcast::harness {

class Session {
 public:
  Session(const HarnessOptions& options, MeasurementFile& file, const Nvml& nvml, int device);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  [[nodiscard]] const HarnessOptions& options() const { return m_options; }
  [[nodiscard]] MeasurementFile& file() { return m_file; }
  [[nodiscard]] const Nvml& nvml() const { return m_nvml; }
  [[nodiscard]] int device() const { return m_device; }
  [[nodiscard]] const DeviceInfo& device_info() const { return m_file.provenance.devices.at(0); }
  [[nodiscard]] int compute_capability() const { return m_compute_capability; }
  [[nodiscard]] cudaStream_t stream() const { return m_stream; }
  [[nodiscard]] DeviceTimer& timer() { return *m_timer; }

  // Device memory free now, in bytes.
  [[nodiscard]] std::size_t free_memory() const;

  // Adds the measurement to the file and prints it; a failed check is counted (exit code 1).
  void record(Measurement m);
  void skip(const std::string& kind, const std::string& name, const std::string& reason);
  // True once --max-wall seconds have passed since the run began; then marks the file incomplete.
  bool out_of_time();
  [[nodiscard]] int failed_checks() const { return m_failed_checks; }

 private:
  const HarnessOptions& m_options;
  MeasurementFile& m_file;
  const Nvml& m_nvml;
  int m_device;
  int m_compute_capability = 0;
  cudaStream_t m_stream = nullptr;
  std::unique_ptr<DeviceTimer> m_timer;
  std::chrono::steady_clock::time_point m_started;
  int m_failed_checks = 0;
};

}  // namespace stepcast::harness
