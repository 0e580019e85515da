#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

#include "model/nccl_model.h"
#include "tests/support/reference_systems.h"

using namespace stepcast;
using namespace stepcast::test;

namespace {

GroupLayout group(int size, int per_domain, double nic_share = 1.0, int leaves = 1) {
  GroupLayout g;
  g.size = size;
  g.ranks_per_node = per_domain;
  g.nodes = (size + per_domain - 1) / per_domain;
  g.nic_share = nic_share;
  g.leaf_domains = leaves;
  return g;
}

double busbw_gbps(const NcclCollectiveModel& m, CollectiveOp op, Bytes size, const GroupLayout& g,
                  const AlgorithmFilter& f = {}) {
  const auto e = m.estimate(op, size, g, f);
  return size.value() / e.time.value() * bus_bandwidth_factor(op, g.size) / 1e9;
}

constexpr AlgorithmFilter ring_only(CollectiveProtocol p) { return {CollectiveAlgorithm::ring, p}; }

const std::vector<CollectiveOp> kOps{CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::reduce_scatter,
                                     CollectiveOp::broadcast,  CollectiveOp::reduce,     CollectiveOp::all_to_all,
                                     CollectiveOp::send_recv};

}  // namespace

TEST_CASE("bus bandwidth factors are nccl-tests' (doc/PERFORMANCE.md)") {
  CHECK(bus_bandwidth_factor(CollectiveOp::all_reduce, 8) == doctest::Approx(2.0 * 7.0 / 8.0));
  CHECK(bus_bandwidth_factor(CollectiveOp::all_gather, 8) == doctest::Approx(7.0 / 8.0));
  CHECK(bus_bandwidth_factor(CollectiveOp::reduce_scatter, 16) == doctest::Approx(15.0 / 16.0));
  CHECK(bus_bandwidth_factor(CollectiveOp::all_to_all, 4) == doctest::Approx(3.0 / 4.0));
  CHECK(bus_bandwidth_factor(CollectiveOp::broadcast, 8) == 1.0);
  CHECK(bus_bandwidth_factor(CollectiveOp::reduce, 8) == 1.0);
  CHECK(bus_bandwidth_factor(CollectiveOp::send_recv, 2) == 1.0);
}

TEST_CASE("ring latency follows NCCL's table: base + 2(n-1) NVLink hops") {
  const NcclCollectiveModel m(dgx_h100());
  // Ring/LL, 8 GPUs, NVLink: 6.6 + 14 x 0.6 = 15.0 us; Ring/Simple: 8.4 + 14 x 3.4 = 56.0 us.
  const auto ll = m.estimate(CollectiveOp::all_reduce, Bytes(8), group(8, 8), ring_only(CollectiveProtocol::ll));
  const auto simple =
      m.estimate(CollectiveOp::all_reduce, Bytes(8), group(8, 8), ring_only(CollectiveProtocol::simple));
  CHECK(ll.latency.value() * 1e6 == doctest::Approx(15.0));
  CHECK(simple.latency.value() * 1e6 == doctest::Approx(56.0));
  // All-gather takes n-1 steps: 6.6 + 7 x 0.6 = 10.8 us.
  const auto ag = m.estimate(CollectiveOp::all_gather, Bytes(64), group(8, 8), ring_only(CollectiveProtocol::ll));
  CHECK(ag.latency.value() * 1e6 == doctest::Approx(10.8));
}

TEST_CASE("ring busbw on H100 NVLink is NCCL's 18 x 20.6 GB/s (the '370 GB/s' of nccl-tests#212)") {
  const NcclCollectiveModel m(dgx_h100());
  // Steady-state ring algbw = busbw * n / (2(n-1)) with busbw = 450 GB/s * 20.6/25 = 370.8 GB/s.
  const auto e = m.estimate(CollectiveOp::all_reduce, units::gib(8), group(8, 8),
                            ring_only(CollectiveProtocol::simple));
  CHECK(e.bandwidth.value() / 1e9 == doctest::Approx(370.8 * 8.0 / 14.0));
  // At 8 GiB the latency and pipeline fill are < 1% of the time.
  CHECK(busbw_gbps(m, CollectiveOp::all_reduce, units::gib(8), group(8, 8), ring_only(CollectiveProtocol::simple)) ==
        doctest::Approx(370.8).epsilon(0.01));
}

TEST_CASE("NVLS all-reduce moves S(1 + 1/n) per GPU at NCCL's NVLS efficiency") {
  const NcclCollectiveModel m(dgx_h100());
  for (int n : {4, 6, 8}) {
    const auto e = m.estimate(CollectiveOp::all_reduce, units::gib(8), group(n, n),
                              {CollectiveAlgorithm::nvls, CollectiveProtocol::simple});
    REQUIRE(e.valid);
    // 370.8 GB/s x 0.85 (nvlsEfficiency, Hopper) x n/(n+1).
    CHECK(e.bandwidth.value() / 1e9 == doctest::Approx(370.8 * 0.85 * n / (n + 1.0)));
  }
  // No NVLS without NVLink SHARP, nor on Ampere.
  CHECK_FALSE(NcclCollectiveModel(dgx_a100())
                  .estimate(CollectiveOp::all_reduce, units::gib(1), group(8, 8), {CollectiveAlgorithm::nvls, {}})
                  .valid);
}

TEST_CASE("large messages are bandwidth-bound, tiny ones latency-bound") {
  const NcclCollectiveModel m(dgx_h100(2));
  const GroupLayout g = group(16, 8);
  const auto tiny = m.estimate(CollectiveOp::all_reduce, Bytes(8), g);
  const auto huge = m.estimate(CollectiveOp::all_reduce, units::gib(16), g);
  // 8 B: the transfer is under 1% of the time; 16 GiB: latency is under 1%.
  CHECK((tiny.time - tiny.latency) / tiny.time < 0.01);
  CHECK(huge.latency / huge.time < 0.01);
  // Bandwidth regime: time grows in proportion to size (2x bytes -> 2x time within 2%).
  const auto huge2 = m.estimate(CollectiveOp::all_reduce, units::gib(32), g);
  CHECK(huge2.time / huge.time == doctest::Approx(2.0).epsilon(0.02));
  // Latency regime: 8 B and 512 B cost the same within 5%.
  CHECK(m.estimate(CollectiveOp::all_reduce, Bytes(512), g).time / tiny.time == doctest::Approx(1.0).epsilon(0.05));
}

TEST_CASE("a larger message is never faster") {
  for (const SystemSpec& s : {dgx_a100(1), dgx_h100(1), dgx_h100(4), aws_p5(2), gcp_a3mega(2), gcp_a4(8),
                              gb200_nvl72(2, true)}) {
    const NcclCollectiveModel m(s);
    const FabricFigures& f = m.fabric();
    for (const GroupLayout& g : {group(8, 8), group(s.gpus, f.domain_gpus), group(s.gpus / 8, 1, 1.0 / 8.0),
                                 group(2, 1)}) {
      if (g.size < 2 || g.size > s.gpus) continue;
      for (CollectiveOp op : kOps) {
        double previous = 0.0;
        for (double bytes = 8.0; bytes <= 16.0 * 1024 * 1024 * 1024; bytes *= 1.25) {
          const double t = m.time(op, Bytes(bytes), g).value();
          INFO(std::string(to_string(op)), " size ", bytes, " ranks ", g.size, " per domain ", g.ranks_per_node);
          CHECK(t >= previous * (1.0 - 1e-12));
          previous = t;
        }
      }
    }
  }
}

TEST_CASE("more bandwidth is never slower") {
  for (CollectiveOp op : kOps) {
    for (double bytes : {8.0, 65536.0, 4.0 * 1024 * 1024, 1024.0 * 1024 * 1024}) {
      SystemSpec slow = dgx_h100(4);
      SystemSpec fast_nvlink = slow;
      fast_nvlink.gpu.nvlink_bandwidth *= 2.0;
      SystemSpec fast_nic = slow;
      fast_nic.network.nic_bandwidth *= 2.0;
      const GroupLayout g = group(32, 8);
      const double t = NcclCollectiveModel(slow).time(op, Bytes(bytes), g).value();
      INFO(std::string(to_string(op)), " ", bytes);
      CHECK(NcclCollectiveModel(fast_nvlink).time(op, Bytes(bytes), g).value() <= t);
      CHECK(NcclCollectiveModel(fast_nic).time(op, Bytes(bytes), g).value() <= t);
    }
  }
}

TEST_CASE("LL wins small all-reduces, LL128 medium ones on A100, NVLS/Simple large ones on H100") {
  const NcclCollectiveModel m(dgx_h100());
  const GroupLayout g = group(8, 8);
  CHECK(m.estimate(CollectiveOp::all_reduce, units::kib(4), g).protocol == CollectiveProtocol::ll);
  // A100: LL128's 92% of the ring beats Simple's higher latency at a few MiB.
  CHECK(NcclCollectiveModel(dgx_a100()).estimate(CollectiveOp::all_reduce, units::mib(4), g).protocol ==
        CollectiveProtocol::ll128);
  const auto big = m.estimate(CollectiveOp::all_reduce, units::gib(4), g);
  CHECK(big.algorithm == CollectiveAlgorithm::nvls);
  CHECK(big.protocol == CollectiveProtocol::simple);
  // Without NVLink SHARP the large all-reduce is a ring.
  SystemSpec off = dgx_h100();
  off.nvlink_sharp = false;
  CHECK(NcclCollectiveModel(off).estimate(CollectiveOp::all_reduce, units::gib(4), g).algorithm ==
        CollectiveAlgorithm::ring);
}

TEST_CASE("groups spanning nodes run hierarchically when that is faster") {
  const NcclCollectiveModel m(dgx_h100(2));
  // 2 nodes x 8 GPUs: NVLS-tree reduces inside each node over NVLink SHARP, then crosses the
  // network once, beating a flat 16-rank ring at large sizes.
  const auto e = m.estimate(CollectiveOp::all_reduce, units::gib(4), group(16, 8));
  CHECK(e.algorithm == CollectiveAlgorithm::nvls_tree);
  // On A100 (no NVLS) the tree wins at 2 nodes: it can exceed the NICs' bandwidth, as NCCL's
  // maintainers note (nccl-tests#290), where a ring cannot.
  const NcclCollectiveModel a(dgx_a100(2));
  const auto t = a.estimate(CollectiveOp::all_reduce, units::gib(4), group(16, 8));
  CHECK(t.algorithm == CollectiveAlgorithm::tree);
  CHECK(busbw_gbps(a, CollectiveOp::all_reduce, units::gib(4), group(16, 8)) > 8 * 25.0 * 0.94);
}

TEST_CASE("PAT serves all-gather with one GPU per node; CollNet needs in-network reduction") {
  const NcclCollectiveModel m(dgx_h100(16));
  const auto pat = m.estimate(CollectiveOp::all_gather, units::kib(64), group(16, 1, 1.0 / 8.0),
                              {CollectiveAlgorithm::pat, {}});
  CHECK(pat.valid);
  CHECK_FALSE(m.estimate(CollectiveOp::all_gather, units::kib(64), group(16, 8), {CollectiveAlgorithm::pat, {}}).valid);
  CHECK_FALSE(
      m.estimate(CollectiveOp::all_reduce, units::mib(64), group(128, 8), {CollectiveAlgorithm::collnet_direct, {}})
          .valid);
  SystemSpec sharp = dgx_h100(16);
  sharp.network.in_network_reduction = true;
  CHECK(NcclCollectiveModel(sharp)
            .estimate(CollectiveOp::all_reduce, units::mib(64), group(128, 8), {CollectiveAlgorithm::collnet_direct, {}})
            .valid);
}

TEST_CASE("concurrent groups share their NICs: eight DP rings on one node's rails") {
  const NcclCollectiveModel m(dgx_h100(16));
  // A DP group of 16 nodes x 1 GPU while the 7 other DP groups of its node run too (TP=8): it owns
  // one of the 8 NICs. Alone on the node it could use them all.
  const double shared = busbw_gbps(m, CollectiveOp::all_reduce, units::gib(1), group(16, 1, 1.0 / 8.0));
  const double alone = busbw_gbps(m, CollectiveOp::all_reduce, units::gib(1), group(16, 1, 1.0));
  // One NDR NIC at NCCL's 0.94: ~47 GB/s ("46-48 GB/s per NIC", nccl-tests#290), within 10%.
  CHECK(shared == doctest::Approx(47.0).epsilon(0.10));
  CHECK(alone > 4.0 * shared);
}

TEST_CASE("a 4:1 oversubscribed spine slows groups that cross it and leaves others alone") {
  SystemSpec s = dgx_h100(64);
  s.network.oversubscription = 4.0;
  const NcclCollectiveModel over(s);
  const NcclCollectiveModel flat(dgx_h100(64));
  const GroupLayout across = group(64, 1, 1.0 / 8.0, 2);  // DP over 64 nodes, two leaf groups
  const double ratio = over.time(CollectiveOp::all_reduce, units::gib(1), across) /
                       flat.time(CollectiveOp::all_reduce, units::gib(1), across);
  CHECK(ratio > 3.0);
  const GroupLayout inside = group(8, 8);  // TP inside a node
  CHECK(over.time(CollectiveOp::all_reduce, units::mib(64), inside) ==
        flat.time(CollectiveOp::all_reduce, units::mib(64), inside));
}

TEST_CASE("send/recv and all-to-all ride NVLink inside a node and the NICs across nodes") {
  const NcclCollectiveModel m(dgx_h100(2));
  const double inside = m.time(CollectiveOp::send_recv, units::gib(1), group(2, 2)).value();
  const double across = m.time(CollectiveOp::send_recv, units::gib(1), group(2, 1, 1.0 / 8.0)).value();
  // 1 GiB over 370.8 GB/s of NVLink against one NIC at 47 GB/s.
  CHECK(inside == doctest::Approx(1.0737e9 / 370.8e9).epsilon(0.02));
  CHECK(across == doctest::Approx(1.0737e9 / 47.0e9).epsilon(0.02));
  CHECK(m.estimate(CollectiveOp::all_to_all, units::mib(64), group(16, 8)).algorithm == CollectiveAlgorithm::p2p);
}

TEST_CASE("forcing an algorithm and protocol, like NCCL_ALGO and NCCL_PROTO") {
  const NcclCollectiveModel m(dgx_h100());
  const auto e = m.estimate(CollectiveOp::all_reduce, units::mib(1), group(8, 8),
                            {CollectiveAlgorithm::tree, CollectiveProtocol::ll128});
  CHECK(e.valid);
  CHECK(e.algorithm == CollectiveAlgorithm::tree);
  CHECK(e.protocol == CollectiveProtocol::ll128);
  // NVLS has only Simple.
  CHECK_FALSE(m.estimate(CollectiveOp::all_reduce, units::mib(1), group(8, 8),
                         {CollectiveAlgorithm::nvls, CollectiveProtocol::ll})
                  .valid);
}

TEST_CASE("a ring across nodes moves at most its channels x the per-channel rate; NCCL_MIN_CTAS lifts it to the NICs") {
  // 4 x DGX H100, 8 x 400 Gb/s: NCCL runs 16 ring channels (8 search channels at 48 GB/s, doubled
  // by ncclTopoPostset). The NICs move 8 x 50 x 0.94 = 376 GB/s; 16 x 22.9 = 366.4 GB/s binds.
  const NcclCollectiveModel m(dgx_h100(4));
  const GroupLayout g = group(32, 8);
  const AlgorithmFilter ring = ring_only(CollectiveProtocol::simple);
  const auto ring_busbw = [&](const NcclCollectiveModel& model, AlgorithmFilter f) {
    const auto e = model.estimate(CollectiveOp::all_reduce, units::gib(8), g, f);
    return e.bandwidth.value() * bus_bandwidth_factor(CollectiveOp::all_reduce, 32) / 1e9;
  };
  CHECK(ring_busbw(m, ring) == doctest::Approx(16 * 22.9));
  // NCCL_MIN_CTAS=24: 24 x 22.9 is past the NICs, which bind at 376 GB/s; the GPUs' NVLink
  // (18 x 20.6 = 370.8) does not, since a channel crosses only 7 of each node's 8 GPUs by NVLink
  // (370.8 x 8/7 = 423.8). nccl-tests#309 measured 391-393 GB/s with 24 CTAs.
  AlgorithmFilter ctas24 = ring;
  ctas24.min_channels = 24;
  CHECK(ring_busbw(m, ctas24) == doctest::Approx(376.0));
  // NCCL_MAX_CTAS=8 halves the channels and the cap.
  AlgorithmFilter ctas8 = ring;
  ctas8.max_channels = 8;
  CHECK(ring_busbw(m, ctas8) == doctest::Approx(8 * 22.9));
  // Without a known per-channel rate the NICs bind.
  NcclParameters uncapped;
  uncapped.ring_net_channel_gbps[index_of(NcclGeneration::hopper)] = 0.0;
  CHECK(ring_busbw(NcclCollectiveModel(dgx_h100(4), uncapped), ring) == doctest::Approx(376.0));
  // Inside one node there is no such cap: NVLink's 370.8 GB/s.
  CHECK(busbw_gbps(NcclCollectiveModel(dgx_h100()), CollectiveOp::all_reduce, units::gib(8), group(8, 8), ring) ==
        doctest::Approx(370.8).epsilon(0.02));
  // One DP rail (TP=8): NCCL runs 4 channels on one 400 Gb/s NIC (1 search channel, doubled by
  // ncclTopoDupChannels at 48 >= 25 GB/s, then by ncclTopoPostset): 4 x 22.9 > 47, the NIC binds.
  const auto rail = m.estimate(CollectiveOp::all_reduce, units::gib(8), group(4, 1, 1.0 / 8.0), ring);
  CHECK(rail.bandwidth.value() * bus_bandwidth_factor(CollectiveOp::all_reduce, 4) / 1e9 ==
        doctest::Approx(47.0));
}

TEST_CASE("a group across nodes with no network never completes") {
  const NcclCollectiveModel m(system(h100(), 2, 8, true, 0, 0.0));
  CHECK(std::isinf(m.time(CollectiveOp::all_reduce, units::mib(1), group(16, 8)).value()));
  CHECK_FALSE(m.estimate(CollectiveOp::all_reduce, units::mib(1), group(16, 8)).valid);
}

TEST_CASE("one GPU has nothing to communicate") {
  const NcclCollectiveModel m(dgx_h100());
  CHECK(m.time(CollectiveOp::all_reduce, units::gib(1), group(1, 1)).value() == 0.0);
}

TEST_CASE("the parameter visitor names every constant once and edits reach the model") {
  NcclParameters p;
  std::set<std::string> names;
  int count = 0;
  p.for_each_parameter([&](const std::string& name, double&, std::string_view unit, std::string_view source) {
    names.insert(name);
    ++count;
    CHECK_FALSE(unit.empty());
    CHECK_FALSE(source.empty());
  });
  CHECK(static_cast<int>(names.size()) == count);
  CHECK(names.count("hw_latency_us.net.ring.simple") == 1);
  CHECK(names.count("nvls_efficiency.hopper") == 1);
  CHECK(names.count("transport_latency_us.efa") == 1);
  // Doubling the NVLink ring latency through the visitor doubles the hop part of the latency.
  p.for_each_parameter([](const std::string& name, double& v, std::string_view, std::string_view) {
    if (name == "hw_latency_us.nvlink.ring.ll") v *= 2.0;
  });
  const NcclCollectiveModel m(dgx_h100(), p);
  const auto e = m.estimate(CollectiveOp::all_reduce, Bytes(8), group(8, 8), ring_only(CollectiveProtocol::ll));
  CHECK(e.latency.value() * 1e6 == doctest::Approx(6.6 + 14 * 1.2));
}
