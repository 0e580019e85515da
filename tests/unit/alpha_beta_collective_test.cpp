#include <doctest/doctest.h>

#include "model/alpha_beta_collective.h"
#include "model/placement.h"
#include "tests/support/parallel_layout.h"

using namespace stepcast;
using test::parallel_layout;

namespace {
SystemSpec dgx_a100(int gpus) {
  SystemSpec s;
  s.gpus = gpus;
  s.gpus_per_node = 8;
  s.gpu.nvlink_bandwidth = units::gigabytes_per_second(300);
  s.intra_node_bandwidth = units::gigabytes_per_second(300);
  s.network.nics_per_node = 8;
  s.network.nic_bandwidth = units::gigabits_per_second(200);
  return s;  // zero latencies: pure bandwidth terms
}
}  // namespace

TEST_CASE("ring collectives inside NVLink move the nccl-tests bus-bandwidth volume at NVLink speed") {
  const CostParameters params;
  const auto sys = dgx_a100(8);
  const AlphaBetaCollectiveModel net(sys, params);
  const GroupLayout tp = layout_of(ParallelDim::tp, parallel_layout(8, 1, 1), sys);
  const Bytes size = units::gigabytes(1.0);
  const double busbw = 300e9 * params.nvlink_eta;
  // all-reduce 2(n-1)/n S / busbw, all-gather and reduce-scatter (n-1)/n S / busbw
  CHECK(net.time(CollectiveOp::all_reduce, size, tp).value() == doctest::Approx(2.0 * 7 / 8 * 1e9 / busbw));
  CHECK(net.time(CollectiveOp::all_gather, size, tp).value() == doctest::Approx(7.0 / 8 * 1e9 / busbw));
  CHECK(net.time(CollectiveOp::reduce_scatter, size, tp).value() == doctest::Approx(7.0 / 8 * 1e9 / busbw));
  // An all-reduce is a reduce-scatter followed by an all-gather.
  CHECK(net.time(CollectiveOp::all_reduce, size, tp).value() ==
        doctest::Approx((net.time(CollectiveOp::reduce_scatter, size, tp) + net.time(CollectiveOp::all_gather, size, tp)).value()));
}

TEST_CASE("a data-parallel group with one GPU per node gets one rail's NIC") {
  const CostParameters params;
  const auto sys = dgx_a100(1024);
  const AlphaBetaCollectiveModel net(sys, params);
  const GroupLayout dp = layout_of(ParallelDim::dp, parallel_layout(8, 8, 16), sys);
  REQUIRE(dp.ranks_per_node == 1);
  CHECK(net.bus_bandwidth(dp).value() == doctest::Approx(25e9 * params.network_eta));
  // A whole node's GPUs in one group share all eight NICs.
  const GroupLayout full_nodes = layout_of(ParallelDim::dp, parallel_layout(1, 1, 32), dgx_a100(32));
  CHECK(net.bus_bandwidth(full_nodes).value() == doctest::Approx(8 * 25e9 * params.network_eta));
}

TEST_CASE("moving a TP group across nodes makes its collectives slower; time grows with size") {
  const CostParameters params;
  const auto sys = dgx_a100(16);
  const AlphaBetaCollectiveModel net(sys, params);
  const GroupLayout inside = layout_of(ParallelDim::tp, parallel_layout(8, 1, 2), sys);
  const GroupLayout across = layout_of(ParallelDim::tp, parallel_layout(16, 1, 1), sys);
  const Bytes size = units::mib(64);
  CHECK(net.time(CollectiveOp::all_reduce, size, across) > net.time(CollectiveOp::all_reduce, size, inside));
  Seconds previous(0.0);
  for (double mib : {1.0, 8.0, 64.0, 512.0}) {
    const Seconds t = net.time(CollectiveOp::all_gather, units::mib(mib), inside);
    CHECK(t > previous);
    previous = t;
  }
  CHECK(net.time(CollectiveOp::all_reduce, size, layout_of(ParallelDim::tp, parallel_layout(1, 1, 16), sys)).value() == 0.0);
}
