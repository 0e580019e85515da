#pragma once
// The plain collective cost model: per-level alpha-beta with NCCL's ring bandwidth.
//
// Registered as "alpha-beta"; the NCCL-faithful model (issue 3) replaces it as the default and
// keeps this one to measure what the detailed one buys.
//
// Bandwidth: a ring over n ranks, r of them in each of N nodes, moves (n-1)/n S per rank for
// all-gather / reduce-scatter and 2(n-1)/n S for all-reduce (nccl-tests bus-bandwidth factors).
// Each ring step sends S/n across every link of the ring, and only one of the r ranks of a node
// sends out of it, so a step takes S/n over the slower of
//   intra-node: the GPU's NVLink (or PCIe) bandwidth per direction x nvlink_eta, and
//   inter-node: the group's share of the node's NICs (GroupLayout::nic_share x NICs x NIC
//               bandwidth x network_eta), NCCL spreading its rings over them;
// so busbw = min(intra, inter) and t = bus_factor S / busbw. All-to-all sends (n-r)/n of S
// across the network through r ranks' NIC share and (r-1)/n inside the node.
// Latency: a tree-like 2 (ceil(log2 N) alpha_net + (r-1) alpha_nvlink) for all-reduce, half of
// it for the one-directional collectives (NCCL switches to trees or LL protocols for small
// messages; this model does not choose, it takes the tree's depth).

#include "model/collective.h"
#include "model/cost_parameters.h"
#include "model/hardware.h"

namespace stepcast {

class AlphaBetaCollectiveModel final : public CollectiveModel {
 public:
  AlphaBetaCollectiveModel(const SystemSpec& system, const CostParameters& params);
  [[nodiscard]] std::string_view name() const override { return "alpha-beta"; }
  [[nodiscard]] Seconds time(CollectiveOp op, Bytes size, const GroupLayout& group) const override;

  // Bus bandwidth the model predicts for a large message on `group` (the min above).
  [[nodiscard]] Bandwidth bus_bandwidth(const GroupLayout& group) const;

 private:
  Bandwidth m_intra;        // per GPU per direction, after nvlink_eta
  Bandwidth m_node_network; // all NICs of a node, per direction, after network_eta
  Seconds m_intra_latency;
  Seconds m_network_latency;
};

}  // namespace stepcast
