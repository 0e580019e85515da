#include "simulator/inference/step_cost.h"

#include <algorithm>
#include <cmath>

#include "model/op_time.h"
#include "model/placement.h"

namespace stepcast {
namespace {

// Token counts above this are priced directly instead of through the cache (a static batch's
// whole prefill can reach hundreds of thousands of tokens; iterations of a serving engine stay
// far below).
constexpr std::size_t kMaxCachedTokens = std::size_t{1} << 17;

}  // namespace

StepCostModel::StepCostModel(const Scenario& scenario, const CollectiveModel& collectives, const CostParameters& cost,
                             const InferenceCostParameters& inference)
    : m_shape(make_inference_shape(scenario.model, scenario.parallel, scenario.precision, inference)),
      m_gpu(scenario.system.gpu),
      m_cost(cost),
      m_inference(inference),
      m_collectives(&collectives),
      m_tp_group(layout_of(ParallelDim::tp, scenario.parallel, scenario.system)),
      m_pp_link(pipeline_neighbour_layout(scenario.parallel, scenario.system)),
      m_cuda_graphs(scenario.inference().cuda_graphs) {
  m_shape.kv_read_per_query_head = scenario.inference().decode_attention == DecodeAttention::per_query_head;
  m_stage_layers = m_shape.stage_layers();
  m_stage_moe_layers = m_shape.moe_layers * m_shape.stage_fraction();
  const bool moe = m_shape.moe_layers > 0;
  m_layer_kernels = inference_layer_ops(m_shape, 1.0, moe).size() + (m_shape.tp > 1 ? 2 : 0);
}

Seconds StepCostModel::op_seconds(const Op& op) const { return op_time(op, m_gpu, m_cost); }

Seconds StepCostModel::ops_seconds(const OpList& ops) const {
  Seconds total(0.0);
  for (const Op& op : ops) total += op_seconds(op);
  return total;
}

Seconds StepCostModel::linear_stage(double tokens) const {
  const InferenceShape& s = m_shape;
  const double dense_layers = m_stage_layers - m_stage_moe_layers;
  Seconds t(0.0);
  if (dense_layers > 0.0) t += ops_seconds(inference_layer_ops(s, tokens, false)) * dense_layers;
  if (m_stage_moe_layers > 0.0) t += ops_seconds(inference_layer_ops(s, tokens, true)) * m_stage_moe_layers;
  t += ops_seconds(inference_embedding_ops(s, tokens));
  if (s.tp > 1) {
    // Row-parallel outputs (attention projection, MLP/MoE) all-reduced in every layer, and the
    // vocab-parallel embedding once.
    const Bytes activation(tokens * s.hidden * s.activation_bytes);
    const Seconds reduce = m_collectives->time(CollectiveOp::all_reduce, activation, m_tp_group);
    t += reduce * (2.0 * m_stage_layers + 1.0);
  }
  return t;
}

Seconds StepCostModel::attention_stage(const StepWork& work) const {
  Seconds t(0.0);
  if (work.prefill.query_tokens > 0.0) t += op_seconds(prefill_attention_op(m_shape, work.prefill));
  if (work.decode_sequences > 0.0) {
    t += op_seconds(decode_attention_op(m_shape, work.decode_sequences, work.decode_context));
  }
  return t * static_cast<double>(m_stage_layers);
}

Seconds StepCostModel::output_time(double rows) const {
  if (rows <= 0.0) return Seconds(0.0);
  Seconds t = ops_seconds(inference_output_ops(m_shape, rows, m_inference));
  if (m_shape.tp > 1) {
    // Vocab-parallel logits gathered for sampling.
    const Bytes logits(rows * m_shape.vocab * m_shape.activation_bytes);
    t += m_collectives->time(CollectiveOp::all_gather, logits, m_tp_group);
  }
  return t;
}

int StepCostModel::kernels_per_step(bool prefill, bool decode) const {
  const int attention = (prefill ? 1 : 0) + (decode ? 1 : 0);
  // The layers of one stage, plus embedding, final norm, logits and sampling.
  return m_stage_layers * (m_layer_kernels + attention) + 4;
}

Seconds StepCostModel::overhead(Seconds gpu, const StepWork& work) const {
  Seconds host(m_inference.step_overhead_s);
  if (m_cuda_graphs) return host + Seconds(m_inference.graph_launch_s);
  // Each stage's host dispatches its own kernels while the GPU runs them; what the GPU cannot
  // cover is exposed, once per stage the micro-batch passes.
  const double pp = m_shape.pp;
  const int kernels = kernels_per_step(work.prefill.query_tokens > 0.0, work.decode_sequences > 0.0);
  const Seconds dispatch(m_cost.host_dispatch_s * kernels);
  return host + max(dispatch - gpu / pp, Seconds(0.0)) * pp;
}

Seconds StepCostModel::time(const StepWork& work) {
  const double tokens = std::max(work.tokens, 0.0);
  Seconds linear;
  const auto index = static_cast<std::size_t>(std::llround(tokens));
  if (index < kMaxCachedTokens) {
    if (index >= m_linear_cache.size()) m_linear_cache.resize(std::max(index + 1, m_linear_cache.size() * 2), -1.0);
    double& cached = m_linear_cache[index];
    if (cached < 0.0) cached = linear_stage(static_cast<double>(index)).value();
    linear = Seconds(cached);
  } else {
    linear = linear_stage(tokens);
  }
  const double pp = m_shape.pp;
  Seconds output(0.0);
  const auto rows = static_cast<std::size_t>(std::llround(std::max(work.logit_rows, 0.0)));
  if (rows < kMaxCachedTokens) {
    if (rows >= m_output_cache.size()) m_output_cache.resize(std::max(rows + 1, m_output_cache.size() * 2), -1.0);
    double& cached = m_output_cache[rows];
    if (cached < 0.0) cached = output_time(static_cast<double>(rows)).value();
    output = Seconds(cached);
  } else {
    output = output_time(work.logit_rows);
  }
  Seconds gpu = (linear + attention_stage(work)) * pp + output;
  if (m_shape.pp > 1) {
    const Bytes activation(tokens * m_shape.hidden * m_shape.activation_bytes);
    gpu += m_collectives->time(CollectiveOp::send_recv, activation, m_pp_link) * (pp - 1.0);
  }
  return gpu + overhead(gpu, work);
}

StepBreakdown StepCostModel::breakdown(const StepWork& work) const {
  const InferenceShape& s = m_shape;
  const double pp = s.pp;
  const double tokens = std::max(work.tokens, 0.0);
  StepBreakdown b;
  const Seconds linear_and_comm = linear_stage(tokens) * pp;
  if (s.tp > 1) {
    const Bytes activation(tokens * s.hidden * s.activation_bytes);
    b.tp_comm = m_collectives->time(CollectiveOp::all_reduce, activation, m_tp_group) * ((2.0 * m_stage_layers + 1.0) * pp);
  }
  b.linear = linear_and_comm - b.tp_comm;
  b.attention = attention_stage(work) * pp;
  const Seconds output = output_time(work.logit_rows);
  if (s.tp > 1 && work.logit_rows > 0.0) {
    const Seconds gather = m_collectives->time(CollectiveOp::all_gather,
                                               Bytes(work.logit_rows * s.vocab * s.activation_bytes), m_tp_group);
    b.tp_comm += gather;
    b.output = output - gather;
  } else {
    b.output = output;
  }
  if (s.pp > 1) {
    const Bytes activation(tokens * s.hidden * s.activation_bytes);
    b.pp_comm = m_collectives->time(CollectiveOp::send_recv, activation, m_pp_link) * (pp - 1.0);
  }
  const Seconds gpu = b.linear + b.attention + b.tp_comm + b.pp_comm + b.output;
  b.overhead = overhead(gpu, work);
  return b;
}

}  // namespace stepcast
