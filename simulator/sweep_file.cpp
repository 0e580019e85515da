#include "simulator/sweep_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/divisors.h"
#include "model/op_checkpoint.h"
#include "simulator/diagnostics.h"
#include "simulator/enum_names.h"
#include "simulator/quantity_parse.h"
#include "simulator/text_file.h"

namespace stepcast {
namespace {

constexpr int kSchemaVersion = 1;
// An axis longer than this is almost certainly a mistake (a step of 1 over a large range).
constexpr std::size_t kMaxAxisValues = 1'000'000;
// Points in one sweep; beyond this a point index would not fit the output's integers exactly.
constexpr double kMaxPoints = 9.0e15;

std::string emit(const YAML::Node& node, bool flow) {
  YAML::Emitter out;
  if (flow) out << YAML::Flow;
  out << node;
  return out.c_str();
}

// Location of an expression error inside a scalar: the scalar's own position plus the column
// (one more for a quoted scalar, whose text starts after the quote).
Location inside(const DiagnosticSink& sink, const YAML::Node& node, const Location& fallback, int column) {
  Location where = sink.location_of(node, fallback);
  if (where.line > 0 && where.column > 0) {
    const bool quoted = node.Tag() == "!";
    where.column += column - 1 + (quoted ? 1 : 0);
  }
  return where;
}

std::vector<std::string> texts(const std::vector<long long>& values) {
  std::vector<std::string> out;
  out.reserve(values.size());
  for (long long v : values) out.push_back(std::to_string(v));
  return out;
}

// Every value of `key` that is valid for `base` (see the header), or empty when `auto` does not
// apply to the key.
std::vector<std::string> auto_values(const std::string& key, const Scenario& base) {
  const int gpus = base.system.gpus;
  const TransformerSpec& m = base.model;
  const ParallelConfig& p = base.parallel;
  std::vector<long long> out;
  if (key == "parallel.tp") {
    for (long long d : divisors<long long>(gpus)) {
      if (m.heads % d == 0 && (m.kv_heads % d == 0 || d % m.kv_heads == 0)) out.push_back(d);
    }
  } else if (key == "parallel.pp") {
    for (long long d : divisors<long long>(gpus)) {
      if (d <= m.layers) out.push_back(d);
    }
  } else if (key == "parallel.dp") {
    out = divisors<long long>(gpus);
  } else if (key == "parallel.cp") {
    const int seq = base.is_training() ? base.training().seq_len : base.inference().input_len;
    for (long long d : divisors<long long>(gpus)) {
      if (d == 1 || seq % (2 * d) == 0) out.push_back(d);
    }
  } else if (key == "parallel.ep") {
    out = divisors<long long>(std::max(m.moe.experts, 1));
  } else if (key == "parallel.expert_tp") {
    out = divisors<long long>(p.tp);
  } else if (key == "parallel.vpp") {
    out = divisors<long long>(std::max(m.layers / std::max(p.pp, 1), 1));
  } else if (key == "training.micro_batch" && base.is_training()) {
    out = divisors<long long>(base.training().global_batch);
  } else if (key == "parallel.zero") {
    out = {0, 1, 2, 3};
  } else if (key == "parallel.sequence_parallel" || key == "parallel.overlap_grad_reduce" ||
             key == "parallel.overlap_param_gather" || key == "parallel.tp_comm_overlap" ||
             key == "parallel.ep_comm_overlap" || key == "training.flash_attention") {
    return {"false", "true"};
  } else if (key == "parallel.schedule") {
    return enum_spellings<PipelineSchedule>();
  } else if (key == "parallel.recompute") {
    // torchtitan's per-op policy (selective_op) takes dense bias-free blocks only (model/op_checkpoint.h).
    std::vector<std::string> spellings = enum_spellings<Recompute>();
    if (!selective_op_applies(m)) std::erase(spellings, std::string(enum_name(Recompute::selective_op)));
    return spellings;
  } else if (key == "parallel.offload") {
    return enum_spellings<Offload>();
  } else if (key == "training.kernels") {
    return enum_spellings<KernelFusion>();
  } else if (key == "training.attention_kernel") {
    return enum_spellings<AttentionKernel>();
  } else if (key == "parallel.cp_kind") {
    return enum_spellings<ContextParallelKind>();
  } else if (key == "parallel.ep_dispatcher") {
    return enum_spellings<ExpertDispatcher>();
  } else if (key == "parallel.moe_grouped_gemm") {
    return enum_spellings<MoeGroupedGemm>();
  } else if (key == "precision" && base.is_training()) {
    std::vector<std::string> words;
    for (DataType t : {DataType::fp32, DataType::tf32, DataType::fp16, DataType::bf16, DataType::fp8}) {
      if (base.system.gpu.supports(t)) words.emplace_back(to_string(t));
    }
    return words;
  }
  return texts(out);
}

struct Quantity {
  double value = 0.0;
  bool has_unit = false;
  Dimension dimension = Dimension::size;
  bool integral = false;
};

// A range end or step: a plain number, or a quantity with a unit (any dimension).
std::optional<Quantity> read_range_number(DiagnosticSink& sink, const YamlValue& v) {
  if (!v.node.IsScalar()) {
    sink.error(v.where, v.path, "expected a number or a quantity with a unit, found " + describe_node(v.node));
    return std::nullopt;
  }
  const std::string& s = v.node.Scalar();
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(value)) {
    return Quantity{value, false, Dimension::size, value == std::floor(value)};
  }
  for (Dimension d : {Dimension::size, Dimension::time, Dimension::bandwidth, Dimension::flop_rate, Dimension::flops,
                      Dimension::frequency, Dimension::power}) {
    const QuantityParse q = parse_quantity(s, d);
    if (q.ok()) return Quantity{q.value, true, d, false};
  }
  sink.error(v.where, v.path, "expected a number or a quantity with a unit (e.g. 8, \"400 Gb/s\"), found '" + s + "'");
  return std::nullopt;
}

// {from, to, step} or {from, to, factor}.
std::vector<std::string> read_range(DiagnosticSink& sink, const YamlValue& v) {
  const MapReader r(sink, v.node, v.path, v.where, {"from", "to", "step", "factor"});
  const std::size_t before = sink.error_count();
  if (!r.has("from")) r.missing("from", "the first value");
  if (!r.has("to")) r.missing("to", "the last value (inclusive)");
  if (r.has("step") == r.has("factor")) {
    sink.error(v.where, v.path, "a range needs exactly one of 'step' (add) or 'factor' (multiply)");
  }
  if (sink.error_count() != before) return {};
  const auto from = read_range_number(sink, *r.get("from"));
  const auto to = read_range_number(sink, *r.get("to"));
  const bool additive = r.has("step");
  const auto by = read_range_number(sink, *r.get(additive ? "step" : "factor"));
  if (!from || !to || !by) return {};
  const std::string by_path = r.path_of(additive ? "step" : "factor");
  if (from->has_unit != to->has_unit || (from->has_unit && from->dimension != to->dimension)) {
    sink.error_at(r.path_of("to"), "'from' and 'to' must be of the same kind (both plain numbers, or both " +
                                       std::string(from->has_unit ? dimension_name(from->dimension) : "with a unit") + ")");
    return {};
  }
  if (additive && (by->has_unit != from->has_unit || (by->has_unit && by->dimension != from->dimension))) {
    sink.error_at(by_path, "'step' must be of the same kind as 'from' and 'to'");
    return {};
  }
  if (!additive && by->has_unit) {
    sink.error_at(by_path, "'factor' is a plain number (a ratio), e.g. 2");
    return {};
  }
  if (additive ? by->value <= 0.0 : by->value <= 1.0) {
    sink.error_at(by_path, additive ? "'step' must be positive" : "'factor' must be greater than 1");
    return {};
  }
  if (to->value < from->value) {
    sink.error_at(r.path_of("to"), "'to' is below 'from': the range is empty");
    return {};
  }
  if (!additive && from->value <= 0.0) {
    sink.error_at(r.path_of("from"), "a range with a factor needs a positive 'from'");
    return {};
  }
  const bool integral = !from->has_unit && from->integral && by->integral;
  std::vector<std::string> out;
  const double limit = to->value * (1.0 + 1e-12);
  double value = from->value;
  for (std::size_t i = 0; value <= limit; ++i) {
    if (out.size() >= kMaxAxisValues) {
      sink.error(v.where, v.path, "the range has more than " + std::to_string(kMaxAxisValues) + " values");
      return {};
    }
    if (integral) {
      out.push_back(std::to_string(std::llround(value)));
    } else if (from->has_unit) {
      out.push_back("\"" + format_quantity(value, from->dimension) + "\"");
    } else {
      out.push_back(format_number(value));
    }
    value = additive ? from->value + by->value * static_cast<double>(i + 1) : value * by->value;
  }
  return out;
}

struct BaseDocument {
  YAML::Node node;
  std::string source;
  bool inline_mapping = false;
  std::string text;  // the file's text (not for an inline mapping)
};

std::optional<BaseDocument> read_base(DiagnosticSink& sink, const YamlValue& v, const std::string& sweep_source,
                                      const Catalog& catalog) {
  if (v.node.IsMap()) return BaseDocument{v.node, sweep_source, true, {}};
  const auto name = read_string(sink, v);
  if (!name) return std::nullopt;
  std::filesystem::path path(*name);
  if (path.is_relative() && sweep_source != "<input>") path = std::filesystem::path(sweep_source).parent_path() / path;
  std::error_code ec;
  std::string text;
  std::string source;
  if (std::filesystem::is_regular_file(path, ec)) {
    text = read_text_file(path);
    source = path.lexically_normal().string();
  } else if (const CatalogScenario* s = catalog.find_scenario(*name)) {
    text = s->text;
    source = s->source;
  } else {
    const std::string near = closest_match(*name, catalog.scenario_names());
    sink.error(v.where, v.path, "'" + *name + "' is neither a scenario file (relative to the sweep file) nor a catalog scenario",
               near.empty() ? "" : "did you mean '" + near + "'?");
    return std::nullopt;
  }
  try {
    return BaseDocument{YAML::Load(text), source, false, text};
  } catch (const YAML::Exception& e) {
    throw InputError({Diagnostic{source, e.mark.line + 1, e.mark.column + 1, "", "not valid YAML: " + e.msg, ""}});
  }
}

bool changes_dp(const std::string& key) {
  return key == "parallel.tp" || key == "parallel.pp" || key == "parallel.cp" || key == "system.gpus" ||
         key == "parallel" || key == "system";
}

// Removes parallel.dp from a scenario document; true when there was one.
bool remove_dp(YAML::Node& root) {
  if (!root.IsMap() || !root["parallel"] || !root["parallel"].IsMap()) return false;
  YAML::Node parallel = root["parallel"];
  if (!parallel["dp"]) return false;
  parallel.remove("dp");
  return true;
}

}  // namespace

std::uint64_t fnv1a(std::string_view text, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::uint64_t SweepFile::point_count() const {
  std::uint64_t n = 1;
  for (const auto& a : axes) n *= a.values.size();
  return n;
}

void SweepFile::decode(std::uint64_t point, std::span<std::size_t> value_index) const {
  for (std::size_t i = axes.size(); i-- > 0;) {
    const std::uint64_t size = axes[i].values.size();
    value_index[i] = static_cast<std::size_t>(point % size);
    point /= size;
  }
}

std::vector<Override> SweepFile::overrides_of(std::uint64_t point) const {
  std::vector<std::size_t> index(axes.size());
  decode(point, index);
  std::vector<Override> out;
  out.reserve(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) out.push_back({axes[i].key, axes[i].values[index[i]]});
  return out;
}

SweepFile parse_sweep(std::string_view text, const std::string& source, const Catalog& catalog) {
  DiagnosticSink sink(source);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    sink.error({source, e.mark.line + 1, e.mark.column + 1}, "", "not valid YAML: " + e.msg);
    sink.throw_if_errors();
  }
  const std::string expected = "a sweep file needs schema_version: 1, base and axes (see simulator/sweep_file.h)";
  if (root.IsNull()) {
    sink.error({source, 0, 0}, "", "the file is empty; " + expected);
    sink.throw_if_errors();
  }
  const MapReader top(sink, root, "", sink.start_of_file(),
                      {"schema_version", "name", "description", "base", "axes", "constraints", "objectives", "gpu_hour_usd"});
  if (!top.is_mapping()) sink.throw_if_errors();

  SweepFile sweep;
  sweep.source = source;
  sweep.name = std::filesystem::path(source).stem().string();
  if (const auto v = top.get("schema_version")) {
    if (!v->node.IsScalar() || v->node.Scalar() != std::to_string(kSchemaVersion)) {
      sink.error(v->where, v->path, "unsupported schema_version " + describe_node(v->node) + "; this stepcast reads schema_version 1");
    }
  } else {
    top.missing("schema_version", "1");
  }
  if (auto name = top.string("name")) sweep.name = *name;
  (void)top.string("description");
  if (auto price = top.real("gpu_hour_usd", {0.0, false})) sweep.gpu_hour_usd = *price;

  // --- Axes (read before the base, so the base's dp can be dropped when they derive it) ---------
  std::vector<YAML::Node> axis_value_nodes;  // per axis: the list (for value locations)
  std::vector<bool> axis_is_list;
  bool dp_axis = false;
  bool derives_dp = false;
  if (const auto axes = top.get("axes")) {
    if (!axes->node.IsMap()) {
      sink.error(axes->where, "axes", "expected a mapping of scenario keys to values (e.g. parallel.tp: [4, 8]), found " +
                                          describe_node(axes->node));
    } else {
      for (auto it = axes->node.begin(); it != axes->node.end(); ++it) {
        const Location key_where = sink.location_of(it->first, axes->where);
        if (!it->first.IsScalar() || it->first.Scalar().empty()) {
          sink.error(key_where, "axes", "expected a scenario key path such as parallel.tp, found " + describe_node(it->first));
          continue;
        }
        SweepAxis axis;
        axis.key = it->first.Scalar();
        axis.where = key_where;
        const std::string path = "axes." + axis.key;
        const YamlValue value{it->second, path, sink.location_of(it->second, key_where)};
        bool duplicate = false;
        for (const auto& other : sweep.axes) duplicate = duplicate || other.key == axis.key;
        if (duplicate) {
          sink.error(key_where, path, "duplicate axis '" + axis.key + "'");
          continue;
        }
        YAML::Node list;
        if (value.node.IsSequence()) {
          if (value.node.size() == 0) sink.error(value.where, path, "an axis needs at least one value");
          for (const auto& element : value.node) {
            axis.values.push_back(element.IsScalar() && element.Tag() != "!" ? element.Scalar() : emit(element, true));
          }
          list = value.node;
        } else if (value.node.IsMap()) {
          axis.values = read_range(sink, value);
        } else if (value.node.IsScalar() && value.node.Scalar() == "auto") {
          axis.values = {"auto"};  // resolved against the base below
        } else {
          sink.error(value.where, path, "expected a list of values, a range {from, to, step|factor}, or auto; found " +
                                            describe_node(value.node));
        }
        dp_axis = dp_axis || axis.key == "parallel.dp";
        derives_dp = derives_dp || changes_dp(axis.key);
        axis_value_nodes.push_back(list);
        axis_is_list.push_back(value.node.IsSequence());
        sweep.axes.push_back(std::move(axis));
      }
    }
  } else {
    top.missing("axes", "a mapping of scenario keys to the values to sweep");
  }

  // --- Constraints and objectives (names checked against the field table) ----------------------
  const FieldTable& fields = FieldTable::training();
  const ExprResolver resolver = fields.resolver();
  const auto expression_nodes = [&](const YamlValue& v, const char* what) {
    std::vector<YamlValue> out;
    if (v.node.IsScalar()) {
      out.push_back(v);
    } else if (v.node.IsSequence()) {
      for (std::size_t i = 0; i < v.node.size(); ++i) {
        out.push_back({v.node[i], v.path, sink.location_of(v.node[i], v.where)});
      }
    } else {
      sink.error(v.where, v.path, std::string("expected a list of ") + what + ", found " + describe_node(v.node));
    }
    return out;
  };
  if (const auto c = top.get("constraints")) {
    for (const YamlValue& item : expression_nodes(*c, "conditions such as 'parallel.tp <= 8'")) {
      if (!item.node.IsScalar()) {
        sink.error(item.where, item.path, "expected a condition such as 'memory_per_gpu_bytes.peak <= 70 GiB', found " +
                                              describe_node(item.node));
        continue;
      }
      ExprError error;
      auto e = Expression::parse(item.node.Scalar(), resolver, error);
      if (!e) {
        sink.error(inside(sink, item.node, item.where, error.column), item.path, error.message, error.suggestion);
        continue;
      }
      if (e->type() != ExprType::truth) {
        sink.error(item.where, item.path, "a constraint must be a true/false condition (e.g. 'parallel.tp <= 8'), not a number");
        continue;
      }
      const FieldPhase phase = fields.phase_of(*e);
      sweep.constraints.push_back({std::move(*e), phase, item.where});
    }
  }
  if (const auto o = top.get("objectives")) {
    for (const YamlValue& item : expression_nodes(*o, "objectives such as 'min step_time_s'")) {
      if (!item.node.IsScalar()) {
        sink.error(item.where, item.path, "expected an objective such as 'min step_time_s', found " + describe_node(item.node));
        continue;
      }
      ExprError error;
      auto objective = parse_objective(item.node.Scalar(), resolver, error);
      if (!objective) {
        sink.error(inside(sink, item.node, item.where, error.column), item.path, error.message, error.suggestion);
        continue;
      }
      const int cost_slot = fields.slot_of("cost_per_million_tokens_usd");
      const auto& slots = objective->expression.slots();
      if (sweep.gpu_hour_usd <= 0.0 && std::find(slots.begin(), slots.end(), cost_slot) != slots.end()) {
        sink.error(item.where, item.path, "cost_per_million_tokens_usd needs a price: add gpu_hour_usd (e.g. gpu_hour_usd: 2.5)");
        continue;
      }
      sweep.objectives.push_back(std::move(*objective));
    }
    if (sweep.objectives.size() > kMaxObjectives) {
      sink.error(o->where, o->path, "at most " + std::to_string(kMaxObjectives) + " objectives");
    }
  }
  if (sweep.objectives.empty() && !top.has("objectives")) {
    ExprError unused;
    sweep.objectives.push_back(*parse_objective("min step_time_s", resolver, unused));
  }

  // --- Base -------------------------------------------------------------------------------------
  std::optional<BaseDocument> base;
  if (const auto b = top.get("base")) {
    base = read_base(sink, *b, source, catalog);
  } else {
    top.missing("base", "a catalog scenario name, a scenario file, or an inline scenario mapping");
  }
  sink.throw_if_errors();

  // The base must load on its own, with its own diagnostics (an inline base at the sweep file's
  // lines); then without its dp when the axes derive dp.
  YAML::Node base_root = YAML::Clone(base->node);
  sweep.base_source = base->source;
  if (base->inline_mapping) {
    sweep.base = parse_scenario_node(base->node, source, catalog);
  } else {
    sweep.base = parse_scenario(base->text, base->source, {}, catalog);
  }
  if (derives_dp && !dp_axis) sweep.base_dp_dropped = remove_dp(base_root);
  if (base->inline_mapping || sweep.base_dp_dropped) {
    sweep.base_text = emit(base_root, false) + "\n";
    try {
      sweep.base = parse_scenario(sweep.base_text, sweep.base_source, {}, catalog);
    } catch (const InputError& e) {
      throw InputError(std::string(e.what()) + "\n(" + sweep.base_source + " as the sweep applies it: " +
                       (sweep.base_dp_dropped ? "without its parallel.dp, which the axes re-derive" : "written inline") + ")");
    }
  } else {
    sweep.base_text = base->text;
  }
  if (!sweep.base.is_training()) {
    throw InputError({Diagnostic{source, top.get("base")->where.line, top.get("base")->where.column, "base",
                                 "sweep files cover training scenarios only so far; for a serving scenario, `stepcast search` "
                                 "explores tp, precision, batch limits and replicas",
                                 ""}});
  }

  // --- Axis values: `auto` resolved, every value validated once as an override on the base -----
  for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
    SweepAxis& axis = sweep.axes[a];
    const std::string path = "axes." + axis.key;
    if (axis.values.size() == 1 && axis.values.front() == "auto" && !axis_is_list[a]) {
      axis.values = auto_values(axis.key, sweep.base);
      if (axis.values.empty()) {
        sink.error(axis.where, path, "auto needs a key with a known set of valid values (parallel.*, "
                                     "training.micro_batch, precision); give a list or a range");
        continue;
      }
    }
    // A range's values are all alike: checking its ends checks them all. A list's each.
    std::vector<std::size_t> to_check;
    if (axis_is_list[a]) {
      for (std::size_t i = 0; i < axis.values.size(); ++i) to_check.push_back(i);
    } else if (!axis.values.empty()) {
      to_check = {0, axis.values.size() - 1};
    }
    // Reading errors of each checked value; when every value fails the same way the key itself is
    // wrong (unknown, or inside a plain value), reported once at the axis.
    std::vector<std::vector<Diagnostic>> problems;
    for (std::size_t i : to_check) {
      const Override o{axis.key, axis.values[i]};
      std::vector<Diagnostic> found;
      try {
        (void)parse_scenario(sweep.base_text, sweep.base_source, std::span<const Override>(&o, 1), catalog);
      } catch (const InputError& e) {
        for (const Diagnostic& d : e.diagnostics()) {
          if (!d.consistency) found.push_back(d);  // inconsistent points are skipped, not errors
        }
      }
      problems.push_back(std::move(found));
    }
    const auto same = [](const std::vector<Diagnostic>& x, const std::vector<Diagnostic>& y) {
      if (x.size() != y.size()) return false;
      for (std::size_t k = 0; k < x.size(); ++k) {
        if (x[k].message != y[k].message || x[k].key_path != y[k].key_path) return false;
      }
      return true;
    };
    const bool all_alike = !problems.empty() && !problems.front().empty() &&
                           std::all_of(problems.begin(), problems.end(), [&](const auto& p) { return same(p, problems.front()); });
    for (std::size_t c = 0; c < problems.size(); ++c) {
      if (all_alike && c > 0) break;
      const std::size_t i = to_check[c];
      const Location where = axis_is_list[a] && !all_alike ? sink.location_of(axis_value_nodes[a][i], axis.where) : axis.where;
      for (const Diagnostic& d : problems[c]) {
        sink.error(where, path, (d.key_path != axis.key && !d.key_path.empty() ? d.key_path + ": " : "") + d.message,
                   d.suggestion);
      }
    }
  }
  double points = 1.0;
  for (const auto& a : sweep.axes) points *= static_cast<double>(a.values.size());
  if (points > kMaxPoints) {
    sink.error(top.get("axes")->where, "axes", "the grid has " + format_number(points) + " points, more than a sweep can index");
  }
  sink.throw_if_errors();

  std::string identity = std::string(text) + '\0' + sweep.base_text;
  for (const auto& a : sweep.axes) {
    identity += '\0' + a.key;
    for (const auto& v : a.values) identity += '\1' + v;
  }
  sweep.fingerprint = fnv1a(identity);
  return sweep;
}

SweepFile load_sweep_file(const std::string& path, const Catalog& catalog) {
  return parse_sweep(read_text_file(path), path, catalog);
}

}  // namespace stepcast
