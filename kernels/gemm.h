#pragma once
// GEMMs through cuBLASLt, as frameworks call them (kernels/gemm.cpp).
//
// C (m x n) = op(A) (m x k) . op(B) (k x n), column-major, op = T (transposed) or N, with fp32
// accumulation (int32 for INT8) and the algorithm cuBLASLt's heuristic ranks first for a 32 MiB
// workspace (the workspace PyTorch and Transformer Engine give it on Hopper). Formats:
//   fp32, tf32      A, B, C fp32 (tf32: CUBLAS_COMPUTE_32F_FAST_TF32)
//   fp16, bf16      A, B, C in that format
//   fp8             A, B E4M3 or E5M2 (not both E5M2), C bf16, fp16 or fp32; per-tensor scales of
//                   1.0 through CUBLASLT_MATMUL_DESC_{A,B}_SCALE_POINTER (or none: cuBLASLt's
//                   default 1.0), optional fast accumulation, C passed as nullptr or as D's pointer
//                   (GemmSpec::fp8_*; the harness tries validation/fp8_gemm_configurations.h's
//                   list in order); compute capability 8.9+
//   int8            A, B int8, C int32, CUBLAS_COMPUTE_32I
// FP8 and INT8 need the TN layout. A GemmPlan owns its descriptors; construction throws
// GemmUnsupported when cuBLASLt offers no algorithm for the problem, and run() when cuBLASLt
// refuses every offered algorithm. Both messages carry cuBLASLt's status and the error lines its
// logger wrote meanwhile (captured through cublasLtLoggerSetCallback at mask 1, "Errors", unless
// the user set CUBLASLT_LOG_MASK), which say why it refused.

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/element_format.h"

namespace stepcast::kernels {

class GemmUnsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class GemmCompute { fp32, tf32, int32 };

struct GemmSpec {
  ElementFormat a = ElementFormat::bf16;
  ElementFormat b = ElementFormat::bf16;
  ElementFormat c = ElementFormat::bf16;
  GemmCompute compute = GemmCompute::fp32;
  bool transpose_a = true;   // "TN": op(A) = A^T, A stored k x m
  bool transpose_b = false;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;    // strided batch: products stored back to back
  // FP8 only: A/B scales as device pointers (else none), CUBLASLT_MATMUL_DESC_FAST_ACCUM, and C
  // given D's pointer (else nullptr; beta is 0 either way). Other formats always pass C = D.
  bool fp8_scale_pointers = true;
  bool fp8_fast_accumulation = false;
  bool fp8_c_is_d = false;
};

// Elements stored per operand and batch entry (A: m x k, B: k x n, C: m x n).
std::size_t gemm_a_elements(const GemmSpec& s);
std::size_t gemm_b_elements(const GemmSpec& s);
std::size_t gemm_c_elements(const GemmSpec& s);

// Leading dimensions of the stored operands (column-major).
std::int64_t gemm_lda(const GemmSpec& s);
std::int64_t gemm_ldb(const GemmSpec& s);

inline constexpr std::size_t kGemmWorkspaceBytes = 32u << 20;

class CublasLt {
 public:
  CublasLt();
  ~CublasLt();
  CublasLt(const CublasLt&) = delete;
  CublasLt& operator=(const CublasLt&) = delete;
  [[nodiscard]] cublasLtHandle_t get() const { return m_handle; }
  // "13.1.0" from cublasLtGetVersion().
  [[nodiscard]] static std::string version();

 private:
  cublasLtHandle_t m_handle = nullptr;
};

class GemmPlan {
 public:
  // `a_scale` and `b_scale` point to device floats (1.0) for FP8; ignored otherwise.
  GemmPlan(const CublasLt& lt, const GemmSpec& spec, const float* a_scale = nullptr, const float* b_scale = nullptr);
  ~GemmPlan();
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  // Runs the first of the heuristic's algorithms that cuBLASLt accepts at run time (an algorithm
  // the heuristic offers can still be refused with CUBLAS_STATUS_NOT_SUPPORTED, or with
  // CUBLAS_STATUS_INVALID_VALUE for an attribute the algorithm does not take); throws
  // GemmUnsupported when none is accepted.
  void run(cudaStream_t stream, const void* a, const void* b, void* c, void* workspace);

  [[nodiscard]] std::size_t workspace_bytes() const { return m_workspace[m_chosen]; }
  [[nodiscard]] int algorithms_offered() const { return m_offered; }
  [[nodiscard]] int algorithm_used() const { return m_chosen; }  // rank in the heuristic's list
  // The algorithm run() last ran (kernels/gemm_algorithm.h reads its configuration back), and the
  // heuristic's estimate of its waves (cublasLtMatmulHeuristicResult_t::wavesCount).
  [[nodiscard]] const cublasLtMatmulAlgo_t& algorithm() const { return m_algo[m_chosen]; }
  [[nodiscard]] float waves_count() const { return m_waves[m_chosen]; }

 private:
  cublasLtHandle_t m_handle;
  cublasLtMatmulDesc_t m_op = nullptr;
  cublasLtMatrixLayout_t m_a = nullptr;
  cublasLtMatrixLayout_t m_b = nullptr;
  cublasLtMatrixLayout_t m_c = nullptr;
  // Candidates asked of the heuristic: the first that runs is used (for FP8 on an H200 all of
  // the first 8 were refused at run time, so more are asked for).
  static constexpr int kMaxAlgorithms = 16;
  cublasLtMatmulAlgo_t m_algo[kMaxAlgorithms]{};
  std::size_t m_workspace[kMaxAlgorithms]{};
  float m_waves[kMaxAlgorithms]{};
  int m_offered = 0;
  int m_chosen = 0;
  bool m_fp8 = false;
  bool m_c_is_d = true;
  GemmCompute m_compute;
};

}  // namespace stepcast::kernels
