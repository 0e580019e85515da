#include "model/parameter_count.h"

namespace stepcast {
namespace {
double head_dim_of(const TransformerSpec& m) {
  return m.head_dim > 0 ? m.head_dim : static_cast<double>(m.hidden) / m.heads;
}
double norm_parameters(const TransformerSpec& m) {
  return (m.norm == NormKind::layernorm ? 2.0 : 1.0) * m.hidden;
}
}  // namespace

LayerParameters layer_parameters(const TransformerSpec& model) {
  const double h = model.hidden;
  const double d = head_dim_of(model);
  const double q = model.heads * d;
  const double kv = (model.kv_heads > 0 ? model.kv_heads : model.heads) * d;
  const double f = model.ffn_hidden > 0 ? model.ffn_hidden : 4.0 * h;
  const bool bias = model.linear_bias;
  LayerParameters p;
  p.attention = h * (q + 2.0 * kv) + q * h + (bias ? (q + 2.0 * kv) + h : 0.0);
  if (model.mlp == MlpKind::swiglu) {
    p.mlp = 3.0 * h * f + (bias ? 2.0 * f + h : 0.0);
  } else {
    p.mlp = 2.0 * h * f + (bias ? f + h : 0.0);
  }
  p.norms = 2.0 * norm_parameters(model);
  return p;
}

double embedding_parameters(const TransformerSpec& model) {
  return static_cast<double>(model.vocab) * model.hidden;
}

double output_layer_parameters(const TransformerSpec& model) {
  return norm_parameters(model) + (model.tied_embeddings ? 0.0 : embedding_parameters(model));
}

double total_parameters(const TransformerSpec& model) {
  return layer_parameters(model).total() * model.layers + embedding_parameters(model) + output_layer_parameters(model);
}

double layer_parameters_per_rank(const TransformerSpec& model, int tp) {
  const LayerParameters p = layer_parameters(model);
  return (p.attention + p.mlp) / tp + p.norms;
}

}  // namespace stepcast
