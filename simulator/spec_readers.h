#pragma once
// Reading GPU, network, system and model descriptions from YAML mappings.
//
// The same fields appear in catalog entries (scenarios/catalog/*.yaml) and inline in scenario
// files, so both readers use these. Each read_*_fields() overwrites only the fields present in the
// mapping, on top of a base (a catalog preset, or defaults), so `{preset: llama3-70b, layers: 40}`
// changes one field. Fields derived from others follow their inputs when the base had them at
// their derived value and the mapping does not set them: overriding `heads` of an MHA preset also
// sets `kv_heads`; overriding `hidden` re-derives `head_dim = hidden/heads` and, where the base had
// ffn_hidden = 4*hidden, `ffn_hidden`; overriding `gpus_per_node` also sets `nvlink_domain_gpus`
// where the base's NVLink domain was one node.
//
// Quantities are written with units ("80 GiB", "3.35 TB/s"). Figures that are not known may be
// written `unknown` (stored as zero): sm_count, l2_cache, host_bandwidth, tdp,
// intra_node_bandwidth, host_memory_per_node, nic_latency. `none` (zero) marks a GPU without NVLink
// (nvlink_bandwidth) and a node without a scale-out network (nic_bandwidth, which also takes
// `unknown`).

#include <string>
#include <vector>

#include "model/hardware.h"
#include "model/transformer.h"
#include "simulator/yaml_reader.h"

namespace stepcast {

// The field keys of each kind of mapping; callers add their own (preset, sources, notes, ...).
const std::vector<std::string>& gpu_field_keys();
const std::vector<std::string>& network_field_keys();
const std::vector<std::string>& system_field_keys();  // node-level fields; not gpu, gpus or network
const std::vector<std::string>& model_field_keys();

// Appends `extra` to `keys`.
std::vector<std::string> with_keys(std::vector<std::string> keys, const std::vector<std::string>& extra);

void read_gpu_fields(const MapReader& r, GpuSpec& gpu);
void read_network_fields(const MapReader& r, NetworkSpec& network);
void read_system_fields(const MapReader& r, SystemSpec& system);
void read_model_fields(const MapReader& r, TransformerSpec& model);

// Keys a GPU, network or model mapping must give when it has no preset; reports those missing.
void require_gpu_fields(const MapReader& r);
void require_network_fields(const MapReader& r);
void require_model_fields(const MapReader& r);

// Consistency of a model on its own (kv_heads divides heads, top_k <= experts, ...), reported at
// `path` and its sub-keys.
void check_model(DiagnosticSink& sink, const std::string& path, const TransformerSpec& model);

// Applies a power mode to a GPU: scales its peaks and memory bandwidth and keeps only that mode.
// Returns false when the GPU has no mode of that name.
bool apply_power_mode(GpuSpec& gpu, const std::string& mode_name);

}  // namespace stepcast
