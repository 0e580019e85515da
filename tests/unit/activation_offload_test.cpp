// model/activation_offload.h: Transformer Engine's CPU-offload schedule (layers 0..N-1 offloaded;
// layer i's copy must be done when layer L-N+i starts its forward; its reload starts when layer
// L-1-N+i starts its backward) with copies on one side stream.
#include <doctest/doctest.h>

#include <vector>

#include "model/activation_offload.h"

using namespace stepcast;

namespace {
// L equal layers: 10 GB saved, forward 1 s, backward 2 s.
std::vector<OffloadedLayer> equal_layers(int L) {
  return std::vector<OffloadedLayer>(static_cast<std::size_t>(L), OffloadedLayer{Bytes(10e9), Seconds(1.0), Seconds(2.0)});
}
}  // namespace

TEST_CASE("copies slower than compute: the backlog past the kept layers' slack is exposed") {
  // L = 4, N = 2 (2 layers kept). D2H 5 GB/s: d = 2 s per layer; H2D 4 GB/s: r = 2.5 s.
  // Forward: copy 0 runs 1..3, copy 1 3..5. Layer 2 starts at 2, waits for copy 0 until 3 (1 s);
  // layer 3 starts at 4, waits for copy 1 until 5 (1 s): 2 s = N d - (L - 2) f = 4 - 2.
  // Backward: at layer 2's start (t = 2) reload 1 runs 2..4.5; at layer 1's start (t = 4) reload 0
  // runs 4.5..7; layer 1 waits 0.5 s (to 4.5), runs to 6.5; layer 0 waits 0.5 s (to 7):
  // 1 s = N r - (L - 2) b = 5 - 4.
  const auto layers = equal_layers(4);
  const ActivationOffloadTime t = activation_offload_time(layers, 2, Bandwidth(5e9), Bandwidth(4e9));
  CHECK(t.forward_exposed.value() == doctest::Approx(2.0));
  CHECK(t.backward_exposed.value() == doctest::Approx(1.0));
  CHECK(t.exposed().value() == doctest::Approx(3.0));
  CHECK(t.offloaded.value() == doctest::Approx(20e9));
}

TEST_CASE("all layers but the last offloaded: no slack, every copy and reload is exposed whole") {
  // L = 3, N = 2: layer i's copy must finish before layer i+1 starts, and its reload starts when
  // its own backward is due. Exposed: N d = 2 x 2 s forward, N r = 2 x 2.5 s backward.
  const auto layers = equal_layers(3);
  const ActivationOffloadTime t = activation_offload_time(layers, 2, Bandwidth(5e9), Bandwidth(4e9));
  CHECK(t.forward_exposed.value() == doctest::Approx(4.0));
  CHECK(t.backward_exposed.value() == doctest::Approx(5.0));
}

TEST_CASE("copies faster than a layer's compute hide completely when two or more layers are kept") {
  // d = 10 GB / 20 GB/s = 0.5 s < f = 1 s; r = 0.5 s < b = 2 s; L = 8, N = 6 keeps 2.
  const auto layers = equal_layers(8);
  const ActivationOffloadTime t = activation_offload_time(layers, 6, Bandwidth(20e9), Bandwidth(20e9));
  CHECK(t.exposed().value() == 0.0);
  CHECK(t.offloaded.value() == doctest::Approx(60e9));
}

TEST_CASE("only the first N layers move: their bytes are the host memory, whatever the later layers save") {
  std::vector<OffloadedLayer> layers = equal_layers(5);
  layers[0].saved = Bytes(3e9);
  layers[1].saved = Bytes(4e9);
  layers[4].saved = Bytes(100e9);
  const ActivationOffloadTime t = activation_offload_time(layers, 2, Bandwidth(1e12), Bandwidth(1e12));
  CHECK(t.offloaded.value() == doctest::Approx(7e9));
  CHECK(activation_offload_time(layers, 0, Bandwidth(1e12), Bandwidth(1e12)).offloaded.value() == 0.0);
}

TEST_CASE("host copy rates: PCIe at 80% each way, NVLink-C2C at the GH200 measurements") {
  const CostParameters p;
  // PCIe Gen5 x16, 64 GB/s per direction: 51.2 GB/s both ways.
  const HostCopyRates pcie = host_copy_rates(Bandwidth(64e9), p);
  CHECK(pcie.device_to_host.value() == doctest::Approx(51.2e9));
  CHECK(pcie.host_to_device.value() == doctest::Approx(51.2e9));
  // NVLink-C2C, 450 GB/s per direction: 297 GB/s device->host, 375 GB/s host->device (Li et al. 2024).
  const HostCopyRates c2c = host_copy_rates(Bandwidth(450e9), p);
  CHECK(c2c.device_to_host.value() == doctest::Approx(297e9));
  CHECK(c2c.host_to_device.value() == doctest::Approx(375e9));
}
