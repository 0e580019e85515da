#pragma once
// The shape of a decoder-only transformer: what the work is, independent of how it is run.
//
// Dense, GQA/MQA (kv_heads < heads), multi-head latent attention (MLA, DeepSeek-V2/V3) and
// mixture-of-experts models share this one description. Dimensions are element counts.

#include <optional>
#include <string>

namespace stepcast {

// The MLP's activation. gelu: h -> f -> h with GELU (GPT). swiglu: a gated MLP, FC1 2f wide (gate and
// up), SwiGLU (Llama). relu2: h -> f -> h with the squared ReLU relu(x)^2 (So et al. 2021, "Primer",
// arXiv:2109.08668; Nemotron-4, arXiv:2402.16819 Sec. 2: "squared ReLU activations in the MLP
// layers"): the same GEMMs as gelu, and one fused elementwise kernel of the same traffic, since
// Megatron-Core runs it as `squared_relu`, torch.pow(F.relu(x), 2) under jit_fuser, i.e. torch.compile
// from PyTorch 2.2 (megatron/core/activations.py @0ef95585; megatron/core/jit.py and the unfused
// activation branch of MLP.forward, megatron/core/transformer/mlp.py, @00caa53a; its bias-activation
// fusion takes gelu and swiglu only, and Nemotron-4 has no biases): one kernel reading x and writing
// y forward, one reading x and dy and writing dx backward, as GELU's.
enum class MlpKind { gelu, swiglu, relu2 };
enum class NormKind { layernorm, rmsnorm };
// How token positions enter the model. learned: an absolute position table added to the input
// embedding (GPT-2/3). rotary: RoPE rotates every query and key (Su et al. 2021; Llama, Mixtral,
// Qwen, DeepSeek, GPT-OSS), an elementwise pass over Q and K per layer. alibi: a per-head linear
// bias added inside the attention kernel (Press et al. 2022; MPT, BLOOM), no separate pass.
// yarn: RoPE with YaRN frequency scaling (Peng et al. 2023; GPT-OSS), the same rotation of every
// query and key, but Megatron-Bridge keeps Transformer Engine's fused RoPE kernel for
// position_embedding_type 'rope' only (src/megatron/bridge/utils/fusions.py
// validate_rope_fusion_compatibility), so it runs Megatron-Core's unfused PyTorch rotation
// (model/layer_ops.cpp push_rope).
enum class PositionEmbedding { learned, rotary, alibi, yarn };

// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434 Sec. 2.1): K and V are compressed
// into a kv_lora_rank latent that is cached; queries optionally through a q_lora_rank latent.
struct MlaSpec {
  int q_lora_rank = 0;        // 0: queries projected directly from the hidden state
  int kv_lora_rank = 512;
  int qk_nope_head_dim = 128;
  int qk_rope_head_dim = 64;
  int v_head_dim = 128;
  bool operator==(const MlaSpec&) const = default;
};

// Mixture of experts. experts == 1 means a dense MLP.
struct MoeSpec {
  int experts = 1;            // routed experts per MoE layer
  int top_k = 1;              // experts each token is routed to
  int ffn_hidden = 0;         // per-expert FFN width (0: same as the dense ffn_hidden)
  int shared_experts = 0;     // always-active experts (DeepSeekMoE)
  // Tokens each expert processes, relative to a perfectly even share: 0 = dropless (Megatron's
  // default; the busiest rank's experts then carry load_imbalance x the mean), > 0 = a fixed
  // capacity, tokens beyond it dropped and buffers padded to it (model/moe_ops.h).
  double capacity_factor = 0.0;
  double load_imbalance = 1.0;    // dropless: the busiest rank's per-expert load over the mean
  int first_dense_layers = 0;     // leading layers with a dense MLP (DeepSeek-V3: 3)
  // Group-limited routing (DeepSeek-V3 report Sec. 2.1.2 "node-limited routing"; Megatron-Core
  // --moe-router-num-groups / --moe-router-group-topk; Hugging Face n_group / topk_group): the
  // experts split into router_groups equal contiguous groups, each token first picks
  // router_group_topk groups, then its top_k experts inside them. 0 / 0: no limit.
  int router_groups = 0;
  int router_group_topk = 0;

  [[nodiscard]] bool is_moe() const { return experts > 1; }
  [[nodiscard]] bool group_limited() const { return router_groups > 1 && router_group_topk > 0; }
  bool operator==(const MoeSpec&) const = default;
};

struct TransformerSpec {
  std::string name;           // catalog key or "custom"
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;           // == heads for MHA, 1 for MQA
  int head_dim = 0;           // usually hidden / heads
  int ffn_hidden = 0;         // dense MLP width
  int vocab = 0;
  MlpKind mlp = MlpKind::gelu;
  NormKind norm = NormKind::layernorm;
  PositionEmbedding position = PositionEmbedding::learned;
  bool tied_embeddings = false;
  bool linear_bias = true;    // GPT-style biases in linear layers (Llama: none)
  bool dropout = true;        // attention and hidden dropout applied in training (GPT-3: 0.1;
                              // Llama: none); dropout masks are stored activations
  // QK-norm: a per-head RMSNorm over head_dim of every query and key after the QKV projection
  // (Qwen3; Megatron-Core's qk_layernorm, SelfAttention's q_layernorm and k_layernorm).
  bool qk_norm = false;
  std::optional<MlaSpec> mla;
  MoeSpec moe;
  // Sliding-window attention (GPT-OSS, Gemma, Mistral): queries attend to the last
  // `sliding_window` tokens only; 0 = full attention everywhere. With full_attention_every = N > 0
  // every N-th layer attends fully and the others use the window (Megatron-Core's
  // window_attn_skip_freq); 0 = every layer uses the window.
  int sliding_window = 0;
  int full_attention_every = 0;
  // Clamped gated activation (GPT-OSS: swiglu_limit 7.0 in its Hugging Face config; Megatron-Core's
  // activation_func_clamp_value): before the activation, the gate half of FC1's output is clamped
  // to at most this value and the linear half to [-value, value]. 0 = no clamp. The clamp itself
  // is free arithmetic; what it costs is how Megatron-Core runs it in the experts, outside the
  // fused activation kernel (model/moe_ops.h).
  double activation_clamp = 0.0;
  // Multi-token prediction depth D (DeepSeek-V3 technical report, arXiv:2412.19437, Sec. 2.2; Hugging
  // Face num_nextn_predict_layers; Megatron-Core mtp_num_layers): D sequential modules run in
  // training after the main model, each the shared embedding of the next token, RMSNorms of it and of
  // the previous depth's hidden state, their concatenation projected 2h -> h (M_k), one transformer
  // block of the decoder's last layer kind, and the shared output head with its cross-entropy.
  // Megatron-Core places them on the last pipeline stage with the loss (simulator/training_predictor.h).
  // 0: none (training only; inference drops the modules).
  int mtp_depth = 0;

  [[nodiscard]] bool is_moe() const { return moe.is_moe(); }
  // The widths a zero leaves to convention, as every cost function reads them: kv_heads 0 is MHA
  // (= heads), head_dim 0 is hidden / heads, ffn_hidden 0 is 4 hidden, and moe.ffn_hidden 0 is the
  // dense ffn width.
  [[nodiscard]] double resolved_kv_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  [[nodiscard]] double resolved_head_dim() const {
    return head_dim > 0 ? head_dim : static_cast<double>(hidden) / heads;
  }
  [[nodiscard]] double resolved_ffn_hidden() const { return ffn_hidden > 0 ? ffn_hidden : 4.0 * hidden; }
  [[nodiscard]] double resolved_expert_ffn_hidden() const {
    return moe.ffn_hidden > 0 ? moe.ffn_hidden : resolved_ffn_hidden();
  }
  // Share of layers whose attention is windowed.
  [[nodiscard]] double windowed_layer_fraction() const {
    if (sliding_window <= 0) return 0.0;
    return full_attention_every > 0 ? 1.0 - 1.0 / full_attention_every : 1.0;
  }
  bool operator==(const TransformerSpec&) const = default;
};

}  // namespace stepcast
