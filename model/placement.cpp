#include "model/placement.h"

#include "model/topology.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

namespace stepcast {
namespace {

// A dimension of a rank layout and its size.
struct DimSize {
  ParallelDim dim;
  int size;
};

// The names of `order` ("tp-cp-ep-dp-pp"), fastest first, mapped through `size_of_name`; a name
// whose size is 0 is left out.
template <class F>
std::vector<DimSize> dims_in_order(const std::string& order, F&& size_of_name) {
  std::vector<DimSize> dims;
  std::string_view text = order;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('-', start), text.size());
    const std::string_view name = text.substr(start, end - start);
    const DimSize d = size_of_name(name);
    if (d.size > 0) dims.push_back(d);
    start = end + 1;
  }
  return dims;
}

// Attention and dense layers: tp, cp, dp, pp in `order` (ep does not split them).
std::vector<DimSize> dense_dims(const ParallelConfig& p) {
  return dims_in_order(p.order, [&](std::string_view name) -> DimSize {
    if (name == "tp") return {ParallelDim::tp, p.tp};
    if (name == "cp") return {ParallelDim::cp, p.cp};
    if (name == "dp") return {ParallelDim::dp, p.dp};
    if (name == "pp") return {ParallelDim::pp, p.pp};
    return {ParallelDim::ep, 0};
  });
}

// Expert layers (Megatron-Core's "MoE parallel folding", megatron/core/parallel_state.py: a second
// RankGenerator over the same ranks and order with tp = expert_tp, cp = 1, ep, and
// dp = expert-data-parallel = tp*cp*dp / (expert_tp*ep)): the context-parallel ranks fold into
// the expert dimensions.
std::vector<DimSize> expert_dims(const ParallelConfig& p) {
  const int etp = std::max(p.expert_tensor_parallel(), 1);
  const int ep = std::max(p.ep, 1);
  const int edp = std::max(p.tp * p.cp * p.dp / (etp * ep), 1);
  bool has_ep = false;
  auto dims = dims_in_order(p.order, [&](std::string_view name) -> DimSize {
    if (name == "tp") return {ParallelDim::etp, etp};
    if (name == "ep") {
      has_ep = true;
      return {ParallelDim::ep, ep};
    }
    if (name == "dp") return {ParallelDim::edp, edp};
    if (name == "pp") return {ParallelDim::pp, p.pp};
    return {ParallelDim::cp, 0};
  });
  // An order without ep (a dense model, ep = 1): experts would sit right before dp.
  if (!has_ep) {
    const auto dp = std::find_if(dims.begin(), dims.end(), [](const DimSize& d) { return d.dim == ParallelDim::edp; });
    dims.insert(dp, DimSize{ParallelDim::ep, ep});
  }
  return dims;
}

bool is_expert_dim(ParallelDim dim) {
  return dim == ParallelDim::ep || dim == ParallelDim::etp || dim == ParallelDim::edp;
}

// Ranks of the group containing rank 0 that spans every dimension in `which` (fastest first).
std::vector<int> members_spanning(const std::vector<DimSize>& dims, std::initializer_list<ParallelDim> which) {
  std::vector<int> members{0};
  int stride = 1;
  for (const auto& d : dims) {
    if (std::find(which.begin(), which.end(), d.dim) != which.end() && d.size > 1) {
      std::vector<int> grown;
      grown.reserve(members.size() * static_cast<std::size_t>(d.size));
      for (int i = 0; i < d.size; ++i) {
        for (int m : members) grown.push_back(m + i * stride);
      }
      members = std::move(grown);
    }
    stride *= d.size;
  }
  return members;
}

}  // namespace

std::vector<int> group_members(ParallelDim dim, const ParallelConfig& parallel) {
  if (is_expert_dim(dim)) return members_spanning(expert_dims(parallel), {dim});
  return members_spanning(dense_dims(parallel), {dim});
}

std::vector<int> gradient_group_members(const ParallelConfig& parallel) {
  return members_spanning(dense_dims(parallel), {ParallelDim::cp, ParallelDim::dp});
}

std::vector<int> amax_group_members(const ParallelConfig& parallel) {
  return members_spanning(dense_dims(parallel), {ParallelDim::tp, ParallelDim::cp, ParallelDim::dp});
}

std::vector<int> tp_amax_group_members(const ParallelConfig& parallel) {
  return members_spanning(dense_dims(parallel), {ParallelDim::tp, ParallelDim::cp});
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
  const int etp = parallel.expert_tensor_parallel();
  const bool experts = parallel.ep > 1;
  const int edp = parallel.expert_data_parallel();
  const std::array<std::pair<ParallelDim, int>, 6> dims{{{ParallelDim::tp, parallel.tp},
                                                         {ParallelDim::cp, parallel.cp},
                                                         {ParallelDim::ep, parallel.ep},
                                                         {ParallelDim::etp, experts ? etp : 1},
                                                         {ParallelDim::dp, parallel.dp},
                                                         {ParallelDim::edp, experts ? edp : 1}}};
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
