#include <doctest/doctest.h>

#include "simulator/collective_table.h"
#include "simulator/diagnostics.h"
#include "tests/support/reference_systems.h"

using namespace stepcast;

TEST_CASE("sizes read like nccl-tests' -b/-e and with units") {
  CHECK(parse_size_argument("8").value() == 8.0);
  CHECK(parse_size_argument("8B").value() == 8.0);
  CHECK(parse_size_argument("128K").value() == 131072.0);
  CHECK(parse_size_argument("64KiB").value() == 65536.0);
  CHECK(parse_size_argument("128 MiB").value() == 134217728.0);
  CHECK(parse_size_argument("8G").value() == 8589934592.0);
  CHECK(parse_size_argument("8GiB").value() == 8589934592.0);
  CHECK(parse_size_argument("1GB").value() == 1e9);
  const auto [lo, hi] = parse_size_range("8B:8GiB");
  CHECK(lo.value() == 8.0);
  CHECK(hi.value() == 8589934592.0);
  CHECK_THROWS_AS(parse_size_argument("eight"), UsageError);
  CHECK_THROWS_AS(parse_size_argument("8 parsecs"), UsageError);
  CHECK_THROWS_AS(parse_size_range("8G:8"), UsageError);
}

TEST_CASE("ops, algorithms and protocols read by nccl-tests' and NCCL's names") {
  CHECK(parse_collective_op("all_reduce") == CollectiveOp::all_reduce);
  CHECK(parse_collective_op("allgather") == CollectiveOp::all_gather);
  CHECK(parse_collective_op("alltoall_perf") == CollectiveOp::all_to_all);
  CHECK_THROWS_WITH_AS(parse_collective_op("all_reduse"), doctest::Contains("did you mean 'all_reduce'"), UsageError);
  CHECK(parse_algorithm("NVLSTree") == CollectiveAlgorithm::nvls_tree);
  CHECK(parse_algorithm("ring") == CollectiveAlgorithm::ring);
  CHECK(parse_protocol("Simple") == CollectiveProtocol::simple);
  CHECK(parse_protocol("ll128") == CollectiveProtocol::ll128);
  CHECK_THROWS_AS(parse_protocol("fast"), UsageError);
}

TEST_CASE("the table has nccl-tests' columns, one row per size, and busbw = algbw x 2(n-1)/n") {
  const NcclCollectiveModel model(test::dgx_h100(2));
  GroupLayout g;
  g.size = 16;
  g.ranks_per_node = 8;
  g.nodes = 2;
  CollectiveSweep sweep;
  sweep.min_size = Bytes(8);
  sweep.max_size = units::gib(8);
  const auto rows = sweep_collective(model, g, sweep);
  CHECK(rows.size() == 31);  // 8 B .. 8 GiB by factors of 2
  CHECK(rows.front().count == 2);
  CHECK(rows.back().busbw_gbps == doctest::Approx(rows.back().algbw_gbps * 2.0 * 15.0 / 16.0));
  const std::string text = format_collective_table(rows, sweep, {"title line"});
  CHECK(text.find("# title line") == 0);
  CHECK(text.find("#       size         count      type   redop    root     time   algbw   busbw") != std::string::npos);
  CHECK(text.find("  8589934592    2147483648     float     sum      -1") != std::string::npos);
  // All-gather counts are per rank: 8 GiB / 4 B / 16 ranks.
  sweep.op = CollectiveOp::all_gather;
  sweep.min_size = units::gib(8);
  CHECK(sweep_collective(model, g, sweep).front().count == 134217728);
}

TEST_CASE("a forced algorithm that cannot run says so in its row") {
  const NcclCollectiveModel model(test::dgx_a100(1));
  GroupLayout g;
  g.size = 8;
  g.ranks_per_node = 8;
  CollectiveSweep sweep;
  sweep.min_size = sweep.max_size = units::mib(1);
  sweep.filter.algorithm = CollectiveAlgorithm::nvls;  // A100 has no NVLink SHARP
  const auto rows = sweep_collective(model, g, sweep);
  CHECK_FALSE(rows.front().estimate.valid);
  CHECK(format_collective_table(rows, sweep, {}).find("no algorithm/protocol") != std::string::npos);
}
