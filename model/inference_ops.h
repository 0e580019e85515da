#pragma once
// The kernels of one inference step (an iteration of the engine) on one tensor-parallel rank:
// GEMM shapes, the work they do and the HBM bytes they move, priced by model/op_time.h.
//
// A step runs `tokens` tokens through every layer at once: the new tokens of prefilling
// sequences (whole prompts, or chunks of them) and one token of each decoding sequence. All
// weight GEMMs see m = tokens, so one step reads every weight once however many sequences it
// serves: at small m the GEMMs are memory-bound on the weight bytes and batching is nearly free;
// the roofline in op_time shows where compute takes over. Per layer (TensorRT-LLM / vLLM order):
//
//   add_norm          fused residual add + RMSNorm/LayerNorm; writes the GEMM input (1 byte
//                     per element for W8A8: the quantization is fused here)
//   qkv_proj          m=T, n=(a/t + 2 g/t) d, k=h      (MLA: q, kv_a and kv_b projections)
//   rope_kv_write     rotary embedding on Q and K, K and V appended to the paged cache
//   attention core    separate ops below: prefill (flash) and decode (paged) attention
//   out_proj          m=T, n=h, k=a d/t
//   add_norm
//   fc1 / act / fc2   dense MLP; or for a MoE layer the router, token permutation, grouped
//                     expert GEMMs over the experts the tokens reach, un-permutation, and any
//                     shared experts
//
// Attention core (one kernel per layer each, FlashAttention-style):
//   prefill   causal flash attention over each prompt chunk and the cache before it:
//             4 (a/t) d pairs FLOPs, pairs = sum over chunks of c (prior + (c + 1) / 2);
//   decode    paged attention of one query per sequence over its cached context: reads the
//             whole KV of every sequence, so it is memory-bound (4 (a/t) d FLOPs per cached token
//             against 2 (g/t) d bytes(kv) per cached token).
// MLA (DeepSeek-V2 Sec. 2.1): prefill expands the latent to per-head K and V (the kv_b GEMM);
// decode attends over the cached latent with the up-projections absorbed into the query and
// output (Sec. 2.1.2), 2 a (r + r_rope) + 2 a r FLOPs per cached token.
// Expert routing: T tokens each pick top_k of E experts; this rank holds E/ep of them and sees
// T top_k / ep token-slots (times the router's load imbalance). The expected number of its
// experts that receive at least one token is (E/ep)(1 - (1 - top_k/E)^T); only those experts'
// weights are read.
//
// Collectives (the TP all-reduces, the logits gather) are not here: see simulator/inference.
//
// Kinds: norms, softmax/top-k and sampling are reductions, rotary/activation/permutation and the
// embedding gather elementwise, for model/op_time.h's per-SM byte rates.

#include "model/inference_parameters.h"
#include "model/inference_shape.h"
#include "model/op.h"

namespace stepcast {


// The prefill attention work of one step, summed over the prompt chunks in it.
struct PrefillAttentionWork {
  double query_tokens = 0.0;    // sum of chunk lengths
  double pairs = 0.0;           // causal query-key pairs: sum of c (prior + (c + 1) / 2)
  double context_tokens = 0.0;  // keys and values read: sum of (prior + c)

  // Adds one chunk of `chunk` tokens after `prior` tokens already in the cache.
  void add_chunk(double chunk, double prior) {
    query_tokens += chunk;
    pairs += chunk * (prior + (chunk + 1.0) / 2.0);
    context_tokens += prior + chunk;
  }
};

// Everything of one layer except the attention core, for `tokens` tokens.
OpList inference_layer_ops(const InferenceShape& s, double tokens, bool moe_layer);

// Prefill attention of one layer (an empty op when there is no prefill work).
Op prefill_attention_op(const InferenceShape& s, const PrefillAttentionWork& work);
// Decode attention of one layer: `sequences` queries over `context_tokens` cached tokens in all.
Op decode_attention_op(const InferenceShape& s, double sequences, double context_tokens);

// First stage: the token embedding lookup.
OpList inference_embedding_ops(const InferenceShape& s, double tokens);
// Last stage: final norm, the logits GEMM and sampling for `rows` sequences that emit a token.
OpList inference_output_ops(const InferenceShape& s, double rows, const InferenceCostParameters& params);

// Routed experts of this rank that receive at least one of `tokens` tokens (expected value).
double active_experts_per_rank(const InferenceShape& s, double tokens);

// FLOPs of the weight GEMMs for `tokens` new tokens, all ranks together (2 per multiply-add;
// attention core and the output layer excluded): for utilisation figures.
Flops inference_linear_flops(const InferenceShape& s, double tokens);

}  // namespace stepcast
