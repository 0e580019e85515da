#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "validation/harness_grids.h"
#include "validation/harness_options.h"

using namespace stepcast;

namespace {
HarnessOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "stepcast-harness");
  return parse_harness_options(args);
}
}  // namespace

TEST_CASE("harness options parse commands, files and the stopping rule") {
  const HarnessOptions o = parse({"gemm", "--out", "g.json", "--precisions", "bf16,fp8", "--max-noise", "1",
                                  "--min-time", "0.25", "--timeout", "3", "--max-wall", "480", "--max-samples", "2000"});
  CHECK(o.command == "gemm");
  CHECK(o.out == "g.json");
  CHECK(o.precisions == std::vector<std::string>{"bf16", "fp8"});
  CHECK(o.stopping.max_noise == doctest::Approx(0.01));  // given in percent, like nvbench
  CHECK(o.stopping.min_time.value() == doctest::Approx(0.25));
  CHECK(o.stopping.timeout.value() == doctest::Approx(3.0));
  CHECK(o.max_wall_s == doctest::Approx(480.0));
  CHECK(o.stopping.max_samples == 2000);
  CHECK(default_output_path(parse({"memory"})) == "harness-memory.json");
}

TEST_CASE("sizes use nccl-tests suffixes, powers of 1024") {
  CHECK(parse_size("8") == 8);
  CHECK(parse_size("64K") == 65536);
  CHECK(parse_size("1M") == 1048576);
  CHECK(parse_size("1G") == 1073741824);
  const HarnessOptions o = parse({"collectives", "--sizes", "8:1G:2", "--ranks", "2,8"});
  // 8 B doubling to 1 GiB: 2^3 .. 2^30, 28 sizes (nccl-tests -b 8 -e 1G -f 2).
  const auto sizes = collective_sizes(o);
  CHECK(sizes.size() == 28);
  CHECK(sizes.front() == 8);
  CHECK(sizes.back() == 1073741824);
  CHECK(collective_group_sizes(o, 8) == std::vector<int>{2, 8});
  CHECK(collective_group_sizes(o, 4) == std::vector<int>{2});
}

TEST_CASE("default collective group sizes double up to all local GPUs") {
  const HarnessOptions o = parse({"collectives"});
  CHECK(collective_group_sizes(o, 8) == std::vector<int>{2, 4, 8});
  CHECK(collective_group_sizes(o, 6) == std::vector<int>{2, 4, 6});
  CHECK(collective_group_sizes(o, 1).empty());
}

TEST_CASE("bad command lines are usage errors that say what is wrong") {
  CHECK_THROWS_WITH_AS(parse({}), "no command given", HarnessUsageError);
  CHECK_THROWS_WITH_AS(parse({"gemms"}), doctest::Contains("'gemms' is not one of"), HarnessUsageError);
  CHECK_THROWS_WITH_AS(parse({"gemm", "--precisions", "fp9"}), doctest::Contains("'fp9'"), HarnessUsageError);
  CHECK_THROWS_WITH_AS(parse({"gemm", "--out"}), "--out needs a value", HarnessUsageError);
  CHECK_THROWS_WITH_AS(parse({"gemm", "--frobnicate"}), "unknown option '--frobnicate'", HarnessUsageError);
  CHECK_THROWS_AS(parse({"collectives", "--sizes", "1G:8"}), HarnessUsageError);
  CHECK_THROWS_AS(parse({"gemm", "--min-samples", "zero"}), HarnessUsageError);
  CHECK(parse({"--help"}).help);
}
