#include "validation/harness/device.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cstdio>

#include "kernels/cuda_check.h"
#include "kernels/gemm.h"
#include "validation/gpu_names.h"

#if defined(STEPCAST_HAVE_CUDNN)
#include "kernels/cudnn_attention.h"
#endif
#if defined(STEPCAST_HAVE_NCCL)
#include <nccl.h>
#endif

namespace stepcast::harness {

namespace {

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  STEPCAST_CUDA(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::string uuid_text(const cudaUUID_t& uuid) {
  // GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, the form nvidia-smi prints.
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    std::array<char, 3> hex{};
    std::snprintf(hex.data(), hex.size(), "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    s += hex.data();
    if (i == 3 || i == 5 || i == 7 || i == 9) s += '-';
  }
  return s;
}

}  // namespace

int visible_gpu_count(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status);
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return 0;
  }
  if (count == 0) why = "the CUDA runtime sees no devices";
  return count;
}

int compute_capability(int index) {
  return attribute(cudaDevAttrComputeCapabilityMajor, index) * 10 + attribute(cudaDevAttrComputeCapabilityMinor, index);
}

DeviceInfo query_device(int index, const Nvml& nvml) {
  cudaDeviceProp prop{};
  STEPCAST_CUDA(cudaGetDeviceProperties(&prop, index));
  DeviceInfo d;
  d.index = index;
  d.name = prop.name;
  d.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  d.catalog_gpu = catalog_gpu_for(d.name, d.memory_bytes);
  d.uuid = uuid_text(prop.uuid);
  std::array<char, 32> bus{};
  STEPCAST_CUDA(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), index));
  d.pci_bus_id = bus.data();
  d.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  d.sm_count = prop.multiProcessorCount;
  d.l2_cache_bytes = attribute(cudaDevAttrL2CacheSize, index);
  d.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, index);
  d.max_sm_clock_mhz = attribute(cudaDevAttrClockRate, index) / 1000.0;  // kHz in CUDA
  d.max_memory_clock_mhz = attribute(cudaDevAttrMemoryClockRate, index) / 1000.0;
  d.ecc_enabled = nvml.ecc_enabled(d.pci_bus_id);
  if (!d.ecc_enabled) d.ecc_enabled = attribute(cudaDevAttrEccEnabled, index) != 0;
  d.clocks_at_start = nvml.clocks(d.pci_bus_id);
  // NVML's maximum memory clock is the more reliable figure where it is available.
  if (d.clocks_at_start.max_memory_mhz && *d.clocks_at_start.max_memory_mhz > 0.0) {
    d.max_memory_clock_mhz = *d.clocks_at_start.max_memory_mhz;
  }
  // Double data rate: two transfers per memory clock over the whole bus.
  d.theoretical_memory_bandwidth_bytes_per_s = 2.0 * d.max_memory_clock_mhz * 1e6 * d.memory_bus_width_bits / 8.0;
  return d;
}

void fill_versions(Provenance& p, const Nvml& nvml) {
  int driver = 0;
  int runtime = 0;
  STEPCAST_CUDA(cudaDriverGetVersion(&driver));
  STEPCAST_CUDA(cudaRuntimeGetVersion(&runtime));
  p.cuda_driver_api = cuda_version_text(driver);
  p.cuda_runtime = cuda_version_text(runtime);
  p.driver_version = nvml.driver_version();
  p.cublas = kernels::CublasLt::version();
#if defined(STEPCAST_HAVE_CUDNN)
  p.cudnn = kernels::cudnn_version();
#endif
#if defined(STEPCAST_HAVE_NCCL)
  int nccl = 0;
  if (ncclGetVersion(&nccl) == ncclSuccess) {
    // NCCL >= 2.9 encodes major * 10000 + minor * 100 + patch.
    p.nccl = std::to_string(nccl / 10000) + "." + std::to_string((nccl / 100) % 100) + "." + std::to_string(nccl % 100);
  }
#endif
  p.cuda_architectures = STEPCAST_CUDA_ARCHITECTURES;
}

}  // namespace stepcast::harness
