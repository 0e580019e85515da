#include "model/layer_ops.h"

#include <algorithm>

#include "model/context_parallel.h"
#include "model/cross_entropy_kernels.h"
#include "model/mla_ops.h"
#include "model/moe_ops.h"
#include "model/op_builders.h"

namespace stepcast {
namespace {

using ops::gemm;
using ops::input_bytes;
using ops::data_movement_op;
using ops::memory_op;
using ops::push_gemm_backward;
using ops::reduction_op;

// KV heads one TP rank holds: g/t, or one replicated head when t > g.
double kv_heads_per_rank(const LayerShape& s) { return std::max(s.kv_heads / s.t(), 1.0); }
// KV heads the attention kernel sees: every query head's copy under repeat_kv.
double kernel_kv_heads_per_rank(const LayerShape& s) { return s.repeat_kv ? s.heads / s.t() : kv_heads_per_rank(s); }
double qkv_width_per_rank(const LayerShape& s) {
  return s.q_width() / s.t() + 2.0 * kv_heads_per_rank(s) * s.head_dim;
}

// The attention core one TP rank runs: its heads, the sequence it holds as queries, the whole
// context as keys (context parallelism: model/context_parallel.h prices the exchange). Packed
// documents (LayerShape::document) make each sequence that many independent problems: a varlen
// kernel's grid covers every (document, head) (FlashAttention-2's flash_attn_varlen_func, cuDNN's
// ragged THD), each document's queries (its 2 cp chunks on a context-parallel rank) attending over
// its own keys.
ops::FlashShape flash_shape(const LayerShape& s) {
  ops::FlashShape f;
  const double documents = documents_per_sequence(s);
  f.sequences = s.micro_batch * documents;
  f.heads = s.heads / s.t();
  f.queries = s.seq / documents;
  f.keys = attention_keys(s);
  f.causal = s.causal;
  f.window = s.window;
  f.windowed = s.windowed_fraction;
  if (s.mla) {
    // MLA up-projects K and V per head: every head has its own K (nope + rope) and V.
    f.kv_heads = f.heads;
    f.qk_dim = s.mla->qk_nope_head_dim + s.mla->qk_rope_head_dim;
    f.v_dim = s.mla->v_head_dim;
  } else {
    f.kv_heads = kernel_kv_heads_per_rank(s);
    f.qk_dim = s.head_dim;
    f.v_dim = s.head_dim;
  }
  return f;
}

// Attention score work of one rank: b * (a/t) * s_q * s_kv pairs.
double attention_pairs(const LayerShape& s) { return s.micro_batch * (s.heads / s.t()) * s.seq * s.context; }

// Width of the attention output (the projection's input) on one rank.
double attention_output_width(const LayerShape& s) {
  return s.mla ? s.heads / s.t() * s.mla->v_head_dim : s.q_width() / s.t();
}

// The CTA-level shape of the fused kernel (model/op_time.h), sliding window included: windowed
// CTAs visit only the key blocks their window overlaps. The head dim is the mean of the Q/K and V
// widths: a score costs 2 (qk + v) flops forward (MLA: 192 and 128).
// Under context parallelism the rank's queries are two load-balanced chunks (one early, one late).
// The ring (cp_kind ring or ring_allgather, no window) runs one kernel per step (ring_steps): the first over its own
// two chunks, causal, each later one non-causal over the rank's queries and one received chunk
// (PyTorch _templated_ring_attention: query against key.chunk(2)[0] while i <= rank, the second
// query chunk against the whole block after), the same work each, (s/cp) x s/(2cp) pairs: priced
// as cp launches of that (s/cp) x s/(2cp) problem. Otherwise (all_gather, Ulysses, windows) one
// non-causal problem over the keys a query sees on average (the flop count's queries x keys / 2,
// or the window's share), not as queries at the end of the context (which would visit every block).
bool ring_kernels(const LayerShape& s, const ops::FlashShape& f) {
  const bool windowed = f.window > 0.0 && f.windowed > 0.0 && f.window < f.keys;
  return s.cp > 1 && is_ring(s.cp_kind) && f.causal && !windowed;
}
double ring_steps(const LayerShape& s, const ops::FlashShape& f) { return ring_kernels(s, f) ? s.cp : 1.0; }

AttentionShape attention_shape(const LayerShape& s, const ops::FlashShape& f) {
  const double head_dim = 0.5 * (f.qk_dim + f.v_dim);
  const bool windowed = f.window > 0.0 && f.windowed > 0.0 && f.window < f.keys;
  if (ring_kernels(s, f)) return {f.sequences * f.heads, f.queries, f.keys / (2.0 * s.cp), head_dim, false};
  if (s.cp > 1 && f.causal) {
    const double per_pair = 2.0 * f.sequences * f.heads * (f.qk_dim + f.v_dim);
    const double keys_per_query = ops::flash_forward_flops(f) / (per_pair * f.queries);
    return {f.sequences * f.heads, f.queries, keys_per_query, head_dim, false};
  }
  return {f.sequences * f.heads, f.queries, f.keys, head_dim, f.causal, windowed ? f.window : 0.0,
          windowed ? f.windowed : 0.0};
}

// The fused attention kernel (forward or backward) as one op, in the attention's input format.
Op flash_op(OpKind kind, std::string_view name, const LayerShape& s, const ops::FlashShape& f, double flops,
            double bytes) {
  Op op;
  op.kind = kind;
  op.name = name;
  op.dtype = ops::attention_dtype(s);
  op.flops = Flops(flops);
  op.bytes = Bytes(bytes);
  op.attention = attention_shape(s, f);
  op.attention.kernel = s.attention_kernel;
  // FP8 attention only where the layer computes in a quantized format (not its BF16 edge layers).
  op.attention.fp8 = s.fp8_attention && is_quantized_training_format(s.compute);
  if (op.attention.fp8) op.bytes = Bytes(bytes / s.activation_bytes);  // Q, K, V, O (and dO) one byte each
  op.launches = ring_steps(s, f);
  return op;
}

// The ring's per-step merges of partial results into FP32 accumulators (model/context_parallel.h).
Op ring_merge_op(std::string_view name, Bytes bytes, double launches) {
  Op op = data_movement_op(name, bytes.value());
  op.launches = launches;
  return op;
}

// One batched GEMM of the unfused attention path (bh = micro-batch x heads per rank), in the
// attention's input format.
Op attention_gemm(std::string_view name, const LayerShape& s, double m, double n, double k, double bh) {
  Op op = gemm(name, s, m, n, k, bh);
  op.dtype = ops::attention_dtype(s);
  return op;
}

void push_attention_core_forward(OpList& ops, const LayerShape& s) {
  const double e = s.activation_bytes;
  const ops::FlashShape f = flash_shape(s);
  if (s.flash_attention) {
    ops.push(flash_op(OpKind::flash_forward, "flash_attention", s, f, ops::flash_forward_flops(f),
                      ops::flash_io_elements(f) * e));
    if (ring_kernels(s, f)) {
      ops.push(ring_merge_op("cp_ring_merge", ring_merge_forward_bytes(s), ring_merge_forward_launches(s)));
    }
    return;
  }
  // Megatron-LM's unfused path computes the full s x s scores (the causal mask is applied inside
  // the fused softmax), so the batched GEMMs do the full, non-causal work.
  const double bh = s.micro_batch * f.heads;
  const double scores = attention_pairs(s);
  ops.push(attention_gemm("attention_scores", s, s.seq, s.context, f.qk_dim, bh));
  ops.push(reduction_op("scale_mask_softmax", 2.0 * scores * e));
  if (s.dropout) ops.push(memory_op("attention_dropout", scores * (2.0 * e + 1.0)));
  ops.push(attention_gemm("attention_values", s, s.seq, f.v_dim, s.context, bh));
  // The [b, a, s, d] context back to [s, b, a d] (permute + contiguous copy).
  ops.push(data_movement_op("context_transpose", 2.0 * s.tokens() * attention_output_width(s) * e));
}

void push_attention_core_backward(OpList& ops, const LayerShape& s) {
  const double e = s.activation_bytes;
  const ops::FlashShape f = flash_shape(s);
  if (s.flash_attention) {
    ops.push(flash_op(OpKind::flash_backward, "flash_attention.backward", s, f,
                      kFlashBackwardWorkRatio * ops::flash_forward_flops(f), ops::flash_io_elements(f) * e * 2.0));
    if (ring_kernels(s, f)) {
      ops.push(ring_merge_op("cp_ring_merge.backward", ring_merge_backward_bytes(s), ring_merge_backward_launches(s)));
    }
    return;
  }
  const double bh = s.micro_batch * f.heads;
  const double scores = attention_pairs(s);
  ops.push(data_movement_op("context_transpose.backward", 2.0 * s.tokens() * attention_output_width(s) * e));
  ops.push(attention_gemm("attention_values.dgrad_probs", s, s.seq, s.context, f.v_dim, bh));  // dP = dO V^T
  ops.push(attention_gemm("attention_values.dgrad_v", s, s.context, f.v_dim, s.seq, bh));      // dV = P^T dO
  if (s.dropout) ops.push(memory_op("attention_dropout.backward", scores * (2.0 * e + 1.0)));
  ops.push(reduction_op("scale_mask_softmax.backward", 3.0 * scores * e));
  ops.push(attention_gemm("attention_scores.dgrad_q", s, s.seq, f.qk_dim, s.context, bh));  // dQ = dS K
  ops.push(attention_gemm("attention_scores.dgrad_k", s, s.context, f.qk_dim, s.seq, bh));  // dK = dS^T Q
}

// Bias + dropout + residual add (Megatron's fused bias_dropout_add): reads the branch output and
// the residual, writes the sum and the dropout mask.
double bias_dropout_add_bytes(const LayerShape& s) {
  return s.norm_tokens() * s.hidden * (3.0 * s.activation_bytes + (s.dropout ? 1.0 : 0.0));
}
double bias_dropout_add_backward_bytes(const LayerShape& s) {
  return s.norm_tokens() * s.hidden * (2.0 * s.activation_bytes + (s.dropout ? 1.0 : 0.0));
}
double norm_bytes(const LayerShape& s) { return 2.0 * s.norm_tokens() * s.hidden * s.activation_bytes; }
// Norm backward reads x and dy, writes dx, and adds the residual gradient (one more read).
double norm_backward_bytes(const LayerShape& s) { return 4.0 * s.norm_tokens() * s.hidden * s.activation_bytes; }

double activation_forward_bytes(const LayerShape& s) {
  const double per_token = s.ffn / s.t() * s.activation_bytes;
  return s.tokens() * per_token * (s.mlp == MlpKind::swiglu ? 3.0 : 2.0);
}
double activation_backward_bytes(const LayerShape& s) {
  const double per_token = s.ffn / s.t() * s.activation_bytes;
  return s.tokens() * per_token * (s.mlp == MlpKind::swiglu ? 5.0 : 3.0);
}

// Bias gradients of the four linear layers: each sums its output gradient over the tokens (a
// reduction reading T x width elements; the FC1 one is fused into the GELU backward).
double bias_gradient_bytes(const LayerShape& s) {
  const double widths = qkv_width_per_rank(s) + s.hidden + s.hidden;  // QKV, projection, FC2
  return s.tokens() * widths * s.activation_bytes;
}

// FP8 casts of every linear layer's input in the forward pass (weights are cast once per step
// and cached across micro-batches, Transformer Engine `is_first_microbatch`). Block formats write
// the column-wise copy the backward's weight-gradient GEMM needs here, with the row-wise one.
// A MoE layer's MLP inputs are its shared experts' (FC1 and FC2 inputs, T x (h + width)); its
// routed experts quantize their own token copies (model/moe_ops.cpp "experts_fp8_casts").
double mlp_cast_inputs(const LayerShape& s) {
  const double T = s.tokens();
  if (!s.moe_layer) return T * s.hidden + T * (s.ffn / s.t());
  const double shared = s.moe.shared_experts * static_cast<double>(s.moe.ffn_hidden) / s.t();
  return shared > 0.0 ? T * s.hidden + T * shared : 0.0;
}
// The same for the output gradients of the MLP's GEMMs (FC2 output T x h, FC1 output T x fc1 width).
double mlp_cast_outputs(const LayerShape& s) {
  const double T = s.tokens();
  if (!s.moe_layer) return T * s.hidden + T * (s.fc1_width() / s.t());
  const double shared = s.moe.shared_experts * static_cast<double>(s.moe.ffn_hidden) / s.t();
  const double gated = s.mlp == MlpKind::swiglu ? 2.0 : 1.0;
  return shared > 0.0 ? T * s.hidden + T * gated * shared : 0.0;
}

double fp8_forward_cast_bytes(const LayerShape& s) {
  const double T = s.tokens();
  const double inputs = T * s.hidden + T * (s.q_width() / s.t()) + mlp_cast_inputs(s);
  return inputs * quantize_bytes_per_element(s.compute, s.fp8_scaling, s.compute != DataType::fp8);
}
// Backward: cast each output gradient (and, where FP8 GEMMs are TN-only, its transpose) and, for
// FP8 there, write the transposed copy of the saved input (the block formats wrote it in the forward;
// on Blackwell FP8 needs none: LayerShape::fp8_transposes).
double fp8_backward_cast_bytes(const LayerShape& s) {
  const double T = s.tokens();
  const double outputs = T * qkv_width_per_rank(s) + T * s.hidden + mlp_cast_outputs(s);
  const double inputs = T * s.hidden + T * (s.q_width() / s.t()) + mlp_cast_inputs(s);
  return backward_cast_bytes(s, outputs, inputs);
}

// --- Rotary position embedding ------------------------------------------------------------------
// Elements RoPE rotates on one rank: every query and key (MLA: only the decoupled rope part, per
// query head and once for the shared key; DeepSeek-V2 Sec. 2.1.3).
double rope_elements(const LayerShape& s) {
  if (s.mla) return s.tokens() * (s.heads / s.t() + 1.0) * s.mla->qk_rope_head_dim;
  return s.tokens() * (s.q_width() / s.t() + kv_heads_per_rank(s) * s.head_dim);
}

// --- PyTorch eager modules (KernelFusion::eager) -------------------------------------------------
// Each module is priced as one op whose bytes sum its kernels' reads and writes, counted kernel by
// kernel from the ops the module runs (torchtitan torchtitan/models/llama/model.py, mid-2024, as
// Meta's reference llama/model.py), with e the activation bytes and 4 for FP32 temporaries:
//
// RMSNorm `(x.float() * rsqrt(x.float().pow(2).mean(-1) + eps)).type_as(x) * weight`
//   forward:  x.float() e+4, pow 4+4, mean 4, x * rsqrt 4+4, type_as 4+e, * weight e+e   = 28 + 4e
//             (+ add eps and rsqrt on one value per token): 8 kernels
//   backward: * weight: g*w e+e and its weight gradient sum(g*y) e+e; type_as: e+4; x * rsqrt:
//             g*r 4+4 and sum(g*x) 4+4; pow: 2x*g 4+4; autograd sums x's two gradients 4+4+4;
//             x.float(): 4+e                                                            = 44 + 6e
//             (+ the per-token rsqrt/mean backward): 11 kernels
// A fused RMSNorm reads x and writes y (2e) and its backward 4e (norm_bytes, norm_backward_bytes).
constexpr double kEagerRmsnormForwardFp32Bytes = 28.0, kEagerRmsnormForwardActivations = 4.0;
constexpr double kEagerRmsnormBackwardFp32Bytes = 44.0, kEagerRmsnormBackwardActivations = 6.0;
constexpr double kEagerRmsnormForwardKernels = 8.0, kEagerRmsnormBackwardKernels = 11.0;
// RoPE through FP32 complex views: per element of Q and K, x.float() e+4, complex multiply by the
// frequencies 4+4, type_as 4+e = 16 + 2e, three kernels per tensor; the backward mirrors it.
// Fused RoPE (Transformer Engine / Megatron-Core fused_apply_rotary_pos_emb): 2e, one per tensor.
constexpr double kEagerRopeFp32Bytes = 16.0, kEagerRopeActivations = 2.0, kEagerRopeKernelsPerTensor = 3.0;

double rmsnorm_eager_bytes(const LayerShape& s, bool backward) {
  const double per_element = backward ? kEagerRmsnormBackwardFp32Bytes + kEagerRmsnormBackwardActivations * s.activation_bytes
                                      : kEagerRmsnormForwardFp32Bytes + kEagerRmsnormForwardActivations * s.activation_bytes;
  return s.norm_tokens() * s.hidden * per_element;
}

bool eager(const LayerShape& s) { return s.kernels == KernelFusion::eager; }

// A norm, fused (one kernel) or, for an eager RMSNorm, its kernels. (F.layer_norm is one native
// kernel in eager mode too.) The fused backward also adds the residual gradient; eager pays that
// add separately (push_residual_backward).
void push_norm(OpList& ops, std::string_view name, const LayerShape& s, bool backward) {
  if (eager(s) && s.norm == NormKind::rmsnorm) {
    Op op = memory_op(name, rmsnorm_eager_bytes(s, backward));
    op.launches = backward ? kEagerRmsnormBackwardKernels : kEagerRmsnormForwardKernels;
    ops.push(op);
    return;
  }
  ops.push(reduction_op(name, backward ? norm_backward_bytes(s) : norm_bytes(s)));
}

// QK-norm (Qwen3; Megatron-Core SelfAttention applies q_layernorm and k_layernorm, Transformer
// Engine RMSNorms over head_dim, to the query and key heads right after the QKV projection, before
// RoPE): two fused norms, priced as the layer's norms per element (reads x, writes y: 2e forward;
// reads dy and x, writes dx, folds the weight gradient: 4e backward) over every query and key
// element of the rank, one kernel for the queries and one for the keys.
constexpr double kQkNormKernels = 2.0;
double qk_norm_elements(const LayerShape& s) {
  return s.tokens() * (s.q_width() / s.t() + kv_heads_per_rank(s) * s.head_dim);
}
void push_qk_norm(OpList& ops, const LayerShape& s, bool backward) {
  if (!s.qk_norm || s.mla) return;
  const double per_element = (backward ? 4.0 : 2.0) * s.activation_bytes;
  Op op = reduction_op(backward ? "qk_norm.backward" : "qk_norm", qk_norm_elements(s) * per_element);
  op.launches = kQkNormKernels;
  ops.push(op);
}

// Megatron-Core's unfused RoPE (megatron/core/models/common/embeddings/rope_utils.py
// _apply_rotary_pos_emb_bshd with _rotate_half), which Megatron-Bridge runs for YaRN
// (PositionEmbedding::yarn): `t * cos + cat(-x2, x1) * sin`, then cat((t, t_pass)) with an empty
// t_pass, per Q and K tensor. Per element, e bytes each (the cos/sin tables of one position x
// head_dim are left out):
//   forward   t * cos 2e, -x2 e (half the elements), cat(-x2, x1) 2e, * sin 2e, the add 3e, the
//             final cat 2e                                                                  = 12e
//             six kernels per tensor
//   backward  autograd: g * sin 2e, the negation's backward e, chunk's backward cat 2e, g * cos
//             2e, the sum of t's two gradients 3e (the cats' and the add's backward only
//             slice or pass through)                                                        = 10e
//             five kernels per tensor
// The fused kernel (fused_apply_rotary_pos_emb) reads and writes each element once: 2e, one kernel.
constexpr double kUnfusedRopeForwardPasses = 12.0, kUnfusedRopeBackwardPasses = 10.0;
constexpr double kUnfusedRopeForwardKernelsPerTensor = 6.0, kUnfusedRopeBackwardKernelsPerTensor = 5.0;

void push_rope(OpList& ops, const LayerShape& s, bool backward) {
  if (s.position != PositionEmbedding::rotary && s.position != PositionEmbedding::yarn) return;
  const double e = s.activation_bytes;
  const std::string_view name = backward ? "rope.backward" : "rope";
  Op op;
  if (eager(s)) {
    op = memory_op(name, rope_elements(s) * (kEagerRopeFp32Bytes + kEagerRopeActivations * e));
    op.launches = 2.0 * kEagerRopeKernelsPerTensor;
  } else if (s.position == PositionEmbedding::yarn) {
    // Plain multiplies, adds and copies: HBM-bound data movement.
    op = data_movement_op(name, rope_elements(s) * (backward ? kUnfusedRopeBackwardPasses : kUnfusedRopeForwardPasses) * e);
    op.launches = 2.0 * (backward ? kUnfusedRopeBackwardKernelsPerTensor : kUnfusedRopeForwardKernelsPerTensor);
  } else {
    op = memory_op(name, rope_elements(s) * 2.0 * e);
    op.launches = 2.0;
  }
  ops.push(op);
}

// GQA under repeat_kv (model/workload.h): torchtitan's repeat_kv expands K and V to every query
// head with a copy (read the KV heads, write all heads) before SDPA; its backward sums the copies
// back. Stacks whose kernel indexes the shared KV head (Transformer Engine) skip it.
void push_repeat_kv(OpList& ops, const LayerShape& s, bool backward) {
  if (!s.repeat_kv) return;
  const double kv = kv_heads_per_rank(s) * s.head_dim, q = s.q_width() / s.t();
  Op op = data_movement_op(backward ? "repeat_kv.backward" : "repeat_kv", 2.0 * s.tokens() * (kv + q) * s.activation_bytes);
  op.launches = 2.0;
  ops.push(op);
}

// SwiGLU `silu(a) * b`: eager runs silu (2e) then mul (3e) per FFN element; backward the mul's two
// gradients (3e each) and silu's backward (3e). The fused kernel: 3e forward, 5e backward.
constexpr double kEagerSwigluForwardActivations = 5.0, kEagerSwigluBackwardActivations = 9.0;

void push_activation(OpList& ops, const LayerShape& s, bool backward) {
  const bool swiglu = s.mlp == MlpKind::swiglu;
  if (eager(s) && swiglu) {
    const double elements = s.tokens() * s.ffn / s.t();
    Op op = memory_op(backward ? "swiglu.backward" : "swiglu",
                      elements * s.activation_bytes *
                          (backward ? kEagerSwigluBackwardActivations : kEagerSwigluForwardActivations));
    op.launches = backward ? 3.0 : 2.0;
    ops.push(op);
    return;
  }
  // F.gelu is one kernel eager or fused (a linear bias rides in the GEMM's epilogue, addmm). The
  // squared ReLU is Megatron-Core's one compiled kernel of GELU's traffic (model/transformer.h
  // MlpKind); an eager relu-then-pow would be two, but no stack here runs it so, and it is priced as
  // the one kernel in both modes.
  const bool relu2 = s.mlp == MlpKind::relu2;
  if (backward) {
    ops.push(memory_op(swiglu  ? "swiglu.backward"
                       : relu2 ? "squared_relu.backward"
                               : "bias_gelu.backward",
                       activation_backward_bytes(s)));
  } else {
    ops.push(memory_op(swiglu ? "swiglu" : relu2 ? "squared_relu" : "bias_gelu", activation_forward_bytes(s)));
  }
}

// Residual branch: fused bias-dropout-add, or eager dropout (read e, write e and the mask) then add.
void push_residual(OpList& ops, const LayerShape& s) {
  // Without dropout the kernel adds the bias and the residual: it only moves bytes.
  Op op = s.dropout ? memory_op("bias_dropout_add", bias_dropout_add_bytes(s))
                    : data_movement_op("bias_dropout_add", bias_dropout_add_bytes(s));
  if (eager(s) && s.dropout) {
    op.bytes += Bytes(s.norm_tokens() * s.hidden * 2.0 * s.activation_bytes);
    op.launches = 2.0;
  }
  ops.push(op);
}
// Backward: the dropout's backward, and in eager mode the residual's two gradients summed by a
// separate add (3e), which a fused norm backward folds in.
void push_residual_backward(OpList& ops, const LayerShape& s) {
  Op op = s.dropout ? memory_op("bias_dropout_add.backward", bias_dropout_add_backward_bytes(s))
                    : data_movement_op("bias_dropout_add.backward", bias_dropout_add_backward_bytes(s));
  if (eager(s)) {
    op.bytes += Bytes(s.norm_tokens() * s.hidden * 3.0 * s.activation_bytes);
    op.launches = 2.0;
  }
  ops.push(op);
}

}  // namespace

double quantize_bytes_per_element(DataType compute, Fp8Scaling scaling, bool transposed) {
  constexpr double kRead16 = 2.0;  // the 16-bit source, read once per pass over it
  switch (compute) {
    case DataType::mxfp8:
      return kRead16 + 2.0 * bytes_per_element(DataType::mxfp8);
    case DataType::nvfp4:
      return 2.0 * kRead16 + 2.0 * bytes_per_element(DataType::nvfp4);
    default: {
      const double amax_pass = scaling == Fp8Scaling::current ? kRead16 : 0.0;
      return amax_pass + kFp8CastBytesPerElement + (transposed ? kFp8TransposeBytesPerElement : 0.0);
    }
  }
}

double backward_cast_bytes(const LayerShape& s, double outputs, double inputs) {
  const bool input_transposes = s.compute == DataType::fp8 && s.fp8_transposes;
  return outputs * quantize_bytes_per_element(s.compute, s.fp8_scaling, s.fp8_transposes) +
         (input_transposes ? inputs * kFp8TransposeBytesPerElement : 0.0);
}

Op weight_quantize_op(const LayerShape& s, double parameters) {
  return memory_op("weight_quantize", parameters * quantize_bytes_per_element(s.compute, s.fp8_scaling, s.fp8_transposes));
}

OpList layer_forward_ops(const LayerShape& s) {
  OpList ops;
  const double T = s.tokens();
  push_norm(ops, "input_norm", s, false);
  if (is_quantized_training_format(s.compute)) ops.push(memory_op("fp8_casts", fp8_forward_cast_bytes(s)));
  if (s.mla) {
    push_mla_projections_forward(ops, s);
  } else {
    ops.push(gemm("qkv_proj", s, T, qkv_width_per_rank(s), s.hidden));
  }
  push_qk_norm(ops, s, false);
  push_rope(ops, s, false);
  push_repeat_kv(ops, s, false);
  push_attention_core_forward(ops, s);
  ops.push(gemm("out_proj", s, T, s.hidden, attention_output_width(s)));
  push_residual(ops, s);
  push_norm(ops, "post_attention_norm", s, false);
  if (s.moe_layer) {
    push_moe_forward(ops, s);
  } else {
    ops.push(gemm("fc1", s, T, s.fc1_width() / s.t(), s.hidden));
    push_activation(ops, s, false);
    ops.push(gemm("fc2", s, T, s.hidden, s.ffn / s.t()));
  }
  push_residual(ops, s);
  return ops;
}

OpList early_stop_recompute_forward_ops(const LayerShape& s) {
  const OpList forward = layer_forward_ops(s);
  if (s.moe_layer || s.dropout) return forward;
  const int n = forward.size();
  // The tail layer_forward_ops writes for a dense layer: ..., fc2, then the residual add.
  if (n < 2 || forward[n - 1].name != "bias_dropout_add" || forward[n - 2].name != "fc2") return forward;
  OpList replay;
  for (int i = 0; i < n - 2; ++i) replay.push(forward[i]);
  return replay;
}

OpList layer_backward_ops(const LayerShape& s) {
  OpList ops;
  const double T = s.tokens();
  if (is_quantized_training_format(s.compute)) ops.push(memory_op("fp8_casts.backward", fp8_backward_cast_bytes(s)));
  if (s.linear_bias) ops.push(reduction_op("bias_grads", bias_gradient_bytes(s)));
  push_residual_backward(ops, s);
  if (s.moe_layer) {
    push_moe_backward(ops, s);
  } else {
    push_gemm_backward(ops, "fc2.dgrad", "fc2.wgrad", s, T, s.hidden, s.ffn / s.t());
    push_activation(ops, s, true);
    push_gemm_backward(ops, "fc1.dgrad", "fc1.wgrad", s, T, s.fc1_width() / s.t(), s.hidden);
  }
  push_norm(ops, "post_attention_norm.backward", s, true);
  push_residual_backward(ops, s);
  push_gemm_backward(ops, "out_proj.dgrad", "out_proj.wgrad", s, T, s.hidden, attention_output_width(s));
  push_attention_core_backward(ops, s);
  push_repeat_kv(ops, s, true);
  push_rope(ops, s, true);
  push_qk_norm(ops, s, true);
  if (s.mla) {
    push_mla_projections_backward(ops, s);
  } else {
    push_gemm_backward(ops, "qkv_proj.dgrad", "qkv_proj.wgrad", s, T, qkv_width_per_rank(s), s.hidden);
  }
  push_norm(ops, "input_norm.backward", s, true);
  return ops;
}

OpList attention_core_forward_ops(const LayerShape& s) {
  OpList ops;
  push_attention_core_forward(ops, s);
  return ops;
}

OpList selective_recompute_forward_ops(const LayerShape& s, RecomputeModules modules) {
  using enum RecomputeModule;
  OpList ops;
  if (modules.has(core_attn)) push_attention_core_forward(ops, s);
  // The other regions' kernels, picked by name from the layer's forward.
  const auto recomputed = [&](std::string_view n) {
    if (modules.has(layernorm) && ((n == "input_norm" && s.mla) || (n == "post_attention_norm" && s.moe_layer))) {
      return true;
    }
    if (modules.has(mla_up_proj) && s.mla &&
        ((n == "q_up_proj" && s.mla->q_lora_rank > 0) || n == "kv_up_proj" || n == "mla_rope")) {
      return true;
    }
    if (modules.has(mlp) && !s.moe_layer &&
        (n == "post_attention_norm" || n == "fc1" || n == "swiglu" || n == "bias_gelu" || n == "squared_relu" ||
         n == "fc2")) {
      return true;
    }
    if (!s.moe_layer || modules.has(moe)) return false;
    if (modules.has(shared_experts) && (n == "shared_fc1" || n == "shared_swiglu" || n == "shared_gelu" ||
                                          n == "shared_squared_relu" || n == "shared_fc2")) {
      return true;
    }
    return modules.has(moe_act) && (n == "experts_glu_clamp" || n == "experts_swiglu" || n == "experts_gelu" ||
                                   n == "experts_squared_relu");
  };
  const bool picks = modules.has(layernorm) || modules.has(mla_up_proj) || modules.has(mlp) ||
                     modules.has(shared_experts) || modules.has(moe_act);
  if (picks) {
    for (const Op& op : layer_forward_ops(s)) {
      if (recomputed(op.name)) ops.push(op);
    }
  }
  if (modules.has(moe) && s.moe_layer) push_moe_forward(ops, s);
  return ops;
}

OpList embedding_forward_ops(const LayerShape& s) {
  OpList ops;
  // Vocab-parallel lookup writes b*s*h (zeros for ids outside the shard) from the gathered rows.
  ops.push(data_movement_op("embedding_lookup", 2.0 * s.tokens() * s.hidden * s.activation_bytes));
  if (s.dropout) {
    ops.push(memory_op("embedding_dropout",
                       s.norm_tokens() * s.hidden * (2.0 * s.activation_bytes + 1.0)));
  }
  return ops;
}

OpList embedding_backward_ops(const LayerShape& s) {
  OpList ops;
  // PyTorch's dense embedding backward: a zeroed V/t x h gradient in the activation format, the
  // token gradients scatter-added into it, then accumulated into the FP32 main gradient
  // (read 4 + e, write 4).
  const double table = s.vocab / s.t() * s.hidden;
  ops.push(memory_op("embedding.backward",
                     s.tokens() * s.hidden * 2.0 * s.activation_bytes + table * (2.0 * s.activation_bytes + 8.0)));
  return ops;
}

namespace {

// The output projection runs in 16 bits under FP8, MXFP8 and NVFP4 training. Megatron-Core builds
// it as tensor_parallel.ColumnParallelLinear (megatron/core/models/gpt/gpt_model.py, GPTModel
// __init__: `self.output_layer = tensor_parallel.ColumnParallelLinear(...)`), a plain PyTorch
// matmul rather than a Transformer Engine module, and enters the FP8 context per transformer
// layer (megatron/core/transformer/transformer_block.py, get_fp8_context), so the logits GEMMs
// never see a quantized recipe; torchtitan's float8 converter likewise leaves the output
// projection in high precision (its filter_fqns default lists "output").
LayerShape output_layer_shape(const LayerShape& s) {
  LayerShape o = s;
  if (is_quantized_training_format(o.compute)) o.compute = ops::attention_dtype(s);
  return o;
}

// The loss's kernels over `logits` logit elements, each at the rate of its kind.
void push_loss_kernels(OpList& ops, const CrossEntropyPass& pass, double logits) {
  for (const CrossEntropyKernel& k : pass) {
    const double bytes = logits * k.bytes();
    ops.push(k.reduction ? reduction_op(k.name, bytes) : memory_op(k.name, bytes));
  }
}

}  // namespace

OpList output_forward_ops(const LayerShape& s) {
  OpList ops;
  const double T = s.tokens();
  const double logits = T * s.vocab / s.t();
  push_norm(ops, "final_norm", s, false);
  ops.push(gemm("logits", output_layer_shape(s), T, s.vocab / s.t(), s.hidden));
  // The loss's logits-sized kernels, as the implementation the scenario names runs them
  // (model/cross_entropy_kernels.h).
  push_loss_kernels(ops, cross_entropy_forward_kernels(s.cross_entropy, s.activation_bytes), logits);
  return ops;
}

OpList output_backward_ops(const LayerShape& s) {
  OpList ops;
  const double T = s.tokens();
  const double logits = T * s.vocab / s.t();
  push_loss_kernels(ops, cross_entropy_backward_kernels(s.cross_entropy, s.activation_bytes), logits);
  push_gemm_backward(ops, "logits.dgrad", "logits.wgrad", output_layer_shape(s), T, s.vocab / s.t(), s.hidden);
  push_norm(ops, "final_norm.backward", s, true);
  return ops;
}

OpList mtp_forward_ops(const LayerShape& s) {
  OpList ops;
  const double T = s.tokens();
  ops.push(data_movement_op("mtp.embedding_lookup", 2.0 * T * s.hidden * s.activation_bytes));
  push_norm(ops, "mtp.enorm", s, false);
  push_norm(ops, "mtp.hnorm", s, false);
  // torch.cat along the hidden dimension: reads both halves, writes the b s 2h input of eh_proj.
  ops.push(data_movement_op("mtp.concat", 4.0 * s.norm_tokens() * s.hidden * s.activation_bytes));
  ops.push(gemm("mtp.eh_proj", s, T, s.hidden / s.t(), 2.0 * s.hidden));
  return ops;
}

OpList mtp_backward_ops(const LayerShape& s) {
  OpList ops;
  const double T = s.tokens();
  push_gemm_backward(ops, "mtp.eh_proj.dgrad", "mtp.eh_proj.wgrad", s, T, s.hidden / s.t(), 2.0 * s.hidden);
  push_norm(ops, "mtp.hnorm.backward", s, true);
  push_norm(ops, "mtp.enorm.backward", s, true);
  // The shared embedding's gradient from this lookup, as the first stage's (embedding_backward_ops).
  const double table = s.vocab / s.t() * s.hidden;
  ops.push(memory_op("mtp.embedding.backward",
                     T * s.hidden * 2.0 * s.activation_bytes + table * (2.0 * s.activation_bytes + 8.0)));
  return ops;
}

LayerShape make_layer_shape(const TransformerSpec& model, const TrainingWorkload& training,
                            const ParallelConfig& parallel, const PrecisionConfig& precision) {
  LayerShape s;
  s.micro_batch = training.micro_batch;
  s.seq = static_cast<double>(training.seq_len) / std::max(parallel.cp, 1);
  s.context = training.seq_len;
  s.document = training.document_tokens;
  s.hidden = model.hidden;
  s.heads = model.heads;
  s.kv_heads = model.resolved_kv_heads();
  s.head_dim = model.resolved_head_dim();
  s.ffn = model.resolved_ffn_hidden();
  s.vocab = model.vocab;
  s.tp = parallel.tp;
  s.sequence_parallel = parallel.sequence_parallel && parallel.tp > 1;
  s.mlp = model.mlp;
  s.norm = model.norm;
  s.position = model.position;
  s.kernels = training.kernels;
  s.repeat_kv = !model.mla && model.resolved_kv_heads() < model.heads &&
                training.repeat_kv.value_or(training.kernels == KernelFusion::eager);
  s.linear_bias = model.linear_bias;
  s.dropout = model.dropout;
  s.qk_norm = model.qk_norm && !model.mla;
  s.flash_attention = training.flash_attention;
  s.attention_kernel = training.attention_kernel;
  s.causal = true;
  s.compute = precision.compute;
  s.fp8_scaling = precision.fp8_scaling;
  s.fp8_attention = precision.fp8_attention;
  s.activation_bytes = (precision.compute == DataType::fp32 || precision.compute == DataType::tf32) ? 4.0 : 2.0;
  s.main_grad_bytes = bytes_per_element(precision.grads);
  s.cross_entropy = training.cross_entropy_fusion;
  s.mla = model.mla;
  s.moe = model.moe;
  if (s.moe.is_moe() && s.moe.ffn_hidden <= 0) s.moe.ffn_hidden = static_cast<int>(s.ffn);
  s.ep = model.is_moe() ? std::max(parallel.ep, 1) : 1;
  s.expert_tp = model.is_moe() ? std::max(parallel.expert_tensor_parallel(), 1) : 1;
  s.cp = std::max(parallel.cp, 1);
  s.cp_kind = parallel.cp_kind;
  s.ep_dispatcher = parallel.ep_dispatcher;
  s.moe_grouped_gemm = parallel.moe_grouped_gemm;
  s.window = model.sliding_window;
  s.windowed_fraction = model.windowed_layer_fraction();
  s.activation_clamp = model.activation_clamp;
  return s;
}

bool fp8_gemm_needs_transposes(GpuArchitecture arch) { return arch != GpuArchitecture::blackwell; }

LayerShape make_layer_shape(const TransformerSpec& model, const TrainingWorkload& training,
                            const ParallelConfig& parallel, const PrecisionConfig& precision, GpuArchitecture arch) {
  LayerShape s = make_layer_shape(model, training, parallel, precision);
  s.fp8_transposes = fp8_gemm_needs_transposes(arch);
  return s;
}

double attention_keys(const LayerShape& shape) {
  return shape.document > 0.0 && shape.document < shape.context ? shape.document : shape.context;
}

double documents_per_sequence(const LayerShape& shape) { return shape.context / attention_keys(shape); }

LayerShape moe_layer_shape(LayerShape shape) {
  shape.moe_layer = shape.moe.is_moe();
  return shape;
}

}  // namespace stepcast
