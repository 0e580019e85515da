#pragma once
// The kernels of one transformer layer (and of the embedding and output layer) as one
// tensor-parallel rank runs them on one micro-batch: GEMM shapes, FLOPs and HBM bytes.
//
// Forward per layer (Megatron-LM / Megatron-Core order): input norm, QKV GEMM, attention core
// (one fused flash kernel, or scores bmm + fused scale-mask-softmax + dropout + values bmm),
// output projection, bias-dropout-add, norm, FC1, GELU/SwiGLU/squared ReLU, FC2, bias-dropout-add. With TP
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
// backward also writes transposed FP8 copies for Hopper's TN-only FP8 GEMMs (1 byte per element;
// none on Blackwell, whose FP8 GEMMs take any layout: LayerShape::fp8_transposes).
inline constexpr double kFp8CastBytesPerElement = 3.0;
inline constexpr double kFp8TransposeBytesPerElement = 1.0;

// Bytes one quantization of a 16-bit tensor moves per element, by recipe (Transformer Engine):
//   fp8, delayed scaling   read 2, write 1; the scale comes from the amax history and the new amax
//                          is reduced inside the cast kernel (DelayedScaling): 3.
//   fp8, current scaling   the scale must be known before the first element is cast, so an amax
//                          pass reads the tensor first (TE's nvte_compute_amax, then
//                          nvte_compute_scale_from_amax and the cast; Float8CurrentScaling): 5.
//   mxfp8                  one E8M0 scale per 32 elements, found inside the cast (no global amax),
//                          but both a row-wise and a column-wise copy are written, since block
//                          scales run along the GEMM's reduction dimension and cannot be
//                          transposed (OCP MX v1.0; TE MXFP8BlockScaling): 2 + 2 (1 + 1/32).
//   nvfp4                  two-level scales (a per-tensor FP32 amax pass, E4M3 per 16 elements),
//                          row- and column-wise copies: 2 + 2 + 2 (0.5 + 1/16).
// `transposed`: whether the consumer also needs the tensor's transpose (the backward's TN GEMMs);
// FP8 writes it as a separate 1-byte copy, the block formats already wrote their column-wise copy.
double quantize_bytes_per_element(DataType compute, Fp8Scaling scaling, bool transposed);
// Bytes a backward pass's casts move: `outputs` output-gradient elements quantized (with their
// transposes where s.fp8_transposes says FP8 GEMMs need them) and, for per-tensor FP8 there, the
// transposed copy of `inputs` saved input elements (the block formats wrote theirs in the forward).
double backward_cast_bytes(const LayerShape& s, double outputs, double inputs);


// Quantizing `parameters` weights (16-bit) for FP8 GEMMs, with their transposes: what FSDP / ZeRO-3
// pays per pass when it keeps 16-bit parameters (no persistent FP8 copy to cache them in).
Op weight_quantize_op(const LayerShape& shape, double parameters);

OpList layer_forward_ops(const LayerShape& shape);
// The forward torch.utils.checkpoint replays under full recomputation without reentrancy
// (parallel.checkpoint: pytorch), which stops once every tensor the backward saved is rebuilt:
// a dense layer without dropout ends with fc2, whose output nothing saves (its backward keeps its
// input and weight), and the residual add, which saves nothing, so the replay stops after the
// activation that feeds fc2. With dropout the mask is saved, so fc2 and the dropout run again; MoE
// layers end in the experts' combine, whose saved tensors this does not trace: both replay the
// whole forward.
OpList early_stop_recompute_forward_ops(const LayerShape& shape);
OpList layer_backward_ops(const LayerShape& shape);
// What selective recomputation re-runs before the backward pass: the attention core only
// (Korthikanti et al. 2022, Sec. 5).
OpList attention_core_forward_ops(const LayerShape& shape);
// What selective recomputation with `modules` (model/parallel.h) re-runs before a layer's backward:
// the forward kernels of each recomputed region this layer has (Megatron-Core's checkpointed
// regions; the MoE layer's all-to-alls and the regions' TP collectives are priced in simulator/):
//   core_attn       the attention core
//   layernorm       the norms that are modules of their own: post_attention_norm in a MoE layer,
//                   input_norm with MLA (activation_memory.h says why only those)
//   mla_up_proj     q_up_proj (with q_lora_rank > 0), kv_up_proj and mla_rope
//   mlp             a dense layer's post_attention_norm (fused into FC1), fc1, activation, fc2
//   moe             a MoE layer's whole MLP (router to shared experts, model/moe_ops.h)
//   shared_experts  shared_fc1, its activation, shared_fc2 (unless moe re-runs them already)
//   moe_act         the experts' activation (unless moe re-runs it already)
// FP8 casts of the recomputed GEMMs' inputs are not re-priced.
OpList selective_recompute_forward_ops(const LayerShape& shape, RecomputeModules modules);

// First pipeline stage: word-embedding lookup (vocab-parallel) and embedding dropout.
OpList embedding_forward_ops(const LayerShape& shape);
OpList embedding_backward_ops(const LayerShape& shape);
// Last pipeline stage: final norm, logits GEMM (vocab-parallel) and cross-entropy in FP32.
OpList output_forward_ops(const LayerShape& shape);
OpList output_backward_ops(const LayerShape& shape);
// Last pipeline stage, one multi-token-prediction module's own kernels (model/transformer.h
// mtp_depth; Megatron-Core MultiTokenPredictionLayer.forward): the shared embedding's lookup of the
// shifted tokens, enorm of it and hnorm of the previous depth's hidden state, their concatenation and
// the eh_proj GEMM 2h -> h/t (a ColumnParallelLinear). The module's transformer block and its output
// head and loss are the layer's and output_*_ops' kernels, priced by the caller. Backward: the
// projection's data and weight gradients (the concatenation's gradient is two views of its output),
// the two norms' backward and the embedding table's gradient.
OpList mtp_forward_ops(const LayerShape& shape);
OpList mtp_backward_ops(const LayerShape& shape);

}  // namespace stepcast
