#include "model/flops.h"

namespace stepcast {
namespace {
double head_dim_of(const TransformerSpec& m) {
  return m.head_dim > 0 ? m.head_dim : static_cast<double>(m.hidden) / m.heads;
}
double kv_heads_of(const TransformerSpec& m) { return m.kv_heads > 0 ? m.kv_heads : m.heads; }
double ffn_of(const TransformerSpec& m) { return m.ffn_hidden > 0 ? m.ffn_hidden : 4.0 * m.hidden; }
}  // namespace

LayerFlops layer_forward_flops(const TransformerSpec& model, double sequences, double seq, AttentionCount count) {
  const double tokens = sequences * seq;
  const double h = model.hidden;
  const double d = head_dim_of(model);
  const double q = model.heads * d;
  const double kv = kv_heads_of(model) * d;
  LayerFlops f;
  f.qkv = Flops(2.0 * tokens * h * (q + 2.0 * kv));
  const double attention = 4.0 * sequences * seq * seq * q;
  f.attention = Flops(count == AttentionCount::causal ? 0.5 * attention : attention);
  f.out_proj = Flops(2.0 * tokens * q * h);
  const double mlp_matrices = model.mlp == MlpKind::swiglu ? 3.0 : 2.0;
  f.mlp = Flops(2.0 * mlp_matrices * tokens * h * ffn_of(model));
  return f;
}

Flops logits_forward_flops(const TransformerSpec& model, double sequences, double seq) {
  return Flops(2.0 * sequences * seq * model.hidden * model.vocab);
}

StepFlops training_step_flops(const TransformerSpec& model, double global_batch, double seq, Recompute recompute,
                              AttentionCount count) {
  const LayerFlops layer = layer_forward_flops(model, global_batch, seq, count);
  const Flops layers_forward = layer.total() * static_cast<double>(model.layers);
  const Flops forward = layers_forward + logits_forward_flops(model, global_batch, seq);
  StepFlops f;
  f.model = forward * 3.0;
  f.hardware = f.model;
  if (recompute == Recompute::full) f.hardware += layers_forward;
  if (recompute == Recompute::selective) f.hardware += layer.attention * static_cast<double>(model.layers);
  return f;
}

Flops megatron_eq3_flops(double global_batch, double seq, double layers, double hidden, double vocab) {
  return Flops(96.0 * global_batch * seq * layers * hidden * hidden *
               (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden)));
}

}  // namespace stepcast
