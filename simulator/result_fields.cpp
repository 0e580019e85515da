#include "simulator/result_fields.h"

#include <fmt/format.h>

#include <cassert>
#include <cmath>
#include <limits>

#include "simulator/enum_names.h"

namespace stepcast {
namespace {

// The fields in slot order. Adding one: append it here and fill it below.
void build_training_table(std::vector<FieldDef>& out) {
  const auto key_int = [&](const char* name) { out.push_back({name, ExprType::number, FieldPhase::key, {}, true}); };
  const auto key_bool = [&](const char* name) { out.push_back({name, ExprType::truth, FieldPhase::key, {}, false}); };
  const auto key_word = [&](const char* name, std::vector<std::string> words) {
    out.push_back({name, ExprType::word, FieldPhase::key, std::move(words), false});
  };
  const auto memory = [&](const char* name) { out.push_back({name, ExprType::number, FieldPhase::memory, {}, true}); };
  const auto time = [&](const char* name) { out.push_back({name, ExprType::number, FieldPhase::time, {}, false}); };

  key_int("parallel.tp");
  key_int("parallel.pp");
  key_int("parallel.dp");
  key_int("parallel.cp");
  key_int("parallel.ep");
  key_int("parallel.expert_tp");
  key_int("parallel.vpp");
  key_bool("parallel.sequence_parallel");
  key_word("parallel.schedule", enum_spellings<PipelineSchedule>());
  key_int("parallel.zero");
  key_word("parallel.recompute", enum_spellings<Recompute>());
  key_word("parallel.offload", enum_spellings<Offload>());
  key_word("parallel.cp_kind", enum_spellings<ContextParallelKind>());
  key_bool("parallel.overlap_grad_reduce");
  key_bool("parallel.overlap_param_gather");
  key_bool("parallel.tp_comm_overlap");
  key_int("training.seq_len");
  key_int("training.global_batch");
  key_int("training.micro_batch");
  key_int("training.microbatches");
  key_int("system.gpus");
  key_int("system.gpus_per_node");
  key_int("system.nodes");
  key_int("model.layers");
  key_int("model.hidden");
  key_int("model.heads");
  key_int("model.kv_heads");
  key_int("model.ffn_hidden");
  key_int("model.vocab");
  key_int("model.experts");
  key_word("precision.compute", enum_spellings<DataType>());
  key_word("precision.params", enum_spellings<DataType>());
  memory("memory_per_gpu_bytes.weights");
  memory("memory_per_gpu_bytes.gradients");
  memory("memory_per_gpu_bytes.optimizer_states");
  memory("memory_per_gpu_bytes.activations");
  memory("memory_per_gpu_bytes.buffers");
  memory("memory_per_gpu_bytes.fragmentation");
  memory("memory_per_gpu_bytes.peak");
  out.push_back({"fits", ExprType::truth, FieldPhase::memory, {}, false});
  time("step_time_s");
  time("tokens_per_s");
  time("mfu");
  time("hfu");
  time("bubble_fraction");
  time("time_breakdown_s.compute");
  time("time_breakdown_s.recompute");
  time("time_breakdown_s.tp_comm_exposed");
  time("time_breakdown_s.cp_comm_exposed");
  time("time_breakdown_s.ep_comm_exposed");
  time("time_breakdown_s.pp_bubble");
  time("time_breakdown_s.pp_comm_exposed");
  time("time_breakdown_s.dp_comm_exposed");
  time("time_breakdown_s.optimizer");
  time("time_breakdown_s.offload_exposed");
  time("time_breakdown_s.mtp");
  time("time_breakdown_s.other");
  time("gpu_hours_per_million_tokens");
  time("cost_per_million_tokens_usd");
}

// Slot numbers of the fields above (the order of build_training_table).
enum Slot : int {
  s_tp, s_pp, s_dp, s_cp, s_ep, s_expert_tp, s_vpp, s_sp, s_schedule, s_zero, s_recompute, s_offload, s_cp_kind,
  s_overlap_grad, s_overlap_param, s_tp_overlap, s_seq_len, s_global_batch, s_micro_batch, s_microbatches, s_gpus,
  s_gpus_per_node, s_nodes, s_layers, s_hidden, s_heads, s_kv_heads, s_ffn, s_vocab, s_experts, s_compute,
  s_params_type, s_m_weights, s_m_gradients, s_m_optimizer, s_m_activations, s_m_buffers, s_m_fragmentation, s_m_peak,
  s_fits, s_step_time, s_tokens_per_s, s_mfu, s_hfu, s_bubble, s_t_compute, s_t_recompute, s_t_tp, s_t_cp, s_t_ep,
  s_t_bubble, s_t_pp, s_t_dp, s_t_optimizer, s_t_offload, s_t_mtp, s_t_other, s_gpu_hours, s_cost, s_count
};

template <class E>
double index_of_enum(E value) {
  const auto& values = EnumTable<E>::values;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i].first == value) return static_cast<double>(i);
  }
  return -1.0;
}

}  // namespace

const FieldTable& FieldTable::training() {
  static const FieldTable table = [] {
    FieldTable t;
    build_training_table(t.m_fields);
    assert(t.m_fields.size() == static_cast<std::size_t>(s_count));
    return t;
  }();
  return table;
}

int FieldTable::slot_of(std::string_view name) const {
  for (std::size_t i = 0; i < m_fields.size(); ++i) {
    if (m_fields[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::string> FieldTable::names() const {
  std::vector<std::string> out;
  out.reserve(m_fields.size());
  for (const auto& f : m_fields) out.push_back(f.name);
  return out;
}

ExprResolver FieldTable::resolver() const {
  ExprResolver r;
  r.lookup = [this](std::string_view name) -> std::optional<ExprVariable> {
    const int slot = slot_of(name);
    if (slot < 0) return std::nullopt;
    const FieldDef& f = at(slot);
    return ExprVariable{slot, f.type, f.words};
  };
  r.known_names = [this] { return names(); };
  return r;
}

FieldPhase FieldTable::phase_of(const Expression& e) const {
  FieldPhase phase = FieldPhase::key;
  for (int slot : e.slots()) phase = std::max(phase, at(slot).phase);
  return phase;
}

std::string FieldTable::format(int slot, double value) const {
  const FieldDef& f = at(slot);
  if (std::isnan(value)) return "";
  switch (f.type) {
    case ExprType::truth: return value != 0.0 ? "true" : "false";
    case ExprType::word: {
      const auto i = static_cast<std::size_t>(value);
      return i < f.words.size() ? f.words[i] : std::string("?");
    }
    default: break;
  }
  if (f.integer && std::abs(value) < 9.0e15 && value == std::floor(value)) {
    return fmt::format("{}", static_cast<long long>(value));
  }
  return fmt::format("{}", value);
}

std::vector<std::string> layout_columns() {
  return {"parallel.tp", "parallel.pp", "parallel.dp", "parallel.cp", "parallel.ep", "parallel.vpp",
          "training.micro_batch", "parallel.sequence_parallel", "parallel.schedule", "parallel.recompute",
          "parallel.zero", "parallel.tp_comm_overlap", "parallel.overlap_grad_reduce", "parallel.overlap_param_gather"};
}

std::vector<std::string> result_columns() {
  std::vector<std::string> out;
  for (const FieldDef& f : FieldTable::training().fields()) {
    if (f.phase != FieldPhase::key) out.push_back(f.name);
  }
  return out;
}

namespace training_slot {
int peak_memory() { return s_m_peak; }
int fits() { return s_fits; }
int step_time() { return s_step_time; }
int tokens_per_s() { return s_tokens_per_s; }
int cost_per_million_tokens() { return s_cost; }
}  // namespace training_slot

void fill_key_fields(const Scenario& sc, std::span<double> row) {
  assert(row.size() == static_cast<std::size_t>(s_count));
  const ParallelConfig& p = sc.parallel;
  row[s_tp] = p.tp;
  row[s_pp] = p.pp;
  row[s_dp] = p.dp;
  row[s_cp] = p.cp;
  row[s_ep] = p.ep;
  row[s_expert_tp] = p.expert_tensor_parallel();
  row[s_vpp] = p.vpp;
  row[s_sp] = p.sequence_parallel ? 1.0 : 0.0;
  row[s_schedule] = index_of_enum(p.schedule);
  row[s_zero] = p.zero;
  row[s_recompute] = index_of_enum(p.recompute);
  row[s_offload] = index_of_enum(p.offload);
  row[s_cp_kind] = index_of_enum(p.cp_kind);
  row[s_overlap_grad] = p.overlap_grad_reduce ? 1.0 : 0.0;
  row[s_overlap_param] = p.overlap_param_gather ? 1.0 : 0.0;
  row[s_tp_overlap] = p.tp_comm_overlap ? 1.0 : 0.0;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (sc.is_training()) {
    const TrainingWorkload& t = sc.training();
    row[s_seq_len] = t.seq_len;
    row[s_global_batch] = t.global_batch;
    row[s_micro_batch] = t.micro_batch;
    row[s_microbatches] = t.global_batch / (std::max(p.dp, 1) * std::max(t.micro_batch, 1));
  } else {
    row[s_seq_len] = row[s_global_batch] = row[s_micro_batch] = row[s_microbatches] = nan;
  }
  row[s_gpus] = sc.system.gpus;
  row[s_gpus_per_node] = sc.system.gpus_per_node;
  row[s_nodes] = sc.system.nodes();
  const TransformerSpec& m = sc.model;
  row[s_layers] = m.layers;
  row[s_hidden] = m.hidden;
  row[s_heads] = m.heads;
  row[s_kv_heads] = m.kv_heads;
  row[s_ffn] = m.ffn_hidden;
  row[s_vocab] = m.vocab;
  row[s_experts] = m.moe.experts;
  row[s_compute] = index_of_enum(sc.precision.compute);
  row[s_params_type] = index_of_enum(sc.precision.params);
}

void fill_memory_fields(const MemoryBreakdown& memory, bool fits, std::span<double> row) {
  assert(row.size() == static_cast<std::size_t>(s_count));
  row[s_m_weights] = memory.weights.value();
  row[s_m_gradients] = memory.gradients.value();
  row[s_m_optimizer] = memory.optimizer_states.value();
  row[s_m_activations] = memory.activations.value();
  row[s_m_buffers] = memory.buffers.value();
  row[s_m_fragmentation] = memory.fragmentation.value();
  row[s_m_peak] = memory.peak.value();
  row[s_fits] = fits ? 1.0 : 0.0;
}

void fill_time_fields(const Scenario& sc, const TrainingPrediction& p, double gpu_hour_usd, std::span<double> row) {
  assert(row.size() == static_cast<std::size_t>(s_count));
  row[s_step_time] = p.step_time.value();
  row[s_tokens_per_s] = p.tokens_per_s;
  row[s_mfu] = p.mfu;
  row[s_hfu] = p.hfu;
  row[s_bubble] = p.bubble_fraction;
  const TimeBreakdown& b = p.time;
  row[s_t_compute] = b.compute.value();
  row[s_t_recompute] = b.recompute.value();
  row[s_t_tp] = b.tp_comm_exposed.value();
  row[s_t_cp] = b.cp_comm_exposed.value();
  row[s_t_ep] = b.ep_comm_exposed.value();
  row[s_t_bubble] = b.pp_bubble.value();
  row[s_t_pp] = b.pp_comm_exposed.value();
  row[s_t_dp] = b.dp_comm_exposed.value();
  row[s_t_optimizer] = b.optimizer.value();
  row[s_t_offload] = b.offload_exposed.value();
  row[s_t_mtp] = b.mtp.value();
  row[s_t_other] = b.other.value();
  // GPU-hours per million tokens: (gpus * step / 3600) / (tokens per step / 1e6), and tokens per
  // step / step = tokens_per_s.
  const double gpu_hours = sc.system.gpus / 3600.0 / p.tokens_per_s * 1e6;
  row[s_gpu_hours] = gpu_hours;
  row[s_cost] = gpu_hour_usd > 0.0 ? gpu_hours * gpu_hour_usd : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace stepcast
