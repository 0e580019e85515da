#pragma once
// The training step: time, throughput, MFU, memory per GPU, and where each goes.
//
// A step is simulated as follows (each part documented where it is computed):
//   1. One layer's kernels are priced once (model/layer_ops.h, model/op_time.h) with its
//      tensor-parallel traffic and overlap (simulator/layer_costs.h).
//   2. Each pipeline stage's forward and backward time per micro-batch is its layers' times plus
//      the embedding (first stage) or output layer and loss (last stage); uneven first/last
//      stages come from parallel.first/last_stage_layers.
//   3. The pipeline schedule runs as events (simulator/pipeline_schedule.h), with one p2p
//      transfer of b s h / t activation bytes per stage boundary (scatter/gather, or sequence
//      parallel shards). It gives each stage's finish time, its idle time (split into waiting for
//      a transfer in flight, reported as exposed p2p, and the bubble) and the activations it
//      holds at its peak.
//   4. Data-parallel gradient reduction (all-reduce, or reduce-scatter with a distributed
//      optimizer / ZeRO) starts for each model chunk as its last backward runs when
//      overlap_grad_reduce is on — only the last micro-batch's backward can hide it — and after
//      the stage's last backward otherwise. Tied embeddings add the first/last-stage embedding
//      all-reduce. Then the optimizer step (memory-bound Adam over the stage's shard), then the
//      ZeRO-1/2 parameter all-gather (hidden behind the next forward with overlap_param_gather,
//      except its first bucket).
//   5. The step time is the slowest stage's end plus a fixed per-step overhead; the breakdown is
//      that stage's time split into components that sum to the step time exactly.
// Collective times come from a CollectiveModel (model/collective.h), "nccl" unless asked
// otherwise; constants from CostParameters (model/cost_parameters.h).

#include <memory>
#include <string>
#include <vector>

#include "model/activation_offload.h"
#include "model/collective.h"
#include "model/cost_parameters.h"
#include "model/layer_shape.h"
#include "model/prediction.h"
#include "model/scenario.h"
#include "simulator/layer_costs.h"
#include "simulator/layer_kernels.h"
#include "simulator/pipeline_schedule.h"

namespace stepcast {

// What a search needs before deciding whether to simulate a layout: the exact memory (as
// predict() reports it) and a lower bound on the step time, found without the pipeline schedule's
// event simulation (simulator/pipeline_schedule.h, makespan_lower_bound).
struct TrainingScreen {
  MemoryBreakdown memory;          // the peak stage, equal to TrainingPrediction::memory
  int peak_stage = 0;
  bool fits = true;                // equal to TrainingPrediction::fits
  Seconds step_time_lower_bound;   // <= TrainingPrediction::step_time
};

struct TrainingPredictorOptions {
  bool timeline = false;            // fill TrainingPrediction::timeline (the pipeline Gantt chart)
  bool describe_placement = true;   // fill TrainingPrediction::placement
};

// Share of layers that full recomputation re-runs: parallel.recompute_layers over a model chunk's
// layers (1 when recompute is not full or recompute_layers is 0, meaning all of them).
double recomputed_layer_fraction(const ParallelConfig& par, int layers);

// The kernels behind a prediction's `compute` and `recompute` on its critical pipeline stage: one
// micro-batch of each layer kind the stage holds, and of the embedding and output layer, each op
// priced by the functions the prediction uses (simulator/layer_kernels.h), with how many times
// each pass runs on that stage per step.
struct StageLayerKernels {
  std::string kind;               // "dense", "MoE", "dense, BF16 edge layer"
  LayerShape shape;
  LayerKernels kernels;
  double layers = 0.0;            // layers of this kind on the critical stage, all its model chunks
  double passes = 0.0;            // forward (and backward) passes per step: layers x micro-batches
  double recompute_passes = 0.0;  // passes that recompute (passes x the recomputed share)
};
struct StepKernels {
  TrainingPrediction prediction;
  int critical_stage = 0;
  int microbatches = 0;           // per model chunk
  std::vector<StageLayerKernels> layers;  // kinds with layers on the critical stage
  EmbeddingOutputKernels embedding_output;
  double embedding_passes = 0.0;  // per step on the critical stage (0 when another stage holds it)
  double output_passes = 0.0;     // the main head's and every multi-token-prediction module's
  double mtp_passes = 0.0;        // the MTP modules' own ops (embedding_output.mtp_*), mtp_depth per micro-batch
};

class TrainingPredictor {
 public:
  explicit TrainingPredictor(CostParameters params = {});

  // Predicts a training scenario with `collectives` priced for the scenario's system.
  TrainingPrediction predict(const Scenario& scenario, const CollectiveModel& collectives,
                             const TrainingPredictorOptions& options = {});
  // Same, with the default collective model built for the scenario's system.
  TrainingPrediction predict(const Scenario& scenario, const TrainingPredictorOptions& options = {});

  // predict(), and the kernels behind its compute on the critical stage.
  StepKernels step_kernels(const Scenario& scenario, const CollectiveModel& collectives);

  // Memory and a step-time lower bound without simulating the pipeline: a few microseconds where
  // predict() takes tens. Shares every computation it makes with predict().
  TrainingScreen screen(const Scenario& scenario, const CollectiveModel& collectives);

  // Reuse per-layer costs and group placements between calls whose inputs are equal: a search
  // predicts thousands of layouts of one model on one system, most sharing their layer shape. Off
  // by default. While on, a collective model passed in must stay alive and unchanged: one
  // destroyed and replaced at the same address would be mistaken for the old one.
  void set_memoize(bool on);

  [[nodiscard]] const CostParameters& parameters() const { return m_params; }

  // Relative margin by which screen() lowers its bound, so that rounding never lifts the bound
  // above a step time it equals mathematically.
  static constexpr double kLowerBoundMargin = 1e-9;

 private:
  // The step as far as it is known before the pipeline runs (sections 1-3 of the file comment,
  // and each stage's parameters and optimizer time): shared by predict() and screen().
  // Where every group of the layout sits (model/placement.h).
  struct Groups {
    GroupLayout tp, cp, dp, pp_link;
    GroupLayout gradients;      // dp x cp: reduce the dense weights' gradients
    GroupLayout ep, etp, edp;   // expert layout
    GroupLayout cp_ring_hop;    // the slowest neighbouring pair of the CP ring
    GroupLayout amax;           // tp x cp x dp: FP8 delayed scaling's amax reduction (layer_costs.h)
    GroupLayout tp_amax;        // tp x cp: the same under precision.fp8_amax_group: tp
  };
  struct Plan {
    int tp = 1, pp = 1, dp = 1, chunks = 1, virtual_stages = 1, microbatches = 1;
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    LayerShape shape;            // the dense layer kind
    LayerShape moe_shape;        // the MoE layer kind (== shape for a dense model)
    bool has_moe = false;
    LayerCosts costs;
    LayerCosts moe_costs;
    Groups groups;
    GroupLayout tp_group, dp_group, pp_link;  // dp_group: groups.gradients
    int gradient_ranks = 1;      // dp x cp
    int expert_dp = 1;           // tp*cp*dp / (ep*expert_tp)
    double layer_params = 0.0;   // per TP rank, one dense layer
    double moe_layer_dense_params = 0.0;   // per rank, one MoE layer: attention, shared experts, router
    double moe_layer_expert_params = 0.0;  // per rank, one MoE layer: its routed experts
    double weight_bytes = 0.0;   // per parameter
    double param_gather_bytes = 0.0;  // per parameter, the distributed optimizer's parameter all-gather
    double grad_bytes = 0.0;
    double gather_bytes = 0.0;   // per parameter, a ZeRO-3 gather (PrecisionConfig::gathered_weights)
    LayerCosts edge_costs;       // a layer kept in BF16 under FP8 (PrecisionConfig::bf16_edge_layers)
    LayerShape edge_shape;       // that layer's shape
    // Each layer kind's cost inputs (collectives null: only the kernels are priced from them again,
    // by step_kernels(), while the scenario they point into is alive).
    LayerCostInputs dense_inputs, moe_inputs, edge_inputs;
    double recomputed_fraction = 1.0;  // recomputed_layer_fraction()
    std::vector<int> edge_layers;  // per virtual stage: how many of its layers are those
    Seconds offload_forward;     // per layer: offloaded parameters' transfer beyond the forward
    Seconds offload_backward;    // ... and beyond the backward
    ActivationOffloadTime activation_offload;  // per micro-batch, virtual stage 0 (pp = 1)
    Bytes p2p_bytes;             // one activation transfer between stages
    Seconds p2p;
    bool blocking_p2p = false;
    std::vector<int> layers;             // per virtual stage
    std::vector<int> moe_layers;         // per virtual stage: how many of its layers are MoE
    std::vector<int> position;           // per virtual stage: its model position
    // With ep_comm_overlap, per virtual stage: its MoE layer passes per step (forward, backward)
    // that run alone, their all-to-alls exposed (pipeline_schedule_orders.h).
    std::vector<double> ep_alone_forward, ep_alone_backward;
    // The virtual stage holds the embedding (model position 0) / the output layer and loss.
    [[nodiscard]] bool is_first(int vs) const { return position[static_cast<std::size_t>(vs)] == 0; }
    [[nodiscard]] bool is_last(int vs) const {
      return position[static_cast<std::size_t>(vs)] == model_positions(schedule, pp, chunks) - 1;
    }
    std::vector<double> chunk_params;    // [stage * chunks + chunk], dense parameters
    std::vector<double> chunk_expert_params;  // [stage * chunks + chunk], routed-expert parameters
    std::vector<double> stage_params;    // per stage, dense
    std::vector<double> stage_expert_params;  // per stage, routed experts
    std::vector<Seconds> optimizer;      // per stage: the optimizer step
    // ZeRO-3, per virtual stage: the weights outside its layers (embedding, output layer) gathered
    // and reduce-scattered as one unit in each micro-batch, and that gather plus reduce-scatter.
    std::vector<double> zero3_root_params;
    std::vector<Seconds> zero3_root;
    std::vector<Bytes> zero3_root_held;  // ... and the bytes its unsharded weights and gradient hold
    // FP8 delayed scaling, per virtual stage: the amax all-reduce closing one micro-batch's forward
    // of the chunk, and its backward (simulator/layer_costs.h).
    std::vector<Seconds> amax_forward;
    std::vector<Seconds> amax_backward;
    bool amax_over_tp = false;  // precision.fp8_amax_group: tp (tensor-parallel traffic, not data-parallel)
    int amax_ranks = 1;         // ranks of the group they run on
    // The multi-token-prediction modules (model.mtp_depth) on the last stage, all of them: one
    // micro-batch's forward and backward (own ops, block of the decoder's last layer kind, second
    // head), and their blocks' dense parameters per rank (ZeRO-3 gathers them as layer units).
    Seconds mtp_forward, mtp_backward;
    double mtp_block_params = 0.0;
    PipelineSpec spec;                   // spans into m_forward, m_backward, m_activations
  };
  static Groups place_groups(const ParallelConfig& parallel, const SystemSpec& system);
  // layer_costs(inputs), through the memo when memoizing.
  LayerCosts price_layer(const LayerCostInputs& inputs);
  void prepare(const Scenario& scenario, const CollectiveModel& collectives, bool timeline);
  // Memory of each stage given its peak activations (from the simulation or its hold pattern).
  void stage_memory(const Scenario& scenario, std::span<const Bytes> peak_activations,
                    std::vector<MemoryBreakdown>& per_stage, int& peak_stage) const;

  struct CostMemo {
    LayerCostInputs inputs;  // pointers compared by address (gpu, params: the memo's own)
    LayerShape shape;
    LayerCosts costs;
  };
  struct LayoutMemo {
    int tp = 0, cp = 0, ep = 0, expert_tp = 0, dp = 0, pp = 0;
    std::string order;
    Groups groups;
  };
  // The memos hold for m_memo_system only; another system clears them.
  void check_memo_system(const SystemSpec& system);

  CostParameters m_params;
  bool m_memoize = false;
  SystemSpec m_memo_system;
  std::vector<CostMemo> m_cost_memo;
  std::size_t m_cost_memo_next = 0;
  std::vector<LayoutMemo> m_layout_memo;
  std::size_t m_layout_memo_next = 0;
  PipelineSimulator m_pipeline;
  std::vector<Seconds> m_forward;
  std::vector<Seconds> m_backward;
  std::vector<Seconds> m_weight_gradient;
  std::vector<Bytes> m_activations;
  Plan m_plan;
  std::vector<MemoryBreakdown> m_screen_stages;
  int m_screen_peak_stage = 0;
};

// One-shot convenience: a fresh predictor with default constants.
TrainingPrediction predict_training(const Scenario& scenario, const TrainingPredictorOptions& options = {});

// Layers in each virtual pipeline stage (chunk * pp + stage): first/last_stage_layers when set,
// the rest split evenly (any remainder to the earliest of the middle stages).
std::vector<int> layers_per_virtual_stage(int layers, const ParallelConfig& parallel);

}  // namespace stepcast
