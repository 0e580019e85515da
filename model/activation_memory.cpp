#include "model/activation_memory.h"

#include <algorithm>

namespace stepcast {

LayerActivations layer_activation_bytes(const LayerShape& s, Recompute recompute) {
  const double e = s.activation_bytes;
  const double T = s.tokens();   // s b
  const double Tn = s.norm_tokens();
  const double t = s.t();
  const double h = s.hidden;
  if (recompute == Recompute::full) {
    // Only the layer input is kept (the sequence-parallel shard when SP is on).
    return {Bytes(e * Tn * h), Bytes(0.0)};
  }
  const double mask = s.dropout ? 1.0 : 0.0;
  const double kv_per_rank = std::max(s.kv_heads / t, 1.0) * s.head_dim;
  // Replicated without SP (Tn = T), split with SP (Tn = T/t).
  const double norms = 2.0 * e * Tn * h;                     // two norm inputs
  const double gemm_inputs = e * Tn * h * 2.0;               // QKV and FC1 inputs
  const double masks = mask * Tn * h * 2.0;                  // attention-output and MLP dropout masks
  // Always split across TP ranks.
  const double qkv = e * T * (s.q_width() / t + 2.0 * kv_per_rank);  // Q, K, V
  const double projection_input = e * T * s.q_width() / t;
  const double mlp_inner = e * T * (s.fc1_width() / t + s.ffn / t);  // activation input and output
  double core = 0.0;
  if (!s.flash_attention && recompute != Recompute::selective) {
    const double scores = s.micro_batch * (s.heads / t) * s.seq * s.context;
    core = scores * (e + (s.dropout ? 1.0 + e : 0.0));  // softmax output, dropout mask and output
  }
  const double stored = norms + gemm_inputs + masks + qkv + projection_input + mlp_inner + core;
  return {Bytes(stored), Bytes(core)};
}

Bytes recompute_working_set_bytes(const LayerShape& s) {
  return layer_activation_bytes(s, Recompute::none).stored;
}

Bytes embedding_activation_bytes(const LayerShape& s) {
  return Bytes(s.dropout ? s.norm_tokens() * s.hidden : 0.0);
}

Bytes output_activation_bytes(const LayerShape& s) {
  return Bytes(2.0 * s.activation_bytes * s.norm_tokens() * s.hidden + 4.0 * s.tokens() * s.vocab / s.t());
}

}  // namespace stepcast
