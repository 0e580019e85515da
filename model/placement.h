#pragma once
// Placement: which GPUs each parallel group occupies, and what that means for its links.
//
// Ranks map to GPUs in order (rank r is GPU r; GPU g sits on server g / gpus_per_node). The
// parallel dimensions vary from fastest to slowest as ParallelConfig::order says, Megatron's
// "tp-cp-ep-dp-pp" by default: TP ranks are adjacent (inside a node), PP stages furthest apart.
// All groups of one kind are translates of the group holding rank 0, so describing that group
// describes them all.
//
// Two layouts share the ranks (Megatron-Core's "MoE parallel folding", megatron/core/
// parallel_state.py, which builds one RankGenerator for each):
//   attention and dense layers   tp, cp, dp, pp in `order` (ep is skipped);
//   expert layers                etp (= expert_tp), ep, edp, pp in the same order, with cp = 1:
//                                the tp*cp*dp ranks of a pipeline stage regroup as
//                                expert_tp * ep * edp, edp = tp*cp*dp / (expert_tp*ep).
// With expert_tp = 1 an EP group is ep adjacent ranks (TP ranks included); with expert_tp = tp and
// cp = 1 it is the older layout where EP splits the data-parallel ranks (stride tp).
//
// For communication a "node" of GroupLayout is an NVLink domain: a server, or a whole GB200 NVL72
// rack (system.nvlink_domain_gpus > gpus_per_node), whose GPUs all reach each other over NVLink.

#include <string>
#include <vector>

#include "model/collective.h"
#include "model/hardware.h"
#include "model/parallel.h"
#include "model/prediction.h"

namespace stepcast {

class Topology;  // model/topology.h

// etp: tensor parallelism inside the expert layers; edp: their data parallelism (the ranks that
// hold the same experts and reduce their gradients together).
enum class ParallelDim { tp, cp, ep, dp, pp, etp, edp };

constexpr std::string_view to_string(ParallelDim d) {
  switch (d) {
    case ParallelDim::tp: return "tp";
    case ParallelDim::cp: return "cp";
    case ParallelDim::ep: return "ep";
    case ParallelDim::dp: return "dp";
    case ParallelDim::pp: return "pp";
    case ParallelDim::etp: return "etp";
    case ParallelDim::edp: return "edp";
  }
  return "?";
}

// Ranks of the group of kind `dim` that contains rank 0, in ring order. For pp this is every
// stage of one pipeline; ep, etp and edp are groups of the expert layout.
std::vector<int> group_members(ParallelDim dim, const ParallelConfig& parallel);
// The ranks that reduce the gradients of attention and dense-layer weights together: dp x cp
// (Megatron-Core's data-parallel group "with context parallelism": CP ranks hold the same weights
// and see different parts of the sequences).
std::vector<int> gradient_group_members(const ParallelConfig& parallel);
// The ranks of one pipeline stage: tp x cp x dp, Megatron-Core's amax reduction group
// (parallel_state.get_amax_reduction_group(with_context_parallel=True)), over which Transformer
// Engine's delayed scaling reduces its FP8 amaxes (layer_costs.h fp8_amax_reduction).
std::vector<int> amax_group_members(const ParallelConfig& parallel);
// tp x cp: the amax group under Megatron-Core's --tp-only-amax-red (get_amax_reduction_group with
// tp_only_amax_red and context parallelism).
std::vector<int> tp_amax_group_members(const ParallelConfig& parallel);

// Where the ranks sit: ranks per node, nodes spanned, NIC share, leaf switches crossed.
GroupLayout layout_of(const std::vector<int>& members, const SystemSpec& system);

// Shorthand: layout_of(group_members(dim, parallel), system).
GroupLayout layout_of(ParallelDim dim, const ParallelConfig& parallel, const SystemSpec& system);

// The two neighbouring pipeline stages that exchange activations (stage 0 and stage 1).
GroupLayout pipeline_neighbour_layout(const ParallelConfig& parallel, const SystemSpec& system);

// Human-readable placement, e.g. "inside NVLink (8 GPUs of one node)" or
// "16 nodes across rails (1 GPU per node, 1/8 of each node's NICs)".
std::string describe(const GroupLayout& layout, const SystemSpec& system);

// Which kinds of link a group's ring crosses, found on the topology graph: the path from each
// member to the next (and the last back to the first).
struct GroupLinks {
  bool nvlink = false;
  bool pcie = false;     // GPU-to-GPU over PCIe (no NVLink between them)
  bool network = false;  // through NICs and a leaf switch
  bool spine = false;    // through the spine (leaf uplinks)
  bool operator==(const GroupLinks&) const = default;
};
GroupLinks links_crossed(const std::vector<int>& members, const Topology& topology);
// "NVLink", "NVLink + network", "NVLink + network + spine", "none".
std::string describe(const GroupLinks& links);

// Every parallel group larger than one GPU, in the order tp, cp, ep, etp, dp, edp, pp (pp: the
// neighbouring stages that exchange activations; etp and edp only with expert parallelism,
// ep > 1), each with its layout description.
std::vector<GroupPlacement> placement_report(const ParallelConfig& parallel, const SystemSpec& system);
// One line for predict/explain: "TP: inside NVLink (8 GPUs of one node); DP: 16 nodes across
// rails (1 GPU per node, 1/8 of each node's NICs)".
std::string placement_summary(const ParallelConfig& parallel, const SystemSpec& system);

}  // namespace stepcast
