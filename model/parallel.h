#pragma once
// How the work is split over GPUs, and the memory/time trade-offs chosen for it.
//
// Products: tp * pp * dp * cp == gpus (the loader enforces it). Expert parallelism does not add to
// the product: the expert layers regroup the tp*cp*dp ranks of a pipeline stage as
// expert_tp * ep * expert-data-parallel (Megatron-Core's MoE parallel folding, model/placement.h).

#include <string>

namespace stepcast {

enum class PipelineSchedule { gpipe, one_f_one_b, zb_h1, zb_h2, dualpipe };
enum class Recompute { none, selective, full };
enum class Offload { none, optimizer, optimizer_and_params };
// How context-parallel ranks exchange keys and values (model/context_parallel.h).
enum class ContextParallelKind { ring, ulysses, all_gather };

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
  Offload offload = Offload::none;
  ContextParallelKind cp_kind = ContextParallelKind::ring;

  // Overlap switches (Megatron-Core flag names in comments); the defaults are Megatron's
  // recommended production settings.
  bool overlap_grad_reduce = true;    // --overlap-grad-reduce
  bool overlap_param_gather = true;   // --overlap-param-gather
  bool tp_comm_overlap = false;       // --tp-comm-overlap (userbuffers)
  // --overlap-moe-expert-parallel-comm (Megatron-Core v0.14; "moe_a2a_overlap" in Megatron-Bridge
  // recipes): the expert all-to-alls of one micro-batch hide behind another's compute. Off by
  // default, as in Megatron-Core.
  bool ep_comm_overlap = false;

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
