#pragma once
// Context parallelism: the traffic that lets cp ranks, each holding seq_len / cp tokens of every
// sequence, run attention over the whole context, and how much of it the attention hides.
//
// Load balancing (all kinds): the sequence is cut into 2 cp chunks and rank r holds chunks r and
// 2cp-1-r, so under a causal mask every rank has the same attention work, the total over cp
// (Megatron-Core / Transformer Engine context parallelism; Llama 3 paper Sec. 3.3.2). The layer
// shape already gives each rank seq/cp queries over the whole context, causal-halved.
//
// ring (Transformer Engine "p2p", Liu et al. 2023 "Ring Attention"): cp steps; in each, a rank
//   computes attention of its queries against the K/V block it holds while sending that block to
//   the next rank and receiving the previous rank's. A block is K and V of one rank's tokens,
//   b (s/cp) (K width + V width) bytes at the activation precision (GQA: the rank's g/t KV heads;
//   MLA: every head's up-projected K and V). Forward: cp-1 transfers, each hidden behind one
//   step's attention (1/cp of it), exposed by max(0, transfer - step). Backward: K/V and their
//   gradients dK/dV circulate (twice the bytes) behind the backward steps.
// ulysses (DeepSpeed-Ulysses, Jacobs et al. 2023; TE "a2a"): four all-to-alls on the CP group per
//   layer forward — Q, K, V from sequence- to head-sharded, the output back — and four in the
//   backward; none is overlapped. Each moves the rank's b (s/cp) x width tensor (KV heads below cp
//   are repeated to cp).
// all_gather (Llama 3, Sec. 3.3.2): K and V all-gathered over the CP group before attention
//   (exposed; small under GQA), gathered again in the backward (not kept) and their gradients
//   reduce-scattered (exposed).

#include "model/collective.h"
#include "model/layer_shape.h"
#include "model/units.h"

namespace stepcast {

// K and V of one rank's chunk: the block one ring step sends.
Bytes ring_block_bytes(const LayerShape& shape);

// Bytes of one Ulysses all-to-all (nccl-tests convention: the rank's whole send buffer) for the
// queries (and output) and for the keys and values.
struct UlyssesBytes {
  Bytes query;   // Q, and the attention output back
  Bytes key;     // K (V the same)
};
UlyssesBytes ulysses_bytes(const LayerShape& shape);

struct ContextParallelTime {
  Seconds forward_exposed;
  Seconds backward_exposed;
};

// The exchange's exposed time for one layer and micro-batch. `attention_forward` and
// `attention_backward` are the attention core's kernel times on this rank (the work the ring hides
// its transfers behind); `cp_group` is the CP group's layout and `ring_hop` the layout of its
// slowest neighbouring pair (model/placement.h).
ContextParallelTime context_parallel_time(const LayerShape& shape, Seconds attention_forward,
                                          Seconds attention_backward, const CollectiveModel& net,
                                          const GroupLayout& cp_group, const GroupLayout& ring_hop);

}  // namespace stepcast
