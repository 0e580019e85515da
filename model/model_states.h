#pragma once
// Memory for weights, gradients and optimizer states per GPU (mixed-precision Adam).
//
// Bytes per parameter: weights in `params` format, gradients in `grads` format, and the
// optimizer's master copy (when kept) plus Adam's two moments in `optimizer` format. Megatron's
// BF16/FP16 mixed precision: 2 + 4 + (4 + 4 + 4) = 18 (DESIGN.md "Memory"; ZeRO paper Sec. 3.1
// counts 16 with 16-bit gradients). Pure FP32/TF32: 4 + 4 + 8 = 16. FP8 (Transformer Engine)
// keeps BF16 weights plus an FP8 copy and, on Hopper and Ada, its transpose: 2 more bytes, 1 on
// Blackwell (fp8_weight_copy_bytes).
// Megatron-Core's precision-aware optimizer keeps the moments in `moments` format (BF16 in the
// DeepSeek-V3 recipes: 2 + 2 bytes) and, with store_param_remainders, the FP32 master copy as the
// 2 bytes the BF16 weights lack: master 2 + moments 4 = 6 bytes of optimizer state instead of 12
// (PrecisionConfig::moments, master_remainders).
// ZeRO stage 1 (Megatron's distributed optimizer) divides the optimizer states by dp, stage 2
// also the gradients, stage 3 (FSDP) also the weights (Rajbhandari et al. 2020, Fig. 1).

#include "model/precision.h"
#include "model/units.h"

namespace stepcast {

struct ModelStateBytes {
  Bytes weights;
  Bytes gradients;
  Bytes optimizer_states;
  [[nodiscard]] Bytes total() const { return weights + gradients + optimizer_states; }
};

struct BytesPerParameter {
  double weights = 0.0;
  double gradients = 0.0;
  double optimizer_states = 0.0;
  [[nodiscard]] double total() const { return weights + gradients + optimizer_states; }
};

// `fp8_transposes`: whether per-tensor-scaled FP8 keeps transposed copies on this GPU
// (LayerShape::fp8_transposes, from fp8_gemm_needs_transposes: the rule the time side uses too).
BytesPerParameter bytes_per_parameter(const PrecisionConfig& precision, bool fp8_transposes);

// FP8 training keeps, besides the stored weights, quantized copies for the GEMMs (Transformer
// Engine caches them across micro-batches). Per-tensor FP8 (delayed or current scaling): the FP8
// copy, 1 byte, and where FP8 GEMMs are TN-only (Hopper, Ada: `fp8_transposes`) its transpose, 1
// more; on Blackwell TE's Float8Quantizer / Float8CurrentScalingQuantizer create_tensor makes the
// row-wise data only (data when `rowwise_usage || nvte_is_non_tn_fp8_gemm_supported()`, transpose
// when `columnwise_usage && !nvte_is_non_tn_fp8_gemm_supported()`: NVIDIA/TransformerEngine
// transformer_engine/pytorch/csrc/quantizer.cpp @0064fbd645a9c89e1eb4796ceebc6eeac6e9c02a), which
// serves both usages. MXFP8/NVFP4 keep a row-wise and a column-wise copy with their block scales on
// every GPU (MXFP8Quantizer::create_tensor allocates the row-wise data for rowwise_usage and the
// column-wise for columnwise_usage, with no GPU condition). With FP8 parameters (`params: fp8`,
// Megatron's --fp8-param-gather) the weights are the FP8 copy; only the transpose is added
// (nothing on Blackwell). With MXFP8 parameters (`params: mxfp8`) the weights are the row-wise
// MXFP8 copy and the column-wise one is added: 2 x (1 + 1/32) bytes, no BF16 copy.
inline constexpr double kFp8TransposeBytesPerParameter = 1.0;
// Bytes per parameter of an FP32 master copy stored as remainders: FP32's 4 bytes less the 2 the
// BF16 weight already holds (Megatron-Core OptimizerConfig.store_param_remainders).
inline constexpr double kMasterRemainderBytesPerParameter = 4.0 - 2.0;
double fp8_weight_copy_bytes(const PrecisionConfig& precision, bool fp8_transposes);

// Bytes of optimizer state the memory-bound Adam step reads and writes per parameter: each moment
// read and written in its stored format; the master read and written in its form: FP32 4 + 4, as
// remainders read as the full FP32 value (the BF16 weight and the 2-byte remainder, 4) and written
// as the remainder (2) - the BF16 half is the model-weight write the step pays anyway
// (Transformer Engine multi_tensor_adam_master_param_remainder, common/multi_tensor/adam.cu).
// Without a master copy the step updates the stored weights in place (read + write in `params`).
// Megatron's FP32 states: 2 x (4 + 4 + 4) = 24; BF16 moments over remainders: 4 + 2 + 2 x (2 + 2) = 14.
double adam_state_traffic_bytes(const PrecisionConfig& precision);

// States of `parameters` parameters (one GPU's model-parallel shard) under ZeRO `zero` over a
// data-parallel group of `dp` ranks; `fp8_transposes` as in bytes_per_parameter.
ModelStateBytes model_state_bytes(double parameters, const PrecisionConfig& precision, int zero, int dp,
                                  bool fp8_transposes);

}  // namespace stepcast
