#pragma once
// The few figures of a cluster that price its collectives, derived once per system.
//
// Bandwidths are per direction, line rate (datasheet), before any protocol efficiency:
//   gpu_link        one GPU's link into its NVLink domain (NVLink, or PCIe when the GPU has none)
//   domain_network  all NICs of one NVLink domain together (8 x 400 Gb/s = 400 GB/s for DGX H100;
//                   72 NICs for a GB200 NVL72 rack), or the GPUs' PCIe links if those are slower
//   domain_uplink   what one domain can push through the spine when every domain sends at once:
//                   domain_network / oversubscription (equal to domain_network at 1:1)
// model/topology.h computes these from the graph (max-flow between GPU sets); fabric_figures()
// below is the same arithmetic straight from the spec, used where no graph is at hand and checked
// against the graph in tests.

#include "model/hardware.h"
#include "model/units.h"

namespace stepcast {

struct FabricFigures {
  int domain_gpus = 8;          // GPUs of one NVLink domain (a server, or an NVL72 rack)
  int server_gpus = 8;          // GPUs of one server (tray), sharing its NICs
  bool nvlink = true;           // GPUs of a domain talk over NVLink (else PCIe)
  int nvlink_links = 18;        // NVLink links per GPU (0 without NVLink)
  Bandwidth gpu_link;
  int nics_per_domain = 8;
  Bandwidth domain_network;
  Bandwidth domain_uplink;
  bool operator==(const FabricFigures&) const = default;
};

// NVLink links per GPU from its NVLink bandwidth: 25 GB/s per link per direction for NVLink 3/4
// (A100: 12 links, H100: 18), 50 GB/s for NVLink 5 (B200: 18). NVIDIA datasheets.
int nvlink_links_of(const GpuSpec& gpu);

// The spec arithmetic (see the header comment).
FabricFigures fabric_figures(const SystemSpec& system);

}  // namespace stepcast
