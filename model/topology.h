#pragma once
// A cluster as a graph (Boost.Graph): which GPU reaches which, over which links, how fast.
//
// Vertices: GPUs, one NVSwitch vertex per NVLink domain (a server, or a 72-GPU GB200 NVL72 rack),
// PCIe switches (gpus_per_pcie_switch GPUs and their NICs each, joined by one host root-complex
// vertex per server, kind pcie_switch with a negative index), NICs (nics_per_node per server,
// one per GPU on rail-optimized systems), leaf switches and spine switches.
// Edges are full-duplex links stored as a pair of directed arcs, each with the per-direction
// bandwidth (B/s) and latency (s) of the link:
//   GPU <-> NVSwitch      the GPU's NVLink bandwidth (absent without NVLink)
//   GPU <-> PCIe switch   the GPU's host link; NIC <-> PCIe switch, the NIC's rate
//   NIC <-> leaf          the NIC's rate. Rail-optimized fat tree: NIC r of every server of a leaf
//                         group goes to that group's leaf r (one leaf per rail). Plain fat tree:
//                         every NIC of the group goes to the group's single leaf.
//   leaf <-> spine        the leaf's downlink total / oversubscription (one aggregate spine per
//                         rail, or one spine for a plain fat tree); none with one tier
// A leaf group holds network.nodes_per_leaf servers.
//
// GPUs are numbered as ranks are placed (model/placement.h): GPU g sits on server
// g / gpus_per_node. Queries build their flow network on the fly; nothing here is on a
// per-configuration hot path: derive the per-group figures once (derive_fabric_figures).

#include <cstddef>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "model/fabric.h"
#include "model/hardware.h"
#include "model/units.h"

namespace stepcast {

enum class VertexKind { gpu, nvswitch, pcie_switch, nic, leaf, spine };
enum class LinkKind { nvlink, pcie, network, uplink };

constexpr std::string_view to_string(VertexKind k) {
  switch (k) {
    case VertexKind::gpu: return "gpu";
    case VertexKind::nvswitch: return "nvswitch";
    case VertexKind::pcie_switch: return "pcie_switch";
    case VertexKind::nic: return "nic";
    case VertexKind::leaf: return "leaf";
    case VertexKind::spine: return "spine";
  }
  return "?";
}
constexpr std::string_view to_string(LinkKind k) {
  switch (k) {
    case LinkKind::nvlink: return "nvlink";
    case LinkKind::pcie: return "pcie";
    case LinkKind::network: return "network";
    case LinkKind::uplink: return "uplink";
  }
  return "?";
}

constexpr unsigned link_bit(LinkKind k) { return 1u << static_cast<unsigned>(k); }
inline constexpr unsigned kAllLinks = 0xFu;

struct TopologyVertex {
  VertexKind kind = VertexKind::gpu;
  int index = 0;   // GPU number, NIC number, switch number (global within its kind)
  int server = -1; // owning server for GPUs, NICs and PCIe switches
};

struct TopologyLink {
  LinkKind kind = LinkKind::nvlink;
  Bandwidth bandwidth;  // per direction
  Seconds latency;
};

using TopologyGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, TopologyVertex, TopologyLink>;
using TopologyVertexId = TopologyGraph::vertex_descriptor;

class Topology {
 public:
  // The whole job's cluster: system.nodes() servers.
  explicit Topology(const SystemSpec& system);
  // The cluster with `servers` servers instead (used to derive figures from a small sample).
  Topology(const SystemSpec& system, int servers);

  [[nodiscard]] const TopologyGraph& graph() const { return m_graph; }
  [[nodiscard]] int gpu_count() const { return static_cast<int>(m_gpus.size()); }
  [[nodiscard]] TopologyVertexId gpu(int index) const { return m_gpus.at(static_cast<std::size_t>(index)); }
  [[nodiscard]] std::size_t count(VertexKind kind) const;

  // Lowest-latency path between two GPUs, endpoints included.
  [[nodiscard]] std::vector<TopologyVertexId> path(int from_gpu, int to_gpu) const;
  // Links on that path.
  [[nodiscard]] int hop_count(int from_gpu, int to_gpu) const;
  [[nodiscard]] std::vector<LinkKind> links_on_path(int from_gpu, int to_gpu) const;
  [[nodiscard]] Seconds path_latency(int from_gpu, int to_gpu) const;

  // Most data per second the GPUs of `from` can send to the GPUs of `to` all together (max flow;
  // each GPU may send or receive as much as its links carry). `links` restricts the link kinds the
  // flow may use (a bit per LinkKind, see link_bit); by default all.
  [[nodiscard]] Bandwidth bottleneck_bandwidth(const std::vector<int>& from, const std::vector<int>& to,
                                               unsigned links = kAllLinks) const;
  // Bandwidth between the first and the second half of the servers (one direction).
  [[nodiscard]] Bandwidth bisection_bandwidth() const;

 private:
  void build(const SystemSpec& system, int servers);
  void connect(TopologyVertexId a, TopologyVertexId b, LinkKind kind, Bandwidth bandwidth, Seconds latency);

  TopologyGraph m_graph;
  std::vector<TopologyVertexId> m_gpus;
  int m_gpus_per_server = 1;
};

// "8 x 400 Gb/s InfiniBand per node, 2-tier rail-optimized fat tree, 1:1", for predict/explain.
std::string describe(const NetworkSpec& network);

// The per-domain figures the collective model needs, measured on a small sample of the system's
// topology with max-flow queries: one GPU's domain link, two domains under one leaf, two domains
// under different leaves (across the spine).
FabricFigures derive_fabric_figures(const SystemSpec& system);

}  // namespace stepcast
