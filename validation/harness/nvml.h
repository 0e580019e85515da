#pragma once
// GPU clocks, temperature, power limit, ECC and driver version from NVML, loaded at run time with
// dlopen("libnvidia-ml.so.1") (the library ships with the driver, not the toolkit, and there is
// no nvml.h on build machines). Without it the harness carries on and records why clocks are
// missing. The few NVML declarations used here are restated from NVIDIA's public nvml.h (the
// function names, the enum values NVML_CLOCK_GRAPHICS = 0, SM = 1, MEM = 2, NVML_TEMPERATURE_GPU
// = 0, and the clocks-event-reason bits).

#include <memory>
#include <optional>
#include <string>

#include "validation/measurement.h"

namespace stepcast::harness {

class Nvml {
 public:
  // Loads and initialises NVML; available() says whether that worked, why_unavailable() why not.
  Nvml();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  [[nodiscard]] bool available() const;
  [[nodiscard]] const std::string& why_unavailable() const;

  [[nodiscard]] std::optional<std::string> driver_version() const;
  // Clock and power state of the GPU with this PCI bus id ("0000:18:00.0"); source "unavailable"
  // with a note when NVML is missing or does not know the device.
  [[nodiscard]] ClockState clocks(const std::string& pci_bus_id) const;
  [[nodiscard]] std::optional<bool> ecc_enabled(const std::string& pci_bus_id) const;
  // Current SM clock in MHz (a cheap call, for sampling during measurements).
  [[nodiscard]] std::optional<double> sm_clock_mhz(const std::string& pci_bus_id) const;

 private:
  struct Api;
  std::unique_ptr<Api> m_api;
  std::string m_why;
};

}  // namespace stepcast::harness
