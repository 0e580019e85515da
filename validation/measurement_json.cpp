#include "validation/measurement_json.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace stepcast {

namespace {

// "file:line:col: error: key.path: message", the form of simulator/diagnostics.h.
std::string format_error(const std::string& source, int line, int column, const std::string& key_path,
                         const std::string& message) {
  std::string text = source;
  if (line > 0) {
    text.append(":").append(std::to_string(line)).append(":").append(std::to_string(column));
  }
  text.append(": error: ");
  if (!key_path.empty()) text.append(key_path).append(": ");
  text.append(message);
  return text;
}

}  // namespace

MeasurementFileError::MeasurementFileError(std::string source, int line, int column, std::string key_path,
                                           std::string message)
    : std::runtime_error(format_error(source, line, column, key_path, message)),
      m_source(std::move(source)),
      m_line(line),
      m_column(column),
      m_key_path(std::move(key_path)),
      m_message(std::move(message)) {}

std::string_view to_string(MeasurementKind kind) {
  switch (kind) {
    case MeasurementKind::gemm: return "gemm";
    case MeasurementKind::attention: return "attention";
    case MeasurementKind::elementwise: return "elementwise";
    case MeasurementKind::memory: return "memory";
    case MeasurementKind::collective: return "collective";
    case MeasurementKind::selftest: return "selftest";
  }
  return "?";
}

std::optional<MeasurementKind> parse_measurement_kind(std::string_view text) {
  for (MeasurementKind k : {MeasurementKind::gemm, MeasurementKind::attention, MeasurementKind::elementwise,
                            MeasurementKind::memory, MeasurementKind::collective, MeasurementKind::selftest}) {
    if (to_string(k) == text) return k;
  }
  return std::nullopt;
}

std::string_view to_string(AttentionDirection d) {
  switch (d) {
    case AttentionDirection::forward: return "forward";
    case AttentionDirection::backward: return "backward";
    case AttentionDirection::decode: return "decode";
  }
  return "?";
}

// --- Writing ---------------------------------------------------------------------------------

namespace {

json::Value optional_number(const std::optional<double>& v) { return v ? json::Value(*v) : json::Value(); }

json::Value string_array(const std::vector<std::string>& strings) {
  json::Value a = json::Value::array();
  for (const auto& s : strings) a.push_back(s);
  return a;
}

json::Value inputs_to_json(const MeasurementInputs& inputs) {
  json::Value o = json::Value::object();
  if (const auto* g = std::get_if<GemmInputs>(&inputs)) {
    o.set("precision", to_string(g->precision));
    o.set("a_type", g->a_type);
    o.set("b_type", g->b_type);
    o.set("c_type", g->c_type);
    o.set("compute_type", g->compute_type);
    o.set("layout", g->layout);
    o.set("m", g->m);
    o.set("n", g->n);
    o.set("k", g->k);
    o.set("batch", g->batch);
    o.set("groups", g->groups);
    o.set("role", g->role);
  } else if (const auto* a = std::get_if<AttentionInputs>(&inputs)) {
    o.set("impl", a->impl);
    o.set("direction", to_string(a->direction));
    o.set("dtype", to_string(a->dtype));
    o.set("batch", a->batch);
    o.set("heads", a->heads);
    o.set("kv_heads", a->kv_heads);
    o.set("seq_q", a->seq_q);
    o.set("seq_kv", a->seq_kv);
    o.set("head_dim", a->head_dim);
    o.set("causal", a->causal);
    o.set("kv_block", a->kv_block);
  } else if (const auto* e = std::get_if<ElementwiseInputs>(&inputs)) {
    o.set("op", e->op);
    o.set("dtype", to_string(e->dtype));
    o.set("rows", e->rows);
    o.set("cols", e->cols);
  } else if (const auto* m = std::get_if<MemoryInputs>(&inputs)) {
    o.set("op", m->op);
    o.set("dtype", to_string(m->dtype));
    o.set("elements", m->elements);
  } else if (const auto* c = std::get_if<CollectiveInputs>(&inputs)) {
    o.set("op", to_string(c->op));
    o.set("dtype", c->dtype);
    o.set("redop", c->redop);
    o.set("size_bytes", c->size_bytes);
    o.set("count", c->count);
    o.set("ranks", c->ranks);
    o.set("nodes", c->nodes);
    o.set("ranks_per_node", c->ranks_per_node);
    o.set("in_place", c->in_place);
    o.set("root", c->root);
  } else if (const auto* s = std::get_if<SelftestInputs>(&inputs)) {
    o.set("test", s->test);
    o.set("expected", s->expected);
    o.set("measured", s->measured);
    o.set("limit", s->limit);
    o.set("passed", s->passed);
  }
  return o;
}

json::Value optional_name(const std::string& name) { return name.empty() ? json::Value() : json::Value(name); }

json::Value optional_integer(const std::optional<std::int64_t>& v) { return v ? json::Value(*v) : json::Value(); }

json::Value algorithm_to_json(const GemmAlgorithm& a) {
  json::Value o = json::Value::object();
  o.set("library", a.library);
  o.set("id", a.id);
  o.set("tile_id", a.tile_id);
  o.set("tile", optional_name(a.tile));
  o.set("stages_id", a.stages_id);
  o.set("stages", optional_name(a.stages));
  o.set("splitk_num", a.splitk_num);
  o.set("reduction_scheme", a.reduction_scheme);
  o.set("cta_swizzling", a.cta_swizzling);
  o.set("custom_option", a.custom_option);
  o.set("inner_shape_id", optional_integer(a.inner_shape_id));
  o.set("inner_shape", optional_name(a.inner_shape));
  o.set("cluster_shape_id", optional_integer(a.cluster_shape_id));
  o.set("cluster_shape", optional_name(a.cluster_shape));
  o.set("heuristic_rank", a.heuristic_rank);
  o.set("heuristic_results", a.heuristic_results);
  o.set("workspace_bytes", a.workspace_bytes);
  o.set("waves_count", optional_number(a.waves_count));
  return o;
}

json::Value clocks_to_json(const ClockState& c) {
  json::Value o = json::Value::object();
  o.set("source", c.source);
  o.set("note", c.note);
  o.set("sm_mhz", optional_number(c.sm_mhz));
  o.set("memory_mhz", optional_number(c.memory_mhz));
  o.set("max_sm_mhz", optional_number(c.max_sm_mhz));
  o.set("max_memory_mhz", optional_number(c.max_memory_mhz));
  o.set("application_sm_mhz", optional_number(c.application_sm_mhz));
  o.set("temperature_c", optional_number(c.temperature_c));
  o.set("power_limit_w", optional_number(c.power_limit_w));
  o.set("throttle_reasons", string_array(c.throttle_reasons));
  return o;
}

json::Value device_to_json(const DeviceInfo& d) {
  json::Value o = json::Value::object();
  o.set("index", d.index);
  o.set("name", d.name);
  o.set("catalog_gpu", d.catalog_gpu ? json::Value(*d.catalog_gpu) : json::Value());
  o.set("uuid", d.uuid);
  o.set("pci_bus_id", d.pci_bus_id);
  o.set("compute_capability", d.compute_capability);
  o.set("sm_count", d.sm_count);
  o.set("memory_bytes", d.memory_bytes);
  o.set("l2_cache_bytes", d.l2_cache_bytes);
  o.set("memory_bus_width_bits", d.memory_bus_width_bits);
  o.set("max_sm_clock_mhz", d.max_sm_clock_mhz);
  o.set("max_memory_clock_mhz", d.max_memory_clock_mhz);
  o.set("theoretical_memory_bandwidth_bytes_per_s", d.theoretical_memory_bandwidth_bytes_per_s);
  o.set("ecc_enabled", d.ecc_enabled ? json::Value(*d.ecc_enabled) : json::Value());
  o.set("clocks_at_start", clocks_to_json(d.clocks_at_start));
  o.set("clocks_at_end", clocks_to_json(d.clocks_at_end));
  return o;
}

json::Value method_to_json(const MeasurementMethod& m) {
  json::Value stopping = json::Value::object();
  stopping.set("max_noise", m.stopping.max_noise);
  stopping.set("min_time_s", m.stopping.min_time.value());
  stopping.set("min_samples", m.stopping.min_samples);
  stopping.set("timeout_s", m.stopping.timeout.value());
  stopping.set("max_samples", m.stopping.max_samples);
  stopping.set("plateau_window", m.stopping.plateau_window);
  stopping.set("plateau_check_every", m.stopping.plateau_check_every);
  stopping.set("plateau_tolerance", m.stopping.plateau_tolerance);
  json::Value o = json::Value::object();
  o.set("l2_flush", m.l2_flush);
  o.set("blocking_kernel", m.blocking_kernel);
  o.set("warmup_runs", m.warmup_runs);
  o.set("stopping", std::move(stopping));
  o.set("throttle_threshold", m.throttle_threshold);
  o.set("throttle_recovery_delay_s", m.throttle_recovery_delay_s);
  return o;
}

json::Value provenance_to_json(const Provenance& p) {
  json::Value o = json::Value::object();
  o.set("tool", p.tool);
  o.set("tool_version", p.tool_version);
  o.set("git_sha", p.git_sha);
  o.set("argv", string_array(p.argv));
  o.set("command", p.command);
  o.set("started_utc", p.started_utc);
  o.set("finished_utc", p.finished_utc);
  o.set("host", p.host);
  json::Value versions = json::Value::object();
  versions.set("driver", p.driver_version ? json::Value(*p.driver_version) : json::Value());
  versions.set("cuda_driver_api", p.cuda_driver_api);
  versions.set("cuda_runtime", p.cuda_runtime);
  versions.set("cublas", p.cublas);
  versions.set("cudnn", p.cudnn ? json::Value(*p.cudnn) : json::Value());
  versions.set("nccl", p.nccl ? json::Value(*p.nccl) : json::Value());
  o.set("versions", std::move(versions));
  o.set("cuda_architectures", p.cuda_architectures);
  o.set("ranks", p.ranks);
  o.set("nodes", p.nodes);
  json::Value devices = json::Value::array();
  for (const auto& d : p.devices) devices.push_back(device_to_json(d));
  o.set("devices", std::move(devices));
  o.set("method", method_to_json(p.method));
  return o;
}

}  // namespace

json::Value to_json(const Measurement& r) {
  json::Value o = json::Value::object();
  o.set("kind", to_string(r.kind()));
  o.set("name", r.name);
  o.set("device", r.device);
  o.set("inputs", inputs_to_json(r.inputs));
  o.set("flops", r.flops.value());
  o.set("bytes", r.bytes.value());
  json::Value time = json::Value::object();
  time.set("median_s", r.time.median_s);
  time.set("min_s", r.time.min_s);
  time.set("max_s", r.time.max_s);
  time.set("mean_s", r.time.mean_s);
  time.set("p10_s", r.time.p10_s);
  time.set("p90_s", r.time.p90_s);
  time.set("rel_stdev", r.time.rel_stdev);
  time.set("samples", r.time.samples);
  o.set("time", std::move(time));
  // Derived rates, for people reading the file; calibration recomputes them from the above.
  json::Value achieved = json::Value::object();
  achieved.set("flop_rate", r.time.median_s > 0.0 ? json::Value(r.flops.value() / r.time.median_s) : json::Value());
  achieved.set("bytes_per_s", r.time.median_s > 0.0 ? json::Value(r.bytes.value() / r.time.median_s) : json::Value());
  o.set("achieved", std::move(achieved));
  json::Value method = json::Value::object();
  method.set("mode", r.method.mode);
  method.set("batch", r.method.batch);
  method.set("stop_reason", to_string(r.method.stop_reason));
  method.set("wall_s", r.method.wall_s);
  method.set("throttled_discarded", r.method.throttled_discarded);
  method.set("sm_clock_mhz", optional_number(r.method.sm_clock_mhz));
  o.set("method", std::move(method));
  json::Value check = json::Value::object();
  check.set("passed", r.check.passed);
  check.set("method", r.check.method);
  check.set("checked", r.check.checked);
  check.set("max_abs_error", r.check.max_abs_error);
  check.set("max_rel_error", r.check.max_rel_error);
  check.set("tolerance", r.check.tolerance);
  o.set("check", std::move(check));
  if (r.collective) {
    json::Value c = json::Value::object();
    c.set("algbw_bytes_per_s", r.collective->algbw_bytes_per_s);
    c.set("busbw_bytes_per_s", r.collective->busbw_bytes_per_s);
    c.set("bus_factor", r.collective->bus_factor);
    c.set("nccl_estimate_s", optional_number(r.collective->nccl_estimate_s));
    o.set("collective", std::move(c));
  }
  if (r.algorithm) o.set("algorithm", algorithm_to_json(*r.algorithm));
  o.set("notes", string_array(r.notes));
  return o;
}

json::Value to_json(const MeasurementFile& file) {
  json::Value o = json::Value::object();
  o.set("schema", kMeasurementSchemaName);
  o.set("schema_version", file.schema_version);
  o.set("complete", file.complete);
  o.set("provenance", provenance_to_json(file.provenance));
  json::Value records = json::Value::array();
  for (const auto& r : file.records) records.push_back(to_json(r));
  o.set("records", std::move(records));
  json::Value skipped = json::Value::array();
  for (const auto& s : file.skipped) {
    json::Value e = json::Value::object();
    e.set("kind", s.kind);
    e.set("name", s.name);
    e.set("reason", s.reason);
    skipped.push_back(std::move(e));
  }
  o.set("skipped", std::move(skipped));
  return o;
}

std::string write_measurement_text(const MeasurementFile& file) { return json::write(to_json(file), 2); }

void write_measurement_file(const std::filesystem::path& path, const MeasurementFile& file) {
  const std::string text = write_measurement_text(file);
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    out << text;
    out.close();
    if (!out) throw std::runtime_error("error while writing " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
}

// --- Reading ---------------------------------------------------------------------------------

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// Reads one JSON object, remembering which keys were used so unknown keys can be reported.
class ObjectReader;

class FileReader {
 public:
  explicit FileReader(std::string source) : m_source(std::move(source)) {}

  [[noreturn]] void fail(const json::Value& at, const std::string& path, const std::string& message) const {
    throw MeasurementFileError(m_source, at.line(), at.column(), path, message);
  }

  ObjectReader object(const json::Value& v, const std::string& path) const;

  double number(const json::Value& v, const std::string& path) const {
    if (!v.is_number()) fail(v, path, "expected a number, found " + std::string(json::to_string(v.type())));
    return v.as_number();
  }
  double non_negative(const json::Value& v, const std::string& path) const {
    const double d = number(v, path);
    if (d < 0.0) fail(v, path, "expected a number >= 0, found " + json::write(v, -1));
    return d;
  }
  double positive(const json::Value& v, const std::string& path) const {
    const double d = number(v, path);
    if (!(d > 0.0)) fail(v, path, "expected a number > 0, found " + json::write(v, -1));
    return d;
  }
  std::int64_t integer(const json::Value& v, const std::string& path, std::int64_t min_value) const {
    const double d = number(v, path);
    if (d != std::trunc(d) || std::fabs(d) > 9007199254740992.0) fail(v, path, "expected an integer");
    if (d < static_cast<double>(min_value)) {
      fail(v, path, "expected an integer >= " + std::to_string(min_value) + ", found " + json::write(v, -1));
    }
    return static_cast<std::int64_t>(d);
  }
  int small_integer(const json::Value& v, const std::string& path, int min_value) const {
    const std::int64_t i = integer(v, path, min_value);
    if (i > 1'000'000'000) fail(v, path, "integer too large");
    return static_cast<int>(i);
  }
  bool boolean(const json::Value& v, const std::string& path) const {
    if (!v.is_bool()) fail(v, path, "expected true or false, found " + std::string(json::to_string(v.type())));
    return v.as_bool();
  }
  const std::string& string(const json::Value& v, const std::string& path) const {
    if (!v.is_string()) fail(v, path, "expected a string, found " + std::string(json::to_string(v.type())));
    return v.as_string();
  }
  std::string one_of(const json::Value& v, const std::string& path, std::initializer_list<std::string_view> choices) const {
    const std::string& s = string(v, path);
    for (std::string_view c : choices) {
      if (s == c) return s;
    }
    std::string list;
    for (std::string_view c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
    fail(v, path, "'" + s + "' is not one of: " + list);
  }
  std::optional<double> optional_number(const json::Value& v, const std::string& path) const {
    if (v.is_null()) return std::nullopt;
    return number(v, path);
  }
  std::optional<std::string> optional_string(const json::Value& v, const std::string& path) const {
    if (v.is_null()) return std::nullopt;
    return string(v, path);
  }
  std::vector<std::string> strings(const json::Value& v, const std::string& path) const {
    if (!v.is_array()) fail(v, path, "expected an array of strings, found " + std::string(json::to_string(v.type())));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.items().size(); ++i) {
      out.push_back(string(v.items()[i], path + "[" + std::to_string(i) + "]"));
    }
    return out;
  }
  DataType datatype(const json::Value& v, const std::string& path, std::initializer_list<DataType> allowed) const {
    const std::string& s = string(v, path);
    const auto t = parse_datatype(s);
    std::string list;
    for (DataType a : allowed) {
      if (t == a) return a;
      list += (list.empty() ? "" : ", ") + std::string(to_string(a));
    }
    fail(v, path, "'" + s + "' is not one of: " + list);
  }

  const std::string& source() const { return m_source; }

 private:
  std::string m_source;
};

class ObjectReader {
 public:
  ObjectReader(const FileReader& file, const json::Value& v, std::string path)
      : m_file(file), m_value(v), m_path(std::move(path)) {
    if (!v.is_object()) {
      file.fail(v, m_path, "expected an object, found " + std::string(json::to_string(v.type())));
    }
  }

  [[nodiscard]] std::string path_of(std::string_view key) const {
    return m_path.empty() ? std::string(key) : m_path + "." + std::string(key);
  }

  const json::Value& required(std::string_view key) {
    m_used.insert(std::string(key));
    const json::Value* v = m_value.find(key);
    if (v == nullptr) {
      std::string message = "missing required key '" + std::string(key) + "'";
      for (const json::Member& m : m_value.members()) {
        if (m_value.find(m.key) != nullptr && edit_distance(m.key, std::string(key)) <= 2) {
          message += " (is '" + m.key + "' a typo for it?)";
          break;
        }
      }
      m_file.fail(m_value, m_path, message);
    }
    return *v;
  }

  const json::Value* optional(std::string_view key) {
    m_used.insert(std::string(key));
    return m_value.find(key);
  }

  // The value of a required key, read and checked as FileReader's function of the same name
  // reads it, and reported at the key's path.
  ObjectReader object(std::string_view key) { return m_file.object(required(key), path_of(key)); }
  double non_negative(std::string_view key) { return m_file.non_negative(required(key), path_of(key)); }
  double positive(std::string_view key) { return m_file.positive(required(key), path_of(key)); }
  std::int64_t integer(std::string_view key, std::int64_t min_value) {
    return m_file.integer(required(key), path_of(key), min_value);
  }
  int small_integer(std::string_view key, int min_value) {
    return m_file.small_integer(required(key), path_of(key), min_value);
  }
  bool boolean(std::string_view key) { return m_file.boolean(required(key), path_of(key)); }
  const std::string& string(std::string_view key) { return m_file.string(required(key), path_of(key)); }
  std::string one_of(std::string_view key, std::initializer_list<std::string_view> choices) {
    return m_file.one_of(required(key), path_of(key), choices);
  }
  std::optional<double> optional_number(std::string_view key) {
    return m_file.optional_number(required(key), path_of(key));
  }
  std::optional<std::string> optional_string(std::string_view key) {
    return m_file.optional_string(required(key), path_of(key));
  }
  std::vector<std::string> strings(std::string_view key) { return m_file.strings(required(key), path_of(key)); }
  // null, or an integer >= min_value.
  std::optional<std::int64_t> optional_integer(std::string_view key, std::int64_t min_value) {
    const json::Value& v = required(key);
    if (v.is_null()) return std::nullopt;
    return m_file.integer(v, path_of(key), min_value);
  }
  // null (written as ""), or a non-empty string.
  std::string optional_name(std::string_view key) {
    const json::Value& v = required(key);
    if (v.is_null()) return {};
    const std::string& s = m_file.string(v, path_of(key));
    if (s.empty()) m_file.fail(v, path_of(key), "expected a name or null, found an empty string");
    return s;
  }
  DataType datatype(std::string_view key, std::initializer_list<DataType> allowed) {
    return m_file.datatype(required(key), path_of(key), allowed);
  }

  // Every key of the object must have been read: unknown keys are errors, with a suggestion.
  void finish() const {
    for (const json::Member& m : m_value.members()) {
      if (m_used.count(m.key) != 0) continue;
      std::string best;
      std::size_t best_distance = 0;
      for (const std::string& known : m_used) {
        const std::size_t d = edit_distance(m.key, known);
        if (best.empty() || d < best_distance) {
          best = known;
          best_distance = d;
        }
      }
      std::string message = "unknown key '" + m.key + "'";
      if (!best.empty() && best_distance <= std::max<std::size_t>(2, m.key.size() / 3)) {
        message += "; did you mean '" + best + "'?";
      }
      m_file.fail(m.value, path_of(m.key), message);
    }
  }

  const json::Value& value() const { return m_value; }

 private:
  const FileReader& m_file;
  const json::Value& m_value;
  std::string m_path;
  std::set<std::string> m_used;
};

ObjectReader FileReader::object(const json::Value& v, const std::string& path) const { return {*this, v, path}; }

const std::initializer_list<DataType> kGemmPrecisions = {DataType::fp32, DataType::tf32, DataType::fp16,
                                                         DataType::bf16, DataType::fp8, DataType::int8};
const std::initializer_list<DataType> kHalfTypes = {DataType::fp16, DataType::bf16, DataType::fp32};

MeasurementInputs read_inputs(const FileReader& f, MeasurementKind kind, const json::Value& v, const std::string& path) {
  ObjectReader o = f.object(v, path);
  auto p = [&](std::string_view key) { return o.path_of(key); };
  MeasurementInputs result;
  switch (kind) {
    case MeasurementKind::gemm: {
      GemmInputs g;
      g.precision = o.datatype("precision", kGemmPrecisions);
      const std::initializer_list<std::string_view> formats = {"fp32", "fp16", "bf16", "e4m3", "e5m2", "int8", "int32"};
      g.a_type = o.one_of("a_type", formats);
      g.b_type = o.one_of("b_type", formats);
      g.c_type = o.one_of("c_type", formats);
      g.compute_type = o.one_of("compute_type", {"fp32", "tf32", "int32"});
      g.layout = o.one_of("layout", {"TN", "NN", "NT", "TT"});
      g.m = o.integer("m", 1);
      g.n = o.integer("n", 1);
      g.k = o.integer("k", 1);
      g.batch = o.integer("batch", 1);
      g.groups = o.integer("groups", 1);
      g.role = o.string("role");
      result = g;
      break;
    }
    case MeasurementKind::attention: {
      AttentionInputs a;
      a.impl = o.one_of("impl", {"cudnn_sdpa", "stepcast_flash", "stepcast_paged_decode"});
      const std::string dir = o.one_of("direction", {"forward", "backward", "decode"});
      a.direction = dir == "forward" ? AttentionDirection::forward
                    : dir == "backward" ? AttentionDirection::backward
                                        : AttentionDirection::decode;
      a.dtype = o.datatype("dtype", {DataType::fp16, DataType::bf16, DataType::fp8});
      a.batch = o.integer("batch", 1);
      a.heads = o.integer("heads", 1);
      a.kv_heads = o.integer("kv_heads", 1);
      a.seq_q = o.integer("seq_q", 1);
      a.seq_kv = o.integer("seq_kv", 1);
      a.head_dim = o.integer("head_dim", 1);
      a.causal = o.boolean("causal");
      a.kv_block = o.integer("kv_block", 0);
      if (a.heads % a.kv_heads != 0) f.fail(o.required("kv_heads"), p("kv_heads"), "heads must be a multiple of kv_heads");
      result = a;
      break;
    }
    case MeasurementKind::elementwise: {
      ElementwiseInputs e;
      e.op = o.one_of("op",
                      {"rmsnorm", "layernorm", "softmax", "swiglu", "gelu", "rope", "bias_dropout_add"});
      e.dtype = o.datatype("dtype", kHalfTypes);
      e.rows = o.integer("rows", 1);
      e.cols = o.integer("cols", 1);
      result = e;
      break;
    }
    case MeasurementKind::memory: {
      MemoryInputs m;
      m.op = o.one_of("op", {"copy", "triad", "memcpy_d2d"});
      m.dtype = o.datatype("dtype", {DataType::fp32, DataType::fp16, DataType::bf16});
      m.elements = o.integer("elements", 1);
      result = m;
      break;
    }
    case MeasurementKind::collective: {
      CollectiveInputs c;
      const std::string op = o.one_of("op",
                                      {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
                                       "all_to_all", "send_recv"});
      for (CollectiveOp candidate : {CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::reduce_scatter,
                                     CollectiveOp::broadcast, CollectiveOp::reduce, CollectiveOp::all_to_all,
                                     CollectiveOp::send_recv}) {
        if (to_string(candidate) == op) c.op = candidate;
      }
      c.dtype = o.one_of("dtype", {"fp32", "fp16", "bf16", "int8"});
      c.redop = o.one_of("redop", {"sum", "none"});
      c.size_bytes = o.integer("size_bytes", 0);
      c.count = o.integer("count", 0);
      c.ranks = o.small_integer("ranks", 1);
      c.nodes = o.small_integer("nodes", 1);
      c.ranks_per_node = o.small_integer("ranks_per_node", 1);
      c.in_place = o.boolean("in_place");
      c.root = o.small_integer("root", 0);
      if (c.nodes * c.ranks_per_node < c.ranks) {
        f.fail(o.required("ranks"), p("ranks"), "ranks exceeds nodes x ranks_per_node");
      }
      result = c;
      break;
    }
    case MeasurementKind::selftest: {
      SelftestInputs s;
      s.test = o.one_of("test", {"spin_kernel", "d2d_copy"});
      s.expected = o.non_negative("expected");
      s.measured = o.non_negative("measured");
      s.limit = o.non_negative("limit");
      s.passed = o.boolean("passed");
      result = s;
      break;
    }
  }
  o.finish();
  return result;
}

// A GEMM record's `algorithm` (schema_version 2): every key present, ids and counts in range,
// and a name only beside an id.
GemmAlgorithm read_algorithm(const FileReader& f, const json::Value& v, const std::string& path) {
  ObjectReader o = f.object(v, path);
  auto p = [&](std::string_view key) { return o.path_of(key); };
  GemmAlgorithm a;
  a.library = o.one_of("library", {"cublasLt"});
  a.id = o.integer("id", 0);
  a.tile_id = o.integer("tile_id", 0);
  a.tile = o.optional_name("tile");
  a.stages_id = o.integer("stages_id", 0);
  a.stages = o.optional_name("stages");
  a.splitk_num = o.integer("splitk_num", 1);
  a.reduction_scheme = o.one_of("reduction_scheme", {"none", "inplace", "compute_type", "output_type"});
  a.cta_swizzling = o.integer("cta_swizzling", 0);
  if (a.cta_swizzling > 1) {
    f.fail(o.required("cta_swizzling"), p("cta_swizzling"),
           "expected 0 or 1 (cublasLt.h: other values are reserved), found " + std::to_string(a.cta_swizzling));
  }
  a.custom_option = o.integer("custom_option", 0);
  a.inner_shape_id = o.optional_integer("inner_shape_id", 0);
  a.inner_shape = o.optional_name("inner_shape");
  a.cluster_shape_id = o.optional_integer("cluster_shape_id", 0);
  a.cluster_shape = o.optional_name("cluster_shape");
  if (!a.inner_shape_id && !a.inner_shape.empty()) {
    f.fail(o.required("inner_shape"), p("inner_shape"), "a name without an inner_shape_id");
  }
  if (!a.cluster_shape_id && !a.cluster_shape.empty()) {
    f.fail(o.required("cluster_shape"), p("cluster_shape"), "a name without a cluster_shape_id");
  }
  a.heuristic_rank = o.integer("heuristic_rank", 1);
  a.heuristic_results = o.integer("heuristic_results", 1);
  if (a.heuristic_rank > a.heuristic_results) {
    f.fail(o.required("heuristic_rank"), p("heuristic_rank"),
           "rank " + std::to_string(a.heuristic_rank) + " is past the heuristic's " +
               std::to_string(a.heuristic_results) + " results");
  }
  a.workspace_bytes = o.integer("workspace_bytes", 0);
  const json::Value& waves = o.required("waves_count");
  if (!waves.is_null()) a.waves_count = f.non_negative(waves, p("waves_count"));
  o.finish();
  return a;
}

Measurement read_record(const FileReader& f, const json::Value& v, const std::string& path,
                        const std::vector<int>& device_indices, int schema_version) {
  ObjectReader o = f.object(v, path);
  auto p = [&](std::string_view key) { return o.path_of(key); };
  Measurement r;
  const json::Value& kind_value = o.required("kind");
  const auto kind = parse_measurement_kind(f.string(kind_value, p("kind")));
  if (!kind) {
    f.fail(kind_value, p("kind"),
           "'" + kind_value.as_string() + "' is not one of: gemm, attention, elementwise, memory, collective, selftest");
  }
  r.name = o.string("name");
  const json::Value& device_value = o.required("device");
  r.device = f.small_integer(device_value, p("device"), 0);
  if (std::find(device_indices.begin(), device_indices.end(), r.device) == device_indices.end()) {
    f.fail(device_value, p("device"),
           "device " + std::to_string(r.device) + " is not in provenance.devices (" +
               std::to_string(device_indices.size()) + " listed)");
  }
  r.inputs = read_inputs(f, *kind, o.required("inputs"), p("inputs"));
  r.flops = Flops(o.non_negative("flops"));
  r.bytes = Bytes(o.non_negative("bytes"));

  {
    const json::Value& tv = o.required("time");
    ObjectReader t = f.object(tv, p("time"));
    r.time.median_s = t.positive("median_s");
    r.time.min_s = t.positive("min_s");
    r.time.max_s = t.positive("max_s");
    r.time.mean_s = t.positive("mean_s");
    r.time.p10_s = t.positive("p10_s");
    r.time.p90_s = t.positive("p90_s");
    r.time.rel_stdev = t.non_negative("rel_stdev");
    r.time.samples = t.integer("samples", 1);
    t.finish();
    const TimeStats& s = r.time;
    if (!(s.min_s <= s.p10_s && s.p10_s <= s.median_s && s.median_s <= s.p90_s && s.p90_s <= s.max_s &&
          s.min_s <= s.mean_s && s.mean_s <= s.max_s)) {
      f.fail(tv, p("time"), "inconsistent statistics: need min <= p10 <= median <= p90 <= max and min <= mean <= max");
    }
  }
  if (const json::Value* achieved = o.optional("achieved")) {
    // Derived from flops, bytes and time; checked for shape only.
    ObjectReader a = f.object(*achieved, p("achieved"));
    a.optional_number("flop_rate");
    a.optional_number("bytes_per_s");
    a.finish();
  }
  {
    ObjectReader m = o.object("method");
    auto mp = [&](std::string_view key) { return m.path_of(key); };
    r.method.mode = m.one_of("mode", {"cold", "hot", "host_timer"});
    r.method.batch = m.integer("batch", 1);
    const json::Value& reason = m.required("stop_reason");
    const auto stop = parse_stop_reason(f.string(reason, mp("stop_reason")));
    if (!stop || *stop == StopReason::running) {
      f.fail(reason, mp("stop_reason"), "'" + reason.as_string() + "' is not one of: converged, plateau, timeout, max_samples");
    }
    r.method.stop_reason = *stop;
    r.method.wall_s = m.non_negative("wall_s");
    r.method.throttled_discarded = m.integer("throttled_discarded", 0);
    r.method.sm_clock_mhz = m.optional_number("sm_clock_mhz");
    m.finish();
  }
  {
    ObjectReader c = o.object("check");
    r.check.passed = c.boolean("passed");
    r.check.method = c.string("method");
    r.check.checked = c.integer("checked", 0);
    r.check.max_abs_error = c.non_negative("max_abs_error");
    r.check.max_rel_error = c.non_negative("max_rel_error");
    r.check.tolerance = c.non_negative("tolerance");
    c.finish();
  }
  const json::Value* collective = o.optional("collective");
  if (*kind == MeasurementKind::collective) {
    if (collective == nullptr) f.fail(v, path, "a collective record needs a 'collective' object (algbw, busbw)");
    ObjectReader c = f.object(*collective, p("collective"));
    CollectiveResult cr;
    cr.algbw_bytes_per_s = c.positive("algbw_bytes_per_s");
    cr.busbw_bytes_per_s = c.non_negative("busbw_bytes_per_s");
    cr.bus_factor = c.non_negative("bus_factor");
    cr.nccl_estimate_s = c.optional_number("nccl_estimate_s");
    c.finish();
    r.collective = cr;
  } else if (collective != nullptr) {
    f.fail(*collective, p("collective"), "only collective records have a 'collective' object");
  }
  if (const json::Value* algorithm = o.optional("algorithm")) {
    if (*kind != MeasurementKind::gemm) f.fail(*algorithm, p("algorithm"), "only gemm records have an 'algorithm' object");
    if (schema_version < 2) {
      f.fail(*algorithm, p("algorithm"),
             "'algorithm' is a schema_version 2 key; this file says schema_version " + std::to_string(schema_version));
    }
    r.algorithm = read_algorithm(f, *algorithm, p("algorithm"));
  }
  r.notes = o.strings("notes");
  o.finish();
  return r;
}

ClockState read_clocks(const FileReader& f, const json::Value& v, const std::string& path) {
  ObjectReader o = f.object(v, path);
  ClockState c;
  c.source = o.one_of("source", {"nvml", "unavailable"});
  c.note = o.string("note");
  c.sm_mhz = o.optional_number("sm_mhz");
  c.memory_mhz = o.optional_number("memory_mhz");
  c.max_sm_mhz = o.optional_number("max_sm_mhz");
  c.max_memory_mhz = o.optional_number("max_memory_mhz");
  c.application_sm_mhz = o.optional_number("application_sm_mhz");
  c.temperature_c = o.optional_number("temperature_c");
  c.power_limit_w = o.optional_number("power_limit_w");
  c.throttle_reasons = o.strings("throttle_reasons");
  o.finish();
  return c;
}

DeviceInfo read_device(const FileReader& f, const json::Value& v, const std::string& path) {
  ObjectReader o = f.object(v, path);
  auto p = [&](std::string_view key) { return o.path_of(key); };
  DeviceInfo d;
  d.index = o.small_integer("index", 0);
  d.name = o.string("name");
  d.catalog_gpu = o.optional_string("catalog_gpu");
  d.uuid = o.string("uuid");
  d.pci_bus_id = o.string("pci_bus_id");
  d.compute_capability = o.string("compute_capability");
  d.sm_count = o.small_integer("sm_count", 1);
  d.memory_bytes = o.integer("memory_bytes", 1);
  d.l2_cache_bytes = o.integer("l2_cache_bytes", 0);
  d.memory_bus_width_bits = o.small_integer("memory_bus_width_bits", 0);
  d.max_sm_clock_mhz = o.non_negative("max_sm_clock_mhz");
  d.max_memory_clock_mhz = o.non_negative("max_memory_clock_mhz");
  d.theoretical_memory_bandwidth_bytes_per_s = o.non_negative("theoretical_memory_bandwidth_bytes_per_s");
  const json::Value& ecc = o.required("ecc_enabled");
  if (!ecc.is_null()) d.ecc_enabled = f.boolean(ecc, p("ecc_enabled"));
  d.clocks_at_start = read_clocks(f, o.required("clocks_at_start"), p("clocks_at_start"));
  d.clocks_at_end = read_clocks(f, o.required("clocks_at_end"), p("clocks_at_end"));
  o.finish();
  return d;
}

MeasurementMethod read_method(const FileReader& f, const json::Value& v, const std::string& path) {
  ObjectReader o = f.object(v, path);
  MeasurementMethod m;
  m.l2_flush = o.boolean("l2_flush");
  m.blocking_kernel = o.boolean("blocking_kernel");
  m.warmup_runs = o.small_integer("warmup_runs", 0);
  {
    ObjectReader s = o.object("stopping");
    m.stopping.max_noise = s.non_negative("max_noise");
    m.stopping.min_time = units::seconds(s.non_negative("min_time_s"));
    m.stopping.min_samples = s.small_integer("min_samples", 1);
    m.stopping.timeout = units::seconds(s.non_negative("timeout_s"));
    m.stopping.max_samples = s.small_integer("max_samples", 1);
    m.stopping.plateau_window = s.small_integer("plateau_window", 1);
    m.stopping.plateau_check_every = s.small_integer("plateau_check_every", 1);
    m.stopping.plateau_tolerance = s.non_negative("plateau_tolerance");
    s.finish();
  }
  m.throttle_threshold = o.non_negative("throttle_threshold");
  m.throttle_recovery_delay_s = o.non_negative("throttle_recovery_delay_s");
  o.finish();
  return m;
}

Provenance read_provenance(const FileReader& f, const json::Value& v, const std::string& path) {
  ObjectReader o = f.object(v, path);
  auto p = [&](std::string_view key) { return o.path_of(key); };
  Provenance pr;
  pr.tool = o.one_of("tool", {"stepcast-harness"});
  pr.tool_version = o.string("tool_version");
  pr.git_sha = o.string("git_sha");
  pr.argv = o.strings("argv");
  pr.command = o.string("command");
  pr.started_utc = o.string("started_utc");
  pr.finished_utc = o.string("finished_utc");
  pr.host = o.string("host");
  {
    ObjectReader ver = o.object("versions");
    pr.driver_version = ver.optional_string("driver");
    pr.cuda_driver_api = ver.string("cuda_driver_api");
    pr.cuda_runtime = ver.string("cuda_runtime");
    pr.cublas = ver.string("cublas");
    pr.cudnn = ver.optional_string("cudnn");
    pr.nccl = ver.optional_string("nccl");
    ver.finish();
  }
  pr.cuda_architectures = o.string("cuda_architectures");
  pr.ranks = o.small_integer("ranks", 1);
  pr.nodes = o.small_integer("nodes", 1);
  const json::Value& devices = o.required("devices");
  if (!devices.is_array() || devices.items().empty()) {
    f.fail(devices, p("devices"), "expected a non-empty array of devices");
  }
  for (std::size_t i = 0; i < devices.items().size(); ++i) {
    DeviceInfo d = read_device(f, devices.items()[i], p("devices") + "[" + std::to_string(i) + "]");
    for (const DeviceInfo& earlier : pr.devices) {
      if (earlier.index == d.index) {
        f.fail(devices.items()[i], p("devices") + "[" + std::to_string(i) + "].index",
               "device index " + std::to_string(d.index) + " is listed twice");
      }
    }
    pr.devices.push_back(std::move(d));
  }
  pr.method = read_method(f, o.required("method"), p("method"));
  o.finish();
  return pr;
}

}  // namespace

MeasurementFile parse_measurement_text(std::string_view text, const std::string& source) {
  json::Value root;
  try {
    root = json::parse(text);
  } catch (const json::ParseError& e) {
    std::string message = "not valid JSON: ";
    std::string detail = e.what();
    detail = detail.substr(detail.find(": ") + 2);  // drop the "line:col: " the parser put first
    message += detail;
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && text[first] == '#') {
      message += " (this looks like an nccl-tests log; pass it to `stepcast calibrate` as a log, not as harness JSON)";
    }
    throw MeasurementFileError(source, e.line(), e.column(), "", message);
  }
  const FileReader f(source);
  ObjectReader o = f.object(root, "");
  const json::Value* schema = o.optional("schema");
  if (schema == nullptr || !schema->is_string() || schema->as_string() != kMeasurementSchemaName) {
    f.fail(schema ? *schema : root, "schema",
           "not a stepcast-harness measurement file (expected \"schema\": \"" + std::string(kMeasurementSchemaName) +
               "\")");
  }
  const json::Value& version = o.required("schema_version");
  const int schema_version = f.small_integer(version, "schema_version", 1);
  if (schema_version < kOldestMeasurementSchemaVersion || schema_version > kMeasurementSchemaVersion) {
    f.fail(version, "schema_version",
           "written with schema_version " + std::to_string(schema_version) + "; this stepcast reads versions " +
               std::to_string(kOldestMeasurementSchemaVersion) + " to " + std::to_string(kMeasurementSchemaVersion) +
               (schema_version > kMeasurementSchemaVersion ? " (update stepcast)" : " (re-run the harness)"));
  }
  MeasurementFile file;
  file.schema_version = schema_version;
  file.complete = o.boolean("complete");
  file.provenance = read_provenance(f, o.required("provenance"), "provenance");
  const json::Value& records = o.required("records");
  if (!records.is_array()) f.fail(records, "records", "expected an array of records");
  std::vector<int> device_indices;
  for (const DeviceInfo& d : file.provenance.devices) device_indices.push_back(d.index);
  for (std::size_t i = 0; i < records.items().size(); ++i) {
    file.records.push_back(
        read_record(f, records.items()[i], "records[" + std::to_string(i) + "]", device_indices, schema_version));
  }
  const json::Value& skipped = o.required("skipped");
  if (!skipped.is_array()) f.fail(skipped, "skipped", "expected an array");
  for (std::size_t i = 0; i < skipped.items().size(); ++i) {
    ObjectReader s = f.object(skipped.items()[i], "skipped[" + std::to_string(i) + "]");
    SkippedPoint point;
    point.kind = s.string("kind");
    point.name = s.string("name");
    point.reason = s.string("reason");
    s.finish();
    file.skipped.push_back(std::move(point));
  }
  o.finish();
  return file;
}

MeasurementFile read_measurement_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw MeasurementFileError(path.string(), 0, 0, "", "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_measurement_text(text.str(), path.string());
}

}  // namespace stepcast
