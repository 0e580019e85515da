#pragma once
// Maps the name a GPU reports (CUDA's device name) to its key in the scenario catalog
// (DESIGN.md: a100-sxm-80gb, h100-sxm-80gb, h200-sxm-141gb, b200, gb200, l40s), so calibration
// can tell which catalog GPU a measurement file describes. Returns nullopt for GPUs the catalog
// does not hold (PCIe and NVL variants have other clocks and power limits, so they are not
// silently mapped to the SXM entries).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stepcast {

std::optional<std::string> catalog_gpu_for(std::string_view device_name, std::int64_t memory_bytes);

}  // namespace stepcast
