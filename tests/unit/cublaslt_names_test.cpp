// The names kernels/gemm_algorithm.h gives cuBLASLt's ids, from tables the build generates out of
// the installed cublasLt.h (cmake/CublasLtNames.cmake). Each expectation names the enumerator, so
// it holds for whatever values the header gives them. Host-only: built wherever the kernels are,
// run without a GPU.

#include <doctest/doctest.h>

#include "kernels/gemm_algorithm.h"

using namespace stepcast::kernels;

TEST_CASE("cuBLASLt tile, stages, cluster and inner-shape ids get the header's names") {
  CHECK(tile_name(CUBLASLT_MATMUL_TILE_128x256) == "128x256");
  CHECK(tile_name(CUBLASLT_MATMUL_TILE_256x128) == "256x128");
  CHECK(tile_name(CUBLASLT_MATMUL_TILE_64x64) == "64x64");
  CHECK(tile_name(CUBLASLT_MATMUL_TILE_UNDEFINED) == "undefined");
  CHECK(stages_name(CUBLASLT_MATMUL_STAGES_64x3) == "64x3");
  CHECK(stages_name(CUBLASLT_MATMUL_STAGES_128xAUTO) == "128xAUTO");
  CHECK(stages_name(CUBLASLT_MATMUL_STAGES_UNDEFINED) == "undefined");
  CHECK(cluster_shape_name(CUBLASLT_CLUSTER_SHAPE_2x1x1) == "2x1x1");
  CHECK(cluster_shape_name(CUBLASLT_CLUSTER_SHAPE_1x1x1) == "1x1x1");
  CHECK(cluster_shape_name(CUBLASLT_CLUSTER_SHAPE_AUTO) == "auto");
  CHECK(inner_shape_name(CUBLASLT_MATMUL_INNER_SHAPE_MMA16816) == "MMA16816");
  CHECK(inner_shape_name(CUBLASLT_MATMUL_INNER_SHAPE_UNDEFINED) == "undefined");
}

TEST_CASE("an id the header does not name gets no name, and reduction schemes get theirs") {
  CHECK(tile_name(1'000'000).empty());
  CHECK(stages_name(1'000'000).empty());
  CHECK(cluster_shape_name(1).empty());  // cublasLtClusterShape_t skips 1 (AUTO = 0, 1x1x1 = 2)
  CHECK(reduction_scheme_name(CUBLASLT_REDUCTION_SCHEME_NONE) == "none");
  CHECK(reduction_scheme_name(CUBLASLT_REDUCTION_SCHEME_INPLACE) == "inplace");
  CHECK(reduction_scheme_name(CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE) == "compute_type");
  CHECK(reduction_scheme_name(CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE) == "output_type");
  CHECK(reduction_scheme_name(3).empty());
}
