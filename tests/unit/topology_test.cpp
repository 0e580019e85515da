#include <doctest/doctest.h>

#include "model/topology.h"
#include "tests/support/reference_systems.h"

using namespace stepcast;
using namespace stepcast::test;

namespace {
double gbps(Bandwidth b) { return b.value() / 1e9; }
}  // namespace

TEST_CASE("a DGX H100 node has 8 GPUs on one NVSwitch, 4 PCIe switches and 8 NICs") {
  const Topology t(dgx_h100(2));
  CHECK(t.gpu_count() == 16);
  CHECK(t.count(VertexKind::nvswitch) == 2);
  CHECK(t.count(VertexKind::pcie_switch) == 8);  // 2 GPUs per switch, 2 servers
  CHECK(t.count(VertexKind::nic) == 16);
  CHECK(t.count(VertexKind::leaf) == 8);         // rail-optimized: one leaf per rail
  CHECK(t.count(VertexKind::spine) == 1);
}

TEST_CASE("GPUs of one node talk through the NVSwitch in two hops") {
  const Topology t(dgx_h100(2));
  CHECK(t.hop_count(0, 7) == 2);
  CHECK(t.links_on_path(0, 7) == std::vector<LinkKind>{LinkKind::nvlink, LinkKind::nvlink});
}

TEST_CASE("the same rail of two nodes under one leaf: GPU, PCIe, NIC, leaf, NIC, PCIe, GPU") {
  const Topology t(dgx_h100(2));
  CHECK(t.hop_count(0, 8) == 6);
  const auto links = t.links_on_path(0, 8);
  CHECK(std::count(links.begin(), links.end(), LinkKind::network) == 2);
  CHECK(std::count(links.begin(), links.end(), LinkKind::uplink) == 0);
}

TEST_CASE("nodes under different leaf switches meet at the spine") {
  SystemSpec s = dgx_h100(4);
  s.network.nodes_per_leaf = 2;
  const Topology t(s);
  const auto links = t.links_on_path(0, 3 * 8);
  CHECK(std::count(links.begin(), links.end(), LinkKind::uplink) == 2);
  CHECK(t.hop_count(0, 3 * 8) == 8);
}

TEST_CASE("the bottleneck between two DGX H100 nodes is their 8 x 400 Gb/s NICs") {
  const Topology t(dgx_h100(2));
  std::vector<int> a, b;
  for (int g = 0; g < 8; ++g) {
    a.push_back(g);
    b.push_back(8 + g);
  }
  // 8 NICs x 50 GB/s = 400 GB/s each way; PCIe (8 x 64 GB/s) and NVLink do not bind.
  CHECK(gbps(t.bottleneck_bandwidth(a, b)) == doctest::Approx(400.0));
  // One GPU to the other node: its own NIC plus the NICs it reaches over NVLink (PXN), so more
  // than one NIC; bounded by its NVLink + PCIe egress.
  CHECK(gbps(t.bottleneck_bandwidth({0}, b)) > 50.0);
  // Restricted to PCIe and the network, GPU 0 has only its PCIe switch's 2 NICs... and its own
  // 64 GB/s PCIe link binds.
  CHECK(gbps(t.bottleneck_bandwidth({0}, b, link_bit(LinkKind::pcie) | link_bit(LinkKind::network) |
                                               link_bit(LinkKind::uplink))) == doctest::Approx(64.0));
}

TEST_CASE("bisection bandwidth of a non-blocking fabric is half the servers' NICs; 4:1 cuts it by four") {
  SystemSpec s = dgx_h100(4);
  s.network.nodes_per_leaf = 2;
  // 2 servers x 8 NICs x 50 GB/s cross the bisection each way.
  CHECK(gbps(Topology(s).bisection_bandwidth()) == doctest::Approx(800.0));
  s.network.oversubscription = 4.0;
  CHECK(gbps(Topology(s).bisection_bandwidth()) == doctest::Approx(200.0));
}

TEST_CASE("a plain fat tree hangs every NIC of a leaf group on one leaf") {
  SystemSpec s = dgx_h100(4);
  s.network.fabric = FabricKind::fat_tree;
  s.network.nodes_per_leaf = 2;
  const Topology t(s);
  CHECK(t.count(VertexKind::leaf) == 2);
  CHECK(gbps(t.bisection_bandwidth()) == doctest::Approx(800.0));
}

TEST_CASE("a GB200 NVL72 rack is one NVLink domain across 18 trays") {
  const Topology t(gb200_nvl72(2, true));
  CHECK(t.gpu_count() == 144);
  CHECK(t.count(VertexKind::nvswitch) == 2);
  CHECK(t.hop_count(0, 71) == 2);  // tray 0 to tray 17 over NVLink
  CHECK(t.links_on_path(0, 71) == std::vector<LinkKind>{LinkKind::nvlink, LinkKind::nvlink});
  const auto cross = t.links_on_path(0, 72);
  CHECK(std::count(cross.begin(), cross.end(), LinkKind::network) == 2);
}

TEST_CASE("GPUs without NVLink reach each other over PCIe through the host") {
  SystemSpec s = system(gpu(GpuArchitecture::ada, 0.0, 32.0), 1, 8, false, 0, 0.0);
  const Topology t(s);
  CHECK(t.count(VertexKind::nvswitch) == 0);
  const auto links = t.links_on_path(0, 7);
  CHECK(std::all_of(links.begin(), links.end(), [](LinkKind k) { return k == LinkKind::pcie; }));
  CHECK(gbps(t.bottleneck_bandwidth({0}, {7})) == doctest::Approx(32.0));
}

TEST_CASE("figures derived on the graph equal the spec arithmetic") {
  for (const SystemSpec& s : {dgx_a100(2), dgx_h100(2), aws_p4de(2), aws_p5(2), gcp_a4(2), gb200_nvl72(2, true)}) {
    const FabricFigures graph = derive_fabric_figures(s);
    const FabricFigures spec = fabric_figures(s);
    CHECK(gbps(graph.gpu_link) == doctest::Approx(gbps(spec.gpu_link)));
    CHECK(gbps(graph.domain_network) == doctest::Approx(gbps(spec.domain_network)));
    CHECK(gbps(graph.domain_uplink) == doctest::Approx(gbps(spec.domain_uplink)));
  }
  SystemSpec over = dgx_h100(2);
  over.network.oversubscription = 4.0;
  const FabricFigures f = derive_fabric_figures(over);
  CHECK(gbps(f.domain_network) == doctest::Approx(400.0));
  CHECK(gbps(f.domain_uplink) == doctest::Approx(100.0));
}

TEST_CASE("networks describe themselves in one line") {
  CHECK(describe(dgx_h100(2).network) == "8 x 400 Gb/s InfiniBand per node, 2-tier rail-optimized fat tree, 1:1");
  SystemSpec s = aws_p5(2);
  s.network.fabric = FabricKind::fat_tree;
  s.network.oversubscription = 4.0;
  CHECK(describe(s.network) == "32 x 100 Gb/s EFA per node, 2-tier fat tree, 4:1");
  CHECK(describe(system(h100(), 1, 8, true, 0, 0.0).network) == "no scale-out network");
}

TEST_CASE("PCIe binds when a GPU's host link is slower than its NIC; an unknown host link never binds") {
  // A100 (PCIe Gen4 x16, 32 GB/s) behind 8 x 400 Gb/s NICs: 8 x 32 = 256 GB/s leave the node, not 400.
  const SystemSpec slow_pcie = system(a100(), 2, 8, false, 8, 400.0);
  CHECK(gbps(derive_fabric_figures(slow_pcie).domain_network) == doctest::Approx(256.0));
  CHECK(gbps(fabric_figures(slow_pcie).domain_network) == doctest::Approx(256.0));
  SystemSpec unknown = slow_pcie;
  unknown.gpu.host_bandwidth = Bandwidth(0.0);
  CHECK(gbps(derive_fabric_figures(unknown).domain_network) == doctest::Approx(400.0));
  CHECK(gbps(fabric_figures(unknown).domain_network) == doctest::Approx(400.0));
}
