#pragma once
// How the work is split over GPUs, and the memory/time trade-offs chosen for it.
//
// Products: tp * pp * dp * cp == gpus (the loader enforces it). Expert parallelism does not add to
// the product: the expert layers regroup the tp*cp*dp ranks of a pipeline stage as
// expert_tp * ep * expert-data-parallel (Megatron-Core's MoE parallel folding, model/placement.h).

#include <string>

namespace stepcast {

enum class PipelineSchedule { gpipe, one_f_one_b, zb_h1, zb_h2, dualpipe };
// none: every activation kept; selective: Megatron's (the regions of recompute_modules, by
// default the attention core); full: only each layer's input kept; selective_op: torchtitan's
// per-op selective activation checkpointing (activation_checkpoint.mode "selective",
// selective_ac_option "op"): every other GEMM output and the flash attention output kept, the rest
// of the block re-run in backward (model/op_checkpoint.h).
enum class Recompute { none, selective, full, selective_op };
enum class Offload { none, optimizer, optimizer_and_params };

// Megatron-Core's fine-grained selective recomputation (TransformerConfig.recompute_modules, used
// with recompute_granularity "selective"; megatron/core/transformer/transformer_config.py,
// transformer_layer.py, moe/moe_layer.py, moe/experts.py, multi_latent_attention.py). Each module
// names a region of the layer whose activations are dropped after the forward and re-made before
// the backward (model/activation_memory.h says which bytes, model/layer_ops.h which kernels):
//   core_attn       the attention core (the default: Korthikanti et al. 2022's selective)
//   moe_act         the routed experts' activation function (its output, FC2's input)
//   layernorm       the norms that are modules of their own (not fused into the next GEMM): the
//                   pre-MLP norm of MoE layers, and with MLA the input norm too
//   mla_up_proj     MLA's query and key/value up-projections and RoPE (Q, K and V)
//   mlp             a dense layer's whole MLP (with its fused pre-MLP norm)
//   moe             a MoE layer's whole MLP: router, dispatch, experts, combine, shared experts
//   shared_experts  a MoE layer's shared experts
enum class RecomputeModule { core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts };
inline constexpr int kRecomputeModuleCount = 7;

// A set of RecomputeModule. The default is Megatron-Core's: {core_attn}.
struct RecomputeModules {
  unsigned bits = 1u << static_cast<unsigned>(RecomputeModule::core_attn);
  [[nodiscard]] static constexpr RecomputeModules empty() { return RecomputeModules{0u}; }
  [[nodiscard]] constexpr bool has(RecomputeModule m) const { return (bits >> static_cast<unsigned>(m)) & 1u; }
  constexpr void add(RecomputeModule m) { bits |= 1u << static_cast<unsigned>(m); }
  [[nodiscard]] constexpr bool is_default() const { return bits == RecomputeModules{}.bits; }
  bool operator==(const RecomputeModules&) const = default;
};
// How context-parallel ranks exchange keys and values (model/context_parallel.h).
// ring_allgather comes last so the indices sweeps and result rows store for the others keep.
enum class ContextParallelKind { ring, ulysses, all_gather, ring_allgather };
// The ring's kinds: one attention kernel per step over the received K/V, partial results merged.
[[nodiscard]] constexpr bool is_ring(ContextParallelKind k) {
  return k == ContextParallelKind::ring || k == ContextParallelKind::ring_allgather;
}
// How MoE layers move tokens to their experts over the EP group (model/moe_ops.h prices them):
//   alltoall  Megatron-Core's all-to-all token dispatcher (--moe-token-dispatcher-type alltoall):
//             every routed token copy sent on its own, over NCCL's all-to-all, with a permute
//             before it and a sort of the received chunks by expert after it (and their inverses
//             around the combine)
//   deepep    the flex dispatcher (--moe-token-dispatcher-type flex) with DeepEP's normal kernels
//             (--moe-flex-dispatcher-backend deepep, megatron/core/transformer/moe/fused_a2a.py):
//             each token crosses the network once per destination NVLink domain and is forwarded
//             over NVLink to the GPUs there; the received tokens are permuted into expert order
//             (no chunk sort) and unpermuted before the combine
//   hybridep  the flex dispatcher with NVIDIA's HybridEP backend (--moe-flex-dispatcher-backend
//             hybridep): deepep's traffic, with the permutations fused into the dispatch and
//             combine kernels (token_dispatcher.py _HybridEPManager: dispatch_with_permute,
//             combine_with_unpermute)
enum class ExpertDispatcher { alltoall, deepep, hybridep };
// Whether `d` is the flex dispatcher (DeepEP or HybridEP backend): node-deduplicated traffic.
constexpr bool is_flex_dispatcher(ExpertDispatcher d) { return d != ExpertDispatcher::alltoall; }
// Which grouped GEMM runs a MoE layer's routed experts (model/moe_ops.h prices both):
//   per_expert  Transformer Engine's GroupedLinear host loop (Megatron-Core TEGroupedMLP): one
//               cuBLAS GEMM per local expert over 4 streams, per-expert casts and FP8 padding
//               copies, the token counts read on the host
//   grouped     one grouped kernel per GEMM over all local experts with the group sizes on the
//               device (Transformer Engine >= 2.14 GroupedTensor grouped GEMM, TE PRs #2748 and
//               #2669; Megatron-Core moe_use_grouped_tensor / use_transformer_engine_op_fuser),
//               and for MXFP8 SwiGLU experts the fused grouped MLP (TE PR #2769,
//               transformer_engine/pytorch/ops/fused/grouped_mlp.py; Megatron-Bridge
//               cutedsl_fused_grouped_mlp)
enum class MoeGroupedGemm { per_expert, grouped };

// Whether the training iteration runs as captured CUDA graphs (parallel.cuda_graphs):
//   none            eager: the host launches every kernel of every layer pass, so a pass is never
//                   faster than its launches x the host's time per launch (simulator/layer_kernels.h)
//   full_iteration  Megatron-Core's full-iteration graph (cuda_graph_impl "local" with
//                   cuda_graph_scope "full_iteration", or cuda_graph_impl "full_iteration" in later
//                   versions; Megatron-Bridge performance recipes such as
//                   LLAMA3_8B_B200_FP8_CS_BASE_CONFIG): FullCudaGraphWrapper captures
//                   forward_backward_func, every micro-batch's forward and backward, once and then
//                   replays it with one graph launch a step (megatron/core/full_cuda_graph.py,
//                   NVIDIA/Megatron-LM @00caa53a), so the layer passes carry no per-launch host
//                   time. The capture needs static shapes and no host synchronization: a MoE layer
//                   whose dispatch reads token counts on the host (model/moe_ops.h
//                   moe_forward_host_sync) cannot be captured (simulator/scenario_checks.cpp).
enum class CudaGraphs { none, full_iteration };

// Which ZeRO-3 / FSDP implementation shards the parameters (parallel.fsdp). It describes the
// trainer, so any ZeRO stage takes it (a sweep or --set over zero keeps the scenario valid); only
// zero 3 gathers and so copies.
// megatron: the parameters and gradients live in the buffers the collectives use (Megatron-Core's
//   distributed optimizer and Megatron-FSDP): no copy around a gather or a reduce-scatter.
// fsdp2: PyTorch's fully_shard (torchtitan, NeMo AutoModel), which copies around every collective
//   (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py): before each all-gather the
//   sharded parameters are cast to param_dtype into a flat buffer and copied into the all-gather
//   input; after it each unsharded parameter is copied out of the output (split_with_sizes_copy);
//   before each reduce-scatter the unsharded gradients are chunk-cat into the reduce-dtype input;
//   on one rank the reduce-scatter is a copy of that input. Priced by simulator/layer_kernels.cpp.
enum class FsdpImplementation { megatron, fsdp2 };

// How full recomputation re-runs a layer's forward (parallel.checkpoint). It describes the trainer,
// so any recompute setting takes it; only recompute: full replays whole layers.
// megatron: Megatron-Core's CheckpointFunction (megatron/core/tensor_parallel/random.py), a
//   reentrant autograd function: the layer's whole forward runs again before its backward.
// pytorch: torch.utils.checkpoint without reentrancy (use_reentrant=False; torchtitan's
//   ptd_checkpoint_wrapper, NeMo AutoModel), which by default stops the replay as soon as every
//   tensor the backward saved is rebuilt (torch.utils.checkpoint set_checkpoint_early_stop, on by
//   default): the ops after the last one that produces a saved tensor do not run again
//   (model/layer_ops.h early_stop_recompute_forward_ops).
enum class CheckpointImplementation { megatron, pytorch };

// Whether `recompute` with `modules` recomputes `module` (the modules act only under selective).
constexpr bool recomputes_module(Recompute recompute, RecomputeModules modules, RecomputeModule module) {
  return recompute == Recompute::selective && modules.has(module);
}

struct ParallelConfig {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int ep = 1;
  int expert_tp = 0;          // tensor parallelism inside the expert layers; 0: equal to tp
                              // (Megatron-Core's default for --expert-tensor-parallel-size)
  int vpp = 1;                // model chunks per pipeline rank; >1 interleaves 1F1B
  int first_stage_layers = -1;  // -1: even split; else layers in the first model chunk
  int last_stage_layers = -1;   // -1: even split; else layers in the last model chunk
  bool sequence_parallel = false;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int zero = 0;               // 0 none, 1 optimizer states, 2 + gradients, 3 + parameters (FSDP)
  Recompute recompute = Recompute::none;
  // With recompute: full, how many layers of each model chunk are recomputed; the others keep
  // their activations. 0: all of them. Megatron-LM --recompute-method block
  // --recompute-num-layers N; torchtitan's layer-wise activation checkpointing every k-th layer
  // is layers/(pp*vpp*k) per chunk.
  int recompute_layers = 0;
  // With recompute: selective, the regions recomputed (Megatron-Core --recompute-modules).
  RecomputeModules recompute_modules;
  Offload offload = Offload::none;
  // Activation offloading (Megatron-Core cpu_offloading with cpu_offloading_activations and
  // cpu_offloading_num_layers = N, Transformer Engine's CPU-offload handler): the saved
  // activations of the model's first N layers go to host memory after their forward and come back
  // before their backward (model/activation_offload.h). 0: off. Needs pp = 1 and no recompute.
  int activation_offload_layers = 0;
  ContextParallelKind cp_kind = ContextParallelKind::ring;
  ExpertDispatcher ep_dispatcher = ExpertDispatcher::alltoall;
  MoeGroupedGemm moe_grouped_gemm = MoeGroupedGemm::per_expert;
  FsdpImplementation fsdp = FsdpImplementation::megatron;
  CheckpointImplementation checkpoint = CheckpointImplementation::megatron;

  // Overlap switches (Megatron-Core flag names in comments); the defaults are Megatron's
  // recommended production settings.
  bool overlap_grad_reduce = true;    // --overlap-grad-reduce
  bool overlap_param_gather = true;   // --overlap-param-gather
  bool tp_comm_overlap = false;       // --tp-comm-overlap (userbuffers)
  // --overlap-moe-expert-parallel-comm (Megatron-Core v0.14; "moe_a2a_overlap" in Megatron-Bridge
  // recipes): the expert all-to-alls of one micro-batch hide behind another's compute. Off by
  // default, as in Megatron-Core.
  bool ep_comm_overlap = false;
  // Captured CUDA graphs (see CudaGraphs above); eager by default, as in Megatron-Core.
  CudaGraphs cuda_graphs = CudaGraphs::none;

  // Rank order from fastest- to slowest-varying dimension (Megatron: "tp-cp-ep-dp-pp").
  std::string order = "tp-cp-ep-dp-pp";

  [[nodiscard]] int model_parallel_size() const { return tp * pp * cp; }
  [[nodiscard]] int expert_tensor_parallel() const { return expert_tp > 0 ? expert_tp : tp; }
  // Ranks holding the same experts: tp*cp*dp / (expert_tp*ep).
  [[nodiscard]] int expert_data_parallel() const {
    const int divisor = expert_tensor_parallel() * (ep > 0 ? ep : 1);
    return divisor > 0 ? tp * cp * dp / divisor : 1;
  }
  [[nodiscard]] int world_size() const { return tp * pp * dp * cp; }
  bool operator==(const ParallelConfig&) const = default;
};

}  // namespace stepcast
