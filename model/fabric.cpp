#include "model/fabric.h"

#include <algorithm>
#include <cmath>

namespace stepcast {

namespace {
// Per-link, per-direction NVLink rates (NVIDIA datasheets: NVLink 3 and 4 run 25 GB/s per link
// each way, NVLink 5 runs 50 GB/s).
constexpr double kNvlink4LinkBytesPerSecond = 25e9;
constexpr double kNvlink5LinkBytesPerSecond = 50e9;
Bandwidth min_bandwidth(Bandwidth a, Bandwidth b) { return a < b ? a : b; }
}  // namespace

int nvlink_links_of(const GpuSpec& gpu) {
  const double rate = gpu.architecture == GpuArchitecture::blackwell ? kNvlink5LinkBytesPerSecond
                                                                     : kNvlink4LinkBytesPerSecond;
  return static_cast<int>(std::lround(gpu.nvlink_bandwidth.value() / rate));
}

FabricFigures fabric_figures(const SystemSpec& system) {
  FabricFigures f;
  f.server_gpus = std::max(system.gpus_per_node, 1);
  f.domain_gpus = std::max(system.nvlink_domain_gpus, f.server_gpus);
  f.nvlink = system.gpu.nvlink_bandwidth.value() > 0.0;
  f.nvlink_links = f.nvlink ? std::max(nvlink_links_of(system.gpu), 1) : 0;
  f.gpu_link = f.nvlink ? system.gpu.nvlink_bandwidth : system.gpu.host_bandwidth;
  const int servers_per_domain = std::max(f.domain_gpus / f.server_gpus, 1);
  f.nics_per_domain = system.network.nics_per_node * servers_per_domain;
  f.domain_network = system.network.nic_bandwidth * static_cast<double>(f.nics_per_domain);
  // GPUDirect RDMA moves a server's network traffic over its GPUs' PCIe links: when those are
  // known and slower than the NICs (an A100's Gen4 x16 behind 400 Gb/s NICs), they bind.
  if (system.gpu.host_bandwidth.value() > 0.0) {
    const Bandwidth pcie = system.gpu.host_bandwidth * static_cast<double>(f.server_gpus * servers_per_domain);
    f.domain_network = min_bandwidth(f.domain_network, pcie);
  }
  const double oversubscription = std::max(system.network.oversubscription, 1.0);
  f.domain_uplink = system.network.tiers >= 2 ? f.domain_network / oversubscription : f.domain_network;
  return f;
}

}  // namespace stepcast
