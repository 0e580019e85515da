#pragma once
// Floating-point operations of a transformer: per layer, per step, and Megatron's closed form.
//
// Per layer forward on b sequences of s tokens (DESIGN.md "FLOPs"; a multiply-add is 2 FLOPs):
//   QKV projection        2 b s h (a d + 2 g d)      (= 2bsh(h + 2gd); GQA when g < a)
//   attention core        4 b s^2 a d                (QK^T and PV; = 4bs^2h)
//   output projection     2 b s (a d) h
//   MLP                   4 b s h f  (GELU, squared ReLU), 6 b s h f (SwiGLU: gate, up and down projections)
//   logits (once)         2 b s h V
// Multi-head latent attention replaces QKV by its projections (model/mla_ops.h: 2 b s times
// h q_r + q_r a (d_n + d_r) + h (kv_r + d_r) + kv_r a (d_n + d_v)), the core by
// 2 b s^2 a (d_n + d_r + d_v) and the output projection by 2 b s a d_v h. A mixture-of-experts
// layer's MLP counts the top_k routed experts and the shared experts each token passes through,
// 2 m b s h f_e (top_k + shared) with m = 3 (SwiGLU) or 2, plus the router 2 b s h E — the model
// FLOPs of a token, not the padded or imbalanced work a rank does (that is in the ops' time).
// Sliding-window layers count 4 b s w a d for their core (each query attends to w keys), and
// LayerFlops::attention is the mean over the model's full and windowed layers. Packed documents of
// N < s tokens with attention masked per document (TrainingWorkload::document_tokens) count
// 4 b s N a d (s / N documents of N^2 pairs each; a window w < N then 4 b s w a d as before).
// Each multi-token-prediction module (mtp_depth) adds one layer of the decoder's last kind, its
// projection 2 b s (2h) h and the logits 2 b s h V (Megatron-LM's num_floating_point_operations
// counts the same MTP terms). Recomputation counts each module's block as one more layer of its
// kind: Megatron-Core's MultiTokenPredictionLayer._checkpointed_forward (multi_token_prediction.py)
// checkpoints it under full recomputation, and its block's modules follow the decoder's selective
// policy. The module's 2h -> h projection and its head are not counted as recomputed.
// Backward is twice the forward. Full recomputation adds one forward of every layer; selective
// recomputation re-runs the GEMM work of its modules (model/parallel.h): core_attn the attention
// core of every layer, mlp the dense layers' MLP, moe the MoE layers' experts and router,
// shared_experts their shared experts, mla_up_proj MLA's up-projections
// 2 b s (q_r a (d_n + d_r) + kv_r a (d_n + d_v)) (the q term with q_lora_rank > 0); layernorm
// and moe_act re-run memory-bound kernels only.
//
// Model FLOPs (for MFU) count forward + backward without recomputation; hardware FLOPs (for HFU)
// add recomputation. Which attention term is counted is a convention, stated by AttentionCount:
// stepcast reports MFU/HFU with the full (non-causal) s^2 term, as Megatron-LM did until 2025
// (commit 8873b55d6a) and as Narayanan et al. 2021 eq. 3 and PaLM's MFU do; `causal` halves it,
// as the causal kernels' real work is.

#include "model/parallel.h"
#include "model/transformer.h"
#include "model/units.h"

namespace stepcast {

enum class AttentionCount { full, causal };

struct LayerFlops {
  Flops qkv;        // QKV, or MLA's down and up projections
  Flops attention;  // scores + values
  Flops out_proj;
  Flops mlp;        // dense MLP, or the routed top_k and shared experts
  Flops router;     // MoE layers
  [[nodiscard]] Flops total() const { return qkv + attention + out_proj + mlp + router; }
};

// Forward FLOPs of one whole (unsharded) layer for `sequences` sequences of `seq` tokens: the dense
// kind, or (moe_layer) the mixture-of-experts kind.
// `document_tokens` > 0 and < seq: each sequence packs documents of that many tokens, attention
// masked per document.
LayerFlops layer_forward_flops(const TransformerSpec& model, double sequences, double seq,
                               AttentionCount count = AttentionCount::full, bool moe_layer = false,
                               double document_tokens = 0.0);
// Forward FLOPs of the logits GEMM.
Flops logits_forward_flops(const TransformerSpec& model, double sequences, double seq);

struct StepFlops {
  Flops model;     // forward + backward, no recomputation
  Flops hardware;  // model + recomputation
};

// FLOPs of one optimizer step over `global_batch` sequences.
// `recomputed_fraction`: the share of layers full recomputation re-runs (parallel.recompute_layers);
// `document_tokens`: as layer_forward_flops.
StepFlops training_step_flops(const TransformerSpec& model, double global_batch, double seq, Recompute recompute,
                              AttentionCount count = AttentionCount::full, double recomputed_fraction = 1.0,
                              RecomputeModules modules = {}, double document_tokens = 0.0);

// Narayanan et al. 2021, eq. 3: F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)), the FLOPs per
// iteration of a GPT model (4h MLP, MHA) with full activation recomputation.
Flops megatron_eq3_flops(double global_batch, double seq, double layers, double hidden, double vocab);

}  // namespace stepcast
