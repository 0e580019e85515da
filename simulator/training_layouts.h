#pragma once
// Every valid training layout of a scenario's model on its GPUs at its global batch: the space
// `stepcast search` explores.
//
// A layout sets tp, cp, pp (dp = gpus/(tp*cp*pp)), ep, vpp, micro_batch, sequence_parallel,
// schedule, recompute, zero and, when asked, the overlap flags (tp_comm_overlap,
// overlap_grad_reduce, overlap_param_gather); everything else (model, system, precision, seq_len,
// global_batch, rank order, expert_tp) stays as in the scenario. "Valid" is the scenario
// loader's rule (simulator/scenario_checks.h): tp divides the heads (and fits the KV heads), pp*vpp
// divides the layers (even split), dp divides global_batch and micro_batch the per-replica batch,
// interleaving only with 1F1B and a micro-batch count that is a multiple of pp, sequence
// parallelism only with tp > 1 and seq_len % tp == 0, cp with seq_len % (2 cp) == 0, ep dividing
// the experts and dp*cp. A test loads layouts of the space as files to check this.
//
// Layouts the predictor cannot tell apart, or that can only be worse, are not enumerated: pp == 1
// only with 1F1B (no pipeline: each micro-batch's forward then backward; GPipe's order there takes
// the same time and holds every micro-batch's activations),
// zero 0 only when dp == 1 (nothing to shard), sequence_parallel and tp_comm_overlap only with tp > 1,
// overlap_grad_reduce only with dp > 1, overlap_param_gather only with ZeRO-1/2 and dp > 1, recompute
// selective_op only where the loader takes it (the sweep's `recompute: auto` rule). What the predictor does not model yet is left out
// by default and can be switched on: cp > 1 (context-parallel traffic is not priced), offload (not
// modelled), ZB-H1/H2 and DualPipe (simulated as 1F1B).
//
// The space is a list of blocks sharing (tp, cp, ep, pp, micro_batch), in that nesting order; a
// block is the product of its (vpp, schedule) pairs, sequence-parallel options, recompute choices
// and ZeRO stages, innermost last. A layout's index in this order is its point number in search
// outputs, stable for a given scenario and options (so shards and merges agree).

#include <cstdint>
#include <utility>
#include <vector>

#include "model/parallel.h"
#include "model/scenario.h"

namespace stepcast {

struct TrainingLayout {
  int tp = 1;
  int cp = 1;
  int ep = 1;
  int pp = 1;
  int dp = 1;
  int vpp = 1;
  int micro_batch = 1;
  bool sequence_parallel = false;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  Recompute recompute = Recompute::none;
  int zero = 0;
  bool tp_comm_overlap = false;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  // The base scenario's implementations where the layout keeps what they describe (ZeRO-3 for
  // fsdp, full recomputation or selective_op for checkpoint), Megatron-Core's elsewhere, so every
  // layout is a scenario the loader takes.
  FsdpImplementation fsdp = FsdpImplementation::megatron;
  CheckpointImplementation checkpoint = CheckpointImplementation::megatron;
  bool operator==(const TrainingLayout&) const = default;
};

// Writes the layout into a training scenario (parallel fields and training.micro_batch); the
// layers split evenly (first/last_stage_layers unset).
void apply_layout(const TrainingLayout& layout, Scenario& scenario);

struct LayoutSpaceOptions {
  std::vector<PipelineSchedule> schedules = {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b};
  // selective_op (torchtitan's per-op policy) is kept only for models it is priced for
  // (selective_op_applies, model/op_checkpoint.h): dense, no MLA, no linear bias.
  std::vector<Recompute> recompute = {Recompute::none, Recompute::selective, Recompute::full, Recompute::selective_op};
  std::vector<int> zero = {0, 1, 2, 3};
  bool context_parallel = false;  // also cp > 1
  bool overlap_flags = false;     // also every useful setting of the three overlap flags
  int max_micro_batch = 0;        // 0: no limit
};

class LayoutSpace {
 public:
  struct Block {
    int tp = 1, cp = 1, ep = 1, pp = 1, dp = 1, micro_batch = 1;
    std::vector<std::pair<int, PipelineSchedule>> pipelines;  // (vpp, schedule)
    std::vector<bool> sequence_parallel;
    std::vector<Recompute> recompute;
    struct State {
      int zero = 0;
      bool tp_comm_overlap = false;
      bool overlap_grad_reduce = true;
      bool overlap_param_gather = true;
    };
    std::vector<State> states;
    FsdpImplementation fsdp = FsdpImplementation::megatron;                // the base scenario's
    CheckpointImplementation checkpoint = CheckpointImplementation::megatron;
    std::uint64_t offset = 0;  // index of its first layout
    std::uint64_t size = 0;
  };

  LayoutSpace(const Scenario& base, const LayoutSpaceOptions& options = {});

  [[nodiscard]] std::uint64_t size() const { return m_size; }
  [[nodiscard]] const std::vector<Block>& blocks() const { return m_blocks; }
  // The layout at `index` of block `b` (index relative to the block).
  [[nodiscard]] static TrainingLayout layout_in(const Block& b, std::uint64_t index);
  // The layout with global index `index` (< size()).
  [[nodiscard]] TrainingLayout at(std::uint64_t index) const;

 private:
  std::vector<Block> m_blocks;
  std::uint64_t m_size = 0;
};

}  // namespace stepcast
