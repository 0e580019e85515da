#include "validation/harness/nvml.h"

#include <dlfcn.h>

#include <array>
#include <utility>
#include <vector>

namespace stepcast::harness {

namespace {

// From NVIDIA's public nvml.h.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kClockGraphics = 0;
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;
constexpr int kTemperatureGpu = 0;
constexpr unsigned kDriverVersionBuffer = 80;

// nvmlClocksEventReasons bits (nvml.h, "ClocksEventReasons").
const std::array<std::pair<unsigned long long, const char*>, 9> kReasons = {{
    {0x1ULL, "gpu_idle"},
    {0x2ULL, "applications_clocks_setting"},
    {0x4ULL, "sw_power_cap"},
    {0x8ULL, "hw_slowdown"},
    {0x10ULL, "sync_boost"},
    {0x20ULL, "sw_thermal_slowdown"},
    {0x40ULL, "hw_thermal_slowdown"},
    {0x80ULL, "hw_power_brake_slowdown"},
    {0x100ULL, "display_clock_setting"},
}};

template <class F>
F symbol(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

}  // namespace

struct Nvml::Api {
  void* library = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock_info)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*applications_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*ecc_mode)(nvmlDevice_t, int*, int*) = nullptr;

  ~Api() {
    if (shutdown != nullptr) shutdown();
    if (library != nullptr) dlclose(library);
  }

  [[nodiscard]] std::optional<nvmlDevice_t> device(const std::string& pci_bus_id) const {
    nvmlDevice_t d = nullptr;
    if (by_pci_bus_id == nullptr || by_pci_bus_id(pci_bus_id.c_str(), &d) != kNvmlSuccess) return std::nullopt;
    return d;
  }
};

Nvml::Nvml() {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    m_why = "libnvidia-ml.so.1 could not be loaded (" + std::string(error != nullptr ? error : "unknown error") + ")";
    return;
  }
  auto api = std::make_unique<Api>();
  api->library = library;
  api->init = symbol<decltype(api->init)>(library, "nvmlInit_v2");
  api->by_pci_bus_id = symbol<decltype(api->by_pci_bus_id)>(library, "nvmlDeviceGetHandleByPciBusId_v2");
  api->driver_version = symbol<decltype(api->driver_version)>(library, "nvmlSystemGetDriverVersion");
  api->clock_info = symbol<decltype(api->clock_info)>(library, "nvmlDeviceGetClockInfo");
  api->max_clock_info = symbol<decltype(api->max_clock_info)>(library, "nvmlDeviceGetMaxClockInfo");
  api->applications_clock = symbol<decltype(api->applications_clock)>(library, "nvmlDeviceGetApplicationsClock");
  api->temperature = symbol<decltype(api->temperature)>(library, "nvmlDeviceGetTemperature");
  api->power_limit = symbol<decltype(api->power_limit)>(library, "nvmlDeviceGetPowerManagementLimit");
  api->event_reasons = symbol<decltype(api->event_reasons)>(library, "nvmlDeviceGetCurrentClocksEventReasons");
  if (api->event_reasons == nullptr) {  // the name before NVML 12.2
    api->event_reasons = symbol<decltype(api->event_reasons)>(library, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  api->ecc_mode = symbol<decltype(api->ecc_mode)>(library, "nvmlDeviceGetEccMode");
  const auto shutdown = symbol<decltype(api->shutdown)>(library, "nvmlShutdown");
  if (api->init == nullptr || shutdown == nullptr) {
    m_why = "libnvidia-ml.so.1 lacks nvmlInit_v2";
    return;  // ~Api closes the library
  }
  const nvmlReturn_t status = api->init();
  if (status != kNvmlSuccess) {
    m_why = "nvmlInit_v2 failed with NVML status " + std::to_string(status);
    return;
  }
  api->shutdown = shutdown;
  m_api = std::move(api);
}

Nvml::~Nvml() = default;

bool Nvml::available() const { return m_api != nullptr; }

const std::string& Nvml::why_unavailable() const { return m_why; }

std::optional<std::string> Nvml::driver_version() const {
  if (!m_api || m_api->driver_version == nullptr) return std::nullopt;
  std::array<char, kDriverVersionBuffer> text{};
  if (m_api->driver_version(text.data(), kDriverVersionBuffer) != kNvmlSuccess) return std::nullopt;
  return std::string(text.data());
}

ClockState Nvml::clocks(const std::string& pci_bus_id) const {
  ClockState c;
  if (!m_api) {
    c.note = m_why;
    return c;
  }
  const auto device = m_api->device(pci_bus_id);
  if (!device) {
    c.note = "NVML does not know the device at PCI bus id " + pci_bus_id;
    return c;
  }
  c.source = "nvml";
  const auto clock = [&](auto fn, int which) -> std::optional<double> {
    unsigned value = 0;
    if (fn == nullptr || fn(*device, which, &value) != kNvmlSuccess) return std::nullopt;
    return static_cast<double>(value);
  };
  c.sm_mhz = clock(m_api->clock_info, kClockSm);
  c.memory_mhz = clock(m_api->clock_info, kClockMem);
  c.max_sm_mhz = clock(m_api->max_clock_info, kClockSm);
  c.max_memory_mhz = clock(m_api->max_clock_info, kClockMem);
  c.application_sm_mhz = clock(m_api->applications_clock, kClockGraphics);
  c.temperature_c = clock(m_api->temperature, kTemperatureGpu);
  unsigned milliwatts = 0;
  if (m_api->power_limit != nullptr && m_api->power_limit(*device, &milliwatts) == kNvmlSuccess) {
    c.power_limit_w = milliwatts / 1000.0;
  }
  unsigned long long reasons = 0;
  if (m_api->event_reasons != nullptr && m_api->event_reasons(*device, &reasons) == kNvmlSuccess) {
    for (const auto& [bit, name] : kReasons) {
      if ((reasons & bit) != 0) c.throttle_reasons.emplace_back(name);
    }
  }
  return c;
}

std::optional<bool> Nvml::ecc_enabled(const std::string& pci_bus_id) const {
  if (!m_api || m_api->ecc_mode == nullptr) return std::nullopt;
  const auto device = m_api->device(pci_bus_id);
  if (!device) return std::nullopt;
  int current = 0;
  int pending = 0;
  if (m_api->ecc_mode(*device, &current, &pending) != kNvmlSuccess) return std::nullopt;  // e.g. no ECC on the part
  return current != 0;
}

std::optional<double> Nvml::sm_clock_mhz(const std::string& pci_bus_id) const {
  if (!m_api || m_api->clock_info == nullptr) return std::nullopt;
  const auto device = m_api->device(pci_bus_id);
  unsigned mhz = 0;
  if (!device || m_api->clock_info(*device, kClockSm, &mhz) != kNvmlSuccess) return std::nullopt;
  return static_cast<double>(mhz);
}

}  // namespace stepcast::harness
