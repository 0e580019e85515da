#pragma once
// Parameter counts of a transformer (element counts, not bytes).
//
// Per layer: QKV h(a d + 2 g d), output projection (a d) h, MLP 2 h f (GELU) or 3 h f (SwiGLU),
// biases when linear_bias, and two norms (LayerNorm: scale and shift, 2h each; RMSNorm: h).
// The word embedding is V h; the output layer another V h unless tied. With tied embeddings and
// a pipeline, Megatron keeps a copy of the word embedding on the last stage too and all-reduces
// its gradient with the first stage's (Shoeybi et al. 2019; megatron/core/models/common/
// language_module).

#include "model/transformer.h"

namespace stepcast {

struct LayerParameters {
  double attention = 0.0;
  double mlp = 0.0;
  double norms = 0.0;
  [[nodiscard]] double total() const { return attention + mlp + norms; }
};

LayerParameters layer_parameters(const TransformerSpec& model);
double embedding_parameters(const TransformerSpec& model);   // word embedding V h
double output_layer_parameters(const TransformerSpec& model);  // final norm + untied output V h
double total_parameters(const TransformerSpec& model);          // counted once (tied counted once)

// Parameters one tensor-parallel rank holds of one layer: the sharded matrices and biases / t,
// the norms replicated.
double layer_parameters_per_rank(const TransformerSpec& model, int tp);

}  // namespace stepcast
