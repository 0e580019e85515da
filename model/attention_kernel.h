#pragma once
// Which generation of fused attention kernel a training run calls (training.attention_kernel).
//
// best: the fastest kernel of the GPU's generation, which the flash etas of model/cost_parameters.h
// describe (FlashAttention-2 on Ampere and Ada; cuDNN fused attention, as Transformer Engine and
// Megatron-Core run it, on Hopper and Blackwell).
// flash2: FlashAttention-2 (Dao 2023) on every GPU: the kernel behind PyTorch's
// scaled_dot_product_attention flash backend (torchtitan, which leaves the backend to PyTorch: cuDNN
// attention was made opt-in again in October 2024, pytorch/pytorch PR #138522, cherry-picked to the
// 2.5 release branch; torchtitan enabled it itself only in March 2025, pytorch/torchtitan PR #1000) and of the flash-attn 2 package
// (llm-foundry's attn_impl: flash). On Ampere it is the kernel `best` already describes.
// triton: llm-foundry's Triton FlashAttention (attn_impl: triton; llmfoundry/models/layers/
// flash_attn_triton.py, Tri Dao's HazyResearch flash_attn_triton.py compiled by triton_pre_mlir, a
// fork of the December 2022 Triton), which the MPT recipes of 2023 set. It runs on Ampere-era
// instructions (triton_pre_mlir's LLVM 11 has no sm_90 target) and is priced as a fraction of
// FlashAttention-2's speed (model/triton_attention.h).

#include <cstdint>

namespace stepcast {

enum class AttentionKernel : std::uint8_t { best, flash2, triton };

}  // namespace stepcast
