#pragma once
// The constants of the NCCL-faithful collective model, in one plain struct.
//
// Most figures are NCCL's own tuning tables (src/graph/tuning.cc, src/graph/topo.h,
// src/enqueue.cc, src/include/device.h; NCCL 2.23-2.30, read through the public code index, not
// copied). NCCL keeps them in microseconds and GB/s (1e9 B/s); so do we here, because that is how
// their sources state them. Conversion to SI happens in model/nccl_model.cpp.
//
// A few figures are ours: the network efficiency (from NVIDIA maintainers' statements), the extra
// per-hop latency of cloud transports (fitted on the latency regime of one log each, named
// below), and the pipeline-fill depths of each algorithm. Calibration (issue 9) refits any of them
// from nccl-tests logs: for_each_parameter() enumerates every scalar with its name, unit and source
// so a fit can read and write them without knowing the struct.
//
// Indices: NcclGeneration (Volta, Ampere, Hopper, Blackwell) follows NCCL's compute-capability
// rows; NcclScale (1 node, 2 nodes, 4+ nodes) follows its `index2` columns.

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

#include "model/hardware.h"

namespace stepcast {

// NCCL's algorithms, in the order of our tables; p2p marks all-to-all and send/recv, which NCCL
// runs as point-to-point operations outside its tuning tables.
enum class CollectiveAlgorithm { ring, tree, nvls, nvls_tree, pat, collnet_direct, collnet_chain, p2p };
enum class CollectiveProtocol { ll, ll128, simple };
inline constexpr std::size_t kAlgorithmCount = 7;  // rows of the tuning tables (p2p has none)
inline constexpr std::size_t kProtocolCount = 3;

constexpr std::string_view to_string(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::ring: return "ring";
    case CollectiveAlgorithm::tree: return "tree";
    case CollectiveAlgorithm::nvls: return "nvls";
    case CollectiveAlgorithm::nvls_tree: return "nvls_tree";
    case CollectiveAlgorithm::pat: return "pat";
    case CollectiveAlgorithm::collnet_direct: return "collnet_direct";
    case CollectiveAlgorithm::collnet_chain: return "collnet_chain";
    case CollectiveAlgorithm::p2p: return "p2p";
  }
  return "?";
}
constexpr std::string_view to_string(CollectiveProtocol p) {
  switch (p) {
    case CollectiveProtocol::ll: return "LL";
    case CollectiveProtocol::ll128: return "LL128";
    case CollectiveProtocol::simple: return "Simple";
  }
  return "?";
}

enum class NcclGeneration { volta, ampere, hopper, blackwell };
inline constexpr std::size_t kGenerationCount = 4;
enum class NcclScale { one_node, two_nodes, four_plus_nodes };
inline constexpr std::size_t kScaleCount = 3;
// NCCL's hardware-latency rows: NVLink, PCIe, network.
enum class NcclLink { nvlink, pci, net };
inline constexpr std::size_t kLinkCount = 3;
inline constexpr std::size_t kTransportCount = 5;  // Transport: infiniband, roce, efa, tcpxo, nvlink

constexpr std::size_t index_of(CollectiveAlgorithm a) { return static_cast<std::size_t>(a); }
constexpr std::size_t index_of(CollectiveProtocol p) { return static_cast<std::size_t>(p); }
constexpr std::size_t index_of(NcclGeneration g) { return static_cast<std::size_t>(g); }
constexpr std::size_t index_of(NcclScale s) { return static_cast<std::size_t>(s); }
constexpr std::size_t index_of(NcclLink l) { return static_cast<std::size_t>(l); }
constexpr std::size_t index_of(Transport t) { return static_cast<std::size_t>(t); }

// NCCL maps GPUs to its table rows by compute capability: >= 10.0 Blackwell, >= 9.0 Hopper,
// >= 8.0 Ampere (Ada 8.9 included), else Volta. AMD CDNA3 runs RCCL, not NCCL: we use the Ampere
// row as the nearest NVLink-class figures and say so in predictions.
constexpr NcclGeneration nccl_generation(GpuArchitecture a) {
  switch (a) {
    case GpuArchitecture::ampere:
    case GpuArchitecture::ada:
    case GpuArchitecture::cdna3: return NcclGeneration::ampere;
    case GpuArchitecture::hopper: return NcclGeneration::hopper;
    case GpuArchitecture::blackwell: return NcclGeneration::blackwell;
  }
  return NcclGeneration::ampere;
}

template <class T>
using AlgoProto = std::array<std::array<T, kProtocolCount>, kAlgorithmCount>;
template <class T>
using PerGeneration = std::array<T, kGenerationCount>;
template <class T>
using PerGenerationScale = std::array<std::array<T, kScaleCount>, kGenerationCount>;

struct NcclParameters {
  // --- Latencies, microseconds (tuning.cc baseLat / hwLat) ---------------------------------------
  // Rows: ring, tree, nvls, nvls_tree, pat, collnet_direct, collnet_chain; columns LL, LL128, Simple.
  // NCCL's table order is tree, ring, collnet direct, collnet chain, nvls, nvls tree, pat; we
  // reorder rows to our enum. PAT's base is its own formula (8 us, see pat_* below).
  AlgoProto<double> base_latency_us{{
      {6.6, 14.0, 8.4},  // ring
      {6.8, 14.0, 8.4},  // tree
      {0.0, 0.0, 0.0},   // nvls
      {0.0, 0.0, 0.0},   // nvls_tree
      {0.0, 0.0, 0.0},   // pat (latency = pat_base + ..., below)
      {0.0, 0.0, 0.0},   // collnet_direct
      {0.0, 0.0, 0.0},   // collnet_chain
  }};
  // Per-hop hardware latency, microseconds: hwLat[NVLink | PCI | NET][algorithm][protocol].
  std::array<AlgoProto<double>, kLinkCount> hw_latency_us{{
      {{{0.6, 1.9, 3.4}, {0.6, 1.25, 4.0}, {0.0, 0.0, 25.0}, {0.0, 0.0, 25.0}, {0.0, 0.0, 4.0},
        {0.0, 0.0, 3.7}, {0.0, 0.0, 2.8}}},  // NVLink
      {{{1.0, 2.5, 5.7}, {1.0, 1.9, 4.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 4.0},
        {0.0, 0.0, 3.7}, {0.0, 0.0, 2.8}}},  // PCI
      {{{2.7, 4.0, 14.0}, {5.0, 8.5, 14.0}, {0.0, 0.0, 18.0}, {0.0, 0.0, 20.9}, {0.0, 0.0, 14.0},
        {0.0, 0.0, 31.0}, {0.0, 0.0, 30.0}}},  // NET
  }};
  // "Inter-node rings still have to launch nsteps * net overhead": 1 us per step on Intel/ARM
  // hosts (2 us on AMD), three times that for Simple (tuning.cc getNetOverhead).
  double net_overhead_us = 1.0;
  double net_overhead_simple_factor = 3.0;
  // Ring/Simple all-reduce across nodes: "Plateau effect of ring", latency x1.4 (x1.9 before
  // Ampere) once each rank's share per channel is >= 64 bytes (ncclTopoGetAlgoTime).
  double ring_plateau_factor = 1.4;
  // CollNet Direct: "0.4 us arity serialization latency" per local rank.
  double collnet_arity_latency_us = 0.4;
  // PAT latency: 8 us base + log2(nodes) * netLat/3.5 + 2.8 us per rank ("still a linear part").
  double pat_base_latency_us = 8.0;
  double pat_log_divisor = 3.5;
  double pat_per_rank_latency_us = 2.8;

  // --- Bandwidth refinements (tuning.cc "Various model refinements") ------------------------------
  double ring_ll_factor = 0.5;             // LL carries 8 data bytes per 16-byte line
  double ring_ll128_factor = 0.92;         // LL128 carries 120 of 128 bytes ("0.92 /*120/128*/")
  double tree_factor = 0.92;               // tree all-reduce
  double tree_ll_factor = 1.0 / 3.8;
  double tree_ll128_one_node_factor = 7.0 / 9.0;
  double tree_ll128_multi_node_factor = 120.0 / 128.0;
  double tree_algbw_ratio = 0.5;           // bus -> algorithm bandwidth for non-ring algorithms
  double pat_factor = 0.75;
  double collnet_factor = 0.9;             // collnet efficiency (tuning.cc: "busBw *= .9")
  // LL's absolute cap, GB/s (llMaxBws): one node by GPU generation; several nodes by CPU vendor
  // (Intel row shown; it is the row Volta shares).
  PerGeneration<double> ll_max_one_node_gbps{39.0, 87.7, 141.0, 282.0};
  std::array<double, kScaleCount> ll_max_multi_node_gbps{39.0, 39.0, 20.4};
  PerGeneration<double> ring_ll128_per_channel_gbps{20.0, 20.0, 36.7, 40.0};
  PerGenerationScale<double> tree_ll128_per_channel_gbps{{
      {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
  PerGenerationScale<double> tree_per_channel_gbps{{
      {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
  PerGenerationScale<double> nvls_tree_per_channel_gbps{{
      {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}};
  // NVLink SHARP efficiency (tuning/nvls.cc nvlsEfficiency): measured by NVIDIA, lower on
  // Blackwell whose switch reduction did not grow with the link rate.
  PerGeneration<double> nvls_efficiency{0.0, 0.0, 0.85, 0.74};
  // Trees are slower than modelled at medium sizes; NCCL multiplies their bandwidth by this table,
  // indexed by log2(bytes/64) (64 B .. 512 MiB), LL / LL128 / Simple (treeCorrectionFactor).
  std::array<std::array<double, 24>, kProtocolCount> tree_correction{{
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
  }};

  // --- Link bandwidths NCCL assumes (topo.h) ------------------------------------------------------
  // NCCL's bandwidth per NVLink link, GB/s (SM80_NVLINK_BW 20.0, SM90 20.6, SM100 40.1), against
  // the datasheet's 25 / 25 / 50 GB/s per link per direction: the protocol overhead sjeaugey calls
  // "~20%" (nccl-tests#212). Our NVLink bus bandwidth is the datasheet figure times this ratio.
  PerGeneration<double> nvlink_link_gbps{20.0, 20.0, 20.6, 40.1};
  PerGeneration<double> nvlink_datasheet_link_gbps{25.0, 25.0, 25.0, 50.0};
  // PCI_BW 12 GB/s for a Gen3 x16 link of 15.75 GB/s: NCCL sees 76% of a PCIe link.
  double pci_efficiency = 12.0 / 15.75;

  // --- Channels and threads (enqueue.cc, device.h, NCCL defaults) ----------------------------------
  int max_channels = 32;                // MAXCHANNELS
  int channels_per_nvlink_link = 2;     // ring search duplicates channels over each link pair
  // Across nodes NCCL's ring search (src/graph/search.cc ncclTopoCompute) finds one channel per
  // NIC, each at the fastest per-channel speed of its inter-node table the NIC carries;
  // ncclTopoDupChannels may double them, and ncclTopoPostset (src/graph/connect.cc) doubles them
  // again ("Duplication should be complete now": nChannels * 2) into the channels (CTAs) that
  // run. model/nccl_model.cpp (net_ring_channels) follows those rules; this is the last factor.
  int channels_per_nic = 2;
  int nvls_channels = 16;               // NCCL_NVLS_NCHANNELS default
  // Bytes of work per thread before NCCL adds threads/channels (NCCL_*_THREAD_THRESHOLD);
  // ring/LL multiplies by the rank count.
  std::array<double, kProtocolCount> thread_threshold_bytes{8.0, 8.0, 64.0};
  std::array<int, kProtocolCount> max_threads{512, 640, 512};  // LL, LL128, Simple

  // --- Pipeline fill (ours) ------------------------------------------------------------------------
  // Data moves through an algorithm's stages in chunks: one NCCL step of the protocol's buffer
  // (NCCL_STEPS = 8 steps per buffer) times the chunk steps. Simple: 4 MiB buffer / 8 * 4 steps =
  // 2 MiB; LL128: 120 * 640 * 8 * 8 B / 8 steps, 120/128 of it data = 576000 B; LL: 512 KiB / 8,
  // half of it data = 32 KiB. Filling a pipeline D stages deep costs D chunk times per channel, a
  // term NCCL's own ranking model leaves out and nccl-tests timings show as a fixed overhead of
  // 0.1-1 ms at large sizes (tests/fixtures: thanos A100 ~0.17 ms, CoreWeave GB200 ~1 ms).
  std::array<double, kProtocolCount> chunk_bytes{32768.0, 576000.0, 2097152.0};
  // Pipeline depth in stages beyond the first: ring and NVLS 1. Trees: a chunk climbs the tree and
  // comes back down, 2 x NCCL's tree depth stages, with depth = ranks per node - 1 + log2(nodes)
  // (src/graph/connect.cc connectTrees: "Compute tree depth. Not an exact value but a good
  // approximation"); the (ranks per node - 1) chain hops run at NVLink speed, the log2(nodes)
  // levels at the network's.
  double ring_fill_depth = 1.0;
  double nvls_fill_depth = 1.0;
  // NVLS-tree and CollNet (one multimem or switch stage per domain): 2 + 2 * log2(nodes) (ours).
  double tree_fill_base_depth = 2.0;
  double tree_fill_depth_per_level = 2.0;
  // Tree/Simple chunks (src/enqueue.cc, computeColl/calcCollChunking): one step of the Simple
  // buffer (chunkSteps = 1 off the ring: NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8 = 512 KiB), halved
  // while bytes / (channels * chunk) < depth * 8 and chunk > 128 KiB, then while < depth * 4 and
  // chunk > 64 KiB, then while < depth and chunk > 32 KiB: mid-size trees pipeline in small chunks.
  double tree_simple_chunk_bytes = 524288.0;
  std::array<double, 3> tree_chunk_halving_per_depth{8.0, 4.0, 1.0};
  std::array<double, 3> tree_chunk_floor_bytes{131072.0, 65536.0, 32768.0};

  // --- Networks (ours) -----------------------------------------------------------------------------
  // Share of a NIC's line rate NCCL moves: "For NDR @ 400Gbps you should see 46-48GB/s per NIC"
  // (AddyLaddy, nccl-tests#290) and HDR "24GB/s" of 25 (sjeaugey, nccl-tests#160): 47/50 = 0.94.
  // RoCE runs the same verbs transport; GPUDirect-TCPXO's ring all-gather reached 188.9 GB/s of
  // 200 (a3mega_2x8_allgather.txt, 8 GiB), EFA has no clean ring measurement in our logs: all use
  // the documented 0.94. Order: infiniband, roce, efa, tcpxo, nvlink (unused).
  std::array<double, kTransportCount> network_efficiency{0.94, 0.94, 0.94, 0.94, 1.0};
  // Bus bandwidth one ring channel (one CTA) moves across nodes, GB/s; 0: no cap known. A ring
  // across nodes moves min(NICs x efficiency, channels x this), the protocols' refinements on top.
  // NCCL's ranking model has no such cap for rings (tuning.cc: busBw = nChannels x bwIntra, 8 x 48
  // = 384 GB/s on 8 x 400 Gb/s: its search gives each 400 Gb/s NIC one 48 GB/s channel,
  // sm90SpeedArrayInter in src/graph/search.cc, which ncclTopoPostset runs as 2 CTAs, 24 GB/s
  // each), but its runs stop short of the NICs with the default 16 CTAs: 366 GB/s on 8 x 400 Gb/s
  // IB is "a good number" that NCCL_MIN_CTAS=24 lifts "above 380" (kiskra-nvidia,
  // NVIDIA/nccl-tests#309), and another cluster of the thread runs 321-325 GB/s yet reaches its
  // NICs (391-393) with 24 CTAs. Hopper: the maintainer's "good" run,
  // tests/fixtures/nccl_logs_extra/nccltests309_vm_h100_4x8_allreduce.txt, 365.8 GB/s busbw at
  // 16 GiB (358-366 from 1 GiB on) / 16 CTAs = 22.9 (a measured plateau over NCCL's channel count,
  // not a fit: within our model a fit on that log alone cannot tell this cap from the network's
  // NVLS-tree figure). `stepcast calibrate` refits it per cluster (validation/collective_fit.h;
  // 19.8 GB/s on the 321-325 GB/s cluster's 4-node log). Other generations: no multi-node ring
  // measurement in our logs (0, no cap).
  PerGeneration<double> ring_net_channel_gbps{0.0, 0.0, 22.9, 0.0};
  // Latency a transport adds to each network hop beyond NCCL's table (NCCL's graph latencyInter,
  // reported by the net plugin; twice for Simple, "the flush extra latency"):
  //   InfiniBand, RoCE: 0, NCCL's own IB verbs plugin, on which its table was measured.
  //   EFA: 20 us, the network latency AWS's own NCCL tuner assumes (aws/aws-ofi-nccl src/tuner,
  //        NET_LATENCY 20 us; its P5 model parameters use net_lat 20 us). The latency regime of
  //        aws_p5_2x8_allreduce.txt (8 B .. 4 KiB) alone would give 22 us: the test suite
  //        recomputes that as a consistency check.
  //   GPUDirect-TCPXO: 50.5 us, fitted on 8 B .. 4 KiB of a3mega_2x8_allreduce.txt (no published
  //        figure); every other size of that log and its all-gather twin are checks.
  // (NetworkSpec::nic_latency is the topology's hop latency, not this.)
  std::array<double, kTransportCount> transport_latency_us{0.0, 0.0, 20.0, 50.5, 0.0};

  // Calls `visit(name, value&, unit, source)` for every scalar above, so calibration can read and
  // refit them. Names are stable: "hw_latency_us.net.ring.simple", "nvls_efficiency.hopper", ...
  template <class Visitor>
  void for_each_parameter(Visitor&& visit);
};

namespace detail {
inline constexpr std::array<std::string_view, kAlgorithmCount> kAlgorithmNames{
    "ring", "tree", "nvls", "nvls_tree", "pat", "collnet_direct", "collnet_chain"};
inline constexpr std::array<std::string_view, kProtocolCount> kProtocolNames{"ll", "ll128", "simple"};
inline constexpr std::array<std::string_view, kGenerationCount> kGenerationNames{"volta", "ampere", "hopper",
                                                                                 "blackwell"};
inline constexpr std::array<std::string_view, kScaleCount> kScaleNames{"one_node", "two_nodes", "four_plus_nodes"};
inline constexpr std::array<std::string_view, kLinkCount> kLinkNames{"nvlink", "pci", "net"};
inline constexpr std::array<std::string_view, kTransportCount> kTransportNames{"infiniband", "roce", "efa", "tcpxo",
                                                                               "nvlink"};
inline constexpr std::string_view kTuning = "NCCL src/graph/tuning.cc";
inline constexpr std::string_view kTopo = "NCCL src/graph/topo.h";
inline constexpr std::string_view kEnqueue = "NCCL src/enqueue.cc, src/include/device.h";
inline constexpr std::string_view kOurs = "stepcast model/nccl_parameters.h (see comment)";
}  // namespace detail

template <class Visitor>
void NcclParameters::for_each_parameter(Visitor&& visit) {
  using namespace detail;
  std::string name;
  auto dotted = [&name](std::initializer_list<std::string_view> parts) -> const std::string& {
    name.clear();
    for (auto p : parts) {
      if (!name.empty()) name += '.';
      name += p;
    }
    return name;
  };
  for (std::size_t a = 0; a < kAlgorithmCount; ++a) {
    for (std::size_t p = 0; p < kProtocolCount; ++p) {
      visit(dotted({"base_latency_us", kAlgorithmNames[a], kProtocolNames[p]}), base_latency_us[a][p], "us", kTuning);
      for (std::size_t l = 0; l < kLinkCount; ++l) {
        visit(dotted({"hw_latency_us", kLinkNames[l], kAlgorithmNames[a], kProtocolNames[p]}), hw_latency_us[l][a][p],
              "us", kTuning);
      }
    }
  }
  visit(dotted({"net_overhead_us"}), net_overhead_us, "us", kTuning);
  visit(dotted({"net_overhead_simple_factor"}), net_overhead_simple_factor, "1", kTuning);
  visit(dotted({"ring_plateau_factor"}), ring_plateau_factor, "1", kTuning);
  visit(dotted({"collnet_arity_latency_us"}), collnet_arity_latency_us, "us", kTuning);
  visit(dotted({"pat_base_latency_us"}), pat_base_latency_us, "us", kTuning);
  visit(dotted({"pat_log_divisor"}), pat_log_divisor, "1", kTuning);
  visit(dotted({"pat_per_rank_latency_us"}), pat_per_rank_latency_us, "us", kTuning);
  visit(dotted({"ring_ll_factor"}), ring_ll_factor, "1", kTuning);
  visit(dotted({"ring_ll128_factor"}), ring_ll128_factor, "1", kTuning);
  visit(dotted({"tree_factor"}), tree_factor, "1", kTuning);
  visit(dotted({"tree_ll_factor"}), tree_ll_factor, "1", kTuning);
  visit(dotted({"tree_ll128_one_node_factor"}), tree_ll128_one_node_factor, "1", kTuning);
  visit(dotted({"tree_ll128_multi_node_factor"}), tree_ll128_multi_node_factor, "1", kTuning);
  visit(dotted({"tree_algbw_ratio"}), tree_algbw_ratio, "1", kTuning);
  visit(dotted({"pat_factor"}), pat_factor, "1", kTuning);
  visit(dotted({"collnet_factor"}), collnet_factor, "1", kTuning);
  for (std::size_t g = 0; g < kGenerationCount; ++g) {
    visit(dotted({"ll_max_one_node_gbps", kGenerationNames[g]}), ll_max_one_node_gbps[g], "GB/s", kTuning);
    visit(dotted({"ring_ll128_per_channel_gbps", kGenerationNames[g]}), ring_ll128_per_channel_gbps[g], "GB/s",
          kTuning);
    visit(dotted({"nvls_efficiency", kGenerationNames[g]}), nvls_efficiency[g], "1", kTuning);
    visit(dotted({"ring_net_channel_gbps", kGenerationNames[g]}), ring_net_channel_gbps[g], "GB/s",
          "tests/fixtures/nccl_logs_extra/nccltests309_vm_h100_4x8_allreduce.txt plateau / 16 CTAs "
          "(NVIDIA/nccl-tests#309); see model/nccl_parameters.h");
    visit(dotted({"nvlink_link_gbps", kGenerationNames[g]}), nvlink_link_gbps[g], "GB/s", kTopo);
    visit(dotted({"nvlink_datasheet_link_gbps", kGenerationNames[g]}), nvlink_datasheet_link_gbps[g], "GB/s",
          "NVIDIA datasheets: 25 GB/s per NVLink3/4 link, 50 GB/s per NVLink5 link, per direction");
    for (std::size_t s = 0; s < kScaleCount; ++s) {
      visit(dotted({"tree_ll128_per_channel_gbps", kGenerationNames[g], kScaleNames[s]}),
            tree_ll128_per_channel_gbps[g][s], "GB/s", kTuning);
      visit(dotted({"tree_per_channel_gbps", kGenerationNames[g], kScaleNames[s]}), tree_per_channel_gbps[g][s], "GB/s",
            kTuning);
      visit(dotted({"nvls_tree_per_channel_gbps", kGenerationNames[g], kScaleNames[s]}),
            nvls_tree_per_channel_gbps[g][s], "GB/s", kTuning);
    }
  }
  for (std::size_t s = 0; s < kScaleCount; ++s) {
    visit(dotted({"ll_max_multi_node_gbps", kScaleNames[s]}), ll_max_multi_node_gbps[s], "GB/s", kTuning);
  }
  for (std::size_t p = 0; p < kProtocolCount; ++p) {
    for (std::size_t i = 0; i < tree_correction[p].size(); ++i) {
      const std::string index = std::to_string(i);
      visit(dotted({"tree_correction", kProtocolNames[p], index}), tree_correction[p][i], "1", kTuning);
    }
    visit(dotted({"thread_threshold_bytes", kProtocolNames[p]}), thread_threshold_bytes[p], "B", kEnqueue);
    visit(dotted({"chunk_bytes", kProtocolNames[p]}), chunk_bytes[p], "B", kOurs);
  }
  visit(dotted({"pci_efficiency"}), pci_efficiency, "1", kTopo);
  visit(dotted({"ring_fill_depth"}), ring_fill_depth, "1", kOurs);
  visit(dotted({"nvls_fill_depth"}), nvls_fill_depth, "1", kOurs);
  visit(dotted({"tree_fill_base_depth"}), tree_fill_base_depth, "1", kOurs);
  visit(dotted({"tree_fill_depth_per_level"}), tree_fill_depth_per_level, "1", kOurs);
  visit(dotted({"tree_simple_chunk_bytes"}), tree_simple_chunk_bytes, "B", kEnqueue);
  for (std::size_t t = 0; t < kTransportCount; ++t) {
    visit(dotted({"network_efficiency", kTransportNames[t]}), network_efficiency[t], "1", kOurs);
    visit(dotted({"transport_latency_us", kTransportNames[t]}), transport_latency_us[t], "us", kOurs);
  }
}

}  // namespace stepcast
