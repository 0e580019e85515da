#pragma once
// Systems of the reference logs, built from datasheet figures (NVIDIA product pages as quoted in
// tests/fixtures/reference/published_runs.yaml `hardware:` rows; cloud instance pages for NICs as
// stated in each log's header). Tests use these rather than the catalog so that a catalog edit
// cannot silently move a fidelity result.

#include "model/hardware.h"

namespace stepcast::test {

inline GpuSpec gpu(GpuArchitecture arch, double nvlink_gb_per_s, double host_gb_per_s) {
  GpuSpec g;
  g.architecture = arch;
  g.nvlink_bandwidth = units::gigabytes_per_second(nvlink_gb_per_s);  // per direction
  g.host_bandwidth = units::gigabytes_per_second(host_gb_per_s);
  return g;
}
// A100 SXM: 12 NVLink3 links, 600 GB/s total = 300 each way; PCIe Gen4 x16 ~32 GB/s.
inline GpuSpec a100() { return gpu(GpuArchitecture::ampere, 300.0, 32.0); }
// H100/H200 SXM: 18 NVLink4 links, 900 GB/s total = 450 each way; PCIe Gen5 x16 ~64 GB/s.
inline GpuSpec h100() { return gpu(GpuArchitecture::hopper, 450.0, 64.0); }
// H800: NVLink 400 GB/s total (8 links) = 200 each way.
inline GpuSpec h800() { return gpu(GpuArchitecture::hopper, 200.0, 64.0); }
// B200 / GB200: 18 NVLink5 links, 1.8 TB/s total = 900 each way.
inline GpuSpec b200() { return gpu(GpuArchitecture::blackwell, 900.0, 64.0); }

// `nodes` servers of `gpus_per_node` GPUs; NICs as given (0 for a single node).
inline SystemSpec system(GpuSpec g, int nodes, int gpus_per_node, bool nvls, int nics, double nic_gbit,
                         Transport transport = Transport::infiniband) {
  SystemSpec s;
  s.gpu = g;
  s.gpus = nodes * gpus_per_node;
  s.gpus_per_node = gpus_per_node;
  s.nvlink_domain_gpus = gpus_per_node;
  s.nvlink_sharp = nvls;
  s.network.nics_per_node = nics;
  s.network.nic_bandwidth = units::gigabits_per_second(nic_gbit);
  s.network.transport = transport;
  s.network.fabric = nics > 0 ? FabricKind::rail_optimized_fat_tree : FabricKind::none;
  return s;
}

inline SystemSpec dgx_a100(int nodes = 1) { return system(a100(), nodes, 8, false, 8, 200.0); }
inline SystemSpec dgx_h100(int nodes = 1) { return system(h100(), nodes, 8, true, 8, 400.0); }
// AWS p4de.24xlarge: 8x A100 80GB, 4x 100 Gb/s EFA.
// aws-ofi-nccl forces NCCL_PROTO=simple on p4d/p4de (src/platform-aws.c, force_proto_simple).
inline SystemSpec aws_p4de(int nodes) {
  SystemSpec s = system(a100(), nodes, 8, false, 4, 100.0, Transport::efa);
  s.network.simple_protocol_only = true;
  return s;
}
// AWS p5.48xlarge: 8x H100, 32x 100 Gb/s EFA (3200 Gb/s).
inline SystemSpec aws_p5(int nodes) { return system(h100(), nodes, 8, true, 32, 100.0, Transport::efa); }
// GCP a3-megagpu-8g: 8x H100, 8x 200 Gb/s GPUDirect-TCPXO NICs (1600 Gb/s).
inline SystemSpec gcp_a3mega(int nodes) { return system(h100(), nodes, 8, true, 8, 200.0, Transport::tcpxo); }
// GCP a4-highgpu-8g: 8x B200, 8x 400 Gb/s RDMA (RoCE) NICs.
inline SystemSpec gcp_a4(int nodes) { return system(b200(), nodes, 8, true, 8, 400.0, Transport::roce); }
// OCI BM.GPU.B4.8: 8x A100 40GB, 16x 100 Gb/s RoCE (1.6 Tb/s cluster network).
inline SystemSpec oci_b4(int nodes) { return system(a100(), nodes, 8, false, 16, 100.0, Transport::roce); }
// GB200 NVL72: 18 trays of 4 GPUs share one NVLink domain per rack; 4x 400 Gb/s InfiniBand per tray.
inline SystemSpec gb200_nvl72(int racks, bool nvls) {
  SystemSpec s = system(b200(), racks * 18, 4, nvls, 4, 400.0);
  s.gpu.architecture = GpuArchitecture::blackwell;
  s.nvlink_domain_gpus = 72;
  return s;
}

}  // namespace stepcast::test
