#pragma once
// Reader for nccl-tests `*_perf` output (NVIDIA/nccl-tests), the logs users already have.
//
// Accepts what people actually post:
//   - the standard table, out-of-place and in-place groups, or out-of-place only;
//   - with or without the `root` column (nccl-tests < 2.13 has none) and with `#wrong`, `error`
//     (older), or no check column; `N/A` when validation is off;
//   - rank prefixes added by launchers ("0: ", " 0: " from srun -l, "[0] " from mpirun);
//   - author-reduced tables of `size time algbw busbw`, sizes written with `_` separators;
//   - interleaved noise (Open MPI help messages, NCCL INFO lines, shell prompts);
//   - the metadata header of the project's fixtures (`# key: value` lines, then the log between
//     `# ---- BEGIN RAW` and `# ---- END RAW`).
// Units as printed by nccl-tests: time in microseconds, algbw/busbw in GB/s (1e9 B/s), size in
// bytes (all_gather: total output; reduce_scatter: total input; see model/collective.h).
//
// A row that starts like a result (a byte size followed by a count and a type, or a number in a
// reduced table) but cannot be read, or whose algbw disagrees with size/time, is an error: every
// such row of the file is reported at once (InputError with file:line), never skipped.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/collective.h"
#include "model/units.h"

namespace stepcast {

struct NcclTestsMeasurement {
  Seconds time;
  double algbw_gbps = 0.0;  // as printed (GB/s)
  double busbw_gbps = 0.0;
  std::optional<double> wrong;  // #wrong count or the older `error` value; empty when N/A or absent
};

struct NcclTestsRow {
  Bytes size;
  long long count = 0;   // elements; 0 in reduced tables
  std::string type;      // "float"; empty in reduced tables
  std::string redop;     // "sum", "none"
  long long root = -1;
  NcclTestsMeasurement out_of_place;
  std::optional<NcclTestsMeasurement> in_place;
  int line = 0;          // 1-based line in the file
};

struct NcclTestsLog {
  std::string source;                          // the path or name it was read from
  std::map<std::string, std::string> metadata;  // fixture header `# key: value` lines
  std::optional<CollectiveOp> op;              // from the header, `*_perf` command or metadata
  int ranks = 0;                               // device-list rank count; 0 when not listed
  int threads = 0;                             // nThread; 0 when not printed
  int gpus_per_thread = 0;                     // nGpus (-g): >1 means one thread drove several GPUs
  std::string nccl_version;                    // "2.26.6+cuda12.8", "2.19.3"; empty when not printed
  bool reduced_table = false;                  // author kept only size/time/algbw/busbw
  // NCCL_* environment settings the log records: the fixture header's `env:` line, NCCL_DEBUG
  // lines "NCCL_X set by environment to V", and launch commands (`-x NCCL_X=V`, or a leading
  // `NCCL_X=V`) in the header's `command:` line or the log. collective_dataset() honours
  // NCCL_NVLS_ENABLE=0, NCCL_ALGO, NCCL_PROTO and the channel bounds (NCCL_MIN/MAX_CTAS).
  std::map<std::string, std::string> nccl_env;
  std::vector<NcclTestsRow> rows;
};

// Parses a log held in memory. `source` names it in error messages.
NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& source);
// Reads and parses a file; a missing or unreadable file is an InputError too.
NcclTestsLog read_nccl_tests_log(const std::filesystem::path& path);

// nccl-tests' binary names to ops: "all_reduce_perf" or "all_reduce" -> all_reduce,
// "alltoall" -> all_to_all, "sendrecv" -> send_recv. Empty for ops stepcast does not model
// (gather, scatter, hypercube).
std::optional<CollectiveOp> collective_op_from_name(std::string_view name);

// The rank count implied by a row's busbw/algbw ratio and the op's bus factor (2(n-1)/n for
// all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all); 0 when the ratio does not
// determine it (factor 1 ops, or bandwidths printed as 0.00).
int ranks_implied_by_bus_factor(CollectiveOp op, const NcclTestsMeasurement& m);

}  // namespace stepcast
