#pragma once
// The mixture-of-experts MLP of one layer, as one rank runs it on one micro-batch: Megatron-Core's
// MoELayer with the all-to-all token dispatcher (megatron/core/transformer/moe/: router.py,
// token_dispatcher.py, experts.py; Gale et al. 2023 "MegaBlocks" for dropless grouped GEMMs).
//
// Forward, per rank (T = the tokens entering the layer on this rank: the sequence-parallel shard
// b s / t when tp > 1):
//   router       GEMM T x E x h (16-bit even in FP8 training), softmax + top-k over E logits
//   permute      each token copied to its top_k experts' buffers
//   dispatch     all-to-all over the EP group (priced in simulator/, not here); with expert_tp > 1
//                the received tokens are also all-gathered over the expert-TP group
//   experts      grouped GEMMs FC1 (h -> fc1 width / expert_tp) and FC2 (width / expert_tp -> h)
//                over the E/ep local experts, with the activation between them
//   combine      all-to-all back (after a reduce-scatter over expert TP), then unpermute: the
//                top_k expert outputs of each token summed with their router weights
//   shared       always-active experts: a dense MLP of width shared_experts x ffn, TP-split
// Backward: every GEMM's data and weight gradients, the memory-bound ops' conjugates.
//
// Load. Each local expert of the busiest rank processes `expert_rows` token copies:
//   mean          tokens x top_k x ep x expert_tp / E   (all ranks of the expert's group send
//                                                         their tokens; expert TP gathers them)
//   dropless      mean x load_imbalance (capacity_factor 0, Megatron's default: the busiest
//                 rank's experts set the time, as every rank waits for the combine)
//   capacity      mean x capacity_factor (GShard-style fixed capacity, tokens beyond it dropped
//                 and buffers padded to it: --moe-expert-capacity-factor with
//                 --moe-pad-expert-input-to-capacity)
// The grouped GEMM is Transformer Engine's GroupedLinear (Megatron-Core's TEGroupedMLP): a host
// loop of one cuBLAS GEMM per local expert over 4 streams, so it is priced as `local experts`
// launches of expert_rows-row GEMMs, 4 at a time, each round with its own tile and wave
// quantization and kernel gap, the k-depth of the weight-gradient GEMMs (k = expert_rows) biting
// on small per-expert batches, and one host dispatch per expert (Op::launches, model/op_time.h).
// FP8 training quantizes each expert's GEMM inputs (and output gradients) per expert
// ("experts_fp8_casts"; the dense layer casts count the attention block and shared experts).
// Dropless routing over EP synchronizes the host before the dispatch (moe_forward_host_sync).
// The permutations depend on the dispatcher (model/parallel.h ExpertDispatcher; Megatron-Core
// megatron/core/transformer/moe/token_dispatcher.py):
//   alltoall  permute before the all-to-all (each token into its top_k slots), then the received
//             chunks, grouped by source rank, re-sorted by expert (sort_chunks_by_idxs) when a rank
//             holds several experts; the combine runs the inverses (unsort, all-to-all, unpermute)
//   deepep    the flex dispatcher sends each token itself, not its copies, and permutes what it
//             received into expert order after the dispatch (_DeepepManager
//             get_permuted_hidden_states_by_experts -> permute with the dispatched routing map;
//             unpermute before the combine): one permute and one unpermute, no chunk sort. Priced
//             as moe_permute / moe_unpermute (rows copies: equal to the all-to-all dispatcher's
//             token x top_k copies, as rows = tokens x top_k over the EP group)
//   hybridep  HybridEP's dispatch permutes the tokens for the experts inside the dispatch kernel
//             and its combine unpermutes inside the combine kernel (_HybridEPManager docstring:
//             "Permute tokens for communication, perform all-to-all communication, and permute
//             tokens for experts in single step"; dispatch_with_permute / combine_with_unpermute):
//             no permutation kernels of their own (with ep > 1; with ep 1 there is no dispatch
//             kernel and the permutations stay)
// That is parallel.moe_grouped_gemm per_expert, the default. With `grouped` (model/parallel.h)
// each expert GEMM is one grouped kernel over all local experts, its group sizes on the device
// (Transformer Engine >= 2.14 GroupedTensor grouped GEMM, TE PRs #2748 / #2669): one launch whose
// tiles are the sum of the experts' tiles, one kernel gap, one host dispatch; each cast one
// kernel over the group; no Fp8Padding copies (padded expert segments come from the permutation).
// MXFP8 SwiGLU experts run TE's fused grouped MLP (TE PR #2769, pytorch/ops/fused/grouped_mlp.py):
// SwiGLU, the router probabilities and FC2's input quantization in FC1's epilogue, SwiGLU's
// backward and FC1's output-gradient quantization in FC2's data-gradient epilogue.
// FP8 training also copies the local experts' rows into a buffer padded per expert to the
// quantized GEMMs' row alignment and back after FC2 (Transformer Engine's Fp8Padding /
// Fp8Unpadding in TEGroupedMLP), forward and backward: "experts_fp8_padding" and its kin. Experts
// with biases add FC2's bias, weighted by the router probabilities, in PyTorch per expert
// ("experts_fc2_bias", TEGroupedMLP._apply_bias). A clamped gated activation (GPT-OSS) clamps
// FC1's output halves and concatenates them in PyTorch before the fused activation, and runs
// their autograd backward ("experts_glu_clamp", Megatron-Core weighted_bias_quick_geglu_impl).

#include <string_view>

#include "model/collective.h"
#include "model/cost_parameters.h"
#include "model/hardware.h"
#include "model/layer_shape.h"
#include "model/op.h"
#include "model/units.h"

namespace stepcast {

struct MoeRouting {
  double tokens = 0.0;         // tokens entering the layer on this rank
  double load = 1.0;           // busiest rank's per-expert load over the mean
  double local_experts = 1.0;  // experts / ep
  double expert_rows = 0.0;    // rows of each local expert's GEMMs on the busiest rank
  double rows = 0.0;           // local_experts * expert_rows: token copies the rank's experts process
  double sent = 0.0;           // token copies in this rank's dispatch buffer: tokens * top_k * load
  double expert_ffn = 0.0;     // one expert's FFN width on this rank: ffn / expert_tp
  double shared_ffn = 0.0;     // the shared experts' FFN width on this rank: shared x ffn / tp
};

// Requires shape.moe_layer.
MoeRouting moe_routing(const LayerShape& shape);

// Whether the forward of this MoE layer waits on the host for the routing counts: dropless routing
// over EP (or expert-TP) ranks sizes its all-to-all and its grouped GEMMs from the tokens each
// expert got, which Megatron's all-to-all dispatcher copies to the host and synchronizes on before
// the all-to-all (token_dispatcher.py _maybe_dtoh_and_synchronize, sync point
// "before_ep_alltoall"; the splits of torch's all_to_all_single and TE GroupedLinear's m_splits
// are host lists). The GPU then idles until the host has dispatched the rest of the layer, so the
// ops after `kMoeHostSyncAfter` are bounded by their own dispatch time (layer_costs). Capacity
// mode pads every expert to a fixed size, known without the counts: no sync. Grouped GEMMs with
// the flex dispatcher keep the counts on the device end to end: HybridEP returns them as a
// device tensor and TEGroupedMLP's GroupedTensor path never reads them on the host (Megatron-Core
// experts.py _fused_forward, _apply_packed_bias "without reading token counts on the host"; the
// whole-MoE-layer CUDA graph of cuda_graph_config.py requires flex + hybridep for that reason):
// no sync. The all-to-all dispatcher still syncs: NCCL's all_to_all_single takes host split lists.
bool moe_forward_host_sync(const LayerShape& shape);
// Whether the experts' gated activation runs Megatron-Core's clamp in PyTorch before the fused
// activation kernel (LayerShape::activation_clamp > 0, gated, not TE's fused grouped MLP): the
// "experts_glu_clamp" ops, and one more 16-bit copy of FC1's output kept for the backward.
bool moe_activation_clamped(const LayerShape& shape);
// Megatron-Core's weighted_bias_quick_geglu_impl (fused_bias_geglu.py; the clamped activation
// above is this path, GPT-OSS's quick-GELU GEGLU) builds its linear offset as a new device tensor
// on every call, `torch.tensor(linear_offset, dtype=..., device=input.device)`: a host-to-device
// copy of a Python scalar, which PyTorch runs blocking (copy_ without non_blocking: cudaMemcpyAsync
// then cudaStreamSynchronize, c10/cuda memcpy_and_sync). The host waits for every queued kernel
// (FC1 and the clamps), and the GPU then idles until the host has dispatched the rest of the layer:
// the ops after kMoeActivationHostSyncAfter are bounded by their own dispatch time, as after the
// token-count synchronization. The sync in the activation's recomputation (moe_act, inside the
// backward) is not priced.
bool moe_activation_host_sync(const LayerShape& shape);
inline constexpr std::string_view kMoeActivationHostSyncAfter = "experts_glu_clamp";
// The forward op after which the synchronization sits: the all-to-all dispatcher copies the counts
// to the host after its permutation, before the all-to-all ("moe_permute"); the flex dispatcher
// needs them at the dispatch itself, right after routing (HybridEP's metadata preprocessing copies
// them to the host when num_permuted_tokens is not given; DeepEP's permute sizes its output with
// tokens_per_expert.sum().item()): "router_topk".
inline constexpr std::string_view kMoeHostSyncAfter = "moe_permute";
inline constexpr std::string_view kMoeFlexHostSyncAfter = "router_topk";
std::string_view moe_host_sync_after(const LayerShape& shape);

// Appends the MoE MLP's kernels (post-attention norm and residual add excluded: the layer owns them).
void push_moe_forward(OpList& ops, const LayerShape& shape);
void push_moe_backward(OpList& ops, const LayerShape& shape);

// One dispatch (or combine) all-to-all on the EP group, in nccl-tests' convention: the whole
// per-rank send buffer, sent x h x activation bytes (tokens dispatched in 16 bits; the share that
// stays on the rank is the (n-1)/n the collective model takes out).
Bytes moe_all_to_all_bytes(const LayerShape& shape);
// DeepEP's normal (high-throughput) kernels and HybridEP, the flex dispatcher's backends
// (ExpertDispatcher::deepep; deepseek-ai/DeepEP docs/legacy.md "Normal kernels with NVLink and RDMA
// forwarding"; DeepSeek-V3 report arXiv:2412.19437 Sec. 3.2.2): a token bound for experts on
// another NVLink domain crosses the network once per destination domain, to the GPU of its own
// local rank there, which forwards it over NVLink to each GPU of that domain holding one of the
// token's experts; GPUs of its own domain get it over NVLink directly; a GPU holding several of
// the token's experts gets it once. The combine mirrors the dispatch (the same bytes back, the
// expert outputs reduced per token on the way), and the backward runs the two the other way round.
// Per rank and dispatch, with T tokens x load (the busiest rank's share, as above), h x
// activation bytes per token, an EP group of n ranks over N domains of n/N ranks each:
//   network  T x D(N) x (N - 1)/N                the distinct remote domains a token reaches
//   NVLink   T x D(n) x (n/N - 1)/(n/N)          the distinct GPUs a token reaches, less those
//                                                reached at the receiving rank itself
// where D(B) is the expected number of distinct bins, of B equal contiguous bins of the experts,
// that a token's top_k experts fall into under uniform routing within the router's group limit
// (expected_distinct_bins). The own domain's share (1/N) and the own GPU's (N/n) are the same
// for every destination bin, so these hold on average over the ranks of the group.
struct DeepEpBytes {
  Bytes network;  // sent over this rank's NIC share
  Bytes nvlink;   // sent (and forwarded) over this rank's NVLink
};
DeepEpBytes moe_deepep_bytes(const LayerShape& shape, const GroupLayout& ep_group);

// One DeepEP/HybridEP dispatch (or combine) of moe_deepep_bytes on `ep_group` of `system`: the
// network leg a fixed CostParameters::deepep_network_latency_s plus its bytes at the rank's own
// NIC (nics_per_node x nic_bandwidth / gpus_per_node: each GPU sends through the NIC of its rail)
// times deepep_network_eta, the NVLink leg at the GPU's NVLink rate (intra_node_bandwidth) times
// deepep_nvlink_eta(architecture), each fitted to what the libraries reach through their PyTorch
// API. The legs run at once, pipelined chunk by chunk, so the slower one sets the time.
Seconds moe_deepep_time(const LayerShape& shape, const GroupLayout& ep_group, const SystemSpec& system,
                        const CostParameters& params);

// Expected number of distinct bins hit by one token's top_k experts, the experts split into `bins`
// equal contiguous bins (E/bins each: the experts of one GPU, or of one NVLink domain, of the EP
// group; Megatron-Core places experts contiguously by EP rank). Uniform routing: the token picks
// moe.router_group_topk of moe.router_groups groups uniformly (all experts in one group without
// a limit), then top_k distinct experts uniformly among the S experts of the picked groups.
// Derivation (linearity of expectation over bins):
//   E[D] = sum_j P(bin j hit) = sum_j (1 - P(no chosen expert in bin j))
// Given the picked groups, a_j experts of bin j are eligible, and the k experts drawn without
// replacement from S miss all of them with probability C(S - a_j, k) / C(S, k) (the
// hypergeometric zero term). a_j = sum over picked groups g of o_jg = |bin j n group g|; each set
// of M groups is equally likely (1 / C(G, M)), so P(miss_j) sums C(S - a, k)/C(S, k) over the
// subsets by their overlap a, counted by a small dynamic program over the groups bin j overlaps
// (the others only count through C(G - r, M - c)). Closed forms it reduces to:
//   no limit                  E[D] = B (1 - C(E - E/B, k) / C(E, k))
//   groups = bins (one group  E[D] = B (M/G) (1 - C(S - E/B, k) / C(S, k)),  S = M E / G
//   per bin, as DeepSeek-V3's 8 groups on 8 nodes: at most M = 4 nodes per token)
// Requires 1 <= bins <= experts, and a valid group limit (simulator/spec_readers checks it).
double expected_distinct_bins(const MoeSpec& moe, int bins);

// The expert-TP all-gather of the received tokens before the experts (and the reduce-scatter of
// their outputs after): rows x h x activation bytes, 0 without expert TP.
Bytes moe_expert_tp_bytes(const LayerShape& shape);

}  // namespace stepcast
