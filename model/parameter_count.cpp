#include "model/parameter_count.h"

#include <algorithm>

namespace stepcast {
namespace {
double norm_parameters(const TransformerSpec& m) {
  return (m.norm == NormKind::layernorm ? 2.0 : 1.0) * m.hidden;
}

// MLA's parameters split into what TP shards (by heads) and what every rank keeps whole.
struct MlaParameters {
  double sharded = 0.0;     // q up (or q), kv up, output projection
  double replicated = 0.0;  // q and kv down-projections
  double norms = 0.0;       // the two latent RMSNorms
};
MlaParameters mla_parameters(const TransformerSpec& model) {
  const MlaSpec& m = *model.mla;
  const double h = model.hidden;
  const double a = model.heads;
  const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
  MlaParameters p;
  if (m.q_lora_rank > 0) {
    p.replicated += h * m.q_lora_rank;
    p.sharded += m.q_lora_rank * a * qk;
    p.norms += m.q_lora_rank;
  } else {
    p.sharded += h * a * qk;
  }
  p.replicated += h * (m.kv_lora_rank + m.qk_rope_head_dim);
  p.sharded += m.kv_lora_rank * a * (m.qk_nope_head_dim + m.v_head_dim);
  p.norms += m.kv_lora_rank;
  p.sharded += a * m.v_head_dim * h;
  return p;
}

double dense_mlp(const TransformerSpec& model, double width) {
  const double h = model.hidden;
  const bool bias = model.linear_bias;
  if (model.mlp == MlpKind::swiglu) return 3.0 * h * width + (bias ? 2.0 * width + h : 0.0);
  return 2.0 * h * width + (bias ? width + h : 0.0);
}
}  // namespace

LayerParameters layer_parameters(const TransformerSpec& model, bool moe_layer) {
  const double h = model.hidden;
  const bool bias = model.linear_bias;
  LayerParameters p;
  if (model.mla) {
    const MlaParameters m = mla_parameters(model);
    p.attention = m.sharded + m.replicated;
    p.norms += m.norms;
  } else {
    const double d = model.resolved_head_dim();
    const double q = model.heads * d;
    const double kv = model.resolved_kv_heads() * d;
    p.attention = h * (q + 2.0 * kv) + q * h + (bias ? (q + 2.0 * kv) + h : 0.0);
  }
  if (moe_layer && model.is_moe()) {
    const double f = model.resolved_expert_ffn_hidden();
    p.mlp = model.moe.shared_experts > 0 ? dense_mlp(model, model.moe.shared_experts * f) : 0.0;
    p.experts = model.moe.experts * dense_mlp(model, f);
    p.router = h * model.moe.experts;
  } else {
    p.mlp = dense_mlp(model, model.resolved_ffn_hidden());
  }
  p.norms += 2.0 * norm_parameters(model);
  return p;
}

int moe_layer_count(const TransformerSpec& model) {
  return model.is_moe() ? std::max(model.layers - model.moe.first_dense_layers, 0) : 0;
}

double embedding_parameters(const TransformerSpec& model) {
  return static_cast<double>(model.vocab) * model.hidden;
}

double output_layer_parameters(const TransformerSpec& model) {
  return norm_parameters(model) + (model.tied_embeddings ? 0.0 : embedding_parameters(model));
}

double total_parameters(const TransformerSpec& model) {
  const int moe = moe_layer_count(model);
  return layer_parameters(model, false).total() * (model.layers - moe) + layer_parameters(model, true).total() * moe +
         embedding_parameters(model) + output_layer_parameters(model);
}

bool mtp_block_is_moe(const TransformerSpec& model) { return moe_layer_count(model) > 0; }

namespace {
// Per module: enorm, hnorm and the final norm before the shared head; the projection M_k.
double mtp_norms(const TransformerSpec& model) { return 3.0 * norm_parameters(model); }
double mtp_projection(const TransformerSpec& model) { return 2.0 * model.hidden * static_cast<double>(model.hidden); }
}  // namespace

double mtp_parameters(const TransformerSpec& model) {
  if (model.mtp_depth <= 0) return 0.0;
  const double block = layer_parameters(model, mtp_block_is_moe(model)).total();
  return model.mtp_depth * (mtp_norms(model) + mtp_projection(model) + block);
}

LayerParametersPerRank mtp_parameters_per_rank(const TransformerSpec& model, int tp, int ep, int expert_tp) {
  LayerParametersPerRank r;
  if (model.mtp_depth <= 0) return r;
  const LayerParametersPerRank block = layer_parameters_per_rank(model, tp, mtp_block_is_moe(model), ep, expert_tp);
  r.dense = model.mtp_depth * (mtp_norms(model) + mtp_projection(model) / std::max(tp, 1) + block.dense);
  r.experts = model.mtp_depth * block.experts;
  return r;
}

double active_parameters(const TransformerSpec& model) {
  const int moe = moe_layer_count(model);
  double routed_inactive = 0.0;
  if (moe > 0) {
    const LayerParameters p = layer_parameters(model, true);
    routed_inactive = p.experts * (1.0 - static_cast<double>(model.moe.top_k) / model.moe.experts) * moe;
  }
  return total_parameters(model) - routed_inactive;
}

LayerParametersPerRank layer_parameters_per_rank(const TransformerSpec& model, int tp, bool moe_layer, int ep,
                                                 int expert_tp) {
  const LayerParameters p = layer_parameters(model, moe_layer);
  LayerParametersPerRank r;
  double replicated = p.norms + p.router;
  double sharded = p.attention + p.mlp;
  if (model.mla) {
    const MlaParameters m = mla_parameters(model);
    sharded -= m.replicated;
    replicated += m.replicated;
  }
  r.dense = sharded / std::max(tp, 1) + replicated;
  r.experts = p.experts / (static_cast<double>(std::max(ep, 1)) * std::max(expert_tp, 1));
  return r;
}

}  // namespace stepcast
