#pragma once
// A causal BF16 fused-attention op on one rank, for tests that price one attention kernel: `heads`
// heads of `head_dim` over `seq` queries and keys. FLOPs of the causal half (4 h s^2 d / 2 forward,
// 2.5x that backward: model/layer_ops.h); bytes Q, K, V and O once in 16 bits (4 h s d x 2).
// The CTA split is known (attention.batch_heads = heads) when `known_split`, else unknown (0), so
// op_time applies no schedule; the kernel is the generation's best until the test sets another.

#include "model/op.h"

namespace stepcast::test {

inline Op causal_bf16_flash_op(double heads, double seq, double head_dim, bool backward, bool known_split) {
  Op op;
  op.kind = backward ? OpKind::flash_backward : OpKind::flash_forward;
  op.dtype = DataType::bf16;
  op.attention = known_split ? AttentionShape{heads, seq, seq, head_dim, true} : AttentionShape{0.0, 0.0, 0.0, head_dim, true};
  const double forward = 4.0 * heads * seq * seq * head_dim / 2.0;
  op.flops = Flops(backward ? 2.5 * forward : forward);
  op.bytes = Bytes(seq * 4.0 * heads * head_dim * 2.0);
  return op;
}

}  // namespace stepcast::test
