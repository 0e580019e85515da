#pragma once
// The cuBLASLt kernel a GemmPlan ran (kernels/gemm.h), read back from its cublasLtMatmulAlgo_t.
//
// read_algorithm_config() calls cublasLtMatmulAlgoConfigGetAttribute for every attribute of
// cublasLtMatmulAlgoConfigAttributes_t in cublasLt.h (CUDA 13.1: CUBLASLT_ALGO_CONFIG_ID = 0 ...
// CLUSTER_SHAPE_ID = 8; NVIDIA's cuBLASLt documentation, "cublasLtMatmulAlgoConfigAttributes_t",
// lists the same nine), each with the storage type the header states for it. CUDA 13's header has
// no epilogue-schedule attribute, so none is read. The inner and cluster shapes are empty where
// cuBLASLt does not report them (the call fails or writes another size).
//
// The *_name() functions turn an id into the enumerator's name as cublasLt.h spells it after its
// prefix: tile "128x256" (rows x columns of C per CTA), stages "64x3", cluster shape "2x1x1",
// inner shape "MMA16816", or "auto" / "undefined"; "" for an id the header does not name. The
// tables are generated from the installed header at configure time (cmake/CublasLtNames.cmake).
// Host-only: none of this needs a GPU.

#include <cublasLt.h>

#include <cstdint>
#include <optional>
#include <string>

namespace stepcast::kernels {

struct GemmAlgorithmConfig {
  std::int32_t id = 0;                 // CUBLASLT_ALGO_CONFIG_ID (cublasLtMatmulAlgoGetIds)
  std::uint32_t tile_id = 0;           // cublasLtMatmulTile_t
  std::uint32_t stages_id = 0;         // cublasLtMatmulStages_t
  std::int32_t splitk_num = 1;         // K splits computed in parallel
  std::uint32_t reduction_scheme = 0;  // cublasLtReductionScheme_t (how the splits are summed)
  std::uint32_t cta_swizzling = 0;     // 0 or 1
  std::uint32_t custom_option = 0;
  std::optional<std::uint16_t> inner_shape_id;    // cublasLtMatmulInnerShape_t
  std::optional<std::uint16_t> cluster_shape_id;  // cublasLtClusterShape_t (Hopper and newer)
};

// Throws CudaError (kernels/cuda_check.h) when one of the seven core attributes cannot be read.
GemmAlgorithmConfig read_algorithm_config(const cublasLtMatmulAlgo_t& algo);

std::string tile_name(std::uint32_t id);
std::string stages_name(std::uint32_t id);
std::string cluster_shape_name(std::uint32_t id);
std::string inner_shape_name(std::uint32_t id);
// "none", "inplace", "compute_type", "output_type"; "" for a value cublasLt.h does not define.
std::string reduction_scheme_name(std::uint32_t scheme);

}  // namespace stepcast::kernels
