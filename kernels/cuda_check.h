#pragma once
// Errors from CUDA, cuBLAS(Lt), cuDNN and NCCL calls become exceptions that carry the failing
// call's text, its file:line and the library's own message, as nvbench's cuda_call.cuh does:
//   STEPCAST_CUDA(cudaMalloc(&p, n));    -> CudaError "kernels/gemm.cpp:42: cudaMalloc(&p, n): out of memory"
// The *_NOEXCEPT variant only reports (for destructors). cuDNN and NCCL checks live next to their
// only users (kernels/cudnn_attention.cpp, validation/harness/collectives_suite.cpp).

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace stepcast::kernels {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(const char* library, const char* call, const char* file, int line,
                                   const std::string& detail);

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error("CUDA", call, file, line, cudaGetErrorString(status));
}

void report_cuda_error_noexcept(cudaError_t status, const char* call, const char* file, int line) noexcept;

}  // namespace stepcast::kernels

#define STEPCAST_CUDA(call) ::stepcast::kernels::check_cuda((call), #call, __FILE__, __LINE__)
#define STEPCAST_CUDA_NOEXCEPT(call) \
  ::stepcast::kernels::report_cuda_error_noexcept((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors surface here, execution errors at the next sync.
#define STEPCAST_CUDA_LAUNCHED() STEPCAST_CUDA(cudaGetLastError())
