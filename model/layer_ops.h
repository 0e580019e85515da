#pragma once
// The kernels of one transformer layer (and of the embedding and output layer) as one
// tensor-parallel rank runs them on one micro-batch: GEMM shapes, FLOPs and HBM bytes.
//
// Forward per layer (Megatron-LM / Megatron-Core order): input norm, QKV GEMM, attention core
// (one fused flash kernel, or scores bmm + fused scale-mask-softmax + dropout + values bmm),
// output projection, bias-dropout-add, norm, FC1, GELU/SwiGLU, FC2, bias-dropout-add. With TP
// the GEMMs are column/row-parallel shards (Shoeybi et al. 2019, Fig. 3); norms and
// bias-dropout-add act on all tokens, or on 1/t of them with sequence parallelism (Korthikanti
// et al. 2022, Sec. 4.2.2). Backward: each GEMM becomes a data-gradient and a weight-gradient
// GEMM of the same FLOPs; weight gradients accumulate into FP32 main grads (Megatron's
// gradient-accumulation fusion: read + write 4 bytes per output element); with linear biases,
// the bias gradients are reductions of the output gradients over the tokens. Memory-bound ops
// read their saved input and the incoming gradient and write the outgoing gradient.
//
// Communication is not here: see model/layer_comm.h.

#include "model/layer_shape.h"
#include "model/op.h"

namespace stepcast {

// FlashAttention's backward runs 5 matmuls where its forward runs 2 (it re-computes S = QK^T;
// Dao 2023, FlashAttention-2, Sec. 3.1): its work is 2.5x the forward's.
inline constexpr double kFlashBackwardWorkRatio = 2.5;
// Transformer Engine FP8: casting a 16-bit tensor to FP8 reads 2 bytes and writes 1 (amax fused);
// backward also writes transposed FP8 copies for Hopper's TN-only FP8 GEMMs (1 byte per element).
inline constexpr double kFp8CastBytesPerElement = 3.0;
inline constexpr double kFp8TransposeBytesPerElement = 1.0;

OpList layer_forward_ops(const LayerShape& shape);
OpList layer_backward_ops(const LayerShape& shape);
// What selective recomputation re-runs before the backward pass: the attention core only
// (Korthikanti et al. 2022, Sec. 5).
OpList attention_core_forward_ops(const LayerShape& shape);

// First pipeline stage: word-embedding lookup (vocab-parallel) and embedding dropout.
OpList embedding_forward_ops(const LayerShape& shape);
OpList embedding_backward_ops(const LayerShape& shape);
// Last pipeline stage: final norm, logits GEMM (vocab-parallel) and cross-entropy in FP32.
OpList output_forward_ops(const LayerShape& shape);
OpList output_backward_ops(const LayerShape& shape);

}  // namespace stepcast
