#include "kernels/gemm_algorithm.h"

#include "kernels/cuda_check.h"

namespace stepcast::kernels {

namespace {

struct EnumName {
  int id;
  const char* name;
};

// k_tile_names, k_stages_names, k_cluster_shape_names, k_inner_shape_names.
#include "kernels/cublaslt_enum_names.inc"

template <std::size_t N>
std::string lookup(const EnumName (&table)[N], std::uint32_t id) {
  for (const EnumName& e : table) {
    if (e.id >= 0 && static_cast<std::uint32_t>(e.id) == id) return e.name;
  }
  return {};
}

// One attribute of the storage type cublasLt.h states for it; nullopt when cuBLASLt does not
// report it at that size.
template <typename T>
std::optional<T> read(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute) {
  T value{};
  std::size_t written = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof value, &written);
  if (status != CUBLAS_STATUS_SUCCESS || written != sizeof value) return std::nullopt;
  return value;
}

template <typename T>
T read_required(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute, const char* name) {
  const std::optional<T> value = read<T>(algo, attribute);
  if (!value) {
    throw_cuda_error("cuBLASLt", "cublasLtMatmulAlgoConfigGetAttribute", __FILE__, __LINE__,
                     std::string("cannot read ") + name);
  }
  return *value;
}

}  // namespace

GemmAlgorithmConfig read_algorithm_config(const cublasLtMatmulAlgo_t& algo) {
  GemmAlgorithmConfig c;
  c.id = read_required<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID, "CUBLASLT_ALGO_CONFIG_ID");
  c.tile_id = read_required<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, "CUBLASLT_ALGO_CONFIG_TILE_ID");
  c.splitk_num = read_required<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, "CUBLASLT_ALGO_CONFIG_SPLITK_NUM");
  c.reduction_scheme = read_required<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                                    "CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME");
  c.cta_swizzling = read_required<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING,
                                                 "CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING");
  c.custom_option = read_required<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION,
                                                 "CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION");
  c.stages_id = read_required<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, "CUBLASLT_ALGO_CONFIG_STAGES_ID");
  c.inner_shape_id = read<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  c.cluster_shape_id = read<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  return c;
}

std::string tile_name(std::uint32_t id) { return lookup(k_tile_names, id); }
std::string stages_name(std::uint32_t id) { return lookup(k_stages_names, id); }
std::string cluster_shape_name(std::uint32_t id) { return lookup(k_cluster_shape_names, id); }
std::string inner_shape_name(std::uint32_t id) { return lookup(k_inner_shape_names, id); }

std::string reduction_scheme_name(std::uint32_t scheme) {
  switch (scheme) {
    case CUBLASLT_REDUCTION_SCHEME_NONE: return "none";
    case CUBLASLT_REDUCTION_SCHEME_INPLACE: return "inplace";
    case CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE: return "compute_type";
    case CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE: return "output_type";
    default: return {};
  }
}

}  // namespace stepcast::kernels
