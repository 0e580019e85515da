#pragma once
// llm-foundry's Triton FlashAttention (training.attention_kernel: triton; model/attention_kernel.h)
// as a fraction of FlashAttention-2's speed on the same GPU and shape: forward and backward, unitless.
// CostParameters::flash_*_eta multiply FlashAttention-2's eta by these (model/cost_parameters.cpp).
//
// Source: the FlashAttention-2 paper (Dao 2023, arXiv:2307.08691, Sec. 4.1, A100 80GB SXM4, seq
// 512-16K at 16K tokens, head dim 64 and 128, causal and not): "FlashAttention-2 is around
// 1.3-1.5x faster than FlashAttention in Triton in the forward pass and around 2x faster in the
// backward pass". Forward 1 / sqrt(1.3 x 1.5) = 0.716 (the range's geometric middle; the range is
// 0.667-0.769), backward 1 / 2 = 0.5 (scripts/derive_triton_attention.py, from
// tests/fixtures/reference/triton_attention.yaml). The paper's Triton bars (Fig. 4-6) were not
// available to us as numbers, only the sentence above.
//
// Which kernel that is: the paper's benchmark (Dao-AILab/flash-attention
// benchmarks/benchmark_flash_attention.py, July 2023) imports triton.ops.flash_attention from "the
// newest triton version", Phil Tillet's kernel in OpenAI's MLIR-era Triton. llm-foundry's is Tri
// Dao's earlier port of the same tutorial kernel, pinned to triton_pre_mlir (Triton
// 2.0.0.dev20221202): a sibling, not the same binary. Its own header places it against CUDA
// FlashAttention-1: "Triton forward is generally faster than CUDA forward, while Triton backward is
// generally slower than CUDA backward. Overall Triton forward + backward is slightly slower than CUDA
// forward + backward" (and llm-foundry's 2023 tutorial: "In our experience, triton is slightly faster
// than flash", its FlashAttention-1 option). With the Ampere FlashAttention-2 etas (0.62 / 0.50) these
// ratios give 0.44 forward (FlashAttention-1 reached 30-50%, FA2 paper Sec. 1) and 0.25 backward
// (FA1: 25-35%), and forward + backward at 0.29 of peak against FlashAttention-1's 0.26 (FA2 "around
// 2x faster than FlashAttention", Sec. 4.1): within 10% of FlashAttention-1 overall, as both sources
// say (tests/fidelity/triton_attention_test.cpp).
//
// Hopper: an assumption, not a measurement. No published figure exists for this kernel on an H100
// (the FlashAttention-3 paper's "Triton" bars, arXiv:2407.08608 Fig. 5-6, are "FlashAttention-2 in
// Triton (which uses H100-specific instructions)", OpenAI's 2024 tutorial kernel with wgmma/TMA, not
// this one). triton_pre_mlir compiles through LLVM 11, which has no sm_90 target (llm-foundry
// TUTORIAL.md, "Known issue with sm86+ GPUs"), so, like FlashAttention-2, it runs Ampere's mma.sync
// on Hopper; we take its speed relative to FlashAttention-2 to carry over from the A100 unchanged,
// with FlashAttention-2's Hopper ratios and CTA split (the Triton kernel's grid is also one CTA per
// 128-query tile of each (sequence, head)). Blackwell and CDNA3: rejected (flash2_priced()).

namespace stepcast {

inline constexpr double kTritonForwardOverFlash2 = 0.716;
inline constexpr double kTritonBackwardOverFlash2 = 0.5;

}  // namespace stepcast
