#include "model/context_parallel.h"

#include <algorithm>

namespace stepcast {
namespace {

// Widths of one token's K and V on this TP rank.
struct KvWidth {
  double k = 0.0;
  double v = 0.0;
};
KvWidth kv_width(const LayerShape& s) {
  if (s.mla) {
    const double heads = s.heads / s.t();
    return {heads * (s.mla->qk_nope_head_dim + s.mla->qk_rope_head_dim), heads * s.mla->v_head_dim};
  }
  // The K/V the kernel sees: every query head's copy under repeat_kv (torchtitan's repeat_kv runs
  // before SDPA, so PyTorch's CP moves the copies).
  const double kv_heads = s.repeat_kv ? s.heads / s.t() : std::max(s.kv_heads / s.t(), 1.0);
  return {kv_heads * s.head_dim, kv_heads * s.head_dim};
}

// Elements of the rank's attention output (its queries x the V width of its heads) and of its
// log-sum-exps (queries x heads).
double output_elements(const LayerShape& s) {
  const double v_dim = s.mla ? s.mla->v_head_dim : s.head_dim;
  return s.tokens() * (s.heads / s.t()) * v_dim;
}
double lse_elements(const LayerShape& s) { return s.tokens() * (s.heads / s.t()); }
double query_elements(const LayerShape& s) {
  const double qk_dim = s.mla ? s.mla->qk_nope_head_dim + s.mla->qk_rope_head_dim : s.head_dim;
  return s.tokens() * (s.heads / s.t()) * qk_dim;
}

}  // namespace

Bytes ring_merge_forward_bytes(const LayerShape& s) {
  if (s.cp <= 1) return Bytes(0.0);
  const double e = s.activation_bytes;
  const double a = kRingAccumulatorBytes;
  const double steps = s.cp - 1.0;
  const double per_step = output_elements(s) * (e + 2.0 * a) + lse_elements(s) * 3.0 * a;
  const double casts = 2.0 * output_elements(s) * (e + a);
  return Bytes(steps * per_step + casts);
}

Bytes ring_merge_backward_bytes(const LayerShape& s) {
  if (s.cp <= 1) return Bytes(0.0);
  const double e = s.activation_bytes;
  const double a = kRingAccumulatorBytes;
  const double cp = s.cp;
  const double kv = ring_block_bytes(s).value() / e;  // K and V elements of one block
  const double dq = query_elements(s) * (cp * (e + 2.0 * a) + (a + e));
  const double dkv = kv * ((1.0 + (cp - 1.0) / 2.0) * (e + 2.0 * a) + (a + e));
  return Bytes(dq + dkv);
}

double ring_merge_forward_launches(const LayerShape& s) { return s.cp > 1 ? s.cp - 1.0 + 2.0 : 0.0; }
double ring_merge_backward_launches(const LayerShape& s) { return s.cp > 1 ? 2.0 * s.cp + 2.0 : 0.0; }

Bytes ring_block_bytes(const LayerShape& s) {
  const KvWidth w = kv_width(s);
  return Bytes(s.tokens() * (w.k + w.v) * s.activation_bytes);
}

UlyssesBytes ulysses_bytes(const LayerShape& s) {
  const double e = s.activation_bytes;
  const double heads = s.heads / s.t();
  const double q_dim = s.mla ? s.mla->qk_nope_head_dim + s.mla->qk_rope_head_dim : s.head_dim;
  UlyssesBytes b;
  b.query = Bytes(s.tokens() * heads * q_dim * e);
  if (s.mla) {
    b.key = Bytes(s.tokens() * heads * q_dim * e);
  } else {
    // Fewer KV heads than CP ranks: each is repeated so every rank gets one.
    const double kv_heads = s.repeat_kv ? heads : std::max({s.kv_heads / s.t(), 1.0, static_cast<double>(s.cp)});
    b.key = Bytes(s.tokens() * kv_heads * s.head_dim * e);
  }
  return b;
}

bool ring_allgather_waits_at_issue(const LayerShape& s) { return s.kernels == KernelFusion::fused; }

RingAllGatherTimes ring_allgather_times(const LayerShape& s, const CollectiveModel& net, const GroupLayout& cp_group,
                                        const GroupLayout& ring_hop) {
  RingAllGatherTimes r;
  if (s.cp <= 1) return r;
  // nccl-tests convention: the gathered output, cp blocks.
  r.gather = net.time(CollectiveOp::all_gather, ring_block_bytes(s) * static_cast<double>(s.cp), cp_group);
  r.gradient_hop = net.time(CollectiveOp::send_recv, ring_block_bytes(s) * (kRingAccumulatorBytes / s.activation_bytes),
                            ring_hop);
  return r;
}

ContextParallelTime context_parallel_time(const LayerShape& s, Seconds attention_forward, Seconds attention_backward,
                                          const CollectiveModel& net, const GroupLayout& cp_group,
                                          const GroupLayout& ring_hop) {
  ContextParallelTime t;
  if (s.cp <= 1) return t;
  const double cp = s.cp;
  switch (s.cp_kind) {
    case ContextParallelKind::ring: {
      const Bytes block = ring_block_bytes(s);
      const Bytes gradients = block * (kRingAccumulatorBytes / s.activation_bytes);  // dK/dV in FP32
      const Seconds forward_step = net.time(CollectiveOp::send_recv, block, ring_hop);
      const Seconds backward_step = net.time(CollectiveOp::send_recv, block + gradients, ring_hop);
      const Seconds last_hop = net.time(CollectiveOp::send_recv, gradients, ring_hop);
      t.forward_exposed = max(forward_step - attention_forward / cp, Seconds(0.0)) * (cp - 1.0);
      t.backward_exposed = max(backward_step - attention_backward / cp, Seconds(0.0)) * (cp - 1.0) + last_hop;
      break;
    }
    case ContextParallelKind::ring_allgather: {
      const RingAllGatherTimes r = ring_allgather_times(s, net, cp_group, ring_hop);
      if (ring_allgather_waits_at_issue(s)) {
        // Traced: every collective is waited where it is issued, none hides behind a step.
        t.forward_exposed = r.gather;
        t.backward_exposed = r.gather + r.gradient_hop * cp;
        break;
      }
      const Seconds forward_step = attention_forward / cp;
      const Seconds backward_step = attention_backward / cp;
      t.forward_exposed = max(r.gather - forward_step, Seconds(0.0));
      t.backward_exposed = max(r.gather - backward_step, Seconds(0.0)) +
                           max(r.gradient_hop - backward_step, Seconds(0.0)) * (cp - 1.0) + r.gradient_hop;
      break;
    }
    case ContextParallelKind::ulysses: {
      const UlyssesBytes b = ulysses_bytes(s);
      const Seconds q = net.time(CollectiveOp::all_to_all, b.query, cp_group);
      const Seconds kv = net.time(CollectiveOp::all_to_all, b.key, cp_group);
      // Q, K, V in and the output back; the backward moves their gradients the same way.
      t.forward_exposed = q * 2.0 + kv * 2.0;
      t.backward_exposed = t.forward_exposed;
      break;
    }
    case ContextParallelKind::all_gather: {
      // The gathered K and V of the whole context (nccl-tests: the gathered output).
      const Bytes gathered = ring_block_bytes(s) * cp;
      const Seconds gather = net.time(CollectiveOp::all_gather, gathered, cp_group);
      const Seconds scatter = net.time(CollectiveOp::reduce_scatter, gathered, cp_group);
      t.forward_exposed = gather;
      t.backward_exposed = gather + scatter;
      break;
    }
  }
  return t;
}

}  // namespace stepcast
