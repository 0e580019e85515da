#include "model/op_checkpoint.h"

#include <algorithm>

#include "model/layer_ops.h"
#include "model/op_builders.h"

namespace stepcast {

bool selective_op_applies(const TransformerSpec& m) { return !m.is_moe() && !m.mla && !m.linear_bias; }

BlockMms selective_op_block_mms(const LayerShape& s) {
  const double t = s.t();
  const double q = s.q_width() / t;
  const double kv = std::max(s.kv_heads / t, 1.0) * s.head_dim;  // GQA heads one rank holds
  const double h = s.hidden;
  const double f = s.ffn / t;
  BlockMms b;
  const auto add = [&](const char* name, double out, double in) {
    b.mm[b.count] = CheckpointedMm{name, out, in, b.count % 2 == 0};  // count 1, 3, 5, 7 kept
    ++b.count;
  };
  add("wq", q, h);
  add("wk", kv, h);
  add("wv", kv, h);
  add("wo", h, q);
  add("w1", f, h);
  if (s.mlp == MlpKind::swiglu) add("w3", f, h);
  add("w2", h, f);
  return b;
}

Bytes selective_op_saved_bytes(const LayerShape& s) {
  const double e = s.activation_bytes;
  const double T = s.tokens();
  const double Tn = s.norm_tokens();
  double bytes = e * Tn * s.hidden;  // the block input, the checkpoint's argument
  const BlockMms b = selective_op_block_mms(s);
  for (int i = 0; i < b.count; ++i) {
    if (b.mm[i].saved) bytes += e * T * b.mm[i].out_width;
  }
  if (s.flash_attention) {
    // _scaled_dot_product_flash_attention's output [b, a/t, s, d] and its FP32 logsumexp [b, a/t, s].
    bytes += e * T * s.q_width() / s.t() + 4.0 * s.micro_batch * (s.heads / s.t()) * s.seq;
  }
  // torchtitan's TP (RowwiseParallel to Shard(1)) ends wo and w2 in a reduce-scatter, whose output
  // the policy keeps; without SP the all-reduce is not in the save list.
  if (s.t() > 1.0 && s.sequence_parallel) bytes += 2.0 * e * Tn * s.hidden;
  return Bytes(bytes);
}

OpList selective_op_recompute_forward_ops(const LayerShape& s) {
  OpList ops;
  for (const Op& op : layer_forward_ops(s)) {
    // The block's GEMMs are re-added below one by one; the flash kernel's outputs are kept.
    if (op.name == "qkv_proj" || op.name == "out_proj" || op.name == "fc1" || op.name == "fc2") continue;
    if (s.flash_attention && (op.name == "flash_attention" || op.name == "cp_ring_merge")) continue;
    ops.push(op);
  }
  const BlockMms b = selective_op_block_mms(s);
  for (int i = 0; i < b.count; ++i) {
    if (!b.mm[i].saved) ops.push(ops::gemm(b.mm[i].name, s, s.tokens(), b.mm[i].out_width, b.mm[i].in_width));
  }
  return ops;
}

}  // namespace stepcast
