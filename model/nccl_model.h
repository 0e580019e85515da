#pragma once
// "nccl": collectives priced the way NCCL chooses them.
//
// For one operation, group and size, every algorithm the fabric offers (ring, tree, NVLS,
// NVLS-tree, PAT, CollNet Direct/Chain) is evaluated with every protocol it supports (LL, LL128,
// Simple), and the fastest wins, as NCCL's ncclTopoTuneModel/ncclTopoGetAlgoTime do
// (src/graph/tuning.cc). We compare the whole predicted times below, channel and thread reduction
// included (NCCL applies that after its choice, enqueue.cc), so the prediction never grows when a
// message shrinks. Each candidate's time is
//
//   latency(algo, proto, hops)                 NCCL's base + per-hop latencies (NVLink/PCI/net)
//   + bytes / (algbw(algo, proto, links) * p)  NCCL's bandwidth with its protocol refinements;
//                                              p < 1 at small sizes, where NCCL launches fewer
//                                              channels and threads (enqueue.cc thresholds)
//   + pipeline fill                            D stages x one chunk per channel (ours; see
//                                              model/nccl_parameters.h)
//
// Link bandwidths come from the system: NVLink per GPU times NCCL's own NVLink rate over the
// datasheet's (20.6/25 on Hopper), NICs of the group's NVLink domains times the transport's
// efficiency, shared by every concurrent group of its kind (GroupLayout::nic_share) and divided by
// the spine's oversubscription when the group spans leaf switches. Groups spanning several
// domains run hierarchically (tree, NVLS-tree, CollNet) or as one ring, whichever is faster.
// Across nodes, rings and trees run NCCL's channel count (one search channel per NIC, duplicated as
// src/graph/search.cc and connect.cc do; AlgorithmFilter's NCCL_MIN/MAX_CTAS bounds), and a Simple
// ring moves at most channels x NcclParameters::ring_net_channel_gbps: below the NICs' rate
// with NCCL's default 16 channels on 8 x 400 Gb/s, at it with NCCL_MIN_CTAS=24.
// All-to-all and send/recv are point-to-point in NCCL; they are priced from the same links.
//
// Sizes follow nccl-tests (model/collective.h). Pricing one collective costs well under a
// microsecond (tests/bench/bench_collective.cpp): no allocation, a dozen candidates.

#include <array>
#include <optional>
#include <vector>

#include "model/collective.h"
#include "model/fabric.h"
#include "model/hardware.h"
#include "model/nccl_parameters.h"

namespace stepcast {

// The NCCL settings a run forces: the candidates, like NCCL_ALGO / NCCL_PROTO, and the channel
// (CTA) count, like NCCL_MIN_CTAS / NCCL_MAX_CTAS (NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS).
struct AlgorithmFilter {
  std::optional<CollectiveAlgorithm> algorithm;  // only this one
  std::optional<CollectiveProtocol> protocol;
  // NCCL_ALGO / NCCL_PROTO lists ("Ring,Tree", "^NVLS"): bit index_of(x) set = allowed.
  unsigned algorithm_mask = ~0u;
  unsigned protocol_mask = ~0u;
  // Channel bounds; 0 = NCCL's default. NCCL clamps its channel count to at most the maximum,
  // then copies channels up to the minimum (src/graph/connect.cc ncclTopoPostset).
  int min_channels = 0;
  int max_channels = 0;

  [[nodiscard]] bool allows(CollectiveAlgorithm a) const {
    return (!algorithm || *algorithm == a) && (algorithm_mask >> index_of(a) & 1u) != 0;
  }
  [[nodiscard]] bool allows(CollectiveProtocol p) const {
    return (!protocol || *protocol == p) && (protocol_mask >> index_of(p) & 1u) != 0;
  }
};

// One priced candidate. `bandwidth` is the steady-state algorithm bandwidth (bytes / time at
// large sizes); `time` is the whole predicted time at this size.
struct CollectiveEstimate {
  bool valid = false;  // false: no algorithm/protocol of the filter applies to this op and group
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  CollectiveProtocol protocol = CollectiveProtocol::simple;
  Seconds time;
  Seconds latency;
  Bandwidth bandwidth;
};

class NcclCollectiveModel final : public CollectiveModel {
 public:
  // Derives the fabric figures from the system's topology graph (model/topology.h).
  explicit NcclCollectiveModel(const SystemSpec& system, NcclParameters parameters = {});
  NcclCollectiveModel(const SystemSpec& system, const FabricFigures& fabric, NcclParameters parameters = {});

  [[nodiscard]] std::string_view name() const override { return "nccl"; }
  [[nodiscard]] Seconds time(CollectiveOp op, Bytes size, const GroupLayout& group) const override;

  // The fastest candidate that passes `filter`.
  [[nodiscard]] CollectiveEstimate estimate(CollectiveOp op, Bytes size, const GroupLayout& group,
                                            const AlgorithmFilter& filter = {}) const;
  // Every valid candidate, for explanations and tests.
  [[nodiscard]] std::vector<CollectiveEstimate> candidates(CollectiveOp op, Bytes size, const GroupLayout& group) const;

  [[nodiscard]] const NcclParameters& parameters() const { return m_parameters; }
  [[nodiscard]] const FabricFigures& fabric() const { return m_fabric; }

 private:
  struct Context;  // per-call figures of one group
  [[nodiscard]] Context context_of(const GroupLayout& group, const AlgorithmFilter& filter) const;
  [[nodiscard]] CollectiveEstimate evaluate(CollectiveOp op, CollectiveAlgorithm algorithm, CollectiveProtocol protocol,
                                            double bytes, const Context& c) const;
  [[nodiscard]] CollectiveEstimate evaluate_p2p(CollectiveOp op, double bytes, const Context& c) const;

  NcclParameters m_parameters;
  FabricFigures m_fabric;
  NcclGeneration m_generation = NcclGeneration::hopper;
  Transport m_transport = Transport::infiniband;
  bool m_nvls = false;        // NVLink SHARP inside a domain
  bool m_collnet = false;     // SHARP in the network (CollNet)
  bool m_simple_only = false;  // the net plugin sets NCCL_PROTO=simple (NetworkSpec::simple_protocol_only)
  double m_intra_gbps = 0.0;  // NCCL-effective bandwidth of one GPU's domain link, GB/s
  double m_network_gbps = 0.0;  // all NICs of one domain at the transport's efficiency, GB/s
  double m_nic_gbps = 0.0;      // one NIC's line rate, GB/s (NCCL's net bandwidth)
  double m_uplink_ratio = 1.0;  // domain_uplink / domain_network
  double m_transport_latency_us = 0.0;
  std::array<int, kProtocolCount> m_min_threads{};
};

}  // namespace stepcast
