#include "model/placement.h"

#include "model/topology.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

namespace stepcast {
namespace {

// Sizes of the dimensions in `order`, with ep carved out of dp when ep > 1.
struct DimSize {
  ParallelDim dim;
  int size;
};

std::vector<DimSize> ordered_dims(const ParallelConfig& p) {
  std::vector<DimSize> dims;
  std::string_view order = p.order;
  std::size_t start = 0;
  while (start <= order.size()) {
    const std::size_t end = std::min(order.find('-', start), order.size());
    const std::string_view name = order.substr(start, end - start);
    if (name == "tp") dims.push_back({ParallelDim::tp, p.tp});
    else if (name == "cp") dims.push_back({ParallelDim::cp, p.cp});
    else if (name == "ep") dims.push_back({ParallelDim::ep, p.ep});
    else if (name == "dp") dims.push_back({ParallelDim::dp, p.ep > 0 ? p.dp / std::max(p.ep, 1) : p.dp});
    else if (name == "pp") dims.push_back({ParallelDim::pp, p.pp});
    start = end + 1;
  }
  // An order without ep means ep == 1 (dense model): dp keeps its whole size.
  const bool has_ep = std::any_of(dims.begin(), dims.end(), [](const DimSize& d) { return d.dim == ParallelDim::ep; });
  if (!has_ep) {
    for (auto& d : dims) {
      if (d.dim == ParallelDim::dp) d.size = p.dp;
    }
  }
  return dims;
}

int stride_of(ParallelDim dim, const std::vector<DimSize>& dims) {
  int stride = 1;
  for (const auto& d : dims) {
    if (d.dim == dim) return stride;
    stride *= d.size;
  }
  return stride;
}

int size_of(ParallelDim dim, const std::vector<DimSize>& dims) {
  for (const auto& d : dims) {
    if (d.dim == dim) return d.size;
  }
  return 1;
}

}  // namespace

std::vector<int> group_members(ParallelDim dim, const ParallelConfig& parallel) {
  const auto dims = ordered_dims(parallel);
  std::vector<int> members;
  if (dim == ParallelDim::dp) {
    // The data-parallel group of a dense layer spans ep x (dp / ep): both strides, ep fastest.
    const int ep_stride = stride_of(ParallelDim::ep, dims);
    const int dp_stride = stride_of(ParallelDim::dp, dims);
    const int ep = size_of(ParallelDim::ep, dims);
    const int rest = size_of(ParallelDim::dp, dims);
    const bool has_ep = ep > 1;
    for (int j = 0; j < rest; ++j) {
      for (int i = 0; i < (has_ep ? ep : 1); ++i) members.push_back(j * dp_stride + i * (has_ep ? ep_stride : 0));
    }
    return members;
  }
  const int stride = stride_of(dim, dims);
  const int size = size_of(dim, dims);
  members.reserve(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) members.push_back(i * stride);
  return members;
}

namespace {
int domain_size(const SystemSpec& system) { return std::max({system.gpus_per_node, system.nvlink_domain_gpus, 1}); }

}  // namespace

GroupLayout layout_of(const std::vector<int>& members, const SystemSpec& system) {
  GroupLayout layout;
  layout.size = static_cast<int>(members.size());
  const int per_server = std::max(system.gpus_per_node, 1);
  const int per_domain = domain_size(system);
  const int per_leaf = std::max(system.network.nodes_per_leaf, 1);
  std::map<int, int> count_per_domain;
  std::set<int> leaves;
  for (int rank : members) {
    ++count_per_domain[rank / per_domain];
    leaves.insert(rank / per_server / per_leaf);
  }
  layout.nodes = static_cast<int>(count_per_domain.size());
  layout.ranks_per_node = 0;
  for (const auto& [domain, count] : count_per_domain) layout.ranks_per_node = std::max(layout.ranks_per_node, count);
  // Every GPU of a domain belongs to one group of this kind, and all such groups communicate at
  // once, so a group owns the NICs of its own GPUs: ranks_per_node / GPUs of the domain.
  layout.nic_share = std::min(1.0, static_cast<double>(layout.ranks_per_node) / per_domain);
  // Groups inside one domain never touch the network, whatever leaf their servers hang from.
  layout.leaf_domains = layout.nodes > 1 ? static_cast<int>(leaves.size()) : 1;
  return layout;
}

GroupLayout layout_of(ParallelDim dim, const ParallelConfig& parallel, const SystemSpec& system) {
  return layout_of(group_members(dim, parallel), system);
}

GroupLayout pipeline_neighbour_layout(const ParallelConfig& parallel, const SystemSpec& system) {
  const auto stages = group_members(ParallelDim::pp, parallel);
  if (stages.size() < 2) return layout_of(std::vector<int>{0}, system);
  return layout_of(std::vector<int>{stages[0], stages[1]}, system);
}

std::string describe(const GroupLayout& layout, const SystemSpec& system) {
  std::ostringstream out;
  if (layout.size <= 1) return "none (1 GPU)";
  const int per_domain = domain_size(system);
  const bool racks = per_domain > std::max(system.gpus_per_node, 1);
  const char* unit = racks ? "NVLink domain" : "node";
  if (layout.nodes == 1) {
    out << "inside " << (system.gpu.nvlink_bandwidth.value() > 0 ? "NVLink" : "PCIe") << " (" << layout.size
        << " GPUs of one " << (racks ? std::to_string(per_domain) + "-GPU NVLink domain" : std::string("node")) << ")";
    return out.str();
  }
  out << layout.nodes << " " << unit << "s";
  if (layout.ranks_per_node == 1) {
    out << " across rails (1 GPU per " << unit;
  } else {
    out << " (" << layout.ranks_per_node << " GPUs per " << unit;
  }
  if (layout.ranks_per_node < per_domain) {
    out << ", " << layout.ranks_per_node << "/" << per_domain << " of each " << unit << "'s NICs";
  }
  out << ")";
  if (layout.leaf_domains > 1) {
    out << ", through the spine (" << layout.leaf_domains << " leaf switches";
    if (system.network.oversubscription > 1.0) out << ", " << system.network.oversubscription << ":1 oversubscribed";
    out << ")";
  }
  return out.str();
}

GroupLinks links_crossed(const std::vector<int>& members, const Topology& topology) {
  GroupLinks links;
  if (members.size() < 2) return links;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const int from = members[i];
    const int to = members[(i + 1) % members.size()];
    if (from == to) continue;
    for (LinkKind k : topology.links_on_path(from, to)) {
      switch (k) {
        case LinkKind::nvlink: links.nvlink = true; break;
        case LinkKind::pcie: break;
        case LinkKind::network: links.network = true; break;
        case LinkKind::uplink: links.spine = true; break;
      }
    }
  }
  // PCIe counts as a GPU-to-GPU link only where no NVLink joins the GPUs.
  if (!links.nvlink && !links.network) {
    links.pcie = true;
  }
  return links;
}

std::string describe(const GroupLinks& links) {
  std::string out;
  auto add = [&out](const char* what) {
    if (!out.empty()) out += " + ";
    out += what;
  };
  if (links.nvlink) add("NVLink");
  if (links.pcie) add("PCIe");
  if (links.network) add("network");
  if (links.spine) add("spine");
  return out.empty() ? std::string("none") : out;
}

std::vector<GroupPlacement> placement_report(const ParallelConfig& parallel, const SystemSpec& system) {
  std::vector<GroupPlacement> out;
  const std::array<std::pair<ParallelDim, int>, 4> dims{
      {{ParallelDim::tp, parallel.tp}, {ParallelDim::cp, parallel.cp}, {ParallelDim::ep, parallel.ep},
       {ParallelDim::dp, parallel.dp}}};
  for (const auto& [dim, size] : dims) {
    if (size <= 1) continue;
    const GroupLayout layout = layout_of(dim, parallel, system);
    out.push_back({std::string(to_string(dim)), layout.size, describe(layout, system)});
  }
  if (parallel.pp > 1) {
    const GroupLayout next = pipeline_neighbour_layout(parallel, system);
    out.push_back({"pp", parallel.pp, "stage to stage: " + describe(next, system)});
  }
  return out;
}

std::string placement_summary(const ParallelConfig& parallel, const SystemSpec& system) {
  std::string out;
  for (const auto& g : placement_report(parallel, system)) {
    if (!out.empty()) out += "; ";
    std::string name = g.group;
    for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    out += name + ": " + g.description;
  }
  return out.empty() ? std::string("1 GPU") : out;
}

}  // namespace stepcast
