#pragma once
// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434 Sec. 2.1; DeepSeek-V3 Sec. 2.1.1):
// the projections one tensor-parallel rank runs around the attention core, as Megatron-Core's
// MLASelfAttention lays them out (megatron/core/transformer/multi_latent_attention.py):
//   q    with q_lora_rank > 0: down-projection h -> q_lora_rank (duplicated on every TP rank),
//        RMSNorm, up-projection q_lora_rank -> (a/t)(d_nope + d_rope) (column-parallel by heads);
//        without it, one projection h -> (a/t)(d_nope + d_rope)
//   kv   down-projection h -> kv_lora_rank + d_rope (duplicated: the compressed latent c_KV and
//        the shared decoupled RoPE key), RMSNorm of the latent, up-projection
//        kv_lora_rank -> (a/t)(d_nope + d_v) (column-parallel)
//   rope the rotary part applied to q and to the shared key, and the per-head key assembled from
//        its nope part and the shared rope part
// The attention core then runs with query/key width d_nope + d_rope and value width d_v per head
// (model/layer_ops.cpp), and the output projection (a/t) d_v -> h is row-parallel.
//
// Per token and layer, the inference KV cache holds kv_lora_rank + d_rope elements (the latent and
// the rope key; model/inference_shape.h), against 2 g d for GQA.

#include "model/layer_shape.h"
#include "model/op.h"

namespace stepcast {

// Widths on one TP rank.
struct MlaWidths {
  double q = 0.0;       // (a/t)(d_nope + d_rope): queries (and the assembled keys)
  double kv_up = 0.0;   // (a/t)(d_nope + d_v): the up-projected keys' nope part and values
  double v = 0.0;       // (a/t) d_v: values and the attention output
  double latent = 0.0;  // kv_lora_rank + d_rope: the down-projected latent and rope key
};
MlaWidths mla_widths(const LayerShape& shape);  // requires shape.mla

// The projections before the attention core (input norm excluded) and their backward.
void push_mla_projections_forward(OpList& ops, const LayerShape& shape);
void push_mla_projections_backward(OpList& ops, const LayerShape& shape);

}  // namespace stepcast
