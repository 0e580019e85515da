#include "model/mla_ops.h"

#include <cassert>

#include "model/op_builders.h"

namespace stepcast {
namespace {

using ops::gemm;
using ops::memory_op;
using ops::push_gemm_backward;
using ops::reduction_op;

}  // namespace

MlaWidths mla_widths(const LayerShape& s) {
  assert(s.mla);
  const MlaSpec& m = *s.mla;
  const double heads = s.heads / s.t();
  MlaWidths w;
  w.q = heads * (m.qk_nope_head_dim + m.qk_rope_head_dim);
  w.kv_up = heads * (m.qk_nope_head_dim + m.v_head_dim);
  w.v = heads * m.v_head_dim;
  w.latent = m.kv_lora_rank + m.qk_rope_head_dim;
  return w;
}

void push_mla_projections_forward(OpList& ops, const LayerShape& s) {
  const MlaSpec& m = *s.mla;
  const MlaWidths w = mla_widths(s);
  const double T = s.tokens();
  const double e = s.activation_bytes;
  if (m.q_lora_rank > 0) {
    ops.push(gemm("q_down_proj", s, T, m.q_lora_rank, s.hidden));
    ops.push(reduction_op("q_norm", 2.0 * T * m.q_lora_rank * e));
    ops.push(gemm("q_up_proj", s, T, w.q, m.q_lora_rank));
  } else {
    ops.push(gemm("q_proj", s, T, w.q, s.hidden));
  }
  ops.push(gemm("kv_down_proj", s, T, w.latent, s.hidden));
  ops.push(reduction_op("kv_norm", 2.0 * T * m.kv_lora_rank * e));
  ops.push(gemm("kv_up_proj", s, T, w.kv_up, m.kv_lora_rank));
  // RoPE on q and the shared key, and the per-head keys assembled (read q, the up-projected nope
  // keys and the rope key; write q and k).
  ops.push(memory_op("mla_rope", T * (2.0 * w.q + w.kv_up + w.q) * e));
}

void push_mla_projections_backward(OpList& ops, const LayerShape& s) {
  const MlaSpec& m = *s.mla;
  const MlaWidths w = mla_widths(s);
  const double T = s.tokens();
  const double e = s.activation_bytes;
  ops.push(memory_op("mla_rope.backward", T * (2.0 * w.q + w.kv_up + w.q) * e));
  push_gemm_backward(ops, "kv_up_proj.dgrad", "kv_up_proj.wgrad", s, T, w.kv_up, m.kv_lora_rank);
  ops.push(reduction_op("kv_norm.backward", 3.0 * T * m.kv_lora_rank * e));
  push_gemm_backward(ops, "kv_down_proj.dgrad", "kv_down_proj.wgrad", s, T, w.latent, s.hidden);
  if (m.q_lora_rank > 0) {
    push_gemm_backward(ops, "q_up_proj.dgrad", "q_up_proj.wgrad", s, T, w.q, m.q_lora_rank);
    ops.push(reduction_op("q_norm.backward", 3.0 * T * m.q_lora_rank * e));
    push_gemm_backward(ops, "q_down_proj.dgrad", "q_down_proj.wgrad", s, T, m.q_lora_rank, s.hidden);
  } else {
    push_gemm_backward(ops, "q_proj.dgrad", "q_proj.wgrad", s, T, w.q, s.hidden);
  }
}

}  // namespace stepcast
