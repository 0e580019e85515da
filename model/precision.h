#pragma once
// Which numeric format each part of a run uses.
//
// `precision: bf16` in a scenario expands to Megatron's mixed precision: BF16 compute and weights,
// FP32 gradient accumulation and reduction, FP32 master weights and Adam moments — 2 + 4 + 12 = 18
// bytes per parameter (Rajbhandari et al. 2020, ZeRO, Sec. 3.1 counts 16 with FP16 gradients;
// Megatron keeps FP32 main gradients). `fp32`/`tf32` keep everything in FP32 with no master copy.
// `fp8` computes GEMMs in FP8 (Transformer Engine) while keeping BF16 weights and FP32 states.
// Inference scenarios use `params` as the stored weight format (int8/int4 weight-only, fp8 W8A8)
// and `kv_cache` for the cache.

#include <optional>

#include "model/datatype.h"

namespace stepcast {

enum class Fp8Scaling { delayed, current };
// Which ranks delayed scaling reduces its amaxes over (simulator/layer_costs.h): every rank of a
// pipeline stage (tp x cp x dp, Megatron-Core's default amax reduction group), or the tensor- and
// context-parallel ranks alone (Megatron-Core --tp-only-amax-red, TransformerConfig.tp_only_amax_red).
enum class Fp8AmaxGroup { stage, tp };

struct PrecisionConfig {
  DataType compute = DataType::bf16;    // GEMM input format
  // Stored weights used by forward/backward. Under MXFP8 compute, `mxfp8` keeps them as MXFP8
  // tensors (a row-wise and a column-wise copy with their block scales) and no BF16 copy:
  // Megatron-Core's --fp8-param-gather with --reuse-grad-buf-for-mxfp8-param-ag, which
  // Megatron-Bridge's bf16_with_mxfp8_mixed sets (distributed_optimizer_gather() below).
  DataType params = DataType::bf16;
  DataType grads = DataType::fp32;      // gradient accumulation and reduction
  DataType optimizer = DataType::fp32;  // master weights and Adam moments
  DataType kv_cache = DataType::bf16;   // inference KV cache
  bool master_weights = true;           // a separate FP32 master copy (false for pure FP32)
  // Adam's two moments (exp_avg, exp_avg_sq) in a format of their own: Megatron-Core's
  // precision-aware optimizer (--use-precision-aware-optimizer, OptimizerConfig.exp_avg_dtype and
  // exp_avg_sq_dtype; megatron/core/optimizer/optimizer_config.py). Unset: `optimizer`'s format.
  std::optional<DataType> moments;
  // The FP32 master copy kept as the 16 bits the BF16 weights lack (Megatron-Core
  // OptimizerConfig.store_param_remainders, default True, effective under the precision-aware
  // optimizer with BF16 weights and FP32 main params: "store the 16-bit FP32 parameter remainders
  // in the optimizer state, excluding the 16 bits shared with the BF16 parameters"): 2 bytes per
  // parameter instead of 4. The loader accepts it only with params bf16 and optimizer fp32.
  bool master_remainders = false;
  bool loss_scaling = false;            // FP16 dynamic loss scaling
  Fp8Scaling fp8_scaling = Fp8Scaling::delayed;
  Fp8AmaxGroup fp8_amax_group = Fp8AmaxGroup::stage;  // delayed scaling only (the loader checks)
  // Fused attention in FP8 under a quantized compute format: Transformer Engine's FP8 dot-product
  // attention (Megatron-Core --fp8-dot-product-attention; cuDNN's FP8 SDPA). op_time prices its
  // kernels at the measured FP8-over-BF16 speed of cuDNN's (CostParameters::flash_fp8_*).
  bool fp8_attention = false;
  // Transformer layers at each end of the model kept in BF16 under a quantized compute format.
  // -1: the recipe's default: 1 with current scaling (Megatron-Bridge/NeMo's
  // bf16_with_fp8_current_scaling_mixed: first_last_layers_bf16, num_layers_at_start_in_bf16 = 1,
  // num_layers_at_end_in_bf16 = 1), 0 otherwise.
  int bf16_edge_layers = -1;
  [[nodiscard]] int edge_layers_in_bf16() const {
    if (!is_quantized_training_format(compute)) return 0;
    if (bf16_edge_layers >= 0) return bf16_edge_layers;
    return compute == DataType::fp8 && fp8_scaling == Fp8Scaling::current ? 1 : 0;
  }
  // The format ZeRO-3 / FSDP all-gathers the weights in: the unsharded weight the forward and
  // backward read. Weights stored in 16 bits or fewer are gathered as stored (FP8 weights in FP8:
  // Megatron's --fp8-param-gather). Weights stored wider than a 16-bit compute format are cast to
  // it before the gather -- PyTorch FSDP2's MixedPrecisionPolicy.param_dtype "specifies the dtype
  // for the unsharded parameter and hence the dtype for forward/backward computation and the
  // parameter all-gather" (torch/distributed/_composable/fsdp/_fsdp_api.py), torchtitan's default
  // bfloat16 (config_manager.py --training.mixed_precision_param) -- and under a quantized compute
  // format to BF16, which the FP8 GEMMs then cast (torchao Float8Linear gathers in FP8 only with
  // enable_fsdp_float8_all_gather, off by default). FP32/TF32 compute gathers FP32.
  [[nodiscard]] constexpr DataType gathered_weights() const {
    if (bytes_per_element(params) <= 2.0) return params;
    if (compute == DataType::bf16 || compute == DataType::fp16) return compute;
    if (is_quantized_training_format(compute)) return DataType::bf16;
    return params;
  }
  // The format the distributed optimizer (ZeRO 1 and 2) all-gathers the updated weights in: as
  // stored, except MXFP8 weights, which Megatron-Core gathers in BF16 into the gradient buffer and
  // each rank then quantizes (--reuse-grad-buf-for-mxfp8-param-ag: "BF16 parameters" fill the
  // buffer for the all-gather, which is zeroed for the gradients after it; megatron/core/
  // distributed/param_and_grad_buffer.py). Megatron-Core warns that MXFP8 without it and
  // --fp8-param-gather "will use significant amount additional GPU memory"
  // (megatron/core/optimizer/optimizer_config.py __post_init__).
  [[nodiscard]] constexpr DataType distributed_optimizer_gather() const {
    return params == DataType::mxfp8 ? DataType::bf16 : params;
  }
  bool operator==(const PrecisionConfig&) const = default;
};

// Whether MXFP8 weights (params: mxfp8) have a modelled path at ZeRO stage `zero` over `dp`
// data-parallel ranks: the distributed optimizer's (zero 1 or 2), which Megatron-LM requires for
// --fp8-param-gather ("only supported with distributed optimizer, torch fsdp2, megatron fsdp, or
// inference mode"), or no data parallelism at all; not ZeRO-3/FSDP (not modelled). The loader
// (scenario_checks.cpp), the layout search and explain apply this one rule.
constexpr bool mxfp8_weights_supported(int zero, int dp) { return zero <= 2 && (zero >= 1 || dp <= 1); }

// The expansion of a one-word `precision:` value. fp32/tf32/fp16/bf16/fp8 are valid training
// shorthands; the loader rejects the others there.
constexpr PrecisionConfig precision_shorthand(DataType compute) {
  PrecisionConfig p;
  p.compute = compute;
  switch (compute) {
    case DataType::fp32:
    case DataType::tf32:
      p.params = DataType::fp32;
      p.kv_cache = DataType::fp32;
      p.master_weights = false;
      break;
    case DataType::fp16:
      p.params = DataType::fp16;
      p.kv_cache = DataType::fp16;
      p.loss_scaling = true;
      break;
    default:
      p.params = DataType::bf16;
      p.kv_cache = DataType::bf16;
      break;
  }
  return p;
}

}  // namespace stepcast
