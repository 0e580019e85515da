#include "model/activation_memory.h"

#include <algorithm>

#include "model/mla_ops.h"
#include "model/moe_ops.h"
#include "model/op_checkpoint.h"

namespace stepcast {

double saved_gemm_input_bytes(const LayerShape& s) {
  return is_quantized_training_format(s.compute) && s.kernels == KernelFusion::fused ? bytes_per_element(s.compute) : s.activation_bytes;
}

LayerActivations layer_activation_bytes(const LayerShape& s, Recompute recompute, RecomputeModules modules) {
  const double e = s.activation_bytes;
  const double g = saved_gemm_input_bytes(s);  // a GEMM input kept for the weight gradient
  const bool quantized = g != e;
  const double T = s.tokens();   // s b
  const double Tn = s.norm_tokens();
  const double t = s.t();
  const double h = s.hidden;
  if (recompute == Recompute::full) {
    // Only the layer input is kept (the sequence-parallel shard when SP is on).
    return {Bytes(e * Tn * h), Bytes(0.0)};
  }
  // torchtitan's per-op policy keeps the block input and the saved ops' outputs (op_checkpoint.h);
  // no attention scores exist with the flash kernel, and an unfused core is recomputed.
  if (recompute == Recompute::selective_op) return {selective_op_saved_bytes(s), Bytes(0.0)};
  const auto dropped = [&](RecomputeModule m) { return recomputes_module(recompute, modules, m); };
  const double mask = s.dropout ? 1.0 : 0.0;
  const double kv_per_rank = std::max(s.kv_heads / t, 1.0) * s.head_dim;
  // Replicated without SP (Tn = T), split with SP (Tn = T/t).
  const double norms = 2.0 * e * Tn * h;                     // two norm inputs
  // QKV and FC1 (router) inputs: the norms' outputs.
  const bool attention_input_dropped = dropped(RecomputeModule::layernorm) && s.mla.has_value();
  const bool mlp_input_dropped = (dropped(RecomputeModule::layernorm) && s.moe_layer) ||
                                 (dropped(RecomputeModule::mlp) && !s.moe_layer);
  // The attention input is kept by its GEMMs (quantized: one copy per consuming GEMM, two with
  // MLA's q and kv down-projections); a dense MLP's input by FC1, a MoE layer's by the 16-bit
  // router (and, quantized, once more by the shared experts' FC1 below).
  const double attention_input = quantized ? g * (s.mla ? 2.0 : 1.0) : e;
  const double mlp_input = s.moe_layer ? e : g;
  const double gemm_inputs = Tn * h * ((attention_input_dropped ? 0.0 : attention_input) + (mlp_input_dropped ? 0.0 : mlp_input));
  const double masks = mask * Tn * h * 2.0;                  // attention-output and MLP dropout masks
  // Attention: Q, K, V and the projection's input, split across TP ranks. MLA also keeps its
  // latents (replicated on every TP rank): the q and kv down-projection outputs (the norms'
  // inputs) and the normed latents (the up-projections' inputs).
  // The projection's input is the attention output: one 16-bit tensor shared by the flash kernel
  // (its backward reads O) and the projection; quantized, the projection keeps its own copy.
  const double projection_bytes = quantized ? (s.flash_attention ? e : 0.0) + g : e;
  double qkv = e * T * (s.q_width() / t + 2.0 * kv_per_rank);
  double projection_input = projection_bytes * T * s.q_width() / t;
  if (s.mla) {
    const MlaWidths w = mla_widths(s);
    const double q_latent = s.mla->q_lora_rank;
    const double up_projected = dropped(RecomputeModule::mla_up_proj) ? 0.0 : e * T * (2.0 * w.q + w.v);
    // Down-projection outputs (the latent norms' inputs) in 16 bits; the normed latents are the
    // up-projections' GEMM inputs.
    qkv = up_projected + e * T * (q_latent + w.latent) + g * T * (q_latent + s.mla->kv_lora_rank);
    projection_input = projection_bytes * T * w.v;
  }
  // QK-norm keeps its inputs, the projected queries and keys before the norm (Transformer Engine's
  // RMSNorm saves x and one FP32 rstd per row; the attention keeps the normed, rotated ones above).
  if (s.qk_norm && !s.mla) qkv += e * T * (s.q_width() / t + kv_per_rank);
  // MLP: the activation's input and output; for a MoE layer, the router's FP32 probabilities, the
  // tokens the local experts received (their FC1 input), the experts' activation input and output
  // on those tokens, and the shared experts' as a dense MLP.
  // The activation's input (FC1's output) is 16-bit; its output is FC2's GEMM input.
  double mlp_inner = dropped(RecomputeModule::mlp) ? 0.0 : T * (e * s.fc1_width() / t + g * s.ffn / t);
  if (s.moe_layer) {
    const MoeRouting r = moe_routing(s);
    const double gated = s.mlp == MlpKind::swiglu ? 2.0 : 1.0;
    const double activation_output = dropped(RecomputeModule::moe_act) ? 0.0 : g * r.rows * r.expert_ffn;
    // A clamped activation (model/moe_ops.h moe_activation_clamped) keeps FC1's output for the
    // clamps' backward and the clamped copy for the fused activation's: one more 16-bit FC1 output
    // (the moe_act checkpoint keeps only FC1's output).
    const double clamped_copy = moe_activation_clamped(s) && !dropped(RecomputeModule::moe_act)
                                    ? e * gated * r.rows * r.expert_ffn
                                    : 0.0;
    const double shared_input = quantized && r.shared_ffn > 0.0 ? g * Tn * h : 0.0;
    const double shared = dropped(RecomputeModule::shared_experts)
                              ? 0.0
                              : shared_input + T * (e * gated + g) * r.shared_ffn;
    mlp_inner = dropped(RecomputeModule::moe) ? 0.0
                                              : 4.0 * r.tokens * s.moe.experts + r.rows * (g * h + e * gated * r.expert_ffn) +
                                                    activation_output + clamped_copy + shared;
  }
  double core = 0.0;
  if (!s.flash_attention && !dropped(RecomputeModule::core_attn)) {
    const double scores = s.micro_batch * (s.heads / t) * s.seq * s.context;
    core = scores * (e + (s.dropout ? 1.0 + e : 0.0));  // softmax output, dropout mask and output
  }
  // PyTorch eager modules (model/layer_ops.cpp) keep what autograd saves for their kernels: an
  // RMSNorm its FP32 copy of x (pow and x * rsqrt save it; the fused norm keeps x itself), SwiGLU
  // silu(a) next to a and b. Under repeat_kv (eager or compiled) GQA keeps the K and V expanded to
  // every query head (SDPA saves its inputs).
  double eager = 0.0;
  if (s.kernels == KernelFusion::eager) {
    if (s.norm == NormKind::rmsnorm) eager += 2.0 * 4.0 * Tn * h;
    if (s.mlp == MlpKind::swiglu && !s.moe_layer && !dropped(RecomputeModule::mlp)) eager += e * T * s.ffn / t;
  }
  if (s.repeat_kv) eager += 2.0 * e * T * (s.q_width() / t - kv_per_rank);
  const double stored = norms + gemm_inputs + masks + qkv + projection_input + mlp_inner + core + eager;
  return {Bytes(stored), Bytes(core)};
}

Bytes recompute_working_set_bytes(const LayerShape& s) {
  return layer_activation_bytes(s, Recompute::none).stored;
}

Bytes selective_recompute_working_set_bytes(const LayerShape& s, RecomputeModules modules) {
  return layer_activation_bytes(s, Recompute::none).stored -
         layer_activation_bytes(s, Recompute::selective, modules).stored;
}

Bytes embedding_activation_bytes(const LayerShape& s) {
  return Bytes(s.dropout ? s.norm_tokens() * s.hidden : 0.0);
}

Bytes output_activation_bytes(const LayerShape& s) {
  return Bytes(2.0 * s.activation_bytes * s.norm_tokens() * s.hidden + s.saved_logit_bytes() * s.tokens() * s.vocab / s.t());
}

Bytes mtp_activation_bytes(const LayerShape& s) {
  return Bytes(4.0 * s.activation_bytes * s.norm_tokens() * s.hidden);
}

Bytes loss_backward_working_set_bytes(const LayerShape& s) {
  return Bytes(s.loss_backward_logit_bytes() * s.tokens() * s.vocab / s.t());
}

}  // namespace stepcast
