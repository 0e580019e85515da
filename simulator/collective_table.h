#pragma once
// The table `stepcast collective` prints, in nccl-tests' layout (size, count, type, redop, root,
// time in us, algbw and busbw in GB/s) with the algorithm and protocol the model chose.
//
// Sizes follow nccl-tests (model/collective.h); count is in 4-byte floats like nccl-tests'
// default: size/4 for all-reduce, broadcast, reduce and send/recv, size/4/n (the per-rank count)
// for all-gather, reduce-scatter and all-to-all.

#include <string>
#include <string_view>
#include <vector>

#include "model/nccl_model.h"

namespace stepcast {

struct CollectiveSweep {
  CollectiveOp op = CollectiveOp::all_reduce;
  Bytes min_size = Bytes(8);
  Bytes max_size = units::gib(8);
  double step_factor = 2.0;  // nccl-tests -f
  AlgorithmFilter filter;    // --algo / --proto
};

struct CollectiveRow {
  Bytes size;
  long long count = 0;
  CollectiveEstimate estimate;
  double algbw_gbps = 0.0;
  double busbw_gbps = 0.0;
};

// Prices every size from min_size to max_size, multiplying by step_factor.
std::vector<CollectiveRow> sweep_collective(const NcclCollectiveModel& model, const GroupLayout& group,
                                            const CollectiveSweep& sweep);

// nccl-tests-style text; `title` lines are printed first, each prefixed with "# ".
std::string format_collective_table(const std::vector<CollectiveRow>& rows, const CollectiveSweep& sweep,
                                    const std::vector<std::string>& title);

// "8", "128K", "8M", "8G" (nccl-tests' binary multipliers), "8B", "64KiB", "128 MiB", "8GiB".
// Throws UsageError with the accepted forms.
Bytes parse_size_argument(std::string_view text);
// "MIN:MAX", e.g. "8B:8GiB"; a single size means MIN = MAX.
std::pair<Bytes, Bytes> parse_size_range(std::string_view text);
// "all_reduce", "allreduce", "all_reduce_perf", ... Throws UsageError listing the ops.
CollectiveOp parse_collective_op(std::string_view text);
CollectiveAlgorithm parse_algorithm(std::string_view text);
CollectiveProtocol parse_protocol(std::string_view text);

}  // namespace stepcast
