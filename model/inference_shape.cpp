#include "model/inference_shape.h"

#include <algorithm>

namespace stepcast {
namespace {

bool is_eight_bit_or_less(DataType t) { return bytes_per_element(t) < 2.0; }

}  // namespace

double InferenceShape::q_width_per_rank() const {
  if (mla) return heads_per_rank() * (mla->qk_nope_head_dim + mla->qk_rope_head_dim);
  return heads_per_rank() * head_dim;
}

double InferenceShape::o_width_per_rank() const {
  if (mla) return heads_per_rank() * mla->v_head_dim;
  return heads_per_rank() * head_dim;
}

InferenceShape make_inference_shape(const TransformerSpec& model, const ParallelConfig& parallel,
                                    const PrecisionConfig& precision, const InferenceCostParameters& params) {
  InferenceShape s;
  s.hidden = model.hidden;
  s.heads = model.heads;
  s.kv_heads = model.resolved_kv_heads();
  s.head_dim = model.resolved_head_dim();
  s.ffn = model.resolved_ffn_hidden();
  s.vocab = model.vocab;
  s.layers = model.layers;
  s.moe_layers = model.is_moe() ? std::max(model.layers - model.moe.first_dense_layers, 0) : 0;
  s.tp = std::max(parallel.tp, 1);
  s.pp = std::max(parallel.pp, 1);
  s.ep = model.is_moe() ? std::max(parallel.ep, 1) : 1;
  s.mlp = model.mlp;
  s.tied_embeddings = model.tied_embeddings;
  s.mla = model.mla;
  s.moe = model.moe;
  if (s.moe.is_moe() && s.moe.ffn_hidden <= 0) s.moe.ffn_hidden = static_cast<int>(s.ffn);

  s.compute = precision.compute;
  s.weights = precision.params;
  s.kv_cache = precision.kv_cache;
  const double compute_bytes = bytes_per_element(precision.compute);
  s.activation_bytes = compute_bytes >= 4.0 ? 4.0 : 2.0;
  s.gemm_input_bytes = is_eight_bit_or_less(precision.compute) ? compute_bytes : s.activation_bytes;
  s.weight_bytes = bytes_per_element(precision.params);
  s.weight_only = bytes_per_element(precision.params) < compute_bytes;
  if (s.weight_only) {
    const bool four_bit = bytes_per_element(precision.params) <= 0.5 + 1e-9 ||
                          precision.params == DataType::nvfp4;
    s.weight_only_compute_factor =
        four_bit ? params.weight_only_int4_compute_factor : params.weight_only_int8_compute_factor;
    // Integer formats carry group scales; FP8/MX/NV formats have theirs in bytes_per_element.
    if (precision.params == DataType::int8 || precision.params == DataType::int4) {
      s.weight_bytes += params.weight_only_scale_bytes_per_weight;
    }
  }
  return s;
}

Bytes kv_bytes_per_token_layer(const InferenceShape& s) {
  const double e = bytes_per_element(s.kv_cache);
  if (s.mla) return Bytes((s.mla->kv_lora_rank + s.mla->qk_rope_head_dim) * e);
  return Bytes(2.0 * s.kv_heads * s.head_dim * e);
}

Bytes kv_bytes_per_token_layer_per_rank(const InferenceShape& s) {
  const double e = bytes_per_element(s.kv_cache);
  if (s.mla) return Bytes((s.mla->kv_lora_rank + s.mla->qk_rope_head_dim) * e);
  return Bytes(2.0 * s.kv_heads_per_rank() * s.head_dim * e);
}

Bytes kv_bytes_per_token_per_gpu(const InferenceShape& s) {
  return kv_bytes_per_token_layer_per_rank(s) * static_cast<double>(s.stage_layers());
}

InferenceLayerWeights inference_layer_weights(const InferenceShape& s, bool moe_layer) {
  InferenceLayerWeights w;
  const double h = s.hidden;
  const double a = s.heads_per_rank();
  if (s.mla) {
    const MlaSpec& m = *s.mla;
    const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    // Down-projections (q_a, kv_a) are replicated on every rank; up-projections and the output
    // projection are split by heads.
    const double q = m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * a * qk : h * a * qk;
    const double kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank * a * (m.qk_nope_head_dim + m.v_head_dim);
    w.attention = q + kv + a * m.v_head_dim * h;
  } else {
    const double qkv = h * (a * s.head_dim + 2.0 * s.kv_heads_per_rank() * s.head_dim);
    w.attention = qkv + a * s.head_dim * h;
  }
  const double mlp_factor = s.mlp == MlpKind::swiglu ? 3.0 : 2.0;
  if (moe_layer) {
    const double expert_tp = static_cast<double>(s.tp) / s.ep;
    const double fe = s.moe.ffn_hidden;
    w.expert_each = mlp_factor * h * fe / expert_tp;
    w.experts = w.expert_each * s.moe.experts / s.ep;
    w.mlp = s.moe.shared_experts * mlp_factor * h * fe / s.t();
    w.router = h * s.moe.experts;
  } else {
    w.mlp = mlp_factor * h * s.ffn / s.t();
  }
  w.norms = 2.0 * h;
  return w;
}

Bytes weight_bytes_per_gpu(const InferenceShape& s) {
  const InferenceLayerWeights dense = inference_layer_weights(s, false);
  const InferenceLayerWeights moe = inference_layer_weights(s, true);
  const double f = s.stage_fraction();
  const double dense_layers = (s.layers - s.moe_layers) * f;
  const double moe_layers = s.moe_layers * f;
  const double quantized = dense_layers * (dense.attention + dense.mlp) +
                           moe_layers * (moe.attention + moe.mlp + moe.experts);
  // Norms and routers stay in 16 bits, as do the embedding and the output layer.
  const double sixteen_bit = dense_layers * dense.norms + moe_layers * (moe.norms + moe.router);
  const double vocab_matrix = s.vocab * s.hidden / s.t();
  const double ends = s.pp == 1 && !s.tied_embeddings ? 2.0 * vocab_matrix : vocab_matrix;
  return Bytes(quantized * s.weight_bytes + (sixteen_bit + ends) * s.activation_bytes);
}

}  // namespace stepcast
