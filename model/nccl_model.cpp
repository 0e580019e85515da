#include "model/nccl_model.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "model/topology.h"

namespace stepcast {

namespace {

constexpr double kBytesPerGigabyte = 1e9;
constexpr double kMicrosecond = 1e-6;

// floor(log2(x)) for x >= 1, 0 below (NCCL's log2i).
int log2i(std::uint64_t x) { return x == 0 ? 0 : static_cast<int>(std::bit_width(x)) - 1; }

bool is_reduction_ring_op(CollectiveOp op) {
  return op == CollectiveOp::all_reduce || op == CollectiveOp::all_gather || op == CollectiveOp::reduce_scatter ||
         op == CollectiveOp::broadcast || op == CollectiveOp::reduce;
}

// Ring steps per collective (tuning.cc nsteps): 2(n-1) for all-reduce, n-1 for all-gather and
// reduce-scatter, n for broadcast and reduce.
int ring_steps(CollectiveOp op, int n) {
  switch (op) {
    case CollectiveOp::all_reduce: return 2 * (n - 1);
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter: return n - 1;
    default: return n;
  }
}

// NCCL's tree correction, indexed by log2(bytes/64) and stepped per power of two; we interpolate
// linearly in log2(size) between its points, so that a step up of the table never makes a larger
// message faster (the table rises by at most 0.2 per doubling, well below the 0.69 x factor that
// would let bandwidth outgrow size).
double tree_correction(const std::array<double, 24>& table, double bytes, double log2_chunks) {
  if (bytes < 64.0) return table.front();
  const double x = log2_chunks;
  const auto last = static_cast<double>(table.size() - 1);
  if (x >= last) return table.back();
  const auto i = static_cast<std::size_t>(x);
  const double f = x - static_cast<double>(i);
  return table[i] * (1.0 - f) + table[i + 1] * f;
}

// NCCL's tree/Simple chunk at this size (src/enqueue.cc): one Simple step, halved while each
// channel would get fewer than depth * {8, 4, 1} chunks, down to the floor of each rule.
double tree_simple_chunk(const NcclParameters& p, double bytes, int channels, double tree_depth) {
  double chunk = p.tree_simple_chunk_bytes;
  for (std::size_t r = 0; r < p.tree_chunk_halving_per_depth.size(); ++r) {
    while (bytes / (channels * chunk) < tree_depth * p.tree_chunk_halving_per_depth[r] &&
           chunk > p.tree_chunk_floor_bytes[r]) {
      chunk /= 2.0;
    }
  }
  return chunk;
}

// NCCL's per-channel speeds for inter-node graph search, GB/s, fastest first (src/graph/search.cc:
// speedArrayInter before Hopper, sm90SpeedArrayInter, sm100SpeedArrayInter).
constexpr std::array<double, 19> kSpeedsInter{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                              7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array<double, 17> kSpeedsInterSm90{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                                  15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array<double, 20> kSpeedsInterSm100{96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                                   20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// search.cc ncclTopoDupChannels: channels are doubled (each at half the speed) when the speed is
// >= 25 GB/s, except on compute capability > 8.0 when it is below 50 GB/s with more than 4 channels.
constexpr double kDupMinSpeed = 25.0;
constexpr double kDupHopperSpeedLimit = 50.0;
constexpr int kDupHopperChannelLimit = 4;
// connect.cc ncclTopoPostset: "Use 4 compute channels per search channel to reach peak BW on <8
// PPN": on compute capability >= 9.0 across nodes, doubled again while the ring speed > 45 GB/s and
// fewer than 16 channels.
constexpr double kComputeChannelSpeed = 45.0;
constexpr int kComputeChannelLimit = 16;

template <std::size_t N>
double fastest_speed_within(const std::array<double, N>& speeds, double gbps) {
  for (double s : speeds) {
    if (s <= gbps) return s;
  }
  return speeds.back();
}

// The ring channels (CTAs) NCCL runs across nodes with `nics` NICs of `nic_gbps` each per node:
// one search channel per NIC at the fastest table speed a NIC carries (the GPU-NIC PCIe path, which
// NCCL also bounds it by, is taken to be no slower), then NCCL's duplications (see above).
// 8 x 400 Gb/s on Hopper: 8 channels at 48 GB/s, no DupChannels, 16 after Postset. One 400 Gb/s
// rail: 1 -> 2 (DupChannels, 24 GB/s) -> 4. 8 x 200 Gb/s: 8 at 24 -> 16.
int net_ring_channels(const NcclParameters& p, NcclGeneration g, double nics, double nic_gbps) {
  const bool hopper_plus = g == NcclGeneration::hopper || g == NcclGeneration::blackwell;
  double speed = g == NcclGeneration::blackwell ? fastest_speed_within(kSpeedsInterSm100, nic_gbps)
                 : g == NcclGeneration::hopper  ? fastest_speed_within(kSpeedsInterSm90, nic_gbps)
                                                : fastest_speed_within(kSpeedsInter, nic_gbps);
  int channels = std::max(1, static_cast<int>(std::lround(nics)));
  const bool dup = speed >= kDupMinSpeed &&
                   !(hopper_plus && speed < kDupHopperSpeedLimit && channels > kDupHopperChannelLimit);
  if (dup) {
    channels = std::min(2 * channels, p.max_channels);
    speed /= 2.0;
  }
  channels *= p.channels_per_nic;
  if (hopper_plus && speed > kComputeChannelSpeed && channels < kComputeChannelLimit) channels *= 2;
  return std::min(channels, p.max_channels);
}

}  // namespace

struct NcclCollectiveModel::Context {
  int n = 1;          // ranks
  int ppn = 1;        // ranks per NVLink domain
  int k = 1;          // domains
  NcclScale scale = NcclScale::one_node;
  double intra_gbps = 0.0;  // NCCL bus bandwidth of one GPU inside its domain
  double net_gbps = 0.0;    // network bandwidth of one domain available to this group
  int channels = 2;         // ring/tree channels (CTAs)
  double ll_max_gbps = 0.0;
  double transport_latency_us = 0.0;
  double log2_chunks = 0.0;  // log2(bytes / 64), for the tree correction (set per call)
};

NcclCollectiveModel::NcclCollectiveModel(const SystemSpec& system, NcclParameters parameters)
    : NcclCollectiveModel(system, derive_fabric_figures(system), std::move(parameters)) {}

NcclCollectiveModel::NcclCollectiveModel(const SystemSpec& system, const FabricFigures& fabric,
                                         NcclParameters parameters)
    : m_parameters(std::move(parameters)), m_fabric(fabric) {
  const NcclParameters& p = m_parameters;
  m_generation = nccl_generation(system.gpu.architecture);
  m_transport = system.network.transport;
  const std::size_t g = index_of(m_generation);
  m_nvls = system.nvlink_sharp && fabric.nvlink && p.nvls_efficiency[g] > 0.0;
  m_collnet = system.network.in_network_reduction;
  m_simple_only = system.network.simple_protocol_only;
  const double link_gbps = fabric.gpu_link.value() / kBytesPerGigabyte;
  m_intra_gbps = fabric.nvlink ? link_gbps * p.nvlink_link_gbps[g] / p.nvlink_datasheet_link_gbps[g]
                               : link_gbps * p.pci_efficiency;
  m_network_gbps = fabric.domain_network.value() / kBytesPerGigabyte * p.network_efficiency[index_of(m_transport)];
  m_nic_gbps = fabric.nics_per_domain > 0 ? fabric.domain_network.value() / kBytesPerGigabyte / fabric.nics_per_domain
                                          : 0.0;
  m_uplink_ratio = fabric.domain_network.value() > 0.0 ? fabric.domain_uplink / fabric.domain_network : 1.0;
  for (std::size_t pi = 0; pi < kProtocolCount; ++pi) {
    // NCCL halves the threads while they stay a multiple of 128: 512 -> 64, 640 -> 320.
    int t = std::max(p.max_threads[pi], 1);
    while (t % 128 == 0) t /= 2;
    m_min_threads[pi] = t;
  }
  m_transport_latency_us = p.transport_latency_us[index_of(m_transport)];
}

NcclCollectiveModel::Context NcclCollectiveModel::context_of(const GroupLayout& group,
                                                               const AlgorithmFilter& filter) const {
  const NcclParameters& p = m_parameters;
  Context c;
  c.n = std::max(group.size, 1);
  c.ppn = std::clamp(group.ranks_per_node, 1, c.n);
  c.k = std::max(group.nodes, 1);
  c.scale = c.k == 1 ? NcclScale::one_node : (c.k == 2 ? NcclScale::two_nodes : NcclScale::four_plus_nodes);
  c.intra_gbps = m_intra_gbps;
  const double share = std::clamp(group.nic_share, 1e-6, 1.0);
  c.net_gbps = m_network_gbps * share * (group.leaf_domains > 1 ? m_uplink_ratio : 1.0);
  if (c.k == 1) {
    const int links = m_fabric.nvlink ? m_fabric.nvlink_links : 1;
    c.channels = std::clamp(p.channels_per_nvlink_link * links, 2, p.max_channels);
    c.ll_max_gbps = p.ll_max_one_node_gbps[index_of(m_generation)];
  } else {
    const double nics = m_fabric.nics_per_domain * share;
    c.channels = std::max(net_ring_channels(p, m_generation, nics, m_nic_gbps), 2);
    c.ll_max_gbps = p.ll_max_multi_node_gbps[index_of(c.scale)];
  }
  // NCCL_MAX_CTAS, then NCCL_MIN_CTAS (connect.cc ncclTopoPostset: min with the maximum, then
  // copyChannels up to the minimum), within MAXCHANNELS.
  if (filter.max_channels > 0) c.channels = std::min(c.channels, filter.max_channels);
  if (filter.min_channels > 0) c.channels = std::max(c.channels, filter.min_channels);
  c.channels = std::clamp(c.channels, 1, p.max_channels);
  c.transport_latency_us = c.k > 1 ? m_transport_latency_us : 0.0;
  return c;
}

CollectiveEstimate NcclCollectiveModel::evaluate(CollectiveOp op, CollectiveAlgorithm a, CollectiveProtocol pr,
                                                 double bytes, const Context& c) const {
  const NcclParameters& p = m_parameters;
  CollectiveEstimate e;
  e.algorithm = a;
  e.protocol = pr;
  const bool simple = pr == CollectiveProtocol::simple;
  const bool single = c.k == 1;
  const bool all_reduce = op == CollectiveOp::all_reduce;
  const bool gather_scatter = op == CollectiveOp::all_gather || op == CollectiveOp::reduce_scatter;
  const std::size_t gi = index_of(m_generation);
  const std::size_t si = index_of(c.scale);
  const std::size_t ai = index_of(a);
  const std::size_t pi = index_of(pr);

  // --- Which algorithm applies (tuning.cc enable rules) ----------------------------------------------
  switch (a) {
    case CollectiveAlgorithm::ring:
      if (!is_reduction_ring_op(op)) return e;
      break;
    case CollectiveAlgorithm::tree:
      if (!all_reduce) return e;
      break;
    case CollectiveAlgorithm::nvls:
      // One domain; across domains only with CollNet (NVLS+SHARP).
      if (!m_nvls || c.ppn < 2 || !(all_reduce || gather_scatter) || (!single && !m_collnet)) return e;
      break;
    case CollectiveAlgorithm::nvls_tree:
      if (!m_nvls || single || c.ppn < 2 || !all_reduce) return e;
      break;
    case CollectiveAlgorithm::pat:
      // "PAT only supports 1 GPU per node".
      if (!gather_scatter || single || c.ppn != 1) return e;
      break;
    case CollectiveAlgorithm::collnet_direct:
    case CollectiveAlgorithm::collnet_chain:
      if (!m_collnet || single || !all_reduce) return e;
      break;
    case CollectiveAlgorithm::p2p: return e;
  }
  const bool simple_only = a != CollectiveAlgorithm::ring && a != CollectiveAlgorithm::tree;
  if (simple_only && !simple) return e;
  if (m_simple_only && !simple) return e;  // NCCL_PROTO=simple, set by the platform's net plugin
  // LL128 only over NVLink (tuning.cc: typeIntra <= PATH_NVB).
  if (pr == CollectiveProtocol::ll128 && !m_fabric.nvlink) return e;

  // --- Bandwidth, GB/s -----------------------------------------------------------------------------
  const double n = c.n;
  const double ppn = c.ppn;
  int channels = c.channels;
  double algbw = 0.0;
  // LL's cap (llMaxBw) bounds the whole communicator, not each channel: at small sizes, where
  // NCCL runs fewer channels, the per-channel bandwidth scales down from the uncapped figure.
  // `ceiling` holds that absolute cap in algorithm-bandwidth terms.
  double ceiling = std::numeric_limits<double>::infinity();
  double size_correction = 1.0;  // NCCL's tree correction at this size (trees only)
  switch (a) {
    case CollectiveAlgorithm::ring: {
      // Across nodes each channel enters a node through one NIC, crosses its ppn GPUs in ppn - 1
      // NVLink hops and leaves through another NIC: a GPU's NVLink carries (ppn - 1)/ppn of the
      // ring's bus traffic (NCCL's search charges each GPU's links only for the channels that
      // cross them, src/graph/search.cc ncclTopoFollowPath: 7 of 8 channels x 48 GB/s on H100).
      double bus = single ? c.intra_gbps
                          : (c.ppn > 1 ? std::min(c.intra_gbps * ppn / (ppn - 1.0), c.net_gbps) : c.net_gbps);
      // Across nodes a ring moves at most its channels' rate (model/nccl_parameters.h); the
      // protocols' refinements below apply on top.
      const double per_channel = p.ring_net_channel_gbps[gi];
      if (!single && per_channel > 0.0) bus = std::min(bus, channels * per_channel);
      const double ratio = n / ring_steps(op, c.n);
      if (pr == CollectiveProtocol::ll) {
        bus *= p.ring_ll_factor;
        ceiling = c.ll_max_gbps * ratio;
      }
      if (pr == CollectiveProtocol::ll128)
        bus = std::min(bus * p.ring_ll128_factor, channels * p.ring_ll128_per_channel_gbps[gi]);
      algbw = bus * ratio;
      break;
    }
    case CollectiveAlgorithm::tree: {
      // A tree of two domains exchanges each half once each way: twice the one-way bandwidth.
      double graph = single ? c.intra_gbps : (c.k == 2 ? 2.0 * c.net_gbps : c.net_gbps);
      if (!single && c.ppn > 1) graph = std::min(graph, c.intra_gbps);
      double bus = std::min(graph * p.tree_factor, channels * p.tree_per_channel_gbps[gi][si]);
      const double correction = tree_correction(p.tree_correction[pi], bytes, c.log2_chunks);
      size_correction = correction;
      if (pr == CollectiveProtocol::ll) {
        bus *= p.tree_ll_factor;
        ceiling = c.ll_max_gbps * p.tree_algbw_ratio * correction;
      }
      if (pr == CollectiveProtocol::ll128)
        bus = std::min(bus * (single ? p.tree_ll128_one_node_factor : p.tree_ll128_multi_node_factor),
                       channels * p.tree_ll128_per_channel_gbps[gi][si]);
      algbw = bus * p.tree_algbw_ratio * correction;
      break;
    }
    case CollectiveAlgorithm::nvls: {
      // Multimem reduce-scatter + multicast store: each GPU moves S(1 + 1/n) each way for an
      // all-reduce (n/(n+1) of the link), S for all-gather/reduce-scatter.
      const double eff = c.intra_gbps * p.nvls_efficiency[gi];
      algbw = all_reduce ? eff * ppn / (ppn + 1.0) : eff;
      if (!single) algbw = std::min(algbw, c.net_gbps);
      channels = p.nvls_channels;
      break;
    }
    case CollectiveAlgorithm::nvls_tree: {
      const double intra = c.intra_gbps * p.nvls_efficiency[gi] * ppn / (ppn + 1.0);
      // nvls_tree: bwInter across two nodes, bwInter/2 beyond (tuning.cc).
      const double inter = c.k <= 2 ? c.net_gbps : c.net_gbps / 2.0;
      algbw = std::min(intra, inter);
      const double cap = p.nvls_tree_per_channel_gbps[gi][si];
      if (cap > 0.0) algbw = std::min(algbw, p.nvls_channels * cap);
      channels = p.nvls_channels;
      break;
    }
    case CollectiveAlgorithm::pat:
      algbw = c.net_gbps * p.pat_factor;
      break;
    case CollectiveAlgorithm::collnet_direct:
    case CollectiveAlgorithm::collnet_chain: {
      // The switch reduces: a domain sends and receives S once over its NICs; inside the domain a
      // reduce-scatter and all-gather move S(ppn-1)/ppn twice.
      const double intra = c.ppn > 1 ? c.intra_gbps * ppn / (2.0 * (ppn - 1.0)) : c.intra_gbps;
      algbw = std::min(intra, c.net_gbps) * p.collnet_factor;
      break;
    }
    case CollectiveAlgorithm::p2p: break;
  }
  const double full_algbw = std::min(algbw, ceiling);
  if (!(full_algbw > 0.0)) return e;

  // --- Latency, microseconds -----------------------------------------------------------------------
  const NcclLink intra_link = m_fabric.nvlink ? NcclLink::nvlink : NcclLink::pci;
  const double intra_lat = p.hw_latency_us[index_of(intra_link)][ai][pi];
  // "With ppn=1 latencies are fully exposed, use the Tree network latency."
  const std::size_t net_row = c.ppn == 1 ? index_of(CollectiveAlgorithm::tree) : ai;
  double inter_lat = p.hw_latency_us[index_of(NcclLink::net)][net_row][pi] + c.transport_latency_us;
  if (simple) inter_lat += c.transport_latency_us;  // "Also add the flush extra latency"
  const int levels = log2i(static_cast<std::uint64_t>(c.k));
  double latency = p.base_latency_us[ai][pi];
  switch (a) {
    case CollectiveAlgorithm::ring: {
      if (op == CollectiveOp::broadcast || op == CollectiveOp::reduce) {
        latency += (c.n - c.k) * intra_lat + (c.k - 1) * inter_lat;
        break;
      }
      const int steps = ring_steps(op, c.n);
      // nInterSteps: 2 * nodes for all-reduce (tuning.cc at NCCL b6475625; 2 * (nodes - 1) before),
      // nodes - 1 for all-gather and reduce-scatter.
      const int inter_steps = single ? 0 : (all_reduce ? 2 * c.k : c.k - 1);
      double step_lat = intra_lat;
      if (!single) step_lat = std::max(step_lat, p.net_overhead_us * (simple ? p.net_overhead_simple_factor : 1.0));
      latency += (steps - inter_steps) * step_lat + inter_steps * inter_lat;
      if (simple && !single && all_reduce && bytes / (channels * n) >= 64.0) latency *= p.ring_plateau_factor;
      break;
    }
    case CollectiveAlgorithm::tree:
      latency += 2.0 * ((ppn - 1.0) * intra_lat + levels * inter_lat);
      break;
    case CollectiveAlgorithm::nvls:
      latency = intra_lat + (single ? 0.0 : inter_lat);
      break;
    case CollectiveAlgorithm::nvls_tree:
      latency += intra_lat + 2.0 * levels * inter_lat;
      break;
    case CollectiveAlgorithm::pat:
      latency = p.pat_base_latency_us + levels * (inter_lat / p.pat_log_divisor) + n * p.pat_per_rank_latency_us;
      break;
    case CollectiveAlgorithm::collnet_direct:
      latency += 2.0 * (std::min(1.0, ppn - 1.0) * intra_lat + (ppn - 1.0) * p.collnet_arity_latency_us) + inter_lat;
      break;
    case CollectiveAlgorithm::collnet_chain:
      latency += 2.0 * (ppn - 1.0) * intra_lat + inter_lat;
      break;
    case CollectiveAlgorithm::p2p: break;
  }

  // --- Parallelism at small sizes (enqueue.cc): fewer channels, then fewer threads -----------------
  // NCCL drops a channel while bytes < channels * threads * threshold, then halves the threads
  // while they stay a multiple of 128. We take the continuous version (a fraction of a channel's
  // threads) so that time never drops when the size grows past a step.
  const int max_threads = p.max_threads[pi];
  double threshold = p.thread_threshold_bytes[pi];
  if (a == CollectiveAlgorithm::ring && pr == CollectiveProtocol::ll) threshold *= n;
  const int min_threads = m_min_threads[pi];
  const double work = bytes / (max_threads * threshold);  // channels' worth of full-thread work
  const double parallel = work >= 1.0 ? std::min(work, static_cast<double>(channels)) / channels
                                      : std::max(work, static_cast<double>(min_threads) / max_threads) / channels;

  // --- Pipeline fill (ours): D stages of one chunk per channel -----------------------------------
  const double channel_gbps = full_algbw / channels;
  double fill_us = 0.0;
  if (a == CollectiveAlgorithm::tree && simple) {
    // Up and down NCCL's tree: (ppn - 1) chain hops each way over NVLink/PCI, log2(nodes) levels
    // each way at the bottleneck rate, one chunk each (model/nccl_parameters.h). LL and LL128
    // trees keep the shallow fill below: NCCL's tree correction table already carries their
    // medium-size shortfall, and their chunks do not follow the depth rule.
    // The stages run at the links' rate: NCCL's size correction (an empirical fit of whole
    // medium-size times) stays out of it, so the fill never shrinks as a message grows.
    const double tree_depth = (ppn - 1.0) + levels;
    const double chunk = std::min(tree_simple_chunk(p, bytes, channels, tree_depth), bytes / channels);
    const double link_channel_gbps = channel_gbps / size_correction;
    // A chain hop runs at the channel's rate scaled by how much faster NVLink is than the network
    // (inside one node the chain is the bottleneck itself).
    const double intra_channel_gbps = single || !(c.net_gbps > 0.0)
                                          ? link_channel_gbps
                                          : link_channel_gbps * std::max(1.0, c.intra_gbps / c.net_gbps);
    fill_us = 2.0 * chunk * ((ppn - 1.0) / (intra_channel_gbps * 1e3) + levels / (link_channel_gbps * 1e3));
  } else {
    double depth = 0.0;
    switch (a) {
      case CollectiveAlgorithm::ring: depth = p.ring_fill_depth; break;
      case CollectiveAlgorithm::nvls: depth = p.nvls_fill_depth; break;
      default: depth = p.tree_fill_base_depth + p.tree_fill_depth_per_level * levels; break;
    }
    const double per_stage_bytes = bytes / channels / (a == CollectiveAlgorithm::ring ? n : 1.0);
    const double chunk = std::min(p.chunk_bytes[pi], per_stage_bytes);
    fill_us = depth * chunk / (channel_gbps * 1e3);
  }

  const double running_algbw = std::min(algbw * parallel, ceiling);
  e.valid = true;
  e.latency = Seconds(latency * kMicrosecond);
  e.bandwidth = Bandwidth(full_algbw * kBytesPerGigabyte);
  e.time = Seconds((latency + bytes / (running_algbw * 1e3) + fill_us) * kMicrosecond);
  return e;
}

CollectiveEstimate NcclCollectiveModel::evaluate_p2p(CollectiveOp op, double bytes, const Context& c) const {
  // NCCL runs send/recv and all-to-all as point-to-point transfers (LL below NCCL_P2P_LL_THRESHOLD,
  // Simple above); we price them from the ring's per-hop latencies and the links they cross.
  const NcclParameters& p = m_parameters;
  CollectiveEstimate e;
  e.algorithm = CollectiveAlgorithm::p2p;
  e.protocol = CollectiveProtocol::simple;
  const std::size_t ring = index_of(CollectiveAlgorithm::ring);
  const std::size_t simple = index_of(CollectiveProtocol::simple);
  const NcclLink intra_link = m_fabric.nvlink ? NcclLink::nvlink : NcclLink::pci;
  const bool crosses = c.k > 1;
  const double hop = crosses ? p.hw_latency_us[index_of(NcclLink::net)][ring][simple] + 2.0 * c.transport_latency_us
                             : p.hw_latency_us[index_of(intra_link)][ring][simple];
  const double latency = p.base_latency_us[ring][simple] + hop;
  const double per_gpu_net = c.net_gbps / c.ppn;
  double seconds_per_byte = 0.0;  // us per byte at full speed, as 1/(GB/s * 1e3)
  double algbw = 0.0;
  if (op == CollectiveOp::send_recv) {
    algbw = crosses ? per_gpu_net : c.intra_gbps;
    seconds_per_byte = 1.0 / (algbw * 1e3);
  } else {
    // Each rank sends S/n to each peer: (ppn-1)/n of S over its domain link, (n-ppn)/n over the
    // network; both run at once.
    const double n = c.n;
    const double intra_us = c.intra_gbps > 0.0 ? (c.ppn - 1.0) / n / (c.intra_gbps * 1e3) : 0.0;
    const double inter_us = crosses ? (n - c.ppn) / n / (per_gpu_net * 1e3) : 0.0;
    seconds_per_byte = std::max(intra_us, inter_us);
    algbw = 1.0 / (seconds_per_byte * 1e3);
  }
  if (!(algbw > 0.0)) return e;
  e.valid = true;
  e.latency = Seconds(latency * kMicrosecond);
  e.bandwidth = Bandwidth(algbw * kBytesPerGigabyte);
  e.time = Seconds((latency + bytes * seconds_per_byte) * kMicrosecond);
  return e;
}

CollectiveEstimate NcclCollectiveModel::estimate(CollectiveOp op, Bytes size, const GroupLayout& group,
                                                 const AlgorithmFilter& filter) const {
  CollectiveEstimate best;
  if (group.size <= 1) {
    best.valid = true;
    return best;
  }
  Context c = context_of(group, filter);
  const double bytes = std::max(size.value(), 0.0);
  if (bytes >= 64.0) c.log2_chunks = std::log2(bytes / 64.0);
  if (op == CollectiveOp::all_to_all || op == CollectiveOp::send_recv) {
    if (filter.algorithm && *filter.algorithm != CollectiveAlgorithm::p2p) return best;
    return evaluate_p2p(op, bytes, c);
  }
  for (std::size_t ai = 0; ai < kAlgorithmCount; ++ai) {
    const auto a = static_cast<CollectiveAlgorithm>(ai);
    if (!filter.allows(a)) continue;
    for (std::size_t pi = 0; pi < kProtocolCount; ++pi) {
      const auto pr = static_cast<CollectiveProtocol>(pi);
      if (!filter.allows(pr)) continue;
      const CollectiveEstimate e = evaluate(op, a, pr, bytes, c);
      if (e.valid && (!best.valid || e.time < best.time)) best = e;
    }
  }
  return best;
}

std::vector<CollectiveEstimate> NcclCollectiveModel::candidates(CollectiveOp op, Bytes size,
                                                                const GroupLayout& group) const {
  std::vector<CollectiveEstimate> out;
  if (group.size <= 1) return out;
  Context c = context_of(group, {});
  const double bytes = std::max(size.value(), 0.0);
  if (bytes >= 64.0) c.log2_chunks = std::log2(bytes / 64.0);
  if (op == CollectiveOp::all_to_all || op == CollectiveOp::send_recv) {
    const auto e = evaluate_p2p(op, bytes, c);
    if (e.valid) out.push_back(e);
    return out;
  }
  for (std::size_t ai = 0; ai < kAlgorithmCount; ++ai) {
    for (std::size_t pi = 0; pi < kProtocolCount; ++pi) {
      const auto e = evaluate(op, static_cast<CollectiveAlgorithm>(ai), static_cast<CollectiveProtocol>(pi), bytes, c);
      if (e.valid) out.push_back(e);
    }
  }
  return out;
}

Seconds NcclCollectiveModel::time(CollectiveOp op, Bytes size, const GroupLayout& group) const {
  const CollectiveEstimate e = estimate(op, size, group);
  // No algorithm can run (a group across domains on a system without a network): the collective
  // never completes. The scenario loader refuses such systems; infinity keeps any slip visible.
  return e.valid ? e.time : Seconds(std::numeric_limits<double>::infinity());
}

}  // namespace stepcast
