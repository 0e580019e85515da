#pragma once
// The real nccl-tests logs the collective model is checked against: where each file is, what ran
// (op, ranks, system), and what it is used for. Shared by the fidelity tests and the report
// printer (tests/fidelity/nccl_logs_test.cpp).

#include <string>
#include <vector>

#include "model/collective.h"
#include "model/hardware.h"
#include "tests/support/reference_systems.h"

namespace stepcast::test {

enum class LogUse {
  bars,         // issue #3's accuracy bars apply (single-node A100/H100, multi-node IB/RoCE/EFA)
  held_out,     // never used to set a constant; reported and checked with its own tolerance
  fit,          // one of its size ranges set a constant (named in model/nccl_parameters.h)
  report_only,  // outside the bars (GB200 multi-rack, a suspect setup): reported, loosely checked
};

struct NcclLogCase {
  std::string name;
  std::string path;  // relative to the source tree
  CollectiveOp op = CollectiveOp::all_reduce;
  SystemSpec system;
  int ranks = 8;
  int ranks_per_domain = 8;
  int gpus_per_thread = 1;  // nccl-tests -g
  LogUse use = LogUse::bars;
  std::string note;
};

inline std::vector<NcclLogCase> nccl_log_cases() {
  const std::string ref = "tests/fixtures/reference/nccl_logs/";
  const std::string extra = "tests/fixtures/nccl_logs_extra/";
  return {
      {"thanos A100 1x8 (1 proc/GPU)", extra + "thanos_a100_1x8_allreduce_mpirun.txt", CollectiveOp::all_reduce,
       dgx_a100(1), 8, 8, 1, LogUse::bars, "held out"},
      {"thanos A100 1x8 (-g 8)", extra + "thanos_a100_1x8_allreduce_g8.txt", CollectiveOp::all_reduce, dgx_a100(1), 8,
       8, 8, LogUse::fit, "with the 1 proc/GPU run, sets the -g launch term"},
      {"dkh A100 1x8 (-g 8)", extra + "dkh_a100_1x8_allreduce_g8.txt", CollectiveOp::all_reduce, dgx_a100(1), 8, 8, 8,
       LogUse::bars, "held out"},
      {"mleng A100 1x8 (-g 8)", ref + "mleng_a100_1x8_allreduce.txt", CollectiveOp::all_reduce, dgx_a100(1), 8, 8, 8,
       LogUse::report_only, "author-massaged table; 1-4 MiB rows flat at 101 us"},
      {"H100 1x8 NVLS (nccl-tests#290)", extra + "nccltests290_h100_1x8_allreduce_nvls.txt", CollectiveOp::all_reduce,
       dgx_h100(1), 8, 8, 8, LogUse::bars, "held out"},
      {"AWS p4de 2x8 EFA", ref + "aws_p4de_2x8_allreduce.txt", CollectiveOp::all_reduce, aws_p4de(2), 16, 8, 1,
       LogUse::held_out, "Simple only (aws-ofi-nccl sets NCCL_PROTO=simple on p4de): ~160 us at 8 B against p5's ~70"},
      {"AWS p5 2x8 EFA", ref + "aws_p5_2x8_allreduce.txt", CollectiveOp::all_reduce, aws_p5(2), 16, 8, 1, LogUse::bars,
       "held out (EFA latency from aws-ofi-nccl's tuner)"},
      {"GCP A3 Mega 2x8 TCPXO all_reduce", ref + "a3mega_2x8_allreduce.txt", CollectiveOp::all_reduce, gcp_a3mega(2),
       16, 8, 1, LogUse::fit, "8 B-4 KiB set the TCPXO latency; larger sizes are checks"},
      {"GCP A3 Mega 2x8 TCPXO all_gather", ref + "a3mega_2x8_allgather.txt", CollectiveOp::all_gather, gcp_a3mega(2),
       16, 8, 1, LogUse::held_out, ""},
      {"GCP A4 B200 2x8 RoCE all_reduce", ref + "yw_b200_a4_2x8_allreduce.txt", CollectiveOp::all_reduce, gcp_a4(2), 16,
       8, 1, LogUse::bars, "held out"},
      {"GKE A4 B200 2x8 RoCE all_gather (DraNet)", ref + "dranet_b200_2x8_allgather.txt", CollectiveOp::all_gather,
       gcp_a4(2), 16, 8, 1, LogUse::report_only,
       "reaches 260 GB/s where the same machines' all_reduce implies ~360: NIC allocation under test"},
      {"OCI A100 2x8 RoCE", ref + "oke_a100_2x8_roce_allreduce.txt", CollectiveOp::all_reduce, oci_b4(2), 16, 8, 1,
       LogUse::bars, "held out; two sizes"},
      // NVIDIA/nccl-tests#309: one H100 InfiniBand cluster (8 x 400 Gb/s per node) at 2, 4 and 8 nodes with
      // NCCL's defaults, and a second cluster's 2 bare-metal and 4 VM nodes (the 4-node plateau sets
      // nccl_parameters.h ring_net_channel_gbps for Hopper, so it is a fit log here).
      {"H100 IB 2x8 (nccl-tests#309 A)", extra + "nccltests309_h100_2x8_allreduce.txt", CollectiveOp::all_reduce,
       dgx_h100(2), 16, 8, 1, LogUse::bars, "held out"},
      {"H100 IB 4x8 (nccl-tests#309 A)", extra + "nccltests309_h100_4x8_allreduce.txt", CollectiveOp::all_reduce,
       dgx_h100(4), 32, 8, 1, LogUse::bars, "held out"},
      {"H100 IB 8x8 (nccl-tests#309 A)", extra + "nccltests309_h100_8x8_allreduce.txt", CollectiveOp::all_reduce,
       dgx_h100(8), 64, 8, 1, LogUse::bars, "held out"},
      {"HGX H100 IB 2x8 (nccl-tests#309 B)", extra + "nccltests309_hgx_h100_2x8_allreduce.txt",
       CollectiveOp::all_reduce, dgx_h100(2), 16, 8, 1, LogUse::bars, "held out"},
      {"VM H100 IB 4x8 (nccl-tests#309 B)", extra + "nccltests309_vm_h100_4x8_allreduce.txt", CollectiveOp::all_reduce,
       dgx_h100(4), 32, 8, 1, LogUse::fit, "its >= 1 GiB plateau / 16 channels sets Hopper's ring_net_channel_gbps"},
      {"CoreWeave GB200 NVL72 2 racks", ref + "cw_gb200_nvl72_2rack_allreduce.txt", CollectiveOp::all_reduce,
       gb200_nvl72(2, false), 144, 72, 1, LogUse::report_only, "NVLS disabled in that run"},
      {"CoreWeave GB200 NVL72 20 racks", ref + "cw_gb200_nvl72_20rack_allreduce.txt", CollectiveOp::all_reduce,
       gb200_nvl72(20, false), 1440, 72, 1, LogUse::report_only, "NVLS disabled in that run"},
  };
}

inline GroupLayout whole_domains(const NcclLogCase& c) {
  GroupLayout g;
  g.size = c.ranks;
  g.ranks_per_node = c.ranks_per_domain;
  g.nodes = (c.ranks + c.ranks_per_domain - 1) / c.ranks_per_domain;
  g.nic_share = 1.0;
  g.leaf_domains = 1;
  return g;
}

}  // namespace stepcast::test
