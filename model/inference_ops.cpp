#include "model/inference_ops.h"

#include <algorithm>
#include <cmath>

namespace stepcast {
namespace {

// The 16-bit format that norms, routers, the output layer and attention run in.
DataType sixteen_bit(const InferenceShape& s) {
  if (s.compute == DataType::fp16) return DataType::fp16;
  if (s.compute == DataType::fp32 || s.compute == DataType::tf32) return s.compute;
  return DataType::bf16;
}

Op memory_op(std::string_view name, double bytes, OpKind kind = OpKind::memory_bound) {
  Op op;
  op.kind = kind;
  op.name = name;
  op.bytes = Bytes(bytes);
  return op;
}

// A GEMM over the layer's quantized weights: activations at the GEMM input width, weights at the
// stored width, 16-bit output. Weight-only GEMMs count their dequantization as extra work.
Op weight_gemm(std::string_view name, const InferenceShape& s, double m, double n, double k, double batch = 1.0) {
  Op op;
  op.kind = OpKind::gemm;
  op.name = name;
  op.dtype = s.compute;
  op.gemm = {m, n, k, batch};
  op.flops = Flops(2.0 * m * n * k * batch / s.weight_only_compute_factor);
  op.bytes = Bytes(batch * (m * k * s.gemm_input_bytes + k * n * s.weight_bytes + m * n * s.activation_bytes));
  return op;
}

// A GEMM kept in 16 bits (router, output layer).
Op sixteen_bit_gemm(std::string_view name, const InferenceShape& s, double m, double n, double k) {
  Op op;
  op.kind = OpKind::gemm;
  op.name = name;
  op.dtype = sixteen_bit(s);
  op.gemm = {m, n, k, 1.0};
  op.flops = Flops(2.0 * m * n * k);
  const double e = s.activation_bytes;
  op.bytes = Bytes((m * k + k * n + m * n) * e);
  return op;
}

// A FlashAttention forward over 16-bit activations; the caller sets its FLOPs and bytes.
Op attention_op(std::string_view name, const InferenceShape& s) {
  Op op;
  op.kind = OpKind::flash_forward;
  op.name = name;
  op.dtype = sixteen_bit(s);
  return op;
}

double kv_width_per_rank(const InferenceShape& s) { return s.kv_heads_per_rank() * s.head_dim; }

void push_attention_projections(OpList& ops, const InferenceShape& s, double T) {
  const double h = s.hidden;
  const double a = s.heads_per_rank();
  if (s.mla) {
    const MlaSpec& m = *s.mla;
    const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    if (m.q_lora_rank > 0) {
      ops.push(weight_gemm("q_a_proj", s, T, m.q_lora_rank, h));
      ops.push(weight_gemm("q_b_proj", s, T, a * qk, m.q_lora_rank));
    } else {
      ops.push(weight_gemm("q_proj", s, T, a * qk, h));
    }
    ops.push(weight_gemm("kv_a_proj", s, T, m.kv_lora_rank + m.qk_rope_head_dim, h));
    ops.push(weight_gemm("kv_b_proj", s, T, a * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank));
    return;
  }
  ops.push(weight_gemm("qkv_proj", s, T, a * s.head_dim + 2.0 * kv_width_per_rank(s), h));
}

double add_norm_bytes(const InferenceShape& s, double T) {
  // Reads the branch output and the residual, writes the new residual and the normalised input.
  return T * s.hidden * (3.0 * s.activation_bytes + s.gemm_input_bytes);
}

void push_mlp(OpList& ops, const InferenceShape& s, double T, double width, std::string_view fc1,
              std::string_view act, std::string_view fc2) {
  const double fc1_width = s.mlp == MlpKind::swiglu ? 2.0 * width : width;
  ops.push(weight_gemm(fc1, s, T, fc1_width, s.hidden));
  ops.push(memory_op(act, T * (fc1_width * s.activation_bytes + width * s.gemm_input_bytes)));
  ops.push(weight_gemm(fc2, s, T, s.hidden, width));
}

void push_moe(OpList& ops, const InferenceShape& s, double T) {
  const MoeSpec& moe = s.moe;
  const double h = s.hidden;
  const double e = s.activation_bytes;
  ops.push(sixteen_bit_gemm("router", s, T, moe.experts, h));
  // Softmax and top-k over the router logits (FP32 read and write).
  ops.push(memory_op("router_topk", T * moe.experts * 8.0, OpKind::reduction));
  const double slots = T * moe.top_k / s.ep * moe.load_imbalance;  // token-slots on this rank
  const double active = active_experts_per_rank(s, T);
  const double expert_tp = static_cast<double>(s.tp) / s.ep;
  const double width = moe.ffn_hidden / expert_tp;
  const double fc1_width = s.mlp == MlpKind::swiglu ? 2.0 * width : width;
  if (active > 0.0) {
    const double m = slots / active;
    // Gather the routed tokens into per-expert groups.
    ops.push(memory_op("moe_permute", slots * h * (e + s.gemm_input_bytes), OpKind::data_movement));
    ops.push(weight_gemm("experts_fc1", s, m, fc1_width, h, active));
    ops.push(memory_op("experts_act", slots * (fc1_width * e + width * s.gemm_input_bytes)));
    ops.push(weight_gemm("experts_fc2", s, m, h, width, active));
    // Scatter back and weight by the router probabilities.
    ops.push(memory_op("moe_unpermute", slots * h * e + T * h * e, OpKind::data_movement));
  }
  if (moe.shared_experts > 0) {
    push_mlp(ops, s, T, moe.shared_experts * moe.ffn_hidden / s.t(), "shared_fc1", "shared_act", "shared_fc2");
  }
}

}  // namespace

double active_experts_per_rank(const InferenceShape& s, double tokens) {
  const MoeSpec& moe = s.moe;
  if (!moe.is_moe() || tokens <= 0.0) return 0.0;
  const double experts_here = static_cast<double>(moe.experts) / s.ep;
  const double miss = 1.0 - static_cast<double>(moe.top_k) / moe.experts;
  return experts_here * (1.0 - std::pow(std::max(miss, 0.0), tokens));
}

OpList inference_layer_ops(const InferenceShape& s, double T, bool moe_layer) {
  OpList ops;
  const double e = s.activation_bytes;
  ops.push(memory_op("add_norm", add_norm_bytes(s, T), OpKind::reduction));
  push_attention_projections(ops, s, T);
  const double q = s.q_width_per_rank();
  if (s.mla) {
    // RoPE on the query's rope part and on the shared rope key; latent + rope key to the cache.
    ops.push(memory_op("rope_kv_write", T * (2.0 * q * e + 2.0 * s.mla->qk_rope_head_dim * e) +
                                            T * kv_bytes_per_token_layer_per_rank(s).value()));
  } else {
    const double kv = kv_width_per_rank(s);
    ops.push(memory_op("rope_kv_write", T * ((q + 2.0 * kv) * e + q * e) + T * kv_bytes_per_token_layer_per_rank(s).value()));
  }
  ops.push(weight_gemm("out_proj", s, T, s.hidden, s.o_width_per_rank()));
  ops.push(memory_op("add_norm", add_norm_bytes(s, T), OpKind::reduction));
  if (moe_layer) {
    push_moe(ops, s, T);
  } else {
    const std::string_view act = s.mlp == MlpKind::swiglu ? "swiglu" : s.mlp == MlpKind::relu2 ? "squared_relu" : "gelu";
    push_mlp(ops, s, T, s.ffn / s.t(), "fc1", act, "fc2");
  }
  return ops;
}

Op prefill_attention_op(const InferenceShape& s, const PrefillAttentionWork& work) {
  Op op = attention_op("prefill_attention", s);
  const double a = s.heads_per_rank();
  const double e = s.activation_bytes;
  double flops_per_pair = 4.0 * a * s.head_dim;
  double kv_bytes_per_token = kv_bytes_per_token_layer_per_rank(s).value();
  if (s.mla) {
    // Prefill expands the latent: per head, K of nope+rope and V of v_head_dim (written by the
    // kv_b GEMM in 16 bits and read here).
    const MlaSpec& m = *s.mla;
    flops_per_pair = 2.0 * a * (m.qk_nope_head_dim + m.qk_rope_head_dim) + 2.0 * a * m.v_head_dim;
    kv_bytes_per_token = a * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) * e;
  }
  op.flops = Flops(flops_per_pair * work.pairs);
  op.bytes = Bytes(work.query_tokens * (s.q_width_per_rank() + s.o_width_per_rank()) * e +
                   work.context_tokens * kv_bytes_per_token);
  return op;
}

Op decode_attention_op(const InferenceShape& s, double sequences, double context_tokens) {
  Op op = attention_op("decode_attention", s);
  const double a = s.heads_per_rank();
  const double e = s.activation_bytes;
  double flops_per_token = 4.0 * a * s.head_dim;
  double query_bytes = (s.q_width_per_rank() + s.o_width_per_rank()) * e;
  if (s.mla) {
    const MlaSpec& m = *s.mla;
    flops_per_token = 2.0 * a * (m.kv_lora_rank + m.qk_rope_head_dim) + 2.0 * a * m.kv_lora_rank;
    // The absorbed query and output live in the latent space.
    query_bytes = a * (m.kv_lora_rank + m.qk_rope_head_dim + m.kv_lora_rank) * e;
  }
  // Kernels without GQA sharing load each KV head again for every query head of its group.
  const double reads = s.kv_read_per_query_head && !s.mla ? s.heads_per_rank() / s.kv_heads_per_rank() : 1.0;
  op.flops = Flops(flops_per_token * context_tokens);
  op.bytes = Bytes(context_tokens * kv_bytes_per_token_layer_per_rank(s).value() * reads + sequences * query_bytes);
  return op;
}

OpList inference_embedding_ops(const InferenceShape& s, double T) {
  OpList ops;
  // Rows gathered from the vocab-parallel table and written out.
  ops.push(memory_op("embedding_lookup", 2.0 * T * s.hidden * s.activation_bytes, OpKind::data_movement));
  return ops;
}

OpList inference_output_ops(const InferenceShape& s, double rows, const InferenceCostParameters& params) {
  OpList ops;
  if (rows <= 0.0) return ops;
  const double e = s.activation_bytes;
  ops.push(memory_op("final_norm", 2.0 * rows * s.hidden * e, OpKind::reduction));
  ops.push(sixteen_bit_gemm("logits", s, rows, s.vocab / s.t(), s.hidden));
  ops.push(memory_op("sampling", rows * s.vocab * params.sampling_bytes_per_logit, OpKind::reduction));
  return ops;
}

Flops inference_linear_flops(const InferenceShape& s, double tokens) {
  double per_token = 0.0;
  for (bool moe_layer : {false, true}) {
    const double layers = moe_layer ? s.moe_layers : s.layers - s.moe_layers;
    if (layers <= 0) continue;
    const InferenceLayerWeights w = inference_layer_weights(s, moe_layer);
    // Per-rank shards times tp ranks (MLA's replicated down-projections counted once per rank);
    // each token runs top_k whole experts, each split over tp / ep ranks.
    double active = (w.attention + w.mlp) * s.tp;
    if (moe_layer) active += s.moe.top_k * w.expert_each * (static_cast<double>(s.tp) / s.ep) + w.router;
    per_token += layers * 2.0 * active;
  }
  return Flops(per_token * tokens);
}

}  // namespace stepcast
