#include "simulator/spec_readers.h"

#include <algorithm>

namespace stepcast {
namespace {

// A quantity that may also be written as `word` ("unknown", "none"), meaning zero.
std::optional<double> quantity_or_word(const MapReader& r, std::string_view key, Dimension d, std::string_view word,
                                       std::string_view other_word = {}, bool positive = true) {
  const auto v = r.get(key);
  if (!v) return std::nullopt;
  if (v->node.IsScalar() && (v->node.Scalar() == word || (!other_word.empty() && v->node.Scalar() == other_word))) {
    return 0.0;
  }
  return read_quantity(r.sink(), *v, d, positive);
}

std::optional<long long> integer_or_word(const MapReader& r, std::string_view key, std::string_view word) {
  const auto v = r.get(key);
  if (!v) return std::nullopt;
  if (v->node.IsScalar() && v->node.Scalar() == word) return 0;
  return read_integer(r.sink(), *v);
}

int to_int(long long v) { return static_cast<int>(v); }

}  // namespace

const std::vector<std::string>& gpu_field_keys() {
  static const std::vector<std::string> keys = {
      "display_name", "architecture",    "dense_peak",      "memory", "memory_bandwidth", "sm_count",
      "l2_cache",     "nvlink_bandwidth", "host_bandwidth", "tdp",    "unified_memory", "power_modes",
      "sfu_exp_per_sm_clock", "sustained_clock_fraction", "nvfp4_gemm_over_fp8"};
  return keys;
}

const std::vector<std::string>& network_field_keys() {
  static const std::vector<std::string> keys = {"nics_per_node", "nic_bandwidth",    "nic_latency",
                                                "transport",     "fabric",           "tiers",
                                                "oversubscription", "nodes_per_leaf", "in_network_reduction",
                                                "simple_protocol_only"};
  return keys;
}

const std::vector<std::string>& system_field_keys() {
  static const std::vector<std::string> keys = {"display_name",        "gpus_per_node",      "nvlink_domain_gpus",
                                                "nvlink_sharp",        "intra_node_bandwidth", "intra_node_latency",
                                                "host_memory_per_node"};
  return keys;
}

const std::vector<std::string>& model_field_keys() {
  static const std::vector<std::string> keys = {
      "layers",  "hidden",     "heads",          "kv_heads",       "head_dim",        "ffn_hidden",
      "vocab",   "mlp",        "norm",           "position",       "tied_embeddings", "linear_bias",    "dropout",     "qk_norm",     "experts",
      "top_k",   "moe_ffn_hidden", "shared_experts", "capacity_factor", "load_imbalance", "first_dense_layers",
      "router_groups", "router_group_topk", "mla",     "sliding_window", "full_attention_every",
      "activation_clamp", "mtp_depth"};
  return keys;
}

std::vector<std::string> with_keys(std::vector<std::string> keys, const std::vector<std::string>& extra) {
  keys.insert(keys.end(), extra.begin(), extra.end());
  return keys;
}

void read_gpu_fields(const MapReader& r, GpuSpec& gpu) {
  if (auto v = r.string("display_name")) gpu.display_name = *v;
  if (auto v = r.enumeration<GpuArchitecture>("architecture")) gpu.architecture = *v;
  if (auto v = r.get("dense_peak")) {
    std::vector<std::string> formats;
    for (DataType t : kAllDataTypes) formats.emplace_back(to_string(t));
    const MapReader peaks(r.sink(), v->node, v->path, v->where, formats);
    for (DataType t : kAllDataTypes) {
      if (auto q = peaks.quantity(to_string(t), Dimension::flop_rate)) gpu.dense_peak[index_of(t)] = FlopRate(*q);
    }
  }
  if (auto v = r.quantity("memory", Dimension::size)) gpu.memory = Bytes(*v);
  if (auto v = r.quantity("memory_bandwidth", Dimension::bandwidth)) gpu.memory_bandwidth = Bandwidth(*v);
  if (auto v = integer_or_word(r, "sm_count", "unknown")) gpu.sm_count = to_int(*v);
  if (auto v = quantity_or_word(r, "l2_cache", Dimension::size, "unknown")) gpu.l2_cache = Bytes(*v);
  if (auto v = quantity_or_word(r, "nvlink_bandwidth", Dimension::bandwidth, "none")) gpu.nvlink_bandwidth = Bandwidth(*v);
  if (auto v = quantity_or_word(r, "host_bandwidth", Dimension::bandwidth, "unknown")) gpu.host_bandwidth = Bandwidth(*v);
  if (auto v = quantity_or_word(r, "tdp", Dimension::power, "unknown")) gpu.tdp_watts = *v;
  if (auto v = r.boolean("unified_memory")) gpu.unified_memory = *v;
  // Absent: the architecture's rate (model/op_time.h architecture_sfu_exp_per_sm_clock).
  if (auto v = r.real("sfu_exp_per_sm_clock", {0.0, true, 1024.0})) gpu.sfu_exp_per_sm_clock = *v;
  // Absent: the architecture's sustained derate (CostParameters::sustained_fraction).
  if (auto v = r.real("sustained_clock_fraction", {0.0, true, 1.0})) gpu.sustained_clock_fraction = *v;
  // Absent: the datasheet's NVFP4-over-FP8 peak ratio (model/op_time.h gemm_peak).
  if (auto v = r.real("nvfp4_gemm_over_fp8", {0.0, true, 16.0})) gpu.nvfp4_gemm_over_fp8 = *v;
  if (auto v = r.get("power_modes")) {
    if (!v->node.IsSequence()) {
      r.sink().error(v->where, v->path, "expected a sequence of power modes, found " + describe_node(v->node));
    } else {
      std::vector<PowerMode> modes;
      bool ok = true;
      for (std::size_t i = 0; i < v->node.size(); ++i) {
        const YAML::Node item = v->node[i];
        const std::string path = v->path + "[" + std::to_string(i) + "]";
        const MapReader m(r.sink(), item, path, r.sink().location_of(item, v->where),
                          {"name", "power", "compute_scale", "memory_bandwidth_scale"});
        if (!m.is_mapping()) {
          ok = false;
          continue;
        }
        PowerMode mode;
        const std::size_t errors_before = r.sink().error_count();
        if (auto s = m.string("name")) mode.name = *s; else if (!m.has("name")) m.missing("name", "the mode's name, e.g. 15W");
        if (auto p = m.quantity("power", Dimension::power)) mode.watts = *p; else if (!m.has("power")) m.missing("power", "its power budget, e.g. \"15 W\"");
        if (auto s = m.real("compute_scale", {0.0, true, 1.0})) mode.compute_scale = *s;
        if (auto s = m.real("memory_bandwidth_scale", {0.0, true, 1.0})) mode.memory_bandwidth_scale = *s;
        ok = ok && r.sink().error_count() == errors_before;
        modes.push_back(mode);
      }
      if (ok) gpu.power_modes = std::move(modes);
    }
  }
}

void require_gpu_fields(const MapReader& r) {
  if (!r.is_mapping()) return;
  if (!r.has("architecture")) r.missing("architecture", "one of " + [] {
    std::string s;
    for (const auto& n : enum_spellings<GpuArchitecture>()) s += (s.empty() ? "" : ", ") + n;
    return s;
  }());
  if (!r.has("dense_peak")) r.missing("dense_peak", "peak compute per format, e.g. {bf16: \"989.4 TFLOP/s\"}");
  if (!r.has("memory")) r.missing("memory", "memory capacity, e.g. \"80 GiB\"");
  if (!r.has("memory_bandwidth")) r.missing("memory_bandwidth", "memory bandwidth, e.g. \"3.35 TB/s\"");
}

void read_network_fields(const MapReader& r, NetworkSpec& n) {
  if (auto v = r.integer("nics_per_node", kNonNegative)) n.nics_per_node = to_int(*v);
  if (auto v = quantity_or_word(r, "nic_bandwidth", Dimension::bandwidth, "none", "unknown")) n.nic_bandwidth = Bandwidth(*v);
  if (auto v = quantity_or_word(r, "nic_latency", Dimension::time, "unknown", {}, false)) n.nic_latency = Seconds(*v);
  if (auto v = r.enumeration<Transport>("transport")) n.transport = *v;
  if (auto v = r.enumeration<FabricKind>("fabric")) n.fabric = *v;
  if (auto v = r.integer("tiers", {1, 4})) n.tiers = to_int(*v);
  if (auto v = r.ratio("oversubscription")) n.oversubscription = *v;
  if (auto v = r.integer("nodes_per_leaf")) n.nodes_per_leaf = to_int(*v);
  if (auto v = r.boolean("in_network_reduction")) n.in_network_reduction = *v;
  if (auto v = r.boolean("simple_protocol_only")) n.simple_protocol_only = *v;
}

void require_network_fields(const MapReader& r) {
  if (!r.is_mapping()) return;
  if (!r.has("nics_per_node")) r.missing("nics_per_node", "application NICs per node");
  if (!r.has("nic_bandwidth")) r.missing("nic_bandwidth", "per NIC and direction, e.g. \"400 Gb/s\"");
  if (!r.has("nic_latency")) r.missing("nic_latency", "one network hop, e.g. \"5 us\"");
}

void read_system_fields(const MapReader& r, SystemSpec& s) {
  const int old_per_node = s.gpus_per_node;
  const bool domain_is_node = s.nvlink_domain_gpus == s.gpus_per_node;
  if (auto v = r.string("display_name")) s.display_name = *v;
  if (auto v = r.integer("gpus_per_node")) s.gpus_per_node = to_int(*v);
  if (auto v = r.integer("nvlink_domain_gpus")) s.nvlink_domain_gpus = to_int(*v);
  if (auto v = r.boolean("nvlink_sharp")) s.nvlink_sharp = *v;
  if (auto v = quantity_or_word(r, "intra_node_bandwidth", Dimension::bandwidth, "unknown")) {
    s.intra_node_bandwidth = Bandwidth(*v);
  }
  if (auto v = r.quantity("intra_node_latency", Dimension::time, false)) s.intra_node_latency = Seconds(*v);
  if (auto v = quantity_or_word(r, "host_memory_per_node", Dimension::size, "unknown")) {
    s.host_memory_per_node = Bytes(*v);
  }
  if (s.gpus_per_node != old_per_node && domain_is_node && !r.has("nvlink_domain_gpus")) {
    s.nvlink_domain_gpus = s.gpus_per_node;
  }
}

void read_model_fields(const MapReader& r, TransformerSpec& m) {
  const bool kv_follows = m.kv_heads == m.heads;
  const bool head_dim_follows = m.heads == 0 || m.head_dim * m.heads == m.hidden;
  const bool ffn_follows = m.ffn_hidden == 4 * m.hidden;
  if (auto v = r.integer("layers")) m.layers = to_int(*v);
  if (auto v = r.integer("hidden")) m.hidden = to_int(*v);
  if (auto v = r.integer("heads")) m.heads = to_int(*v);
  if (auto v = r.integer("kv_heads")) m.kv_heads = to_int(*v);
  if (auto v = r.integer("head_dim")) m.head_dim = to_int(*v);
  if (auto v = r.integer("ffn_hidden")) m.ffn_hidden = to_int(*v);
  if (auto v = r.integer("vocab")) m.vocab = to_int(*v);
  if (auto v = r.enumeration<MlpKind>("mlp")) m.mlp = *v;
  if (auto v = r.enumeration<NormKind>("norm")) m.norm = *v;
  if (auto v = r.enumeration<PositionEmbedding>("position")) m.position = *v;
  if (auto v = r.boolean("tied_embeddings")) m.tied_embeddings = *v;
  if (auto v = r.boolean("linear_bias")) m.linear_bias = *v;
  if (auto v = r.boolean("dropout")) m.dropout = *v;
  if (auto v = r.boolean("qk_norm")) m.qk_norm = *v;
  if (auto v = r.integer("experts")) m.moe.experts = to_int(*v);
  if (auto v = r.integer("top_k")) m.moe.top_k = to_int(*v);
  if (auto v = r.integer("moe_ffn_hidden", kNonNegative)) m.moe.ffn_hidden = to_int(*v);
  if (auto v = r.integer("shared_experts", kNonNegative)) m.moe.shared_experts = to_int(*v);
  if (auto v = r.real("capacity_factor", {0.0, false})) m.moe.capacity_factor = *v;  // 0: dropless
  if (auto v = r.real("load_imbalance", {1.0, false})) m.moe.load_imbalance = *v;
  if (auto v = r.integer("first_dense_layers", kNonNegative)) m.moe.first_dense_layers = to_int(*v);
  if (auto v = r.integer("router_groups", kNonNegative)) m.moe.router_groups = to_int(*v);
  if (auto v = r.integer("router_group_topk", kNonNegative)) m.moe.router_group_topk = to_int(*v);
  if (auto v = r.integer("sliding_window", kNonNegative)) m.sliding_window = to_int(*v);
  if (auto v = r.integer("full_attention_every", kNonNegative)) m.full_attention_every = to_int(*v);
  if (auto v = r.real("activation_clamp", {0.0, false})) m.activation_clamp = *v;  // 0: none
  if (auto v = r.integer("mtp_depth", kNonNegative)) m.mtp_depth = to_int(*v);  // 0: no MTP module
  if (auto v = r.get("mla")) {
    const MapReader mla(r.sink(), v->node, v->path, v->where,
                        {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
    if (mla.is_mapping()) {
      MlaSpec spec = m.mla.value_or(MlaSpec{});
      if (auto x = mla.integer("q_lora_rank", kNonNegative)) spec.q_lora_rank = to_int(*x);
      if (auto x = mla.integer("kv_lora_rank")) spec.kv_lora_rank = to_int(*x);
      if (auto x = mla.integer("qk_nope_head_dim")) spec.qk_nope_head_dim = to_int(*x);
      if (auto x = mla.integer("qk_rope_head_dim")) spec.qk_rope_head_dim = to_int(*x);
      if (auto x = mla.integer("v_head_dim")) spec.v_head_dim = to_int(*x);
      m.mla = spec;
    }
  }
  if (kv_follows && !r.has("kv_heads")) m.kv_heads = m.heads;
  if (head_dim_follows && !r.has("head_dim") && m.heads > 0) m.head_dim = m.hidden / m.heads;
  if (ffn_follows && !r.has("ffn_hidden")) m.ffn_hidden = 4 * m.hidden;
}

void require_model_fields(const MapReader& r) {
  if (!r.is_mapping()) return;
  if (!r.has("layers")) r.missing("layers", "transformer layers");
  if (!r.has("hidden")) r.missing("hidden", "hidden size");
  if (!r.has("heads")) r.missing("heads", "attention heads");
  if (!r.has("vocab")) r.missing("vocab", "vocabulary size");
}

void check_model(DiagnosticSink& sink, const std::string& path, const TransformerSpec& m) {
  const auto at = [&](const char* key) { return path + "." + key; };
  if (m.heads > 0 && m.kv_heads > 0 && (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)) {
    sink.error_at(at("kv_heads"), "kv_heads (" + std::to_string(m.kv_heads) + ") must divide heads (" +
                                      std::to_string(m.heads) + ")");
  }
  if (m.heads > 0 && m.head_dim * m.heads != m.hidden && !m.mla && m.hidden % m.heads != 0) {
    sink.error_at(at("heads"), "hidden (" + std::to_string(m.hidden) + ") is not divisible by heads (" +
                                   std::to_string(m.heads) + "); give head_dim explicitly");
  }
  if (m.moe.top_k > m.moe.experts) {
    sink.error_at(at("top_k"), "top_k (" + std::to_string(m.moe.top_k) + ") exceeds experts (" +
                                   std::to_string(m.moe.experts) + ")");
  }
  const MoeSpec& moe = m.moe;
  if ((moe.router_groups > 0) != (moe.router_group_topk > 0)) {
    sink.error_at(at(moe.router_groups > 0 ? "router_group_topk" : "router_groups"),
                  "group-limited routing needs both router_groups and router_group_topk (Megatron-Core "
                  "--moe-router-num-groups and --moe-router-group-topk); give both or neither");
  } else if (moe.router_groups > 0 && moe.is_moe()) {
    const auto n = [](int v) { return std::to_string(v); };
    if (moe.experts % moe.router_groups != 0) {
      sink.error_at(at("router_groups"), "router_groups (" + n(moe.router_groups) + ") must divide experts (" +
                                             n(moe.experts) + ")");
    } else if (moe.router_group_topk > moe.router_groups) {
      sink.error_at(at("router_group_topk"), "router_group_topk (" + n(moe.router_group_topk) +
                                                 ") exceeds router_groups (" + n(moe.router_groups) + ")");
    } else if (moe.top_k > moe.router_group_topk * (moe.experts / moe.router_groups)) {
      sink.error_at(at("router_group_topk"),
                    "top_k (" + n(moe.top_k) + ") exceeds the experts of router_group_topk groups (" +
                        n(moe.router_group_topk) + " x " + n(moe.experts / moe.router_groups) + ")");
    }
  }
  if (m.moe.first_dense_layers > m.layers) {
    sink.error_at(at("first_dense_layers"), "first_dense_layers (" + std::to_string(m.moe.first_dense_layers) +
                                                ") exceeds layers (" + std::to_string(m.layers) + ")");
  }
}

bool apply_power_mode(GpuSpec& gpu, const std::string& mode_name) {
  const auto it = std::find_if(gpu.power_modes.begin(), gpu.power_modes.end(),
                               [&](const PowerMode& m) { return m.name == mode_name; });
  if (it == gpu.power_modes.end()) return false;
  const PowerMode mode = *it;
  for (auto& peak : gpu.dense_peak) peak *= mode.compute_scale;
  gpu.memory_bandwidth *= mode.memory_bandwidth_scale;
  gpu.tdp_watts = mode.watts;
  gpu.power_modes = {mode};
  return true;
}

}  // namespace stepcast
