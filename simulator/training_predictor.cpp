#include "simulator/training_predictor.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <string>

#include <fmt/format.h>

#include "model/activation_memory.h"
#include "model/activation_offload.h"
#include "model/flops.h"
#include "model/goodput.h"
#include "model/layer_shape.h"
#include "model/model_states.h"
#include "model/parameter_count.h"
#include "model/placement.h"
#include "simulator/collective_models.h"
#include "simulator/layer_costs.h"
#include "simulator/pipeline_schedule_orders.h"

namespace stepcast {
namespace {

void fill_layers_per_virtual_stage(int layers, const ParallelConfig& parallel, std::vector<int>& out) {
  const int pp = std::max(parallel.pp, 1);
  const int chunks = pp > 1 ? std::max(parallel.vpp, 1) : 1;
  const int count = pp * chunks;
  out.assign(static_cast<std::size_t>(count), 0);
  int remaining = layers;
  int first = 0;
  int last = count;
  if (parallel.first_stage_layers >= 0 && count > 1) {
    out.front() = parallel.first_stage_layers;
    remaining -= parallel.first_stage_layers;
    first = 1;
  }
  if (parallel.last_stage_layers >= 0 && count > 1) {
    out.back() = parallel.last_stage_layers;
    remaining -= parallel.last_stage_layers;
    last = count - 1;
  }
  const int middle = last - first;
  if (middle <= 0) return;
  const int each = remaining / middle;
  int extra = remaining - each * middle;
  for (int i = first; i < last; ++i) {
    out[static_cast<std::size_t>(i)] = each + (extra > 0 ? 1 : 0);
    if (extra > 0) --extra;
  }
}

Seconds pass_total(const PassTime& t) { return t.total(); }


// Remembers the collectives already priced during one prediction: a step asks for the same
// (op, size, group) many times (every chunk's gradients, every stage's gather), and a faithful
// model costs a fraction of a microsecond per call.
class MemoizedCollectives final : public CollectiveModel {
 public:
  explicit MemoizedCollectives(const CollectiveModel& model) : m_model(model) {}
  [[nodiscard]] std::string_view name() const override { return m_model.name(); }
  [[nodiscard]] Seconds time(CollectiveOp op, Bytes size, const GroupLayout& group) const override {
    for (int i = 0; i < m_count; ++i) {
      const Entry& e = m_entries[static_cast<std::size_t>(i)];
      if (e.op == op && e.size == size && e.group == group) return e.time;
    }
    const Seconds t = m_model.time(op, size, group);
    Entry& slot = m_entries[static_cast<std::size_t>(m_next)];
    slot = {op, size, group, t};
    m_next = (m_next + 1) % kEntries;
    m_count = std::min(m_count + 1, kEntries);
    return t;
  }

 private:
  struct Entry {
    CollectiveOp op = CollectiveOp::all_reduce;
    Bytes size;
    GroupLayout group;
    Seconds time;
  };
  static constexpr int kEntries = 16;
  const CollectiveModel& m_model;
  mutable std::array<Entry, kEntries> m_entries{};
  mutable int m_count = 0;
  mutable int m_next = 0;
};

}  // namespace

std::vector<int> layers_per_virtual_stage(int layers, const ParallelConfig& parallel) {
  std::vector<int> out;
  fill_layers_per_virtual_stage(layers, parallel, out);
  return out;
}

TrainingPredictor::TrainingPredictor(CostParameters params) : m_params(params) {}

void TrainingPredictor::set_memoize(bool on) {
  m_memoize = on;
  m_cost_memo.clear();
  m_layout_memo.clear();
  m_cost_memo_next = m_layout_memo_next = 0;
}

void TrainingPredictor::check_memo_system(const SystemSpec& system) {
  if (system == m_memo_system) return;
  m_memo_system = system;
  m_cost_memo.clear();
  m_layout_memo.clear();
  m_cost_memo_next = m_layout_memo_next = 0;
}

TrainingPrediction TrainingPredictor::predict(const Scenario& scenario, const TrainingPredictorOptions& options) {
  const auto collectives =
      make_collective_model(default_collective_model(), scenario.system, m_params);
  return predict(scenario, *collectives, options);
}

TrainingPredictor::Groups TrainingPredictor::place_groups(const ParallelConfig& par, const SystemSpec& system) {
  Groups g;
  g.tp = layout_of(ParallelDim::tp, par, system);
  g.dp = layout_of(ParallelDim::dp, par, system);
  g.pp_link = pipeline_neighbour_layout(par, system);
  g.gradients = par.cp > 1 ? layout_of(gradient_group_members(par), system) : g.dp;
  g.amax = par.tp * par.cp * par.dp > 1 ? layout_of(amax_group_members(par), system) : GroupLayout{};
  g.tp_amax = par.cp > 1 ? layout_of(tp_amax_group_members(par), system) : g.tp;
  if (par.cp > 1) {
    g.cp = layout_of(ParallelDim::cp, par, system);
    // The ring runs as fast as its slowest hop: a pair that crosses NVLink domains if any does.
    const auto ring = group_members(ParallelDim::cp, par);
    const int domain = std::max({system.gpus_per_node, system.nvlink_domain_gpus, 1});
    std::size_t hop = 0;
    for (std::size_t i = 0; i + 1 < ring.size(); ++i) {
      if (ring[i] / domain != ring[i + 1] / domain) {
        hop = i;
        break;
      }
    }
    g.cp_ring_hop = layout_of(std::vector<int>{ring[hop], ring[hop + 1]}, system);
  }
  if (par.ep > 1 || par.expert_tensor_parallel() > 1) {
    g.ep = layout_of(ParallelDim::ep, par, system);
    g.etp = layout_of(ParallelDim::etp, par, system);
    g.edp = layout_of(ParallelDim::edp, par, system);
  } else {
    g.edp = g.gradients;
  }
  return g;
}

double recomputed_layer_fraction(const ParallelConfig& par, int layers) {
  if (par.recompute != Recompute::full || par.recompute_layers <= 0) return 1.0;
  const double per_chunk = static_cast<double>(layers) / (std::max(par.pp, 1) * std::max(par.vpp, 1));
  return per_chunk > 0.0 ? std::min(par.recompute_layers / per_chunk, 1.0) : 1.0;
}

LayerCosts TrainingPredictor::price_layer(const LayerCostInputs& inputs) {
  if (m_memoize) {
    for (const CostMemo& c : m_cost_memo) {
      if (same_layer_cost_inputs(c.inputs, inputs)) return c.costs;
    }
  }
  LayerCosts costs = layer_costs(inputs);
  if (m_memoize) {
    constexpr std::size_t kShapes = 32;
    CostMemo* slot = nullptr;
    if (m_cost_memo.size() < kShapes) {
      m_cost_memo.reserve(kShapes);  // no reallocation: entries point at their own shapes
      slot = &m_cost_memo.emplace_back();
    } else {
      slot = &m_cost_memo[m_cost_memo_next];
      m_cost_memo_next = (m_cost_memo_next + 1) % kShapes;
    }
    slot->inputs = inputs;
    slot->shape = *inputs.shape;
    slot->inputs.shape = &slot->shape;
    slot->costs = costs;
  }
  return costs;
}

void TrainingPredictor::prepare(const Scenario& scenario, const CollectiveModel& net, bool timeline) {
  assert(scenario.is_training());
  const TransformerSpec& model = scenario.model;
  const SystemSpec& system = scenario.system;
  const GpuSpec& gpu = system.gpu;
  const ParallelConfig& par = scenario.parallel;
  const PrecisionConfig& precision = scenario.precision;
  const TrainingWorkload& training = scenario.training();
  const CostParameters& params = m_params;
  Plan& plan = m_plan;

  plan.tp = std::max(par.tp, 1);
  plan.pp = std::max(par.pp, 1);
  plan.dp = std::max(par.dp, 1);
  // A one-stage "pipeline" runs as 1F1B whatever its schedule (there is nothing to reorder; the
  // loader refuses DualPipe there).
  plan.schedule = plan.pp > 1 || par.schedule != PipelineSchedule::dualpipe ? par.schedule : PipelineSchedule::one_f_one_b;
  plan.chunks = plan.pp > 1 ? pipeline_chunks(plan.schedule, par.vpp) : 1;
  plan.virtual_stages = plan.pp * plan.chunks;
  const int micro_batch = std::max(training.micro_batch, 1);
  plan.microbatches = std::max(training.global_batch / (plan.dp * micro_batch), 1);
  const int tp = plan.tp;
  const int pp = plan.pp;
  const int dp = plan.dp;
  const int chunks = plan.chunks;
  const int virtual_stages = plan.virtual_stages;

  // --- 1. Each layer kind, priced once ---------------------------------------------------------
  // A dense model has one layer kind; a mixture-of-experts model also has MoE layers (all but its
  // first_dense_layers), priced with the same attention block and the experts as their MLP.
  plan.shape = make_layer_shape(model, training, par, precision, gpu.architecture);
  plan.has_moe = model.is_moe() && moe_layer_count(model) > 0;
  plan.moe_shape = plan.has_moe ? moe_layer_shape(plan.shape) : plan.shape;
  const LayerShape& shape = plan.shape;
  if (m_memoize) check_memo_system(system);
  const LayoutMemo* placed = nullptr;
  if (m_memoize) {
    for (const LayoutMemo& l : m_layout_memo) {
      if (l.tp == par.tp && l.cp == par.cp && l.ep == par.ep && l.expert_tp == par.expert_tp && l.dp == par.dp &&
          l.pp == par.pp && l.order == par.order) {
        placed = &l;
        break;
      }
    }
  }
  if (placed != nullptr) {
    plan.groups = placed->groups;
  } else {
    plan.groups = place_groups(par, system);
    if (m_memoize) {
      constexpr std::size_t kLayouts = 16;
      LayoutMemo l{par.tp, par.cp, par.ep, par.expert_tp, par.dp, par.pp, par.order, plan.groups};
      if (m_layout_memo.size() < kLayouts) {
        m_layout_memo.push_back(std::move(l));
      } else {
        m_layout_memo[m_layout_memo_next] = std::move(l);
        m_layout_memo_next = (m_layout_memo_next + 1) % kLayouts;
      }
    }
  }
  plan.tp_group = plan.groups.tp;
  plan.dp_group = plan.groups.gradients;
  plan.pp_link = plan.groups.pp_link;
  plan.gradient_ranks = dp * std::max(par.cp, 1);
  plan.expert_dp = plan.has_moe ? std::max(par.expert_data_parallel(), 1) : plan.gradient_ranks;
  const LayerParametersPerRank dense_layer = layer_parameters_per_rank(model, tp);
  const LayerParametersPerRank moe_layer = layer_parameters_per_rank(model, tp, true, par.ep, par.expert_tensor_parallel());
  plan.layer_params = dense_layer.total();
  plan.moe_layer_dense_params = plan.has_moe ? moe_layer.dense : 0.0;
  plan.moe_layer_expert_params = plan.has_moe ? moe_layer.experts : 0.0;
  plan.weight_bytes = bytes_per_element(precision.params);
  plan.param_gather_bytes = bytes_per_element(precision.distributed_optimizer_gather());
  plan.grad_bytes = bytes_per_element(precision.grads);
  plan.gather_bytes = bytes_per_element(precision.gathered_weights());

  LayerCostInputs cost_inputs;
  cost_inputs.shape = &shape;
  cost_inputs.gpu = &gpu;
  cost_inputs.params = &params;
  cost_inputs.collectives = &net;
  cost_inputs.system = &system;
  cost_inputs.tp_group = plan.tp_group;
  cost_inputs.dp_group = plan.dp_group;
  cost_inputs.recompute = par.recompute;
  cost_inputs.recompute_modules = par.recompute_modules;
  cost_inputs.tp_comm_overlap = par.tp_comm_overlap;
  cost_inputs.zero = par.zero;
  cost_inputs.layer_parameters_per_rank = plan.layer_params;
  cost_inputs.parameter_bytes = plan.weight_bytes;
  cost_inputs.gather_bytes_per_parameter = plan.gather_bytes;
  cost_inputs.gradient_bytes = plan.grad_bytes;
  cost_inputs.parameter_format = precision.params;
  cost_inputs.ep_group = plan.groups.ep;
  cost_inputs.etp_group = plan.groups.etp;
  cost_inputs.cp_group = plan.groups.cp;
  cost_inputs.cp_ring_hop = plan.groups.cp_ring_hop;
  cost_inputs.ep_comm_overlap = par.ep_comm_overlap;
  cost_inputs.graph_replay = par.cuda_graphs == CudaGraphs::full_iteration;
  cost_inputs.fsdp = par.fsdp;
  cost_inputs.checkpoint = par.checkpoint;
  cost_inputs.mtp_depth = model.mtp_depth;
  // ZeRO-3's root unit per rank (the embedding; the output layer, with the embedding's copy a tied
  // model keeps on the last stage): FSDP2's copies ride on the embedding's and the output layer's
  // passes, and the root's gathers and reduce-scatters are priced below (zero3_root).
  cost_inputs.root_embedding_parameters = embedding_parameters(model) / tp;
  cost_inputs.root_output_parameters =
      output_layer_parameters(model) / tp + (model.tied_embeddings && pp > 1 ? embedding_parameters(model) / tp : 0.0);
  // parallel.recompute_layers: full recomputation of a share of each chunk's layers; the layer
  // passes are averaged over the stage's recomputed and kept layers.
  const double recomputed = recomputed_layer_fraction(par, model.layers);
  const auto price = [&](const LayerCostInputs& inputs) {
    if (recomputed >= 1.0) return price_layer(inputs);
    LayerCostInputs kept = inputs;
    kept.recompute = Recompute::none;
    return blend_recompute(price_layer(kept), price_layer(inputs), recomputed);
  };
  plan.costs = price(cost_inputs);
  if (plan.has_moe) {
    LayerCostInputs moe_inputs = cost_inputs;
    moe_inputs.shape = &plan.moe_shape;
    moe_inputs.layer_parameters_per_rank = moe_layer.total();
    plan.moe_costs = price(moe_inputs);
  } else {
    plan.moe_costs = plan.costs;
  }
  const LayerCosts& costs = plan.costs;
  const LayerCosts& moe_costs = plan.moe_costs;
  // Multi-token prediction (model/transformer.h mtp_depth): Megatron-Core runs the modules on the
  // last pipeline stage with the loss (Megatron-Bridge's DeepSeek-V3 layouts end with ["mtp",
  // "loss"], src/megatron/bridge/recipes/deepseek/deepseek_v3.py @05d003fb8985), each its own ops,
  // one block of the decoder's last layer kind on the same parallel layout, and the shared head with
  // its cross-entropy again, for every micro-batch.
  const LayerCosts& mtp_block = plan.has_moe ? moe_costs : costs;
  const double mtp_depth = model.mtp_depth;
  plan.mtp_forward =
      (pass_total(costs.mtp_forward) + pass_total(mtp_block.layer_forward) + pass_total(costs.output_forward)) * mtp_depth;
  plan.mtp_backward =
      (pass_total(costs.mtp_backward) + pass_total(mtp_block.layer_backward) + pass_total(costs.output_backward)) * mtp_depth;
  plan.mtp_block_params = mtp_depth * (plan.has_moe ? plan.moe_layer_dense_params : plan.layer_params);
  // Their parameters per rank, and the copy of the word embedding they use on the last stage when
  // the first stage is another one and the untied model keeps none there (Megatron-Core gpt_model.py
  // builds the embedding where pre_process or mtp_process).
  const LayerParametersPerRank mtp = mtp_parameters_per_rank(model, tp, par.ep, par.expert_tensor_parallel());
  const double mtp_embedding_copy =
      model.mtp_depth > 0 && pp > 1 && !model.tied_embeddings ? cost_inputs.root_embedding_parameters : 0.0;
  // FP8 recipes that keep the first and last layers in BF16: those layers priced in BF16.
  const int edge = precision.edge_layers_in_bf16();
  plan.edge_shape = shape;
  plan.edge_shape.compute = DataType::bf16;
  const LayerShape& bf16_shape = plan.edge_shape;
  LayerCostInputs bf16_inputs = cost_inputs;
  bf16_inputs.shape = &bf16_shape;
  if (edge > 0) plan.edge_costs = layer_costs(bf16_inputs);
  // The inputs again for step_kernels(), without the collective model (a local of predict()).
  plan.recomputed_fraction = recomputed;
  plan.dense_inputs = cost_inputs;
  plan.moe_inputs = cost_inputs;
  plan.moe_inputs.shape = &plan.moe_shape;
  plan.moe_inputs.layer_parameters_per_rank = moe_layer.total();
  plan.edge_inputs = bf16_inputs;
  for (LayerCostInputs* i : {&plan.dense_inputs, &plan.moe_inputs, &plan.edge_inputs}) i->collectives = nullptr;

  const auto activations = [&](const LayerShape& s) {
    const LayerActivations full = layer_activation_bytes(s, par.recompute, par.recompute_modules);
    if (recomputed >= 1.0) return full;
    const LayerActivations kept = layer_activation_bytes(s, Recompute::none);
    return LayerActivations{kept.stored * (1.0 - recomputed) + full.stored * recomputed,
                            kept.attention_core * (1.0 - recomputed) + full.attention_core * recomputed};
  };
  const LayerActivations layer_activation = activations(shape);
  const LayerActivations moe_activation = plan.has_moe ? activations(plan.moe_shape) : layer_activation;
  // A layer kept in BF16 under FP8 saves 16-bit GEMM inputs (model/activation_memory.h).
  const LayerActivations edge_activation = edge > 0 ? activations(bf16_shape) : layer_activation;

  // --- 2. Stages -------------------------------------------------------------------------------
  // Layers by model position (the route's order), then by virtual stage: DualPipe's two chunks of a
  // stage hold the same model positions as the mirrored stage (pipeline_schedule_orders.h).
  std::vector<int>& layers = plan.layers;
  const int positions = model_positions(plan.schedule, pp, chunks);
  ParallelConfig position_split = par;
  position_split.vpp = positions / pp;
  std::vector<int> position_layers;
  fill_layers_per_virtual_stage(model.layers, position_split, position_layers);
  plan.position.assign(static_cast<std::size_t>(virtual_stages), 0);
  layers.assign(static_cast<std::size_t>(virtual_stages), 0);
  // Layers run in model-position order, so the first_dense_layers dense ones fill the earliest.
  plan.moe_layers.assign(static_cast<std::size_t>(virtual_stages), 0);
  const int dense_layers = model.layers - moe_layer_count(model);
  for (int vs = 0; vs < virtual_stages; ++vs) {
    const int position = model_position(plan.schedule, pp, chunks, vs);
    plan.position[static_cast<std::size_t>(vs)] = position;
    const int n = position_layers[static_cast<std::size_t>(position)];
    layers[static_cast<std::size_t>(vs)] = n;
    int before = 0;
    for (int q = 0; q < position; ++q) before += position_layers[static_cast<std::size_t>(q)];
    const int dense_here = std::clamp(dense_layers - before, 0, n);
    plan.moe_layers[static_cast<std::size_t>(vs)] = plan.has_moe ? n - dense_here : 0;
  }
  m_forward.assign(static_cast<std::size_t>(virtual_stages), Seconds(0.0));
  m_backward.assign(static_cast<std::size_t>(virtual_stages), Seconds(0.0));
  m_weight_gradient.assign(static_cast<std::size_t>(virtual_stages), Seconds(0.0));
  plan.edge_layers.assign(static_cast<std::size_t>(virtual_stages), 0);
  m_activations.assign(static_cast<std::size_t>(virtual_stages), Bytes(0.0));
  const Seconds layer_forward = pass_total(costs.layer_forward);
  const Seconds layer_backward = pass_total(costs.layer_backward);
  const Seconds moe_forward = pass_total(moe_costs.layer_forward);
  const Seconds moe_backward = pass_total(moe_costs.layer_backward);
  // Parameters offloaded to host memory (ZeRO-Infinity, FSDP CPUOffload): each layer's weights
  // come over the host link before its forward and its backward, prefetched one layer ahead, so
  // only what a transfer takes beyond its neighbour's compute is exposed (Rajbhandari et al. 2021,
  // ZeRO-Infinity, Sec. 6.2: overlap-centric design).
  plan.offload_forward = plan.offload_backward = Seconds(0.0);
  if (par.offload == Offload::optimizer_and_params && gpu.host_bandwidth.value() > 0.0) {
    const Seconds h2d = Bytes(plan.layer_params * plan.weight_bytes) / gpu.host_bandwidth;
    plan.offload_forward = max(h2d - costs.layer_forward.compute, Seconds(0.0));
    plan.offload_backward = max(h2d - costs.layer_backward.compute - costs.layer_backward.recompute, Seconds(0.0));
  }
  if (par.ep_comm_overlap) {
    combined_unpaired_layer_passes(plan.schedule, pp, chunks, plan.microbatches, layers, plan.moe_layers,
                                   plan.ep_alone_forward, plan.ep_alone_backward);
  }
  // ZeRO-3 / FSDP: the weights outside the layers (embedding, output layer) are a gathered unit of
  // their own, the root (torchtitan applies fully_shard to each block, then to the model for the
  // rest; parallelize_llama.py apply_fsdp, Dec 2024). FSDP2 gathers the root before the forward's
  // first op and keeps it unsharded to the end of the backward ("For the root, do not reshard after
  // forward since for training, the parameters would be freed and all-gathered immediately":
  // torch/distributed/_composable/fsdp/_fsdp_state.py, _lazy_init), and reduce-scatters its
  // gradients once they are all computed, after the embedding's backward, the last op: neither
  // has compute to hide behind. Priced per micro-batch, as the layers' (layer_costs.h).
  const bool zero3_root = par.zero >= 3 && plan.dp_group.size > 1;
  const double root_embedding = cost_inputs.root_embedding_parameters;
  // The multi-token-prediction modules' weights outside their blocks (norms, eh_proj; the embedding
  // copy an untied pipeline keeps on the last stage) join the last stage's root, as Megatron-Core's
  // FSDP wraps them with the model's other non-layer weights; each block is a gathered unit like a
  // decoder layer (its gathers and reduce-scatters are in its layer passes, layer_costs.h).
  const double mtp_root = model.mtp_depth > 0 ? mtp.dense - plan.mtp_block_params + mtp_embedding_copy : 0.0;
  const double root_output = cost_inputs.root_output_parameters + mtp_root;
  plan.zero3_root_params.assign(static_cast<std::size_t>(virtual_stages), 0.0);
  plan.zero3_root.assign(static_cast<std::size_t>(virtual_stages), Seconds(0.0));
  plan.amax_forward.assign(static_cast<std::size_t>(virtual_stages), Seconds(0.0));
  plan.amax_backward.assign(static_cast<std::size_t>(virtual_stages), Seconds(0.0));
  plan.amax_over_tp = precision.fp8_amax_group == Fp8AmaxGroup::tp;
  const GroupLayout& amax_group = plan.amax_over_tp ? plan.groups.tp_amax : plan.groups.amax;
  plan.amax_ranks = amax_group.size;
  plan.zero3_root_held.assign(static_cast<std::size_t>(virtual_stages), Bytes(0.0));
  for (int vs = 0; vs < virtual_stages; ++vs) {
    const auto i = static_cast<std::size_t>(vs);
    const double nm = plan.moe_layers[i];
    const double n = layers[i] - nm;
    m_forward[i] = (layer_forward + plan.offload_forward) * n + (moe_forward + plan.offload_forward) * nm;
    m_backward[i] = (layer_backward + plan.offload_backward) * n + (moe_backward + plan.offload_backward) * nm;
    if (zero3_root) {
      const double root = (plan.is_first(vs) ? root_embedding : 0.0) + (plan.is_last(vs) ? root_output : 0.0);
      if (root > 0.0) {
        const Seconds gather = net.time(CollectiveOp::all_gather, Bytes(root * plan.gather_bytes), plan.dp_group);
        const Seconds scatter = net.time(CollectiveOp::reduce_scatter, Bytes(root * plan.grad_bytes), plan.dp_group);
        plan.zero3_root_params[i] = root;
        plan.zero3_root[i] = gather + scatter;
        // Held through the backward: the gathered root, and the output layer's unsharded gradient
        // (computed first in the backward, reduce-scattered with the root's at its end), both in
        // the gathered format (FSDP2 computes gradients in param_dtype, casting to reduce_dtype
        // for the reduce-scatter).
        plan.zero3_root_held[i] = Bytes((root + (plan.is_last(vs) ? root_output : 0.0)) * plan.gather_bytes);
        m_forward[i] += gather;
        m_backward[i] += scatter;
      }
    }
    if (par.ep_comm_overlap && nm > 0) {
      // The MoE layer passes with no partner expose their all-to-alls whole, spread over the
      // virtual stage's micro-batches (pipeline_schedule_orders.h combined_unpaired_layer_passes).
      const double mbc = microbatches_per_chunk(plan.schedule, plan.microbatches);
      m_forward[i] += (moe_costs.layer_forward.ep_unpaired - moe_costs.layer_forward.ep_exposed) *
                      (plan.ep_alone_forward[i] / mbc);
      m_backward[i] += (moe_costs.layer_backward.ep_unpaired - moe_costs.layer_backward.ep_exposed) *
                       (plan.ep_alone_backward[i] / mbc);
    }
    if (layers[i] > 0) {
      m_forward[i] += costs.zero3_first_gather;
      m_backward[i] += costs.zero3_last_reduce;
    }
    m_weight_gradient[i] = costs.layer_backward.weight_gradient * n + moe_costs.layer_backward.weight_gradient * nm;
    if (edge > 0) {
      // The model's first `edge` layers sit on the first chunk, its last `edge` on the last (dense
      // layers priced in BF16: an MoE edge layer keeps its MoE price).
      int k = 0;
      if (plan.is_first(vs)) k += std::min(edge, static_cast<int>(n));
      if (plan.is_last(vs)) k += std::min(edge, static_cast<int>(n) - k);
      plan.edge_layers[i] = k;
      const LayerCosts& e = plan.edge_costs;
      m_forward[i] += (pass_total(e.layer_forward) - layer_forward) * k;
      m_backward[i] += (pass_total(e.layer_backward) - layer_backward) * k;
      m_weight_gradient[i] += (e.layer_backward.weight_gradient - costs.layer_backward.weight_gradient) * k;
    }
    // FP8 delayed scaling: one amax all-reduce per chunk and pass over the stage's ranks
    // (layer_costs.h); the BF16 edge layers hold no FP8 tensor.
    const double fp8_layers = n - plan.edge_layers[i];
    const Bytes amax_forward = costs.amax_forward_bytes * fp8_layers + moe_costs.amax_forward_bytes * nm;
    const Bytes amax_backward = costs.amax_backward_bytes * fp8_layers + moe_costs.amax_backward_bytes * nm;
    const auto amax_all_reduce = [&](Bytes bytes) {
      return bytes.value() > 0.0 && amax_group.size > 1 ? net.time(CollectiveOp::all_reduce, bytes, amax_group)
                                                        : Seconds(0.0);
    };
    plan.amax_forward[i] = amax_all_reduce(amax_forward);
    plan.amax_backward[i] = amax_all_reduce(amax_backward);
    m_forward[i] += plan.amax_forward[i];
    m_backward[i] += plan.amax_backward[i];
    m_activations[i] = layer_activation.stored * n + moe_activation.stored * nm +
                       (edge_activation.stored - layer_activation.stored) * plan.edge_layers[i];
    if (plan.is_first(vs)) {
      m_forward[i] += pass_total(costs.embedding_forward);
      m_backward[i] += pass_total(costs.embedding_backward);
      m_weight_gradient[i] += costs.embedding_backward.weight_gradient;
      m_activations[i] += embedding_activation_bytes(shape);
    } else {
      m_forward[i] += costs.pipeline_receive;
    }
    if (plan.is_last(vs)) {
      m_forward[i] += pass_total(costs.output_forward);
      m_backward[i] += pass_total(costs.output_backward);
      m_weight_gradient[i] += costs.output_backward.weight_gradient;
      m_activations[i] += output_activation_bytes(shape);
      if (model.mtp_depth > 0) {
        // The multi-token-prediction modules (plan.mtp_forward / mtp_backward above).
        const LayerActivations& block_activation = plan.has_moe ? moe_activation : layer_activation;
        m_forward[i] += plan.mtp_forward;
        m_backward[i] += plan.mtp_backward;
        m_weight_gradient[i] += (costs.mtp_backward.weight_gradient + mtp_block.layer_backward.weight_gradient +
                                 costs.output_backward.weight_gradient) * mtp_depth;
        m_activations[i] +=
            (mtp_activation_bytes(shape) + block_activation.stored + output_activation_bytes(shape)) * mtp_depth;
      }
    } else {
      m_backward[i] += costs.pipeline_receive;
    }
  }

  // Activation offload (model/activation_offload.h): the model's first N layers' saved activations
  // go to host memory and come back; the loader allows it only with one pipeline stage and one
  // chunk, so the whole model is virtual stage 0. Layers in model order: the dense ones first,
  // the BF16 edge layers at both ends.
  plan.activation_offload = ActivationOffloadTime{};
  if (par.activation_offload_layers > 0 && virtual_stages == 1 && gpu.host_bandwidth.value() > 0.0) {
    const int L = layers[0];
    const int nm = plan.moe_layers[0];
    const int edge_first = plan.is_first(0) ? std::min(edge, L - nm) : 0;
    const int edge_last = plan.edge_layers[0] - edge_first;
    std::vector<OffloadedLayer> stack(static_cast<std::size_t>(L));
    for (int j = 0; j < L; ++j) {
      const bool moe = j >= L - nm;
      const bool bf16_edge = j < edge_first || j >= L - edge_last;
      const LayerCosts& c = bf16_edge ? plan.edge_costs : moe ? moe_costs : costs;
      const LayerActivations& a = bf16_edge ? edge_activation : moe ? moe_activation : layer_activation;
      stack[static_cast<std::size_t>(j)] = {a.stored, pass_total(c.layer_forward) + plan.offload_forward,
                                            pass_total(c.layer_backward) + plan.offload_backward};
    }
    const HostCopyRates rates = host_copy_rates(gpu.host_bandwidth, params);
    plan.activation_offload = activation_offload_time(stack, std::min(par.activation_offload_layers, L - 1),
                                                      rates.device_to_host, rates.host_to_device);
    m_forward[0] += plan.activation_offload.forward_exposed;
    m_backward[0] += plan.activation_offload.backward_exposed;
    m_activations[0] -= plan.activation_offload.offloaded;
  }

  // --- 3. Pipeline -------------------------------------------------------------------------------
  plan.p2p_bytes = Bytes(shape.tokens() * shape.hidden * shape.activation_bytes / tp);
  plan.p2p = pp > 1 ? net.time(CollectiveOp::send_recv, plan.p2p_bytes, plan.pp_link) : Seconds(0.0);
  // Megatron's non-interleaved schedules exchange activations with blocking send/recv pairs
  // (p2p_communication.send_forward_recv_backward waits for both transfers), so a transfer sits
  // on the sending stage's timeline too; so do the zero-bubble schedules built on it (the
  // ZB-H1 patch of sail-sg/zero-bubble-pipeline-parallelism keeps Megatron's 1F1B p2p calls). The
  // interleaved schedule overlaps them with compute (--overlap-p2p-communication), and DualPipe
  // batches its sends and receives around overlapped chunks: there a transfer only delays the
  // receiver.
  plan.blocking_p2p = pp > 1 && chunks == 1;
  if (plan.blocking_p2p) {
    for (int vs = 0; vs < virtual_stages; ++vs) {
      if (!plan.is_last(vs)) m_forward[static_cast<std::size_t>(vs)] += plan.p2p;
      if (!plan.is_first(vs)) m_backward[static_cast<std::size_t>(vs)] += plan.p2p;
    }
  }
  PipelineSpec& spec = plan.spec;
  spec.schedule = plan.schedule;
  spec.stages = pp;
  spec.chunks = chunks;
  spec.microbatches = plan.microbatches;
  spec.forward = m_forward;
  spec.backward = m_backward;
  spec.weight_gradient = m_weight_gradient;
  spec.activations = m_activations;
  spec.p2p = plan.blocking_p2p ? Seconds(0.0) : plan.p2p;
  // Megatron-Core's combined 1F1B (ep_comm_overlap) runs one more warm-up forward on every stage so
  // that each steady-state pair is independent (schedules.py, num_warmup_microbatches + 1): one more
  // micro-batch's activations held.
  spec.extra_warmup = par.ep_comm_overlap && plan.has_moe ? 1 : 0;
  spec.record_timeline = timeline;

  // --- Each stage's parameters (per chunk) and optimizer step ------------------------------------
  // Dense parameters (attention, dense MLPs, shared experts, routers, embeddings) are reduced and
  // sharded over the dp x cp ranks; routed experts over the expert-data-parallel ranks.
  const double embedding_params = cost_inputs.root_embedding_parameters;
  const double output_params = cost_inputs.root_output_parameters;
  // The multi-token-prediction modules sit on the last stage with their embedding copy.
  const double mtp_params = mtp.dense + mtp_embedding_copy;
  const Bandwidth hbm = gpu.memory_bandwidth * params.memory_bandwidth_eta;
  const double dense_shards = par.zero >= 1 ? plan.gradient_ranks : 1.0;
  const double expert_shards = par.zero >= 1 ? plan.expert_dp : 1.0;
  plan.chunk_params.assign(static_cast<std::size_t>(pp * chunks), 0.0);
  plan.chunk_expert_params.assign(static_cast<std::size_t>(pp * chunks), 0.0);
  plan.stage_params.assign(static_cast<std::size_t>(pp), 0.0);
  plan.stage_expert_params.assign(static_cast<std::size_t>(pp), 0.0);
  plan.optimizer.assign(static_cast<std::size_t>(pp), Seconds(0.0));
  for (int s = 0; s < pp; ++s) {
    double& stage_params = plan.stage_params[static_cast<std::size_t>(s)];
    double& stage_experts = plan.stage_expert_params[static_cast<std::size_t>(s)];
    for (int c = 0; c < chunks; ++c) {
      const int vs = c * pp + s;
      const double nm = plan.moe_layers[static_cast<std::size_t>(vs)];
      const double nd = layers[static_cast<std::size_t>(vs)] - nm;
      double p = nd * plan.layer_params + nm * plan.moe_layer_dense_params;
      if (plan.is_first(vs)) p += embedding_params;
      if (plan.is_last(vs)) p += output_params + mtp_params;
      const double experts = nm * plan.moe_layer_expert_params + (plan.is_last(vs) ? mtp.experts : 0.0);
      plan.chunk_params[static_cast<std::size_t>(s * chunks + c)] = p;
      plan.chunk_expert_params[static_cast<std::size_t>(s * chunks + c)] = experts;
      stage_params += p;
      stage_experts += experts;
    }
    const double shard = stage_params / dense_shards + stage_experts / expert_shards;
    const double optimizer_bytes = shard * (params.adam_grad_and_weight_bytes_per_param +
                                            adam_state_traffic_bytes(precision) +
                                            (precision.loss_scaling ? params.loss_scale_bytes_per_param : 0.0)) +
                                   (stage_params + stage_experts) * plan.grad_bytes;  // zeroing the gradient buffer
    plan.optimizer[static_cast<std::size_t>(s)] = Bytes(optimizer_bytes) / hbm;
  }
}

void TrainingPredictor::stage_memory(const Scenario& scenario, std::span<const Bytes> peak_activations,
                                     std::vector<MemoryBreakdown>& per_stage, int& peak_stage) const {
  const ParallelConfig& par = scenario.parallel;
  const CostParameters& params = m_params;
  const Plan& plan = m_plan;
  int communicators = 0;
  for (int size : {plan.tp, plan.pp, plan.dp, par.cp}) communicators += size > 1 ? 1 : 0;
  if (plan.has_moe) {
    for (int size : {par.ep, par.expert_tensor_parallel(), plan.expert_dp}) communicators += size > 1 ? 1 : 0;
  }
  // ZeRO-3 holds two gathered layers (the one computing and the one prefetched), in the format
  // they are gathered in, and one layer's full gradient before its reduce-scatter; offloaded
  // parameters the same two layers.
  const double zero3_layer = std::max(plan.layer_params, plan.moe_layer_dense_params + plan.moe_layer_expert_params);
  const bool gathers = par.zero >= 3 || par.offload == Offload::optimizer_and_params;
  const Bytes buffers_common(params.cuda_context_bytes + params.cublas_workspace_bytes +
                             params.nccl_buffer_bytes_per_communicator * communicators +
                             (plan.pp > 1 ? 4.0 * plan.p2p_bytes.value() : 0.0) +
                             (gathers ? 2.0 * zero3_layer * plan.gather_bytes : 0.0) +
                             (par.zero >= 3 ? zero3_layer * plan.grad_bytes : 0.0));
  per_stage.resize(static_cast<std::size_t>(plan.pp));
  peak_stage = 0;
  for (int s = 0; s < plan.pp; ++s) {
    MemoryBreakdown& mem = per_stage[static_cast<std::size_t>(s)];
    const ModelStateBytes dense = model_state_bytes(plan.stage_params[static_cast<std::size_t>(s)], scenario.precision,
                                                    par.zero, plan.gradient_ranks, plan.shape.fp8_transposes);
    const ModelStateBytes experts = model_state_bytes(plan.stage_expert_params[static_cast<std::size_t>(s)],
                                                      scenario.precision, par.zero, plan.expert_dp,
                                                      plan.shape.fp8_transposes);
    mem.weights = dense.weights + experts.weights;
    mem.gradients = dense.gradients + experts.gradients;
    mem.optimizer_states = dense.optimizer_states + experts.optimizer_states;
    // Offload moves the optimizer states (master weights and moments) to host memory, and with
    // parameters the weights too (the two prefetched layers stay in `buffers`).
    if (par.offload != Offload::none) mem.optimizer_states = Bytes(0.0);
    if (par.offload == Offload::optimizer_and_params) mem.weights = Bytes(0.0);
    mem.activations = peak_activations[static_cast<std::size_t>(s)];
    // What a backward step holds beside the saved activations, the largest one: a layer's
    // recomputed activations, or, on the stage with the loss, the loss's gradients (the two never
    // coexist: the loss's backward ends before the last layer's begins).
    Bytes working(0.0);
    if (par.recompute == Recompute::full) {
      working = max(recompute_working_set_bytes(plan.shape), recompute_working_set_bytes(plan.moe_shape));
    } else if (par.recompute == Recompute::selective) {
      working = max(selective_recompute_working_set_bytes(plan.shape, par.recompute_modules),
                    selective_recompute_working_set_bytes(plan.moe_shape, par.recompute_modules));
    } else if (par.recompute == Recompute::selective_op) {
      // The layer's replayed tensors: what it would keep with no checkpointing, less what it kept.
      working = max(layer_activation_bytes(plan.shape, Recompute::none).stored -
                        layer_activation_bytes(plan.shape, Recompute::selective_op).stored,
                    Bytes(0.0));
    }
    for (int c = 0; c < plan.chunks; ++c) {
      if (plan.is_last(c * plan.pp + s)) working = max(working, loss_backward_working_set_bytes(plan.shape));
    }
    mem.activations += working;
    mem.kv_cache = Bytes(0.0);
    mem.buffers = buffers_common;
    for (int c = 0; c < plan.chunks; ++c) mem.buffers += plan.zero3_root_held[static_cast<std::size_t>(c * plan.pp + s)];
    mem.fragmentation = mem.activations * params.allocator_fragmentation;
    mem.peak = mem.weights + mem.gradients + mem.optimizer_states + mem.activations + mem.buffers + mem.fragmentation;
    if (mem.peak > per_stage[static_cast<std::size_t>(peak_stage)].peak) peak_stage = s;
  }
}

TrainingScreen TrainingPredictor::screen(const Scenario& scenario, const CollectiveModel& collectives) {
  const MemoizedCollectives net(collectives);
  prepare(scenario, net, false);
  stage_memory(scenario, m_pipeline.peak_activations(m_plan.spec), m_screen_stages, m_screen_peak_stage);
  TrainingScreen out;
  out.memory = m_screen_stages[static_cast<std::size_t>(m_screen_peak_stage)];
  out.peak_stage = m_screen_peak_stage;
  out.fits = out.memory.peak <= scenario.system.gpu.memory;
  // predict(): step = max over stages of (reduce_end + optimizer + gather) + overhead, where
  // reduce_end >= the stage's pipeline finish and the gather >= 0; so the step is at least the
  // makespan plus the smallest optimizer step plus the overhead. The margin keeps the bound below
  // the simulated value when both are equal up to rounding.
  Seconds optimizer = m_plan.optimizer.front();
  for (const Seconds t : m_plan.optimizer) optimizer = min(optimizer, t);
  if (scenario.parallel.offload != Offload::none) optimizer = Seconds(0.0);  // the CPU runs it instead
  const Seconds bound = PipelineSimulator::makespan_lower_bound(m_plan.spec) + optimizer + Seconds(m_params.step_overhead_s);
  out.step_time_lower_bound = bound * (1.0 - kLowerBoundMargin);
  return out;
}

TrainingPrediction TrainingPredictor::predict(const Scenario& scenario, const CollectiveModel& collectives,
                                              const TrainingPredictorOptions& options) {
  const MemoizedCollectives net(collectives);
  prepare(scenario, net, options.timeline);
  const TransformerSpec& model = scenario.model;
  const SystemSpec& system = scenario.system;
  const GpuSpec& gpu = system.gpu;
  const ParallelConfig& par = scenario.parallel;
  const PrecisionConfig& precision = scenario.precision;
  const TrainingWorkload& training = scenario.training();
  const CostParameters& params = m_params;
  const Plan& plan = m_plan;
  const int tp = plan.tp;
  const int pp = plan.pp;
  const int dp = plan.dp;
  const int chunks = plan.chunks;
  const int microbatches = plan.microbatches;
  const int gpus = par.world_size();
  const LayerCosts& costs = plan.costs;
  const std::vector<int>& layers = plan.layers;
  const GroupLayout& dp_group = plan.dp_group;
  const double grad_bytes = plan.grad_bytes;
  const Seconds p2p = plan.p2p;
  const bool blocking_p2p = plan.blocking_p2p;

  TrainingPrediction out;
  const PipelineResult& pipe = m_pipeline.run(plan.spec);

  // --- 4. Data-parallel reduction, optimizer, parameter gather, per stage ----------------------
  // Dense gradients reduce over the dp x cp ranks; routed experts' over the expert-data-parallel
  // ranks (one after the other on the stage's DP stream). A group of one rank costs nothing.
  const GroupLayout& edp_group = plan.groups.edp;
  const bool reduces = plan.gradient_ranks > 1 || (plan.has_moe && plan.expert_dp > 1);
  const bool sharded_optimizer = par.zero >= 1 && reduces;
  const auto stage_collective = [&](CollectiveOp op, double dense, double experts, double bytes) {
    // Nothing left to move (ZeRO-3 moved every parameter per micro-batch): no collective.
    if (dense + experts < 1.0) return Seconds(0.0);
    Seconds t = net.time(op, Bytes(dense * bytes), dp_group);
    if (experts > 0.0) t += net.time(op, Bytes(experts * bytes), edp_group);
    return t;
  };
  // ZeRO-3 reduce-scatters each layer's gradients in every micro-batch's backward (layer_costs.h);
  // the step-level reduction is left with the embedding and output layers.
  const bool zero3 = par.zero >= 3 && reduces;
  // Parameters of a virtual stage's layers (dense parts; MoE layers' routed experts are in
  // chunk_experts), which ZeRO-3 has reduced already.
  // The last stage's MTP blocks are such layers too (their root part is in zero3_root_params).
  const auto layer_part = [&](int vs) {
    const double nm = plan.moe_layers[static_cast<std::size_t>(vs)];
    return (layers[static_cast<std::size_t>(vs)] - nm) * plan.layer_params + nm * plan.moe_layer_dense_params +
           (plan.is_last(vs) ? plan.mtp_block_params : 0.0);
  };

  // Tied embeddings across a pipeline, or the multi-token-prediction modules' copy of the embedding
  // on the last stage: first and last stage all-reduce the embedding gradient (Megatron-Core
  // finalize_model_grads, _allreduce_word_embedding_grads).
  Seconds embedding_sync(0.0);
  if ((model.tied_embeddings || model.mtp_depth > 0) && pp > 1) {
    const auto stages = group_members(ParallelDim::pp, par);
    const GroupLayout pair = layout_of(std::vector<int>{stages.front(), stages.back()}, system);
    embedding_sync = net.time(CollectiveOp::all_reduce, Bytes(embedding_parameters(model) / tp * grad_bytes), pair);
  }

  struct StageEnd {
    double params = 0.0;
    double expert_params = 0.0;
    Seconds reduce_end;
    Seconds optimizer;
    Seconds gather_exposed;
    Seconds offload;  // host transfers beyond the CPU optimizer step
    Seconds end;
  };
  std::vector<StageEnd> ends(static_cast<std::size_t>(pp));
  int critical = 0;
  for (int s = 0; s < pp; ++s) {
    StageEnd& e = ends[static_cast<std::size_t>(s)];
    const Seconds finish = pipe.finish[static_cast<std::size_t>(s)];
    const double* chunk_params = plan.chunk_params.data() + static_cast<std::size_t>(s * chunks);
    const double* chunk_experts = plan.chunk_expert_params.data() + static_cast<std::size_t>(s * chunks);
    const int stage_chunks = std::min(chunks, 64);
    e.params = plan.stage_params[static_cast<std::size_t>(s)];
    e.expert_params = plan.stage_expert_params[static_cast<std::size_t>(s)];
    Seconds reduce_end = finish;
    if (reduces) {
      const CollectiveOp op = par.zero >= 1 ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce;
      if (par.overlap_grad_reduce) {
        // Chunks finish their gradients in the order of their last backward; each chunk's
        // buckets stream out during that backward, its last bucket only after it.
        int order[64];
        for (int c = 0; c < stage_chunks; ++c) order[c] = c;
        std::sort(order, order + stage_chunks, [&](int a, int b) {
          return pipe.last_backward_end[static_cast<std::size_t>(a * pp + s)] <
                 pipe.last_backward_end[static_cast<std::size_t>(b * pp + s)];
        });
        Seconds channel(0.0);
        for (int k = 0; k < stage_chunks; ++k) {
          const int c = order[k];
          const auto vs = static_cast<std::size_t>(c * pp + s);
          const double dense =
              zero3 ? chunk_params[c] - layer_part(c * pp + s) - plan.zero3_root_params[static_cast<std::size_t>(c * pp + s)]
                    : chunk_params[c];
          const double experts = zero3 ? 0.0 : chunk_experts[c];
          const Seconds t = stage_collective(op, dense, experts, grad_bytes);
          const double chunk_total = dense + experts;
          const double last_bucket = std::min(1.0, params.dp_bucket_params / std::max(chunk_total, 1.0));
          const Seconds start = max(channel, pipe.last_backward_start[vs]);
          channel = max(start + t, pipe.last_backward_end[vs] + t * last_bucket);
        }
        reduce_end = max(finish, channel);
      } else {
        double dense = e.params;
        if (zero3) {
          for (int c = 0; c < chunks; ++c) {
            dense -= layer_part(c * pp + s) + plan.zero3_root_params[static_cast<std::size_t>(c * pp + s)];
          }
        }
        reduce_end = finish + stage_collective(op, dense, zero3 ? 0.0 : e.expert_params, grad_bytes);
      }
    }
    if (s == 0 || s == pp - 1) reduce_end += embedding_sync;
    if (plan.schedule == PipelineSchedule::dualpipe) {
      // DualPipe's two copies of a model stage sit on stages s and p-1-s: their gradients are summed
      // between the pair once reduced over the data-parallel group (the shard each rank owns), one
      // all-reduce of this stage's gradient shard per step (our assumption of how the copies stay
      // equal; the report states only that two copies are kept, Sec. 3.2.1).
      const auto stages = group_members(ParallelDim::pp, par);
      const int mirror = pp - 1 - s;
      const GroupLayout pair = layout_of(std::vector<int>{stages[static_cast<std::size_t>(std::min(s, mirror))],
                                                          stages[static_cast<std::size_t>(std::max(s, mirror))]},
                                         system);
      // Both of this stage's chunks are copies of the mirror's two chunks.
      const double shard = par.zero >= 1 && dp > 1 ? e.params / dp : e.params;
      reduce_end += net.time(CollectiveOp::all_reduce, Bytes(shard * grad_bytes), pair);
    }
    e.reduce_end = reduce_end;
    e.optimizer = plan.optimizer[static_cast<std::size_t>(s)];
    if (par.offload != Offload::none && gpu.host_bandwidth.value() > 0.0) {
      // Optimizer states on the host, the step on the CPU (ZeRO-Offload's CPU-Adam, Ren et al. 2021;
      // Megatron-Core --optimizer-cpu-offload): the gradient shard goes down, Adam runs at the
      // host memory bandwidth, the updated 16-bit weights come back. Megatron's
      // --overlap-cpu-optimizer-d2h-h2d pipelines the three by parameter group (ZeRO-Offload
      // overlaps the same way), so the slowest of the three sets the time.
      const double shard = sharded_optimizer ? e.params / dp : e.params;
      const Bandwidth dram(host_link_is_c2c(gpu.host_bandwidth) ? params.host_dram_bandwidth_per_gpu_grace
                                                                                   : params.host_dram_bandwidth_per_gpu_x86);
      const Seconds down = Bytes(shard * grad_bytes) / gpu.host_bandwidth;
      const Seconds cpu = Bytes(shard * (params.adam_grad_and_weight_bytes_per_param +
                                         adam_state_traffic_bytes(scenario.precision))) / dram;
      const Seconds up = Bytes(shard * plan.param_gather_bytes) / gpu.host_bandwidth;
      e.optimizer = cpu;
      e.offload = max(max(down, up), cpu) - cpu;
    }
    if (sharded_optimizer && par.zero <= 2) {
      // The updated parameter shards are all-gathered. With overlap_param_gather the gather runs
      // bucket by bucket under the next step's forward passes (Megatron-Core's param-gather
      // overlap), one chunk's parameters at a time: a chunk's gather must be in by the end of its
      // first forward, and one bucket stays exposed at least. Interleaved, chunks 0 and 1 are
      // gathered from the start and chunk c + 1 from chunk c's first forward on
      // (megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving:
      // param_sync_func for the first two chunks, then for get_model_chunk_id(...) + 1 at each
      // chunk's first micro-batch), so chunk c hides behind p forwards of chunk c - 1. The stage
      // waits by the latest any chunk's gather lands after it is needed.
      const Seconds gather =
          stage_collective(CollectiveOp::all_gather, e.params, e.expert_params, plan.param_gather_bytes);
      if (par.overlap_param_gather) {
        const double dense_bucket = std::min(params.dp_bucket_params, e.params);
        const double expert_bucket = std::min(params.dp_bucket_params - dense_bucket, e.expert_params);
        const Seconds first_bucket =
            stage_collective(CollectiveOp::all_gather, dense_bucket, expert_bucket, plan.param_gather_bytes);
        if (chunks == 1) {
          e.gather_exposed = max(first_bucket, gather - pipe.first_forward_end[static_cast<std::size_t>(s)]);
        } else {
          // The stage's parameters outside its chunks' layers (embedding, output layer) gather
          // with the chunk that holds them; spread them in proportion.
          double chunk_sum = 0.0;
          for (int c = 0; c < chunks; ++c) chunk_sum += chunk_params[c] + chunk_experts[c];
          Seconds channel(0.0);
          Seconds late(0.0);
          for (int c = 0; c < chunks; ++c) {
            const auto vs = static_cast<std::size_t>(c * pp + s);
            const double share = chunk_sum > 0.0 ? (chunk_params[c] + chunk_experts[c]) / chunk_sum : 1.0 / chunks;
            const Seconds launch = c < 2 ? Seconds(0.0) : pipe.chunk_first_forward_start[static_cast<std::size_t>((c - 1) * pp + s)];
            channel = max(channel, launch) + gather * share;
            late = max(late, channel - pipe.chunk_first_forward_end[vs]);
          }
          e.gather_exposed = max(first_bucket, late);
        }
      } else {
        e.gather_exposed = gather;
      }
    }
    e.end = e.reduce_end + e.optimizer + e.offload + e.gather_exposed;
    if (e.end > ends[static_cast<std::size_t>(critical)].end) critical = s;
  }

  // --- 5. Step time and its breakdown on the critical stage -------------------------------------
  const StageEnd& ce = ends[static_cast<std::size_t>(critical)];
  const Seconds overhead(params.step_overhead_s);
  out.step_time = ce.end + overhead;
  TimeBreakdown& b = out.time;
  Seconds amax_exposed(0.0);  // FP8 delayed scaling's amax all-reduces, inside dp_ (tp_ with amax_over_tp) comm_exposed
  for (int c = 0; c < chunks; ++c) {
    const int vs = c * pp + critical;
    const double nm = plan.moe_layers[static_cast<std::size_t>(vs)];
    const double n = layers[static_cast<std::size_t>(vs)] - nm;
    const double m = microbatches_per_chunk(plan.schedule, microbatches);
    for (const auto& [kind, count] : {std::pair<const LayerCosts*, double>{&costs, n * m}, {&plan.moe_costs, nm * m}}) {
      if (count <= 0.0) continue;
      b.compute += (kind->layer_forward.compute + kind->layer_backward.compute) * count;
      b.recompute += kind->layer_backward.recompute * count;
      b.tp_comm_exposed += (kind->layer_forward.tp_exposed + kind->layer_backward.tp_exposed) * count;
      b.dp_comm_exposed += (kind->layer_forward.dp_exposed + kind->layer_backward.dp_exposed) * count;
      b.ep_comm_exposed += (kind->layer_forward.ep_exposed + kind->layer_backward.ep_exposed) * count;
      b.cp_comm_exposed += (kind->layer_forward.cp_exposed + kind->layer_backward.cp_exposed) * count;
    }
    if (par.ep_comm_overlap && nm > 0) {
      const LayerCosts& e = plan.moe_costs;
      b.ep_comm_exposed += (e.layer_forward.ep_unpaired - e.layer_forward.ep_exposed) *
                               plan.ep_alone_forward[static_cast<std::size_t>(vs)] +
                           (e.layer_backward.ep_unpaired - e.layer_backward.ep_exposed) *
                               plan.ep_alone_backward[static_cast<std::size_t>(vs)];
    }
    const double k = plan.edge_layers[static_cast<std::size_t>(vs)];
    if (k > 0) {
      const LayerCosts& e = plan.edge_costs;
      b.compute += (e.layer_forward.compute + e.layer_backward.compute - costs.layer_forward.compute -
                    costs.layer_backward.compute) * (k * m);
      b.tp_comm_exposed += (e.layer_forward.tp_exposed + e.layer_backward.tp_exposed - costs.layer_forward.tp_exposed -
                            costs.layer_backward.tp_exposed) * (k * m);
      // The stage's passes (section 2) carry the edge layers' whole pass totals: their recompute and
      // other exposed terms differ from the FP8 layer's too.
      b.recompute += (e.layer_backward.recompute - costs.layer_backward.recompute) * (k * m);
      b.dp_comm_exposed += (e.layer_forward.dp_exposed + e.layer_backward.dp_exposed - costs.layer_forward.dp_exposed -
                            costs.layer_backward.dp_exposed) * (k * m);
      b.ep_comm_exposed += (e.layer_forward.ep_exposed + e.layer_backward.ep_exposed - costs.layer_forward.ep_exposed -
                            costs.layer_backward.ep_exposed) * (k * m);
      b.cp_comm_exposed += (e.layer_forward.cp_exposed + e.layer_backward.cp_exposed - costs.layer_forward.cp_exposed -
                            costs.layer_backward.cp_exposed) * (k * m);
    }
    if (n + nm > 0) b.dp_comm_exposed += (costs.zero3_first_gather + costs.zero3_last_reduce) * m;
    b.dp_comm_exposed += plan.zero3_root[static_cast<std::size_t>(vs)] * m;
    // FP8 delayed scaling's amax reductions: over the stage's data-parallel (and TP, CP) ranks, or
    // with fp8_amax_group: tp over its tensor- and context-parallel ranks.
    const auto v = static_cast<std::size_t>(vs);
    const Seconds amax = (plan.amax_forward[v] + plan.amax_backward[v]) * m;
    (plan.amax_over_tp ? b.tp_comm_exposed : b.dp_comm_exposed) += amax;
    amax_exposed += amax;
    b.offload_exposed += (plan.offload_forward + plan.offload_backward) * ((n + nm) * m);
    if (vs == 0) b.offload_exposed += plan.activation_offload.exposed() * m;
    if (plan.is_first(vs)) {
      b.compute += (costs.embedding_forward.compute + costs.embedding_backward.compute) * m;
      b.tp_comm_exposed += (costs.embedding_forward.tp_exposed + costs.embedding_backward.tp_exposed) * m;
    } else {
      b.pp_comm_exposed += costs.pipeline_receive * m;
    }
    if (plan.is_last(vs)) {
      b.compute += (costs.output_forward.compute + costs.output_backward.compute) * m;
      b.tp_comm_exposed += (costs.output_forward.tp_exposed + costs.output_backward.tp_exposed) * m;
      if (model.mtp_depth > 0) {
        // The MTP modules (prepare(), section 2): their own ops, block and head, whole passes (the
        // same totals the stage's timeline carries), in a component of their own.
        b.mtp += (plan.mtp_forward + plan.mtp_backward) * m;
      }
    } else {
      b.pp_comm_exposed += costs.pipeline_receive * m;
    }
    if (blocking_p2p) b.pp_comm_exposed += p2p * (m * ((plan.is_last(vs) ? 0.0 : 1.0) + (plan.is_first(vs) ? 0.0 : 1.0)));
  }
  const auto cs = static_cast<std::size_t>(critical);
  // finish and busy sum the same passes in different orders: a difference within rounding of the
  // step (1e-12 of it) is no idle time.
  const auto idle_of = [&](std::size_t s) {
    const Seconds d = pipe.finish[s] - pipe.busy[s];
    return d.value() > 1e-12 * pipe.finish[s].value() ? d : Seconds(0.0);
  };
  const Seconds idle = idle_of(cs);
  const Seconds p2p_wait = min(pipe.p2p_wait[cs], idle);
  b.pp_comm_exposed += p2p_wait;
  b.pp_bubble = idle - p2p_wait;
  out.per_stage_bubble.resize(static_cast<std::size_t>(pp));
  for (std::size_t s = 0; s < static_cast<std::size_t>(pp); ++s) {
    const Seconds stage_idle = idle_of(s);
    out.per_stage_bubble[s] = stage_idle - min(pipe.p2p_wait[s], stage_idle);
  }
  out.per_stage_busy = pipe.busy;
  out.per_stage_layers.assign(static_cast<std::size_t>(pp), 0);
  for (int vs = 0; vs < pp * chunks; ++vs) {
    out.per_stage_layers[static_cast<std::size_t>(vs % pp)] += layers[static_cast<std::size_t>(vs)];
  }
  out.critical_stage = critical;
  b.dp_comm_exposed += ce.reduce_end - pipe.finish[cs] + ce.gather_exposed;
  b.optimizer = ce.optimizer;
  b.offload_exposed += ce.offload;
  b.other = overhead;

  // Throughput and utilisation.
  const StepFlops flops = training_step_flops(model, training.global_batch, training.seq_len, par.recompute,
                                              AttentionCount::full, recomputed_layer_fraction(par, model.layers),
                                              par.recompute_modules, training.document_tokens);
  out.model_flops_per_step = flops.model;
  out.hardware_flops_per_step = flops.hardware;
  const double cluster_peak = gpu.peak(precision.compute).value() * gpus;
  out.tokens_per_s = static_cast<double>(training.global_batch) * training.seq_len / out.step_time.value();
  if (cluster_peak > 0.0) {
    out.mfu = flops.model.value() / (out.step_time.value() * cluster_peak);
    out.hfu = flops.hardware.value() / (out.step_time.value() * cluster_peak);
  }
  out.bubble_fraction = b.pp_bubble / out.step_time;

  // --- Memory per stage ------------------------------------------------------------------------
  stage_memory(scenario, pipe.peak_activations, out.per_stage, out.peak_stage);
  out.memory = out.per_stage[static_cast<std::size_t>(out.peak_stage)];
  out.fits = out.memory.peak <= gpu.memory;
  if (par.offload != Offload::none) {
    // Host memory per GPU: what left the GPU on its stage (the largest stage sets the need).
    for (int s = 0; s < pp; ++s) {
      const ModelStateBytes states = model_state_bytes(plan.stage_params[static_cast<std::size_t>(s)], precision, par.zero,
                                                       dp, plan.shape.fp8_transposes);
      Bytes host = states.optimizer_states;
      if (par.offload == Offload::optimizer_and_params) host += states.weights;
      out.host_memory = max(out.host_memory, host);
    }
    const double gpus_per_node = std::max(system.gpus_per_node, 1);
    if (system.host_memory_per_node.value() > 0.0 && out.host_memory * gpus_per_node > system.host_memory_per_node) {
      out.notes.emplace_back("offload needs more host memory than the node has");
    }
    if (gpu.host_bandwidth.value() <= 0.0) out.notes.emplace_back("the GPU's host link is unknown: offload transfers are not priced");
  }
  if (par.activation_offload_layers > 0) {
    // One micro-batch's offloaded activations in pinned host memory (pp = 1: one in flight);
    // TE frees each layer's host copy after its reload.
    out.host_memory += plan.activation_offload.offloaded;
    out.activation_offloaded = plan.activation_offload.offloaded;
    const double gpus_per_node = std::max(system.gpus_per_node, 1);
    if (system.host_memory_per_node.value() > 0.0 && out.host_memory * gpus_per_node > system.host_memory_per_node) {
      out.notes.emplace_back("activation offload needs more host memory than the node has");
    }
    if (gpu.host_bandwidth.value() <= 0.0) {
      out.notes.emplace_back("the GPU's host link is unknown: activation offload is not modelled (activations stay on the GPU)");
    }
    if (pp * chunks > 1) {
      // Only a search or sweep reaches here (the loader rejects it): Megatron-Core offers no CPU
      // offloading with pipeline parallelism.
      out.notes.emplace_back("activation offload needs pp = 1 and vpp = 1: not applied to this layout");
    }
  }

  // --- Goodput: the terms outside the step (model/goodput.h) -----------------------------------
  {
    GoodputInputs g;
    g.step_time = out.step_time;
    g.tokens_per_step = static_cast<double>(training.global_batch) * training.seq_len;
    g.global_batch = training.global_batch;
    g.dp = dp;
    g.gpus = gpus;
    g.nodes = (gpus + std::max(system.gpus_per_node, 1) - 1) / std::max(system.gpus_per_node, 1);
    // A checkpoint holds the weights and the optimizer states (master copy and moments), not the
    // gradients: Megatron's distributed checkpoint and PyTorch DCP save model and optimizer state.
    const BytesPerParameter per_param = bytes_per_parameter(precision, plan.shape.fp8_transposes);
    g.checkpoint_size = Bytes(total_parameters(model) * (bytes_per_element(precision.params) + per_param.optimizer_states));
    g.config = training.goodput;
    out.goodput = estimate_goodput(g);
    if (training.goodput.gpu_mtbf_hours > 0.0 && training.goodput.checkpoint_interval.value() <= 0.0) {
      out.notes.emplace_back("failures without a checkpoint interval: only the restart time is counted per failure");
    }
  }

  if (options.timeline) out.timeline = pipe.timeline;
  if (options.describe_placement) {
    const auto place = [&](const char* name, int size, const GroupLayout& layout) {
      if (size > 1) out.placement.push_back({name, size, describe(layout, system)});
    };
    place("tp", tp, plan.tp_group);
    place("cp", par.cp, plan.groups.cp);
    if (plan.has_moe) {
      place("ep", par.ep, plan.groups.ep);
      place("etp", par.expert_tensor_parallel(), plan.groups.etp);
    }
    place("dp", dp, plan.groups.dp);
    if (par.cp > 1 && dp > 1) place("dp x cp (gradients)", plan.gradient_ranks, plan.dp_group);
    if (plan.has_moe) place("edp (expert gradients)", plan.expert_dp, plan.groups.edp);
    if (pp > 1) out.placement.push_back({"pp", pp, "neighbouring stages " + describe(plan.pp_link, system)});
  }
  if (plan.schedule == PipelineSchedule::zb_h1 || plan.schedule == PipelineSchedule::zb_h2 ||
      plan.schedule == PipelineSchedule::dualpipe) {
    out.notes.emplace_back("stages start each step together (the optimizer's global gradient-norm check syncs them); "
                           "zero-bubble optimizer post-validation is not modelled");
  }
  if (plan.schedule == PipelineSchedule::dualpipe) {
    out.notes.emplace_back("DualPipe keeps two copies of every model stage: weights, gradients and optimizer states "
                           "of both are counted");
  }
  if (gpu.sustained_clock_fraction > 0.0 && m_params.sustained_clocks) {
    // A part with its own figure does not follow the architecture's derate: say so, so that a
    // --constant or profile setting of that derate is not silently without effect here.
    out.notes.push_back(fmt::format(
        "compute-bound kernels run at {:g} of their burst speed: {}'s own sustained_clock_fraction (its GPU spec), in "
        "place of {}",
        gpu.sustained_clock_fraction, gpu.name,
        gpu.architecture == GpuArchitecture::blackwell ? "compute.sustained_derate.blackwell" : "compute.sustained_derate"));
  }
  if (precision.compute == DataType::nvfp4 && gpu.nvfp4_gemm_over_fp8 > 0.0) {
    // MFU stays against the datasheet peak (the published convention); the GEMMs do not reach it.
    out.notes.push_back(fmt::format(
        "NVFP4 GEMMs run at {:g}x {}'s FP8 GEMM speed (its GPU spec's nvfp4_gemm_over_fp8, a measurement), not at "
        "its {:g} TFLOP/s NVFP4 datasheet peak; MFU is against the datasheet peak",
        gpu.nvfp4_gemm_over_fp8, gpu.name, gpu.peak(DataType::nvfp4).value() / 1e12));
  }
  if (plan.has_moe) {
    const MoeSpec& moe = plan.moe_shape.moe;
    out.notes.push_back(moe.capacity_factor > 0.0
                            ? fmt::format("MoE: experts padded to capacity factor {:g}", moe.capacity_factor)
                            : fmt::format("MoE: dropless; the busiest rank's experts carry {:g}x the mean load",
                                          moe.load_imbalance));
    if (precision.compute == DataType::fp8) {
      out.notes.emplace_back("MoE with FP8: tokens dispatched in 16 bits; FP8 casts counted for dense widths only");
    }
  }
  if (amax_exposed.value() > 0.0) {
    out.notes.push_back(fmt::format(
        "FP8 delayed scaling: {:.3g} ms per step in amax all-reduces over {} ranks, {} (one per chunk, micro-batch and "
        "pass), in {} communication",
        amax_exposed.value() * 1e3, plan.amax_ranks,
        plan.amax_over_tp ? "the stage's tensor- and context-parallel ranks (fp8_amax_group: tp)"
                          : "every rank of a pipeline stage",
        plan.amax_over_tp ? "tensor-parallel" : "data-parallel"));
  }
  if (!training.flash_attention) out.notes.emplace_back("unfused attention: s x s scores are materialised");
  out.notes.push_back(std::string("collectives priced by the '") + std::string(net.name()) + "' model");
  return out;
}

StepKernels TrainingPredictor::step_kernels(const Scenario& scenario, const CollectiveModel& collectives) {
  StepKernels out;
  out.prediction = predict(scenario, collectives);
  const Plan& plan = m_plan;
  const int critical = out.prediction.critical_stage;
  const double m = microbatches_per_chunk(plan.schedule, plan.microbatches);
  out.critical_stage = critical;
  out.microbatches = static_cast<int>(m);
  // Layers of each kind on the critical stage, over its model chunks, as section 5 of predict()
  // counts them for the step's compute.
  double dense = 0.0, moe = 0.0, edge = 0.0, mtp_blocks = 0.0;
  const int mtp_depth = scenario.model.mtp_depth;
  for (int c = 0; c < plan.chunks; ++c) {
    const auto vs = static_cast<std::size_t>(c * plan.pp + critical);
    moe += plan.moe_layers[vs];
    dense += plan.layers[vs] - plan.moe_layers[vs] - plan.edge_layers[vs];
    edge += plan.edge_layers[vs];
    if (plan.is_first(static_cast<int>(vs))) out.embedding_passes += m;
    if (plan.is_last(static_cast<int>(vs))) {
      out.output_passes += m * (1 + mtp_depth);
      out.mtp_passes += m * mtp_depth;
      mtp_blocks += mtp_depth;
    }
  }
  const bool moe_model = plan.has_moe;
  const auto add = [&](std::string kind, const LayerCostInputs& inputs, double layers, double recomputed_fraction) {
    if (layers <= 0.0) return;
    StageLayerKernels k;
    k.kind = std::move(kind);
    k.shape = *inputs.shape;
    k.kernels = layer_kernels(inputs);
    k.layers = layers;
    k.passes = layers * m;
    k.recompute_passes = k.kernels.recompute.empty() ? 0.0 : k.passes * recomputed_fraction;
    out.layers.push_back(std::move(k));
  };
  add(moe_model ? "dense (first_dense_layers)" : "dense", plan.dense_inputs, dense, plan.recomputed_fraction);
  add("MoE", plan.moe_inputs, moe, plan.recomputed_fraction);
  // BF16 edge layers are priced without partial recomputation's blend (edge_costs in prepare()):
  // each recomputes whenever recomputation is on.
  add("dense, kept in BF16 (FP8 edge layer)", plan.edge_inputs, edge, 1.0);
  // The multi-token-prediction modules' blocks (prepare(), section 2: the decoder's last layer kind).
  add(moe_model ? "MoE (MTP module's block)" : "dense (MTP module's block)", moe_model ? plan.moe_inputs : plan.dense_inputs,
      mtp_blocks, plan.recomputed_fraction);
  out.embedding_output = embedding_output_kernels(plan.dense_inputs);
  return out;
}

TrainingPrediction predict_training(const Scenario& scenario, const TrainingPredictorOptions& options) {
  TrainingPredictor predictor;
  return predictor.predict(scenario, options);
}

}  // namespace stepcast
