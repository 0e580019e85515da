#include <doctest/doctest.h>

#include "validation/gpu_names.h"

using namespace stepcast;

TEST_CASE("CUDA device names map to catalog GPUs") {
  constexpr std::int64_t kGiB = 1024LL * 1024 * 1024;
  CHECK(catalog_gpu_for("NVIDIA H200", 141 * kGiB) == "h200-sxm-141gb");
  CHECK(catalog_gpu_for("NVIDIA H100 80GB HBM3", 80 * kGiB) == "h100-sxm-80gb");
  CHECK(catalog_gpu_for("NVIDIA A100-SXM4-80GB", 80 * kGiB) == "a100-sxm-80gb");
  CHECK(catalog_gpu_for("NVIDIA L40S", 46 * kGiB) == "l40s");
  CHECK(catalog_gpu_for("NVIDIA B200", 180 * kGiB) == "b200");
  // Variants with other clocks and power limits are not silently mapped to the SXM entries.
  CHECK_FALSE(catalog_gpu_for("NVIDIA H100 PCIe", 80 * kGiB).has_value());
  CHECK_FALSE(catalog_gpu_for("NVIDIA H200 NVL", 141 * kGiB).has_value());
  CHECK_FALSE(catalog_gpu_for("NVIDIA GH200 480GB", 96 * kGiB).has_value());
  CHECK_FALSE(catalog_gpu_for("NVIDIA A100-SXM4-40GB", 40 * kGiB).has_value());
}
