#pragma once
// Activation memory kept for the backward pass, per micro-batch and tensor-parallel rank
// (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
// Sec. 4, Table 2), generalised term by term to GQA, SwiGLU, FFN widths other than 4h and
// dropout-free models. For MHA, GELU, f = 4h, 16-bit activations and dropout it is exactly the
// paper's formulas:
//   no parallelism                 s b h (34 + 5 a s / h)
//   tensor parallel                s b h (10 + 24/t + 5 a s / (h t))
//   tensor + sequence parallel     s b h (34/t + 5 a s / (h t))
//   + selective recomputation      drops the 5 a s / h term (so does a flash-attention kernel,
//                                  which never stores the s x s scores)
//   full recomputation             2 s b h (the layer input only; / t with sequence parallelism)
//
// The 34 splits as: attention 11 (QKV input 2, Q and K 4, V 2, projection input 2, dropout
// mask 1) + MLP 19 (FC1 input 2, GELU input 8, GELU output 8, dropout mask 1) + two norm inputs
// 4; the 5 a s / h term is the softmax output (2), its dropout mask (1) and the dropout output (2).
// Without sequence parallelism the norm inputs, the QKV and FC1 inputs and the two dropout masks
// (10) are replicated on every TP rank; the rest (24) is split.
//
// Multi-head latent attention keeps Q, K (width d_nope + d_rope per head), V and the output (d_v
// per head), split by TP, and its latents (model/mla_ops.h) on every TP rank. A mixture-of-experts
// layer keeps the router's FP32 probabilities (E per token), the token copies its local experts
// received and their activation's input and output (model/moe_ops.h: rows = the busiest rank's),
// and the shared experts' activations. Context parallelism divides everything by cp through the
// layer shape (seq = seq_len / cp: each rank keeps its own chunks; ring attention does not keep
// the K/V blocks it receives, it re-circulates them in the backward).
//
// Quantized compute (FP8, MXFP8, NVFP4) under Transformer Engine keeps each GEMM's input for the
// weight gradient as the quantized copy the forward made, column-wise usage only, instead of a
// 16-bit one (saved_gemm_input_bytes): TE linear.py, layernorm_linear.py and grouped_linear.py
// discard the row-wise data of the quantized input ("not needed in backward pass") and save it;
// older TE (1.x) saved the FP8 transpose. Per-tensor FP8 keeps 1 byte per element on every GPU:
// the transpose on Hopper and Ada, the row-wise data on Blackwell, whose FP8 GEMMs need no
// transpose (TE quantizer.cpp keeps the data when `rowwise_usage ||
// nvte_is_non_tn_fp8_gemm_supported()`); LayerShape::fp8_transposes changes the casts' time, not
// these bytes. So the QKV input, the attention projection input, a dense MLP's FC1 and FC2 inputs
// and the experts' FC1 input (the token copies) and FC2 input (the activation output) cost
// bytes_per_element(compute) each; tensors that are no GEMM's input stay 16-bit: the norm inputs,
// Q/K/V and the output the flash kernel keeps (so a quantized projection input costs the kernel's
// 16-bit output plus the linear's quantized copy), the activation function's input, and the
// router's input (Megatron-Core's router GEMM is not quantized). With MLA the input norm's output
// feeds two down-projections, each keeping its own quantized copy; with shared experts the pre-MLP
// norm's output is also quantized by their FC1.

#include "model/layer_shape.h"
#include "model/parallel.h"
#include "model/units.h"

namespace stepcast {

struct LayerActivations {
  Bytes stored;          // kept between forward and backward for one micro-batch
  Bytes attention_core;  // the part of `stored` selective recomputation drops (s x s scores)
};

// Bytes per element of a GEMM input kept for the backward: the compute format's under quantized
// compute with fused (Transformer Engine) kernels, else activation_bytes. PyTorch eager FP8
// (torchao Float8Linear) is not modelled as quantizing its saved inputs.
double saved_gemm_input_bytes(const LayerShape& shape);

// Activations one TP rank keeps for one layer and one micro-batch. Under selective recomputation,
// `modules` (Megatron-Core's recompute_modules, model/parallel.h) says which regions keep nothing
// beyond their inputs:
//   core_attn       the s x s scores of the unfused path (a flash kernel keeps none anyway)
//   layernorm       the outputs of the norms that are modules of their own, e h per token each:
//                   the pre-MLP norm of a MoE layer (its output feeds the router and the experts;
//                   a dense layer's is fused into FC1, Transformer Engine's LayerNormMLP, an
//                   IdentityOp that Megatron-Core does not recompute) and, with MLA, the input
//                   norm (the down-projections are plain linears); QKV's fused norm stays
//   mla_up_proj     MLA's Q, K and V (the up-projections' and RoPE's outputs the attention keeps)
//   mlp             a dense layer's FC1 input (its fused norm's output) and activation in/out
//   moe_act         the routed experts' activation output (FC2's input)
//   shared_experts  the shared experts' activation input and output
//   moe             everything the MoE MLP keeps: router probabilities, token copies, activations
// The regions' inputs (the residual stream, a norm's input) are kept, as checkpointing keeps them.
LayerActivations layer_activation_bytes(const LayerShape& shape, Recompute recompute,
                                        RecomputeModules modules = {});

// What selective recomputation re-makes for one layer while its backward runs: the bytes
// layer_activation_bytes drops, alive until that layer's backward ends.
Bytes selective_recompute_working_set_bytes(const LayerShape& shape, RecomputeModules modules);

// The memory one layer needs while its backward runs under full recomputation: its recomputed
// activations, which live only until its backward ends (one layer, one micro-batch).
Bytes recompute_working_set_bytes(const LayerShape& shape);

// First stage, per micro-batch in flight: the embedding dropout mask (Korthikanti et al. 2022,
// Sec. 4.3: s b h p / t over p micro-batches with sequence parallelism).
Bytes embedding_activation_bytes(const LayerShape& shape);
// Last stage, per micro-batch in flight: final-norm input and logits-GEMM input (2 + 2 bytes per
// element) and the logits the cross-entropy keeps: FP32, 4 s b V / t (Sec. 4.3); the 16-bit
// logits, 2 s b V / t, with Transformer Engine's fused cross-entropy (saved_logit_bytes).
Bytes output_activation_bytes(const LayerShape& shape);
// Last stage, per micro-batch in flight, one multi-token-prediction module's own tensors
// (layer_ops.h mtp_forward_ops): the inputs of enorm and hnorm and the concatenated eh_proj input,
// 4 e s b h (sequence-parallel shards under SP). Its block and head are a layer's and
// output_activation_bytes'.
Bytes mtp_activation_bytes(const LayerShape& shape);
// Last stage, while the loss's backward runs for one micro-batch: the vocab-sized gradients it
// holds beside the saved logits (loss_backward_logit_bytes s b V / t; 0 unless PyTorch's
// cross-entropy, CrossEntropyFusion::pytorch: 8, or 12 under loss parallelism, tp > 1; 4 with
// Megatron's fused native path, CrossEntropyFusion::fused).
Bytes loss_backward_working_set_bytes(const LayerShape& shape);

}  // namespace stepcast
