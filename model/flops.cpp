#include "model/flops.h"

#include <algorithm>

namespace stepcast {

LayerFlops layer_forward_flops(const TransformerSpec& model, double sequences, double seq, AttentionCount count,
                               bool moe_layer, double document_tokens) {
  const double tokens = sequences * seq;
  // The keys a query may see before the causal mask: its document's, when documents are packed.
  const double keys = document_tokens > 0.0 && document_tokens < seq ? document_tokens : seq;
  const double h = model.hidden;
  const double a = model.heads;
  LayerFlops f;
  double attention = 0.0;
  if (model.mla) {
    const MlaSpec& m = *model.mla;
    const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const double q = m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * a * qk : h * a * qk;
    const double kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank * a * (m.qk_nope_head_dim + m.v_head_dim);
    f.qkv = Flops(2.0 * tokens * (q + kv));
    attention = 2.0 * sequences * seq * keys * a * (qk + m.v_head_dim);
    f.out_proj = Flops(2.0 * tokens * a * m.v_head_dim * h);
  } else {
    const double d = model.resolved_head_dim();
    const double q = a * d;
    const double kv = model.resolved_kv_heads() * d;
    f.qkv = Flops(2.0 * tokens * h * (q + 2.0 * kv));
    attention = 4.0 * sequences * seq * keys * q;
    f.out_proj = Flops(2.0 * tokens * q * h);
  }
  f.attention = Flops(count == AttentionCount::causal ? 0.5 * attention : attention);
  // Sliding-window layers: each query attends to `window` keys (the causal work itself, so both
  // conventions count it once); f.attention is the mean over full and windowed layers.
  const double windowed = model.windowed_layer_fraction();
  if (windowed > 0.0 && model.sliding_window < keys) {
    const double window_work = attention * model.sliding_window / keys;
    f.attention = f.attention * (1.0 - windowed) + Flops(window_work) * windowed;
  }
  const double mlp_matrices = model.mlp == MlpKind::swiglu ? 3.0 : 2.0;
  if (moe_layer && model.is_moe()) {
    const double width = model.resolved_expert_ffn_hidden();
    f.mlp = Flops(2.0 * mlp_matrices * tokens * h * width * (model.moe.top_k + model.moe.shared_experts));
    f.router = Flops(2.0 * tokens * h * model.moe.experts);
  } else {
    f.mlp = Flops(2.0 * mlp_matrices * tokens * h * model.resolved_ffn_hidden());
  }
  return f;
}

Flops logits_forward_flops(const TransformerSpec& model, double sequences, double seq) {
  return Flops(2.0 * sequences * seq * model.hidden * model.vocab);
}

StepFlops training_step_flops(const TransformerSpec& model, double global_batch, double seq, Recompute recompute,
                              AttentionCount count, double recomputed_fraction, RecomputeModules modules,
                              double document_tokens) {
  const double moe_layers = model.is_moe() ? std::max(model.layers - model.moe.first_dense_layers, 0) : 0;
  const double dense_layers = model.layers - moe_layers;
  const LayerFlops dense = layer_forward_flops(model, global_batch, seq, count, false, document_tokens);
  const LayerFlops moe = layer_forward_flops(model, global_batch, seq, count, true, document_tokens);
  const Flops layers_forward = dense.total() * dense_layers + moe.total() * moe_layers;
  // Multi-token prediction (model/transformer.h mtp_depth): per module one block of the decoder's last
  // layer kind, the 2h -> h projection and the shared head's logits again.
  const double mtp = std::max(model.mtp_depth, 0);
  const bool mtp_block_moe = moe_layers > 0.0;  // as parameter_count.h mtp_block_is_moe
  const Flops mtp_forward = ((mtp_block_moe ? moe.total() : dense.total()) +
                             Flops(2.0 * global_batch * seq * 2.0 * model.hidden * static_cast<double>(model.hidden)) +
                             logits_forward_flops(model, global_batch, seq)) * mtp;
  const Flops forward = layers_forward + logits_forward_flops(model, global_batch, seq) + mtp_forward;
  StepFlops f;
  f.model = forward * 3.0;
  f.hardware = f.model;
  // The recomputed layers: the decoder's and each MTP module's block (one layer of the last kind).
  const double dense_recomputed = dense_layers + (mtp_block_moe ? 0.0 : mtp);
  const double moe_recomputed = moe_layers + (mtp_block_moe ? mtp : 0.0);
  const double all_recomputed = dense_recomputed + moe_recomputed;
  if (recompute == Recompute::full) {
    f.hardware += (dense.total() * dense_recomputed + moe.total() * moe_recomputed) * recomputed_fraction;
  }
  if (recompute == Recompute::selective_op) {
    // torchtitan's per-op policy re-runs every second GEMM of a block (model/op_checkpoint.h):
    // wk, wo and w3 (SwiGLU) or fc2; dense layers only (the loader rejects MoE and MLA).
    const double tokens = global_batch * seq;
    const double h = model.hidden;
    const double recomputed_width = model.resolved_kv_heads() * model.resolved_head_dim() +
                                    model.heads * model.resolved_head_dim() + model.resolved_ffn_hidden();
    f.hardware += Flops(2.0 * tokens * h * recomputed_width) * all_recomputed;
    return f;
  }
  if (recompute != Recompute::selective) return f;
  using RM = RecomputeModule;
  const double tokens = global_batch * seq;
  if (modules.has(RM::core_attn)) f.hardware += dense.attention * all_recomputed;
  if (modules.has(RM::mlp)) f.hardware += dense.mlp * dense_recomputed;
  if (moe_layers > 0.0 && modules.has(RM::moe)) {
    f.hardware += (moe.mlp + moe.router) * moe_recomputed;
  } else if (moe_layers > 0.0 && modules.has(RM::shared_experts)) {
    const double width = model.resolved_expert_ffn_hidden();
    const double matrices = model.mlp == MlpKind::swiglu ? 3.0 : 2.0;
    f.hardware += Flops(2.0 * matrices * tokens * model.hidden * width * model.moe.shared_experts) * moe_recomputed;
  }
  if (model.mla && modules.has(RM::mla_up_proj)) {
    const MlaSpec& m = *model.mla;
    const double a = model.heads;
    const double q_up = m.q_lora_rank > 0 ? m.q_lora_rank * a * (m.qk_nope_head_dim + m.qk_rope_head_dim) : 0.0;
    const double kv_up = m.kv_lora_rank * a * (m.qk_nope_head_dim + m.v_head_dim);
    f.hardware += Flops(2.0 * tokens * (q_up + kv_up)) * all_recomputed;
  }
  return f;
}

Flops megatron_eq3_flops(double global_batch, double seq, double layers, double hidden, double vocab) {
  return Flops(96.0 * global_batch * seq * layers * hidden * hidden *
               (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden)));
}

}  // namespace stepcast
