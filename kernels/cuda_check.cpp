#include "kernels/cuda_check.h"

#include <cstdio>

namespace stepcast::kernels {

void throw_cuda_error(const char* library, const char* call, const char* file, int line, const std::string& detail) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + library + " error: " + detail);
}

void report_cuda_error_noexcept(cudaError_t status, const char* call, const char* file, int line) noexcept {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s:%d: %s: CUDA error: %s\n", file, line, call, cudaGetErrorString(status));
  }
}

}  // namespace stepcast::kernels
