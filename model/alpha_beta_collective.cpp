#include "model/alpha_beta_collective.h"

#include <algorithm>
#include <cmath>

namespace stepcast {

AlphaBetaCollectiveModel::AlphaBetaCollectiveModel(const SystemSpec& system, const CostParameters& params) {
  Bandwidth intra = system.intra_node_bandwidth;
  if (intra.value() <= 0.0) intra = system.gpu.nvlink_bandwidth;
  if (intra.value() <= 0.0) intra = system.gpu.host_bandwidth;
  m_intra = intra * params.nvlink_eta;
  m_node_network = system.network.nic_bandwidth * static_cast<double>(system.network.nics_per_node) * params.network_eta;
  m_intra_latency = system.intra_node_latency;
  m_network_latency = system.network.nic_latency;
}

Bandwidth AlphaBetaCollectiveModel::bus_bandwidth(const GroupLayout& group) const {
  if (!group.spans_nodes()) return m_intra;
  const Bandwidth inter = m_node_network * group.nic_share;
  return group.ranks_per_node > 1 ? Bandwidth(std::min(m_intra.value(), inter.value())) : inter;
}

Seconds AlphaBetaCollectiveModel::time(CollectiveOp op, Bytes size, const GroupLayout& group) const {
  const int n = group.size;
  if (n <= 1 || size.value() <= 0.0) return Seconds(0.0);
  const double r = std::max(group.ranks_per_node, 1);
  const double nodes = std::max(group.nodes, 1);
  const Seconds depth = m_network_latency * std::ceil(std::log2(nodes)) + m_intra_latency * (r - 1.0);
  const Bandwidth bus = bus_bandwidth(group);
  switch (op) {
    case CollectiveOp::all_reduce:
      return size * bus_bandwidth_factor(op, n) / bus + depth * 2.0;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce:
      return size * bus_bandwidth_factor(op, n) / bus + depth;
    case CollectiveOp::all_to_all: {
      const double inside = (r - 1.0) / n;
      const double outside = (n - r) / n;
      Seconds t = size * inside / m_intra;
      if (group.spans_nodes()) {
        const Bandwidth per_rank = m_node_network * group.nic_share / r;
        t = max(t, size * outside / per_rank);
      }
      return t + (group.spans_nodes() ? m_network_latency : m_intra_latency);
    }
    case CollectiveOp::send_recv: {
      if (!group.spans_nodes()) return size / m_intra + m_intra_latency;
      const Bandwidth per_rank = m_node_network * group.nic_share / r;
      return size / per_rank + m_network_latency;
    }
  }
  return Seconds(0.0);
}

}  // namespace stepcast
