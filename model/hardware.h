#pragma once
// Hardware descriptions: one GPU, and the cluster (system) it sits in.
//
// These are plain values filled by the scenario loader from scenarios/catalog/ (every figure
// there carries its source). Bandwidths are per direction: datasheets quote NVLink as the
// bidirectional total (H100: 900 GB/s), which is 450 GB/s each way; a NIC of 400 Gb/s moves
// 50 GB/s each way.

#include <array>
#include <string>
#include <vector>

#include "model/datatype.h"
#include "model/units.h"

namespace stepcast {

enum class GpuArchitecture { ampere, ada, hopper, blackwell, cdna3 };

// A named power/clock setting (Jetson's nvpmodel modes, or a capped data-centre part). The
// scales multiply the GPU's peak compute and memory bandwidth. A scenario's `system.power_mode`
// is applied by the loader: the GpuSpec it returns already holds the mode's scaled peaks,
// bandwidth and power, and `power_modes` lists only that mode, so cost code never rescales.
struct PowerMode {
  std::string name;           // "15W", "MAXN"
  double watts = 0.0;
  double compute_scale = 1.0;
  double memory_bandwidth_scale = 1.0;
  bool operator==(const PowerMode&) const = default;
};

struct GpuSpec {
  std::string name;          // catalog key, e.g. "h100-sxm-80gb"
  std::string display_name;  // "NVIDIA H100 SXM5 80GB"
  GpuArchitecture architecture = GpuArchitecture::hopper;

  // Dense (not sparse) peak per input format; zero where the GPU has no such mode.
  std::array<FlopRate, kDataTypeCount> dense_peak{};

  Bytes memory;                 // HBM (or shared LPDDR on Jetson) capacity
  Bandwidth memory_bandwidth;   // datasheet peak
  int sm_count = 0;             // streaming multiprocessors (compute units on AMD)
  Bytes l2_cache;
  Bandwidth nvlink_bandwidth;   // per GPU, per direction; zero when the GPU has no NVLink
  Bandwidth host_bandwidth;     // GPU<->host link per direction (PCIe, or NVLink-C2C on Grace)
  double tdp_watts = 0.0;
  bool unified_memory = false;  // `memory` is the system's, shared with the OS and CPU (Jetson)
  // Exponentials (MUFU.EX2) one SM's special function units retire per clock; 0: the
  // architecture's (model/op_time.h sfu_exp_per_sm_clock). Blackwell Ultra (B300, GB300) doubles it
  // (scenarios/catalog/gpus.yaml); attention's softmax spends one per score (model/op_time.h).
  double sfu_exp_per_sm_clock = 0.0;
  // Sustained over burst speed of compute-bound kernels on this part, when its power limit sets it
  // apart from its architecture's figure (CostParameters::sustained_fraction); 0: the architecture's
  // (compute.sustained_derate, compute.sustained_derate.blackwell). GB300 (1400 W) holds its
  // maximum clock under tensor-core load (scenarios/catalog/gpus.yaml): 1.
  double sustained_clock_fraction = 0.0;
  // Speed of an NVFP4 GEMM kernel over the same part's tensor-scaled FP8 kernel at training shapes,
  // where a measurement shows the datasheet's FP4-over-FP8 peak ratio is not reached
  // (model/op_time.h gemm_peak); 0: the datasheet ratio. Blackwell Ultra's NVFP4 GEMMs run 1.81x
  // FP8's against a 3.1x peak ratio (scenarios/catalog/gpus.yaml b300, gb300).
  double nvfp4_gemm_over_fp8 = 0.0;
  std::vector<PowerMode> power_modes;  // empty: the GPU runs at its datasheet figures

  [[nodiscard]] FlopRate peak(DataType t) const { return dense_peak[index_of(t)]; }
  [[nodiscard]] bool supports(DataType t) const { return dense_peak[index_of(t)].value() > 0.0; }
  bool operator==(const GpuSpec&) const = default;
};

enum class FabricKind { rail_optimized_fat_tree, fat_tree, none };
enum class Transport { infiniband, roce, efa, tcpxo, nvlink };

// The scale-out network between NVLink domains.
struct NetworkSpec {
  int nics_per_node = 0;        // application NICs (storage NICs excluded)
  Bandwidth nic_bandwidth;      // per NIC, per direction
  Seconds nic_latency;          // one network hop including the NIC pair, small messages
  Transport transport = Transport::infiniband;
  FabricKind fabric = FabricKind::rail_optimized_fat_tree;
  int tiers = 2;                // switch levels (leaf, spine[, core])
  double oversubscription = 1.0;  // leaf uplink:downlink ratio; 4 means 4:1
  int nodes_per_leaf = 32;      // how many nodes (per rail) one leaf switch serves
  bool in_network_reduction = false;  // SHARP / CollNet available
  // The platform's NCCL net plugin restricts NCCL to its Simple protocol (it sets NCCL_PROTO=simple
  // process-wide, so single-node collectives lose LL/LL128 too): aws-ofi-nccl does so on p4d/p4de
  // (src/platform-aws.c, platform_data_map: force_proto_simple = true).
  bool simple_protocol_only = false;
  int gpus_per_pcie_switch = 2;  // GPUs behind one PCIe switch (DGX/HGX: 2, with their NICs)
  bool operator==(const NetworkSpec&) const = default;
};

// One cluster: which GPU, how many, how they are grouped and connected.
struct SystemSpec {
  std::string name;          // catalog key, e.g. "dgx-h100"
  std::string display_name;
  GpuSpec gpu;
  int gpus = 1;              // GPUs in the job
  int gpus_per_node = 8;
  int nvlink_domain_gpus = 8;  // GPUs that reach each other through NVLink (72 on GB200 NVL72)
  bool nvlink_sharp = false;   // NVLS: in-switch reduction on NVSwitch gen 3+
  Bandwidth intra_node_bandwidth;  // per GPU per direction inside a node (NVLink, or PCIe when none)
  Seconds intra_node_latency;      // one intra-node hop, small messages
  NetworkSpec network;
  Bytes host_memory_per_node;

  [[nodiscard]] int nodes() const { return (gpus + gpus_per_node - 1) / gpus_per_node; }
  bool operator==(const SystemSpec&) const = default;
};

}  // namespace stepcast
