#pragma once
// The command line of stepcast-harness, parsed without third-party libraries (the harness builds
// on bare CUDA machines). Host-only; unit-tested.
//
//   stepcast-harness gemm|attention|elementwise|memory|collectives|selftest|all [options]
//
// Sizes accept nccl-tests' suffixes K, M, G (powers of 1024): --sizes 8:1G:2 sweeps 8 B to 1 GiB
// doubling each step, like nccl-tests -b 8 -e 1G -f 2. Bad arguments throw HarnessUsageError,
// which main() turns into exit code 2 with the usage text.

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "validation/stopping_criterion.h"
#include "validation/throttle.h"

namespace stepcast {

class HarnessUsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct HarnessOptions {
  std::string command;                    // gemm attention elementwise memory collectives selftest all
  std::optional<std::string> out;         // --out FILE; default harness-<command>.json
  int device = 0;                         // --device N
  std::optional<std::string> scenario;    // --scenario FILE
  bool quick = false;                     // --quick: small grids, a smoke test
  bool list = false;                      // --list: print the points, measure nothing
  bool help = false;
  bool version = false;
  std::vector<std::string> precisions;    // --precisions fp32,tf32,fp16,bf16,fp8,int8 (gemm)
  std::vector<std::string> ops;           // --ops (collective or elementwise names; attention directions)
  std::int64_t min_bytes = 8;             // --sizes MIN:MAX[:FACTOR] (collectives)
  std::int64_t max_bytes = std::int64_t{1} << 30;
  std::int64_t size_factor = 2;
  std::vector<int> ranks;                 // --ranks 2,4,8 (collective group sizes); empty: 2,4,.. all
  StoppingRule stopping;                  // --max-noise --min-time --min-samples --timeout --max-samples
  ThrottleRule throttle;                  // --throttle-threshold
  double max_wall_s = 0.0;                // --max-wall S: start no new point after S seconds; 0 = none
  bool l2_flush = true;                   // --no-l2-flush
  std::vector<std::string> argv;          // as given, for provenance
};

inline const std::vector<std::string> kHarnessCommands = {"gemm", "attention", "elementwise", "memory",
                                                          "collectives", "selftest", "all"};

HarnessOptions parse_harness_options(std::span<const std::string> args);  // args[0] is the program
std::string harness_usage();

// "8", "64K", "1M", "1G" -> bytes (powers of 1024, as nccl-tests parses sizes).
std::int64_t parse_size(const std::string& text);

std::string default_output_path(const HarnessOptions& options);

}  // namespace stepcast
