#include "model/topology.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <utility>

#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <boost/property_map/function_property_map.hpp>

namespace stepcast {

namespace {

// A GPU spec that leaves its host link unknown gets a link that never binds (1 PB/s): an unknown
// figure must not invent a bottleneck. model/fabric.cpp makes the same choice.
constexpr double kUnknownHostLinkBytesPerSecond = 1e15;
// Hop latencies for path ordering only (collective latencies come from NCCL's tables in
// model/nccl_parameters.h). Assumptions: an NVSwitch or PCIe crossing ~0.5 us, a network switch
// hop ~0.5 us when the system does not say.
constexpr double kDefaultSwitchHopSeconds = 0.5e-6;
// Dijkstra breaks latency ties towards fewer hops.
constexpr double kPerHopTieBreakSeconds = 1e-12;

}  // namespace

Topology::Topology(const SystemSpec& system) : Topology(system, system.nodes()) {}

Topology::Topology(const SystemSpec& system, int servers) { build(system, std::max(servers, 1)); }

void Topology::connect(TopologyVertexId a, TopologyVertexId b, LinkKind kind, Bandwidth bandwidth, Seconds latency) {
  boost::add_edge(a, b, TopologyLink{kind, bandwidth, latency}, m_graph);
  boost::add_edge(b, a, TopologyLink{kind, bandwidth, latency}, m_graph);
}

void Topology::build(const SystemSpec& system, int servers) {
  const NetworkSpec& net = system.network;
  const FabricFigures spec = fabric_figures(system);
  m_gpus_per_server = spec.server_gpus;
  const int gpus_per_switch = std::clamp(net.gpus_per_pcie_switch, 1, spec.server_gpus);
  const int switches_per_server = (spec.server_gpus + gpus_per_switch - 1) / gpus_per_switch;
  const Bandwidth host_link = system.gpu.host_bandwidth.value() > 0.0 ? system.gpu.host_bandwidth
                                                                       : Bandwidth(kUnknownHostLinkBytesPerSecond);
  const Seconds intra_hop = system.intra_node_latency.value() > 0.0 ? system.intra_node_latency / 2.0
                                                                    : Seconds(kDefaultSwitchHopSeconds);
  const Seconds nic_hop = net.nic_latency.value() > 0.0 ? net.nic_latency / 2.0 : Seconds(kDefaultSwitchHopSeconds);
  const Seconds switch_hop(kDefaultSwitchHopSeconds);
  const bool rails = net.fabric == FabricKind::rail_optimized_fat_tree;
  const bool has_network = net.fabric != FabricKind::none && net.nics_per_node > 0 && net.nic_bandwidth.value() > 0.0;
  const int servers_per_leaf = net.tiers >= 2 ? std::max(net.nodes_per_leaf, 1) : std::max(servers, 1);

  auto add_vertex = [this](VertexKind kind, int index, int server) {
    return boost::add_vertex(TopologyVertex{kind, index, server}, m_graph);
  };

  std::map<int, TopologyVertexId> nvswitch_of_domain;
  std::map<std::pair<int, int>, TopologyVertexId> leaf_of;  // (leaf group, rail) -> leaf
  TopologyVertexId spine{};
  bool spine_made = false;
  int next_leaf = 0;
  const double oversubscription = std::max(net.oversubscription, 1.0);

  for (int s = 0; s < servers; ++s) {
    // Hosts root the PCIe tree; GPUs without NVLink reach each other through it.
    const TopologyVertexId host = add_vertex(VertexKind::pcie_switch, -1 - s, s);
    std::vector<TopologyVertexId> switches;
    for (int w = 0; w < switches_per_server; ++w) {
      switches.push_back(add_vertex(VertexKind::pcie_switch, s * switches_per_server + w, s));
      connect(switches.back(), host, LinkKind::pcie, host_link * static_cast<double>(gpus_per_switch), intra_hop);
    }
    for (int i = 0; i < spec.server_gpus; ++i) {
      const int g = s * spec.server_gpus + i;
      const TopologyVertexId v = add_vertex(VertexKind::gpu, g, s);
      m_gpus.push_back(v);
      connect(v, switches[static_cast<std::size_t>(i / gpus_per_switch)], LinkKind::pcie, host_link, intra_hop);
      if (spec.nvlink) {
        const int domain = g / spec.domain_gpus;
        auto it = nvswitch_of_domain.find(domain);
        if (it == nvswitch_of_domain.end()) {
          it = nvswitch_of_domain.emplace(domain, add_vertex(VertexKind::nvswitch, domain, -1)).first;
        }
        connect(v, it->second, LinkKind::nvlink, spec.gpu_link, intra_hop);
      }
    }
    if (!has_network) continue;
    const int leaf_group = s / servers_per_leaf;
    for (int r = 0; r < net.nics_per_node; ++r) {
      const TopologyVertexId nic = add_vertex(VertexKind::nic, s * net.nics_per_node + r, s);
      const int w = r * switches_per_server / net.nics_per_node;
      connect(nic, switches[static_cast<std::size_t>(w)], LinkKind::pcie, net.nic_bandwidth, Seconds(0.0));
      const std::pair<int, int> key{leaf_group, rails ? r : 0};
      auto it = leaf_of.find(key);
      if (it == leaf_of.end()) {
        it = leaf_of.emplace(key, add_vertex(VertexKind::leaf, next_leaf++, -1)).first;
        if (net.tiers >= 2) {
          if (!spine_made) {
            spine = add_vertex(VertexKind::spine, 0, -1);
            spine_made = true;
          }
          // A leaf's uplinks carry its downlinks / oversubscription.
          const double downlinks = rails ? servers_per_leaf : static_cast<double>(servers_per_leaf) * net.nics_per_node;
          connect(it->second, spine, LinkKind::uplink, net.nic_bandwidth * (downlinks / oversubscription), switch_hop);
        }
      }
      connect(nic, it->second, LinkKind::network, net.nic_bandwidth, nic_hop);
    }
  }
}

std::size_t Topology::count(VertexKind kind) const {
  std::size_t n = 0;
  for (auto [it, end] = boost::vertices(m_graph); it != end; ++it) {
    if (m_graph[*it].kind == kind && !(kind == VertexKind::pcie_switch && m_graph[*it].index < 0)) ++n;
  }
  return n;
}

std::vector<TopologyVertexId> Topology::path(int from_gpu, int to_gpu) const {
  const TopologyVertexId source = gpu(from_gpu);
  const TopologyVertexId target = gpu(to_gpu);
  const std::size_t n = boost::num_vertices(m_graph);
  std::vector<TopologyVertexId> predecessor(n);
  std::vector<double> distance(n);
  auto weight = [this](const TopologyGraph::edge_descriptor& e) {
    return m_graph[e].latency.value() + kPerHopTieBreakSeconds;
  };
  boost::dijkstra_shortest_paths(
      m_graph, source,
      boost::predecessor_map(boost::make_iterator_property_map(predecessor.begin(), boost::get(boost::vertex_index, m_graph)))
          .distance_map(boost::make_iterator_property_map(distance.begin(), boost::get(boost::vertex_index, m_graph)))
          .weight_map(boost::make_function_property_map<TopologyGraph::edge_descriptor>(weight)));
  std::vector<TopologyVertexId> out;
  if (source != target && predecessor[target] == target) return out;  // unreachable
  for (TopologyVertexId v = target;; v = predecessor[v]) {
    out.push_back(v);
    if (v == source) break;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

int Topology::hop_count(int from_gpu, int to_gpu) const {
  const auto p = path(from_gpu, to_gpu);
  return p.empty() ? -1 : static_cast<int>(p.size()) - 1;
}

namespace {
std::pair<TopologyGraph::edge_descriptor, bool> edge_between(const TopologyGraph& g, TopologyVertexId a,
                                                             TopologyVertexId b) {
  return boost::edge(a, b, g);
}
}  // namespace

std::vector<LinkKind> Topology::links_on_path(int from_gpu, int to_gpu) const {
  const auto p = path(from_gpu, to_gpu);
  std::vector<LinkKind> out;
  for (std::size_t i = 1; i < p.size(); ++i) {
    const auto [e, found] = edge_between(m_graph, p[i - 1], p[i]);
    assert(found);
    out.push_back(m_graph[e].kind);
  }
  return out;
}

Seconds Topology::path_latency(int from_gpu, int to_gpu) const {
  const auto p = path(from_gpu, to_gpu);
  Seconds total;
  for (std::size_t i = 1; i < p.size(); ++i) total += m_graph[edge_between(m_graph, p[i - 1], p[i]).first].latency;
  return total;
}

Bandwidth Topology::bottleneck_bandwidth(const std::vector<int>& from, const std::vector<int>& to,
                                         unsigned links) const {
  // Integer capacities: Boost's push-relabel checks flow conservation with exact equality (an
  // assertion in debug builds), which floating-point capacities break. Megabytes per second keep
  // every link exact to 1 MB/s, far below any bandwidth we model.
  using Capacity = std::int64_t;
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, Capacity,
                      boost::property<boost::edge_residual_capacity_t, Capacity,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const std::size_t n = boost::num_vertices(m_graph);
  FlowGraph flow(n + 2);
  auto capacity = boost::get(boost::edge_capacity, flow);
  auto reverse = boost::get(boost::edge_reverse, flow);
  auto add_arc = [&](std::size_t u, std::size_t v, Capacity c) {
    const auto e = boost::add_edge(u, v, flow).first;
    const auto r = boost::add_edge(v, u, flow).first;
    capacity[e] = c;
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  };
  constexpr double kBytesPerSecondPerUnit = 1e6;
  Capacity total = 0;
  for (auto [it, end] = boost::edges(m_graph); it != end; ++it) {
    if ((link_bit(m_graph[*it].kind) & links) == 0) continue;
    const auto c = static_cast<Capacity>(std::llround(m_graph[*it].bandwidth.value() / kBytesPerSecondPerUnit));
    add_arc(boost::source(*it, m_graph), boost::target(*it, m_graph), c);
    total += c;
  }
  const std::size_t source = n;
  const std::size_t sink = n + 1;
  const Capacity unbounded = total + 1;  // more than any cut through the topology's own links
  for (int g : from) add_arc(source, gpu(g), unbounded);
  for (int g : to) add_arc(gpu(g), sink, unbounded);
  const Capacity units = boost::push_relabel_max_flow(flow, source, sink);
  return Bandwidth(static_cast<double>(units) * kBytesPerSecondPerUnit);
}

Bandwidth Topology::bisection_bandwidth() const {
  const int servers = gpu_count() / m_gpus_per_server;
  if (servers < 2) return Bandwidth(0.0);
  std::vector<int> left;
  std::vector<int> right;
  for (int g = 0; g < gpu_count(); ++g) (g / m_gpus_per_server < servers / 2 ? left : right).push_back(g);
  return bottleneck_bandwidth(left, right);
}

std::string describe(const NetworkSpec& network) {
  if (network.fabric == FabricKind::none || network.nics_per_node <= 0) return "no scale-out network";
  auto number = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  std::string transport;
  switch (network.transport) {
    case Transport::infiniband: transport = "InfiniBand"; break;
    case Transport::roce: transport = "RoCE"; break;
    case Transport::efa: transport = "EFA"; break;
    case Transport::tcpxo: transport = "GPUDirect-TCPXO"; break;
    case Transport::nvlink: transport = "NVLink"; break;
  }
  std::string out = std::to_string(network.nics_per_node) + " x " + number(network.nic_bandwidth.value() * 8.0 / 1e9) +
                    " Gb/s " + transport + " per node, " + std::to_string(network.tiers) + "-tier " +
                    (network.fabric == FabricKind::rail_optimized_fat_tree ? "rail-optimized fat tree" : "fat tree") +
                    ", " + number(std::max(network.oversubscription, 1.0)) + ":1";
  if (network.in_network_reduction) out += ", SHARP";
  return out;
}

FabricFigures derive_fabric_figures(const SystemSpec& system) {
  FabricFigures f = fabric_figures(system);
  const int servers_per_domain = f.domain_gpus / f.server_gpus;
  std::vector<int> domain0;
  std::vector<int> domain1;
  for (int g = 0; g < f.domain_gpus; ++g) {
    domain0.push_back(g);
    domain1.push_back(g + f.domain_gpus);
  }
  // One GPU's link into its domain: NVLink only on NVLink systems (NCCL does not add PCIe to it),
  // the PCIe tree otherwise; network switched off.
  {
    SystemSpec isolated = system;
    isolated.network.fabric = FabricKind::none;
    const Topology one(isolated, servers_per_domain);
    if (f.domain_gpus >= 2) {
      // Flow from one GPU to all its peers: bounded by its own link (NVLink, or PCIe via the host).
      std::vector<int> peers(domain0.begin() + 1, domain0.end());
      const unsigned links = f.nvlink ? link_bit(LinkKind::nvlink) : link_bit(LinkKind::pcie);
      f.gpu_link = one.bottleneck_bandwidth({0}, peers, links);
    }
  }
  if (system.network.fabric == FabricKind::none || system.network.nics_per_node <= 0) {
    f.domain_network = Bandwidth(0.0);
    f.domain_uplink = Bandwidth(0.0);
    return f;
  }
  // Two domains under one leaf group, then under two (one domain per leaf group).
  SystemSpec same_leaf = system;
  same_leaf.network.nodes_per_leaf = 2 * servers_per_domain;
  f.domain_network = Topology(same_leaf, 2 * servers_per_domain).bottleneck_bandwidth(domain0, domain1);
  SystemSpec two_leaves = system;
  two_leaves.network.nodes_per_leaf = servers_per_domain;
  f.domain_uplink = system.network.tiers >= 2
                        ? Topology(two_leaves, 2 * servers_per_domain).bottleneck_bandwidth(domain0, domain1)
                        : f.domain_network;
  return f;
}

}  // namespace stepcast
