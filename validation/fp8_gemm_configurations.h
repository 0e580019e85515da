#pragma once
// The cuBLASLt set-ups the harness tries, in order, for one FP8 GEMM, so that one window on a GPU
// cannot come back without FP8 measurements when cuBLASLt refuses the first set-up at run time
// (on an H200 with cuBLASLt 13.1 it offered algorithms for every E4M3 TN GEMM and then refused
// all of them: scenarios/calibration/h200-sxm-141gb/run-52730d9b4f49/fp8-quick.json).
//
// Every set-up is one that the cuBLAS documentation lists as supported for E4M3/E5M2 inputs
// (cublasLtMatmul, "FP8" type table: compute CUBLAS_COMPUTE_32F, scale type CUDA_R_32F, TN layout,
// C and D of the same type BF16, FP16 or FP32 when D is not FP8) and one that a framework uses:
//   1. D and C in the requested format, C passed as nullptr (beta = 0), A/B scales as device
//      pointers, fast accumulation off: PyTorch's at::cuda::blas::scaled_gemm
//      (aten/src/ATen/cuda/CUDABlas.cpp) with use_fast_accum = false, torch._scaled_mm's default.
//   2. as 1 with CUBLASLT_MATMUL_DESC_FAST_ACCUM on: Transformer Engine's forward GEMMs
//      (transformer_engine/common/gemm/cublaslt_gemm.cu, fastAccuMode = !use_split_accumulator).
//   3. as 1 with D's pointer passed as C: Transformer Engine's cublas_gemm for a non-FP8 output.
//   4. as 1 without scale pointers (cuBLASLt then scales by 1.0, the value ours hold): rules out
//      the scale pointers.
//   5, 6. FP16, then FP32 output (each skipped when it is the requested format).
// Host-only, so the order is unit-tested without a GPU.

#include <string>
#include <vector>

namespace stepcast {

struct Fp8GemmConfiguration {
  std::string output = "bf16";  // D and C format: bf16, fp16 or fp32
  bool scale_pointers = true;   // A/B per-tensor scales through CUBLASLT_MATMUL_DESC_{A,B}_SCALE_POINTER
  bool fast_accumulation = false;
  bool c_is_d = false;          // C gets D's pointer (beta = 0) instead of nullptr
};

std::vector<Fp8GemmConfiguration> fp8_gemm_configurations(const std::string& requested_output);

// "D bf16, C bf16 = nullptr, A/B scale pointers, fast accumulation off".
std::string describe(const Fp8GemmConfiguration& c);

}  // namespace stepcast
