#pragma once
// Activation offloading to host memory: Megatron-Core's `cpu_offloading` with
// `cpu_offloading_activations` (scenario key parallel.activation_offload_layers = N), run by
// Transformer Engine's CPU-offload handler. Units: Bytes, Seconds, bytes per second.
//
// The mechanism, from the sources:
//   - Megatron-Core (NVIDIA/Megatron-LM megatron/core/transformer/transformer_config.py, commit
//     d2c5e8b4, TransformerConfig.__post_init__) accepts 0 <= cpu_offloading_num_layers <
//     num_layers, and rejects cpu_offloading with pipeline_model_parallel_size > 1 and with any
//     recompute_granularity. transformer_block.py builds one context for the whole model with
//     get_cpu_offload_context(enabled, num_layers=cpu_offloading_num_layers,
//     model_layers=config.num_layers, ...) and enters it around every layer's forward.
//   - Transformer Engine (NVIDIA/TransformerEngine transformer_engine/pytorch/cpu_offload.py,
//     commit 00382b96, OffloadSynchronizer._default_offload_sync_init; the same schedule in the
//     later DefaultOffloadSynchronizer) offloads layers 0 .. N-1 of the L layers: every tensor a
//     layer saves for its backward (weights excluded: they are parameters) is copied device->host
//     on one side stream ("offload stream") after the layer's forward; layer i's GPU copy is
//     freed when layer L-N+i begins its forward, the compute stream waiting there for that copy
//     to finish. In the backward, layer i's reload (host->device, same side stream, after the
//     compute work issued so far) starts when layer L-1-N+i begins its backward, and layer i's
//     backward waits for it. So at most L-N layers' saved tensors are on the GPU at any time
//     (the docstring: "peak memory usage of saving activations is (num_layers -
//     num_offloaded_layers) * T"), and the N offloaded layers' tensors sit in pinned host memory
//     between their forward and backward.
//   - Megatron-Bridge's CPU offloading docs (docs/training/cpu-offloading.md): the D2H and H2D
//     copies overlap with compute.
//
// What this file computes: the handler's two streams, layer by layer, for one micro-batch's
// forward and backward with each layer's compute-stream time and saved bytes; the compute
// stream's waits are the exposed transfer time. A layer's copy starts when its forward ends
// (the largest saved tensors, the MLP's, are made last; TE's per-tensor events could start a
// little earlier, not modelled). Copies run at the host link's rate in that direction.

#include <span>

#include "model/cost_parameters.h"
#include "model/units.h"

namespace stepcast {

// One transformer layer as the offload handler sees it.
struct OffloadedLayer {
  Bytes saved;        // bytes its forward saves for the backward (what offloading moves)
  Seconds forward;    // its forward on the compute stream
  Seconds backward;   // its backward on the compute stream
};

struct ActivationOffloadTime {
  Seconds forward_exposed;   // the compute stream waiting for device->host copies in the forward
  Seconds backward_exposed;  // ... for host->device reloads in the backward
  Bytes offloaded;           // saved bytes of the offloaded layers: host memory, and the GPU saving
  [[nodiscard]] Seconds exposed() const { return forward_exposed + backward_exposed; }
};

// PCIe Gen5 x16: 64 GB/s per direction (PCI-SIG, 32 GT/s x 16 lanes). A faster host link is
// NVLink-C2C (450 GB/s per direction on GH200/GB200): the host is a Grace CPU.
inline constexpr double kPcieX16Gen5PerDirection = 64.0e9;
[[nodiscard]] constexpr bool host_link_is_c2c(Bandwidth host_link) { return host_link.value() > kPcieX16Gen5PerDirection; }

// What pinned cudaMemcpyAsync copies sustain over a GPU's host link of nominal rate `host_link`
// (per direction), device->host and host->device (CostParameters offload.*_eta).
struct HostCopyRates {
  Bandwidth device_to_host;
  Bandwidth host_to_device;
};
HostCopyRates host_copy_rates(Bandwidth host_link, const CostParameters& params);

// The handler's schedule for `layers` (in model order) with the first `offloaded` of them
// offloaded (0 <= offloaded < layers.size()), copies at `device_to_host` and `host_to_device`.
ActivationOffloadTime activation_offload_time(std::span<const OffloadedLayer> layers, int offloaded,
                                              Bandwidth device_to_host, Bandwidth host_to_device);

}  // namespace stepcast
