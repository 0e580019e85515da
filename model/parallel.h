#pragma once
// How the work is split over GPUs, and the memory/time trade-offs chosen for it.
//
// Products: tp * pp * dp * cp == gpus (the loader enforces it). Expert parallelism (ep) divides
// the data-parallel * context-parallel ranks for the expert layers, as in Megatron-Core; it does
// not add to the product.

#include <string>

namespace stepcast {

enum class PipelineSchedule { gpipe, one_f_one_b, zb_h1, zb_h2, dualpipe };
enum class Recompute { none, selective, full };
enum class Offload { none, optimizer, optimizer_and_params };
enum class ContextParallelKind { ring, ulysses };

struct ParallelConfig {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int ep = 1;
  int expert_tp = 1;          // tensor parallelism inside the expert layers
  int vpp = 1;                // model chunks per pipeline rank; >1 interleaves 1F1B
  int first_stage_layers = -1;  // -1: even split; else layers in the first model chunk
  int last_stage_layers = -1;   // -1: even split; else layers in the last model chunk
  bool sequence_parallel = false;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int zero = 0;               // 0 none, 1 optimizer states, 2 + gradients, 3 + parameters (FSDP)
  Recompute recompute = Recompute::none;
  Offload offload = Offload::none;
  ContextParallelKind cp_kind = ContextParallelKind::ring;

  // Overlap switches (Megatron-Core flag names in comments); the defaults are Megatron's
  // recommended production settings.
  bool overlap_grad_reduce = true;    // --overlap-grad-reduce
  bool overlap_param_gather = true;   // --overlap-param-gather
  bool tp_comm_overlap = false;       // --tp-comm-overlap (userbuffers)

  // Rank order from fastest- to slowest-varying dimension (Megatron: "tp-cp-ep-dp-pp").
  std::string order = "tp-cp-ep-dp-pp";

  [[nodiscard]] int model_parallel_size() const { return tp * pp * cp; }
  [[nodiscard]] int world_size() const { return tp * pp * dp * cp; }
  bool operator==(const ParallelConfig&) const = default;
};

}  // namespace stepcast
