#include "model/activation_offload.h"

#include <cassert>
#include <vector>

namespace stepcast {

HostCopyRates host_copy_rates(Bandwidth host_link, const CostParameters& params) {
  if (host_link_is_c2c(host_link)) {
    return {host_link * params.c2c_device_to_host_eta, host_link * params.c2c_host_to_device_eta};
  }
  return {host_link * params.pcie_copy_eta, host_link * params.pcie_copy_eta};
}

ActivationOffloadTime activation_offload_time(std::span<const OffloadedLayer> layers, int offloaded,
                                              Bandwidth device_to_host, Bandwidth host_to_device) {
  ActivationOffloadTime out;
  const int L = static_cast<int>(layers.size());
  const int N = offloaded;
  assert(N >= 0 && (N == 0 || N < L));
  if (N <= 0 || device_to_host.value() <= 0.0 || host_to_device.value() <= 0.0) return out;
  const int kept = L - N;  // layers whose saved tensors stay on the GPU at once
  const auto at = [&](int i) -> const OffloadedLayer& { return layers[static_cast<std::size_t>(i)]; };
  for (int i = 0; i < N; ++i) out.offloaded += at(i).saved;

  // Forward. Layer i's copy is issued when its forward ends and runs after the copies before it on
  // the side stream; layer l's forward begins after waiting for the copy of layer l - kept
  // (TE: finish_offload_map[L - N + i] holds layer i).
  std::vector<Seconds> copied(static_cast<std::size_t>(N));
  Seconds clock(0.0);
  Seconds stream_free(0.0);
  for (int l = 0; l < L; ++l) {
    const int due = l - kept;
    if (due >= 0 && due < N && copied[static_cast<std::size_t>(due)] > clock) {
      out.forward_exposed += copied[static_cast<std::size_t>(due)] - clock;
      clock = copied[static_cast<std::size_t>(due)];
    }
    clock += at(l).forward;
    if (l < N) {
      stream_free = max(stream_free, clock) + at(l).saved / device_to_host;
      copied[static_cast<std::size_t>(l)] = stream_free;
    }
  }

  // Backward, layers L-1 .. 0. When layer l's backward begins, the reload of layer l - kept + 1
  // is issued (TE: start_reload_map[L - 1 - N + i] holds layer i); then, if layer l was
  // offloaded, its backward waits for its own reload.
  std::vector<Seconds> reloaded(static_cast<std::size_t>(N));
  clock = Seconds(0.0);
  stream_free = Seconds(0.0);
  for (int l = L - 1; l >= 0; --l) {
    const int start = l - kept + 1;
    if (start >= 0 && start < N) {
      stream_free = max(stream_free, clock) + at(start).saved / host_to_device;
      reloaded[static_cast<std::size_t>(start)] = stream_free;
    }
    if (l < N && reloaded[static_cast<std::size_t>(l)] > clock) {
      out.backward_exposed += reloaded[static_cast<std::size_t>(l)] - clock;
      clock = reloaded[static_cast<std::size_t>(l)];
    }
    clock += at(l).backward;
  }
  return out;
}

}  // namespace stepcast
