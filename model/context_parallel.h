#pragma once
// Context parallelism: the traffic that lets cp ranks, each holding seq_len / cp tokens of every
// sequence, run attention over the whole context, and how much of it the attention hides.
//
// Load balancing (all kinds): the sequence is cut into 2 cp chunks and rank r holds chunks r and
// 2cp-1-r, so under a causal mask every rank has the same attention work, the total over cp
// (Megatron-Core / Transformer Engine context parallelism; Llama 3 paper Sec. 3.3.2). The layer
// shape already gives each rank seq/cp queries over the whole context, causal-halved.
//
// ring (Transformer Engine "p2p", Liu et al. 2023 "Ring Attention"; PyTorch's context_parallel
//   with rotate method "alltoall", torch/distributed/tensor/experimental/_attention.py,
//   _templated_ring_attention and its backward with _AllToAllRotater, read at pytorch/pytorch
//   @f2127dbd and @0123248a): cp steps; in each, a rank
//   computes attention of its queries against the K/V block it holds while sending that block to
//   the next rank and receiving the previous rank's. A block is K and V of one rank's tokens,
//   b (s/cp) (K width + V width) bytes at the activation precision (GQA: the rank's g/t KV heads;
//   MLA: every head's up-projected K and V). Forward: cp-1 transfers, each hidden behind one
//   step's attention (1/cp of it), exposed by max(0, transfer - step). Backward: K/V and their
//   gradients dK/dV circulate behind the backward steps, dK/dV in FP32 (PyTorch: accum_dtype
//   float32 under _ContextParallelOptions.convert_to_f32, default True); after the last step the
//   accumulated dK/dV still make one hop back to their owner with no step left to hide it
//   (PyTorch: dkv_rotater.next_buffer() after the loop), exposed whole.
//   Each step is its own attention kernel and its partial result is merged into an FP32 running
//   result (layer_ops prices both; ring_merge_*_bytes below give the merge traffic).
// ring_allgather (PyTorch's context_parallel with its DEFAULT rotate method: _ContextParallelOptions
//   rotate_method = _RotateMethod.ALL_GATHER since the all-gather rotater landed, pytorch/pytorch
//   PR #132820, August 2024; set_rotate_method, PR #142093, December 2024, documents "If this API
//   has not been called, the default rotate method is 'allgather'"; torchtitan's
//   experimental.context_parallel_rotate_method defaults to "allgather" as well. Read at
//   pytorch/pytorch @0123248a, _AllGatherRotater and _templated_ring_attention(_backward)): the
//   ring's cp steps, kernels and FP32 merges as above, but K/V do not travel hop by hop. At step 0
//   exchange_buffers issues ONE all-gather of every rank's block (cp blocks gathered) and the step-0
//   kernel runs beside it; step 1's next_buffer() waits for it, and steps 1..cp-1 read their block
//   from the gathered buffer with no further communication. Forward: exposed
//   max(0, all-gather - one step). Backward: kv_rotater (the default, all-gather) gathers K/V again
//   under step 0 (exposed the same way), while the FP32 dK/dV always travel the ring
//   (dkv_rotater = _create_rotater(..., method=_RotateMethod.ALL_TO_ALL)): each hop is issued after
//   a step's kernel and waited after the next one's (cp-1 waits, each exposed by
//   max(0, hop - step)), and the last hop after the loop exposed whole. Full recomputation re-runs
//   the forward, all-gather included (simulator/parallel_traffic.cpp adds the forward exposure to
//   the backward). On one communicator the hops queue behind the all-gather; that shift is not
//   priced (it matters only where the all-gather is itself exposed).
//   Under torch.compile (training.kernels fused; PyTorch's CP has no other fused form) none of
//   that overlap exists: the ring is traced into the compiled graph (torchtitan compiles each
//   TransformerBlock with fullgraph=True, so the SDPA that context_parallel patches, its DTensor
//   dispatch and the ring loop are traced), and a traced functional collective is waited where it
//   is issued: torch/distributed/_functional_collectives.py _maybe_wrap_tensor returns
//   wait_tensor(self) when _are_we_tracing() (the AsyncCollectiveTensor that defers the wait to
//   the first use exists only in eager; _attention.py's _maybe_wait says as much), and Inductor
//   moves waits only under reorder_for_compute_comm_overlap, False by default
//   (torch/_inductor/config.py); compiled output keeps the wait right after the collective
//   (KellerJordan/modded-nanogpt PR #97, pytorch/pytorch issue #174280). So each all-gather
//   (forward, recompute, backward) and all cp dK/dV hops are exposed whole.
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

// Bytes per element of the ring's FP32 accumulators: the running attention output and LSE in
// the forward, dQ and dK/dV in the backward (PyTorch _SDPAMerger and
// _templated_ring_attention_backward: convert_to_f32, default True; Transformer Engine's p2p
// path likewise corrects the output per step, flash_attn_fwd_out_correction).
inline constexpr double kRingAccumulatorBytes = 4.0;

// HBM bytes one rank's ring merges move per layer and micro-batch, forward. Each step after the
// first rescales and adds its partial output into the FP32 running output by the two
// log-sum-exps (reads the step's output at the activation precision, reads and writes the running
// one and the LSEs); the first step's output is cast up and the result cast back. The rank
// holding the last chunks (cp-1) merges every step over all its queries (the others merge half
// their queries on some steps); CP ranks meet at every layer's exchange, so it sets the pace.
// Counted as one fused pass per step (the floor: PyTorch runs each step's sigmoid, subtract,
// multiply and cat as separate eager kernels, Transformer Engine fuses them).
Bytes ring_merge_forward_bytes(const LayerShape& shape);
// The same in the backward: each step's dQ added into the FP32 dQ (every step, all queries, on
// rank cp-1) and its dK/dV into the FP32 dK/dV that travel the ring (the whole block on the first
// step, half of it on the others: rank cp-1 sees only the first chunk of each received block),
// with the casts in and out.
Bytes ring_merge_backward_bytes(const LayerShape& shape);
// Kernels of those merges: one per step and a cast at each end (forward); dQ and dK/dV per step
// and their casts (backward).
double ring_merge_forward_launches(const LayerShape& shape);
double ring_merge_backward_launches(const LayerShape& shape);

// The two transfers of ring_allgather: the all-gather of K/V (cp blocks, on the CP group) and one
// hop of the FP32 dK/dV (to the ring neighbour).
struct RingAllGatherTimes {
  Seconds gather;
  Seconds gradient_hop;
};
RingAllGatherTimes ring_allgather_times(const LayerShape& shape, const CollectiveModel& net,
                                        const GroupLayout& cp_group, const GroupLayout& ring_hop);

// Whether ring_allgather's collectives are waited where they are issued (the ring traced by
// torch.compile: training.kernels fused) rather than overlapped with the steps (eager).
[[nodiscard]] bool ring_allgather_waits_at_issue(const LayerShape& shape);

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
