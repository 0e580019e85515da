#pragma once
// Fused flash-attention forward through cuDNN's backend graph API (kernels/cudnn_attention.cpp).
//
// cuDNN runs scaled dot-product attention as one fused kernel when given the operation graph
// its flash-attention engines recognise. The cudnn-frontend library builds that graph; it is not
// installed here, so this file builds the same graph with the backend C API, following the
// structure of cudnn-frontend's composite SDPA forward node
// (include/cudnn_frontend/node/scaled_dot_product_flash_attention.h and node/softmax.h):
//   S = matmul(Q, K^T)                     [b, h, s_q, s_kv], fp32 virtual
//   S = S * scale                          pass-by-value scale
//   causal: S = select(row >= col, S, -FLT_MAX) with GEN_INDEX rows/cols (top-left aligned)
//   M = max_row(S); E = exp(S - M); Z = sum_row(E)
//   Stats = M + log(Z)                     [b, h, s_q, 1] fp32 output (what backward needs)
//   P = E / Z; O = matmul(P, V)            [b, h, s_q, d] output
// with BSHD strides for Q, K, V and O and grouped-query K/V heads. Plans are chosen by cuDNN's
// heuristic mode A; the first engine configuration that finalizes is used.
//
// Whether cuDNN's heuristics accept the graph is only known at run time on a GPU: construction
// throws CudnnUnsupported with cuDNN's own message when they do not, and the harness then records
// the point as skipped and measures stepcast's own kernel. Backward is not built here (see
// kernels/attention.h for the kernel measured instead).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "kernels/attention.h"
#include "kernels/element_format.h"

namespace stepcast::kernels {

class CudnnUnsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "9.19.0", from cudnnGetVersion() (the library loaded, which may differ from the header).
std::string cudnn_version();

class CudnnSdpaForward {
 public:
  // Throws CudnnUnsupported when cuDNN has no engine for the graph (or causal with s_q != s_kv).
  CudnnSdpaForward(ElementFormat format, const AttentionShape& shape);
  ~CudnnSdpaForward();
  CudnnSdpaForward(const CudnnSdpaForward&) = delete;
  CudnnSdpaForward& operator=(const CudnnSdpaForward&) = delete;

  // q, k, v, o in BSHD; stats [b, h, s_q] fp32; workspace of workspace_bytes().
  void run(cudaStream_t stream, const void* q, const void* k, const void* v, void* o, float* stats,
           void* workspace) const;
  [[nodiscard]] std::size_t workspace_bytes() const;
  [[nodiscard]] const std::string& engine_description() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace stepcast::kernels
