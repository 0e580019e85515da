#pragma once
// Fused flash-attention forward and backward through cuDNN's backend graph API
// (kernels/cudnn_attention.cpp).
//
// cuDNN runs scaled dot-product attention as one fused kernel when given the operation graph
// its flash-attention engines recognise. The cudnn-frontend library builds that graph; it is not
// installed here, so this file builds the same graphs with the backend C API, following the
// structure of cudnn-frontend's composite SDPA nodes
// (include/cudnn_frontend/node/scaled_dot_product_flash_attention.h and node/softmax.h).
// Forward:
//   S = matmul(Q, K^T)                     [b, h, s_q, s_kv], fp32 virtual
//   S = S * scale                          pass-by-value scale
//   causal: S = select(row >= col, S, -FLT_MAX) with GEN_INDEX rows/cols (top-left aligned)
//   M = max_row(S); E = exp(S - M); Z = sum_row(E)
//   Stats = M + log(Z)                     [b, h, s_q, 1] fp32 output (what backward needs)
//   P = E / Z; O = matmul(P, V)            [b, h, s_q, d] output
// Backward (the frontend's SDPABackwardNode): P = exp(S - Stats), D = rowsum(dO * O),
//   dV = P^T dO, dS = (dO V^T - D) * P * scale, dK = dS^T Q, dQ = dS K (fp32 accumulator),
//   with grouped-query dK/dV summed over each KV head's query heads.
// Both use BSHD strides for Q, K, V, O (and dO, dQ, dK, dV) and grouped-query K/V heads. Plans
// are chosen by cuDNN's heuristic mode A; the first engine configuration that finalizes is used,
// else the first engine of cuDNN's global list that does.
//
// Whether cuDNN's heuristics accept a graph is only known at run time on a GPU: construction
// throws CudnnUnsupported with cuDNN's own message when they do not, and the harness then records
// the point as skipped.

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

// The gradients of attention given the forward's O and Stats (CudnnSdpaForward's outputs).
class CudnnSdpaBackward {
 public:
  // Tries the graph forms in order (kernels/cudnn_attention.cpp: the current cudnn-frontend's,
  // then legacy ones) from `first_form`, and keeps the first cuDNN plans. Throws CudnnUnsupported
  // when none is left that cuDNN runs (or causal with s_q != s_kv).
  CudnnSdpaBackward(ElementFormat format, const AttentionShape& shape, int first_form = 0);
  ~CudnnSdpaBackward();
  CudnnSdpaBackward(const CudnnSdpaBackward&) = delete;
  CudnnSdpaBackward& operator=(const CudnnSdpaBackward&) = delete;

  // q, k, v, o, d_o, dq, dk, dv in BSHD; stats [b, h, s_q] fp32 from the forward; workspace of
  // workspace_bytes() (cuDNN's, the fp32 dQ accumulator and D). Before cuDNN 9.6 each run zeroes
  // the accumulator on `stream` first, as cudnn-frontend does (zeroes_accumulator()); from 9.6
  // cuDNN does it itself, and `zero_accumulator` forces the memset anyway.
  void run(cudaStream_t stream, const void* q, const void* k, const void* v, const void* o, const void* d_o,
           const float* stats, void* dq, void* dk, void* dv, void* workspace, bool zero_accumulator = false) const;
  [[nodiscard]] std::size_t workspace_bytes() const;
  [[nodiscard]] bool zeroes_accumulator() const;
  // The form used; a caller whose check fails can try again from form() + 1.
  [[nodiscard]] int form() const;
  [[nodiscard]] const std::string& engine_description() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace stepcast::kernels
