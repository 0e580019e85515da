#include "validation/gpu_names.h"

namespace stepcast {

namespace {
bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }
}  // namespace

std::optional<std::string> catalog_gpu_for(std::string_view name, std::int64_t memory_bytes) {
  const double gib = static_cast<double>(memory_bytes) / (1024.0 * 1024.0 * 1024.0);
  // PCIe and NVL boards, and Grace-Hopper superchips (GH200 contains "H200"), are not catalog GPUs.
  if (contains(name, "PCIe") || contains(name, "NVL") || contains(name, "GH200")) return std::nullopt;
  // CUDA names, e.g. "NVIDIA GB200", "NVIDIA B200", "NVIDIA H200", "NVIDIA H100 80GB HBM3",
  // "NVIDIA A100-SXM4-80GB", "NVIDIA L40S".
  if (contains(name, "GB200")) return "gb200";
  if (contains(name, "B200")) return "b200";
  if (contains(name, "H200")) return "h200-sxm-141gb";
  if (contains(name, "H100") && (contains(name, "HBM3") || contains(name, "SXM")) && gib > 70.0) return "h100-sxm-80gb";
  if (contains(name, "A100") && contains(name, "SXM") && gib > 70.0) return "a100-sxm-80gb";
  if (contains(name, "L40S")) return "l40s";
  return std::nullopt;
}

}  // namespace stepcast
