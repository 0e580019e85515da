#pragma once
// Collective communication: which operation, over which group, and the interface every
// collective cost model implements.
//
// Message size follows nccl-tests' conventions (NVIDIA/nccl-tests doc/PERFORMANCE.md):
//   all_reduce, broadcast, reduce, send_recv: the buffer size S on each rank;
//   all_gather: the total gathered output (sendcount * nranks);
//   reduce_scatter: the total input (recvcount * nranks);
//   all_to_all: count * nranks, the whole per-rank send buffer.
// algbw = S / t; busbw = algbw * factor(op, n) (see bus_bandwidth_factor below).

#include <string_view>

#include "model/units.h"

namespace stepcast {

enum class CollectiveOp { all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv };

constexpr std::string_view to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce: return "all_reduce";
    case CollectiveOp::all_gather: return "all_gather";
    case CollectiveOp::reduce_scatter: return "reduce_scatter";
    case CollectiveOp::broadcast: return "broadcast";
    case CollectiveOp::reduce: return "reduce";
    case CollectiveOp::all_to_all: return "all_to_all";
    case CollectiveOp::send_recv: return "send_recv";
  }
  return "?";
}

// nccl-tests' bus-bandwidth factor (src/*.cu, *GetBw): busbw = algbw * factor.
constexpr double bus_bandwidth_factor(CollectiveOp op, int ranks) {
  const double n = ranks;
  switch (op) {
    case CollectiveOp::all_reduce: return 2.0 * (n - 1.0) / n;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_to_all: return (n - 1.0) / n;
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce:
    case CollectiveOp::send_recv: return 1.0;
  }
  return 1.0;
}

// Where a group's ranks sit. Produced by placement (model/placement.h) from the parallel layout
// and the system; consumed by collective cost models.
struct GroupLayout {
  int size = 1;               // ranks in the group
  int ranks_per_node = 1;     // ranks of the group inside one node (same NVLink domain)
  int nodes = 1;              // nodes (NVLink domains) the group spans
  // Share of a node's NIC bandwidth this group can use while every group of its kind runs at
  // once: with TP=8 on 8-GPU nodes, the 8 DP groups each get one rail (1/8 of the node).
  double nic_share = 1.0;
  // Leaf switches the group's nodes span: >1 means traffic crosses the spine, where
  // oversubscription applies.
  int leaf_domains = 1;

  [[nodiscard]] bool spans_nodes() const { return nodes > 1; }
  bool operator==(const GroupLayout&) const = default;
};

// A collective cost model: the time of one collective call on one group. Implementations are
// registered by name (e.g. "nccl", the default, and "alpha-beta", the plain model kept to
// measure what the detailed one buys).
class CollectiveModel {
 public:
  virtual ~CollectiveModel() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Time for `op` moving `size` bytes (nccl-tests convention above) on `group`.
  [[nodiscard]] virtual Seconds time(CollectiveOp op, Bytes size, const GroupLayout& group) const = 0;
};

}  // namespace stepcast
