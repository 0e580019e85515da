#include "simulator/sweep_points.h"

#include <yaml-cpp/yaml.h>

#include <charconv>

#include "simulator/diagnostics.h"
#include "simulator/enum_names.h"
#include "simulator/scenario_checks.h"

namespace stepcast {
namespace {

// The keys the fast path writes in memory, and how their values read.
enum class Field {
  tp, pp, dp, cp, ep, expert_tp, vpp, first_stage_layers, last_stage_layers, zero, sequence_parallel,
  overlap_grad_reduce, overlap_param_gather, tp_comm_overlap, ep_comm_overlap, schedule, recompute, recompute_layers,
  recompute_modules,
  offload, activation_offload_layers, cp_kind, ep_dispatcher, moe_grouped_gemm, seq_len, global_batch, micro_batch, kernels, attention_kernel, gpus,
  precision
};
enum class Kind { integer, boolean, word, module_list };

struct FastKey {
  const char* key;
  Field field;
  Kind kind;
};

constexpr FastKey kFastKeys[] = {
    {"parallel.tp", Field::tp, Kind::integer},
    {"parallel.pp", Field::pp, Kind::integer},
    {"parallel.dp", Field::dp, Kind::integer},
    {"parallel.cp", Field::cp, Kind::integer},
    {"parallel.ep", Field::ep, Kind::integer},
    {"parallel.expert_tp", Field::expert_tp, Kind::integer},
    {"parallel.vpp", Field::vpp, Kind::integer},
    {"parallel.first_stage_layers", Field::first_stage_layers, Kind::integer},
    {"parallel.last_stage_layers", Field::last_stage_layers, Kind::integer},
    {"parallel.zero", Field::zero, Kind::integer},
    {"parallel.sequence_parallel", Field::sequence_parallel, Kind::boolean},
    {"parallel.overlap_grad_reduce", Field::overlap_grad_reduce, Kind::boolean},
    {"parallel.overlap_param_gather", Field::overlap_param_gather, Kind::boolean},
    {"parallel.tp_comm_overlap", Field::tp_comm_overlap, Kind::boolean},
    {"parallel.ep_comm_overlap", Field::ep_comm_overlap, Kind::boolean},
    {"parallel.schedule", Field::schedule, Kind::word},
    {"parallel.recompute", Field::recompute, Kind::word},
    {"parallel.recompute_layers", Field::recompute_layers, Kind::integer},
    {"parallel.recompute_modules", Field::recompute_modules, Kind::module_list},
    {"parallel.offload", Field::offload, Kind::word},
    {"parallel.activation_offload_layers", Field::activation_offload_layers, Kind::integer},
    {"parallel.cp_kind", Field::cp_kind, Kind::word},
    {"parallel.ep_dispatcher", Field::ep_dispatcher, Kind::word},
    {"parallel.moe_grouped_gemm", Field::moe_grouped_gemm, Kind::word},
    {"training.seq_len", Field::seq_len, Kind::integer},
    {"training.global_batch", Field::global_batch, Kind::integer},
    {"training.micro_batch", Field::micro_batch, Kind::integer},
    {"training.kernels", Field::kernels, Kind::word},
    {"training.attention_kernel", Field::attention_kernel, Kind::word},
    {"system.gpus", Field::gpus, Kind::integer},
    {"precision", Field::precision, Kind::word},
};

const FastKey* fast_key(const std::string& key) {
  for (const FastKey& k : kFastKeys) {
    if (key == k.key) return &k;
  }
  return nullptr;
}

template <class E>
std::optional<long long> enum_index(const std::string& text) {
  const auto& values = EnumTable<E>::values;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i].second == text) return static_cast<long long>(i);
  }
  return std::nullopt;
}

template <class E>
E enum_at(long long i) {
  return EnumTable<E>::values[static_cast<std::size_t>(i)].first;
}

// The value a --set text holds, decoded for the fast path; nullopt when it is not a plain value
// of the expected kind (the point then takes the slow path).
std::optional<long long> decode(const FastKey& k, const std::string& text) {
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
  if (k.kind == Kind::module_list) {
    // A list of recompute module names, as the set's bits.
    if (!node.IsSequence()) return std::nullopt;
    RecomputeModules modules = RecomputeModules::empty();
    for (const YAML::Node& item : node) {
      if (!item.IsScalar()) return std::nullopt;
      const auto m = parse_enum<RecomputeModule>(item.Scalar());
      if (!m) return std::nullopt;
      modules.add(*m);
    }
    return static_cast<long long>(modules.bits);
  }
  if (!node.IsScalar()) return std::nullopt;
  const std::string& s = node.Scalar();
  switch (k.kind) {
    case Kind::integer: {
      long long v = 0;
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
      return v;
    }
    case Kind::boolean:
      if (s == "true") return 1;
      if (s == "false") return 0;
      return std::nullopt;
    case Kind::word:
      switch (k.field) {
        case Field::schedule: return enum_index<PipelineSchedule>(s);
        case Field::recompute: return enum_index<Recompute>(s);
        case Field::offload: return enum_index<Offload>(s);
        case Field::cp_kind: return enum_index<ContextParallelKind>(s);
        case Field::ep_dispatcher: return enum_index<ExpertDispatcher>(s);
        case Field::moe_grouped_gemm: return enum_index<MoeGroupedGemm>(s);
        case Field::kernels: return enum_index<KernelFusion>(s);
        case Field::attention_kernel: return enum_index<AttentionKernel>(s);
        case Field::precision: {
          // Training one-word precisions (the loader's list for training scenarios).
          for (DataType t : {DataType::fp32, DataType::tf32, DataType::fp16, DataType::bf16, DataType::fp8}) {
            if (s == to_string(t)) return static_cast<long long>(index_of(t));
          }
          return std::nullopt;
        }
        default: return std::nullopt;
      }
    case Kind::module_list: return std::nullopt;  // read above
  }
  return std::nullopt;
}

void apply(Field f, long long v, Scenario& sc) {
  ParallelConfig& p = sc.parallel;
  const int i = static_cast<int>(v);
  switch (f) {
    case Field::tp: p.tp = i; break;
    case Field::pp: p.pp = i; break;
    case Field::dp: p.dp = i; break;
    case Field::cp: p.cp = i; break;
    case Field::ep: p.ep = i; break;
    case Field::expert_tp: p.expert_tp = i; break;
    case Field::vpp: p.vpp = i; break;
    case Field::first_stage_layers: p.first_stage_layers = i; break;
    case Field::last_stage_layers: p.last_stage_layers = i; break;
    case Field::zero: p.zero = i; break;
    case Field::sequence_parallel: p.sequence_parallel = v != 0; break;
    case Field::overlap_grad_reduce: p.overlap_grad_reduce = v != 0; break;
    case Field::overlap_param_gather: p.overlap_param_gather = v != 0; break;
    case Field::tp_comm_overlap: p.tp_comm_overlap = v != 0; break;
    case Field::ep_comm_overlap: p.ep_comm_overlap = v != 0; break;
    case Field::schedule: p.schedule = enum_at<PipelineSchedule>(v); break;
    case Field::recompute: p.recompute = enum_at<Recompute>(v); break;
    case Field::recompute_layers: p.recompute_layers = i; break;
    case Field::recompute_modules: p.recompute_modules.bits = static_cast<unsigned>(v); break;
    case Field::offload: p.offload = enum_at<Offload>(v); break;
    case Field::activation_offload_layers: p.activation_offload_layers = i; break;
    case Field::cp_kind: p.cp_kind = enum_at<ContextParallelKind>(v); break;
    case Field::ep_dispatcher: p.ep_dispatcher = enum_at<ExpertDispatcher>(v); break;
    case Field::moe_grouped_gemm: p.moe_grouped_gemm = enum_at<MoeGroupedGemm>(v); break;
    case Field::seq_len: std::get<TrainingWorkload>(sc.workload).seq_len = i; break;
    case Field::global_batch: std::get<TrainingWorkload>(sc.workload).global_batch = i; break;
    case Field::micro_batch: std::get<TrainingWorkload>(sc.workload).micro_batch = i; break;
    case Field::kernels: std::get<TrainingWorkload>(sc.workload).kernels = enum_at<KernelFusion>(v); break;
    case Field::attention_kernel:
      std::get<TrainingWorkload>(sc.workload).attention_kernel = enum_at<AttentionKernel>(v);
      break;
    case Field::gpus: sc.system.gpus = i; break;
    case Field::precision: sc.precision = precision_shorthand(kAllDataTypes[static_cast<std::size_t>(v)]); break;
  }
}

std::string first_reason(const InputError& e) {
  if (e.diagnostics().empty()) return e.what();
  const Diagnostic& d = e.diagnostics().front();
  return (d.key_path.empty() ? "" : d.key_path + ": ") + d.message;
}

}  // namespace

bool apply_override_in_memory(Scenario& scenario, const Override& o) {
  const FastKey* k = fast_key(o.key_path);
  if (k == nullptr || !scenario.is_training()) return false;
  const auto v = decode(*k, o.value);
  if (!v) return false;
  apply(k->field, *v, scenario);
  return true;
}

PointBuilder::PointBuilder(const SweepFile& sweep, const Catalog& catalog) : m_sweep(sweep), m_catalog(catalog) {
  m_index.resize(sweep.axes.size());
  m_current = sweep.base;
  m_fast = sweep.base.is_training();
  bool dp_axis = false;
  for (const SweepAxis& axis : sweep.axes) {
    const FastKey* k = fast_key(axis.key);
    if (k == nullptr) {
      m_fast = false;
      break;
    }
    FastAxis fa;
    fa.field = static_cast<int>(k->field);
    for (const std::string& text : axis.values) {
      const auto v = decode(*k, text);
      if (!v) {
        m_fast = false;
        break;
      }
      fa.values.push_back(*v);
    }
    dp_axis = dp_axis || k->field == Field::dp;
    m_axes.push_back(std::move(fa));
  }
  // As the loader's ScenarioReadState::dp_given: dp written (by an axis, or kept in the base).
  bool base_has_dp = false;
  try {
    const YAML::Node root = YAML::Load(sweep.base_text);
    base_has_dp = root.IsMap() && root["parallel"] && root["parallel"].IsMap() && root["parallel"]["dp"];
  } catch (const YAML::Exception&) {
    m_fast = false;
  }
  m_dp_given = dp_axis || base_has_dp;
}

const Scenario* PointBuilder::build(std::uint64_t index, std::string& reason) {
  if (m_fast) return build_fast(index, reason) ? &m_current : nullptr;
  return build_by_loading(index, m_current, reason) ? &m_current : nullptr;
}

bool PointBuilder::build_fast(std::uint64_t index, std::string& reason) {
  m_sweep.decode(index, m_index);
  for (std::size_t a = 0; a < m_axes.size(); ++a) {
    apply(static_cast<Field>(m_axes[a].field), m_axes[a].values[m_index[a]], m_current);
  }
  // The loader's cross-field stage, on a document whose every field read cleanly.
  reason = recheck_scenario(m_current, m_dp_given);
  return reason.empty();
}

bool PointBuilder::build_by_loading(std::uint64_t index, Scenario& out, std::string& reason) const {
  const std::vector<Override> overrides = m_sweep.overrides_of(index);
  try {
    out = parse_scenario(m_sweep.base_text, m_sweep.base_source, overrides, m_catalog);
    return true;
  } catch (const InputError& e) {
    reason = first_reason(e);
    return false;
  }
}

std::string PointBuilder::point_document(std::uint64_t index) const {
  return apply_overrides(m_sweep.base_text, m_sweep.overrides_of(index));
}

}  // namespace stepcast
