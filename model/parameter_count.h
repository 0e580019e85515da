#pragma once
// Parameter counts of a transformer (element counts, not bytes).
//
// Per layer: attention QKV h(a d + 2 g d) and output projection (a d) h, or multi-head latent
// attention's low-rank projections (model/mla_ops.h: q down h q_r and up q_r a (d_n + d_r), kv
// down h (kv_r + d_r) and up kv_r a (d_n + d_v), output a d_v h, two latent RMSNorms); MLP
// 2 h f (GELU, squared ReLU) or 3 h f (SwiGLU); biases when linear_bias; two norms (LayerNorm:
// scale and shift, 2h each; RMSNorm: h). A mixture-of-experts layer (all layers after moe.first_dense_layers)
// replaces the MLP by E routed experts of width moe.ffn_hidden, its shared experts (a dense MLP of
// width shared x moe.ffn_hidden) and the router h E.
// The word embedding is V h; the output layer another V h unless tied. With tied embeddings and
// a pipeline, Megatron keeps a copy of the word embedding on the last stage too and all-reduces
// its gradient with the first stage's (Shoeybi et al. 2019; megatron/core/models/common/
// language_module).
//
// Multi-token prediction (model.mtp_depth D; DeepSeek-V3 report arXiv:2412.19437 Sec. 2.2): each
// module holds two RMSNorms (of the previous depth's hidden state and of the next token's embedding),
// the projection M_k of h x 2h, one transformer block and the norm before the shared output head
// (Megatron-Core MultiTokenPredictionLayer: enorm, hnorm, eh_proj 2h -> h, transformer_layer,
// final_layernorm; megatron/core/transformer/multi_token_prediction.py). The block is of the decoder's
// last layer kind ("get the spec for the last layer of decoder block", megatron/core/models/gpt/
// gpt_layer_specs.py get_gpt_mtp_block_spec): a MoE layer for a MoE model. The embedding and the
// output head are shared with the main model (Sec. 2.2), so total_parameters() leaves the modules
// out, as the report's 671B does; the Hugging Face checkpoint stores its own copies of both with the
// module (its 14B MTP weights), and Megatron-Core builds the embedding on the last pipeline stage
// too when it runs the module there (gpt_model.py: "MTP need both embedding layer and output layer").
//
// Checks against published counts (tests/unit/moe_test.cpp): DeepSeek-V3 671B total, 37B active
// per token (DeepSeek-V3 technical report, Sec. 1 and Table 1, MTP module excluded); Mixtral 8x7B
// 46.7B total, 12.9B active (Jiang et al. 2024, "Mixtral of Experts", Sec. 2).

#include "model/transformer.h"

namespace stepcast {

struct LayerParameters {
  double attention = 0.0;
  double mlp = 0.0;       // dense MLP, or a MoE layer's shared experts
  double experts = 0.0;   // routed experts, all of them (MoE layers)
  double router = 0.0;    // MoE layers
  double norms = 0.0;
  [[nodiscard]] double total() const { return attention + mlp + experts + router + norms; }
};

// One layer: the dense kind, or (moe_layer) the mixture-of-experts kind.
LayerParameters layer_parameters(const TransformerSpec& model, bool moe_layer = false);
// Layers whose MLP is a mixture of experts: layers - first_dense_layers for a MoE model, else 0.
int moe_layer_count(const TransformerSpec& model);
double embedding_parameters(const TransformerSpec& model);   // word embedding V h
double output_layer_parameters(const TransformerSpec& model);  // final norm + untied output V h
double total_parameters(const TransformerSpec& model);          // counted once (tied counted once); no MTP
// The mtp_depth multi-token-prediction modules' own parameters (embedding and output head shared).
double mtp_parameters(const TransformerSpec& model);
// True when the MTP block is a mixture-of-experts layer (the decoder's last layer is one).
bool mtp_block_is_moe(const TransformerSpec& model);
// Parameters one token passes through: all but the routed experts it is not sent to (top_k of E).
double active_parameters(const TransformerSpec& model);

// What one rank holds of one layer. `dense` (attention, dense MLP or shared experts, router, norms)
// is split over tensor parallelism — MLA's down-projections and latent norms, the router and the
// norms are replicated — and reduced over the dp x cp ranks; `experts` is split over ep x expert_tp
// and reduced over the expert-data-parallel ranks (model/placement.h).
struct LayerParametersPerRank {
  double dense = 0.0;
  double experts = 0.0;
  [[nodiscard]] double total() const { return dense + experts; }
};
LayerParametersPerRank layer_parameters_per_rank(const TransformerSpec& model, int tp, bool moe_layer = false,
                                                 int ep = 1, int expert_tp = 1);
// What one rank of the last pipeline stage holds of the mtp_depth modules: the block as a layer of
// its kind, the projection split over tensor parallelism (a ColumnParallelLinear), the norms whole.
LayerParametersPerRank mtp_parameters_per_rank(const TransformerSpec& model, int tp, int ep = 1, int expert_tp = 1);

}  // namespace stepcast
