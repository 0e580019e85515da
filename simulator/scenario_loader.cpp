#include "simulator/scenario_loader.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "simulator/diagnostics.h"
#include "simulator/scenario_checks.h"
#include "simulator/serving/request_stream.h"
#include "simulator/spec_readers.h"
#include "simulator/yaml_reader.h"
#include "simulator/text_file.h"

namespace stepcast {
namespace {

constexpr int kSchemaVersion = 1;
// The serving simulation holds every request (arrival, lengths, timestamps) in memory: measured
// here, 20 million requests of llama3-70b-serving took 2.2 GB and 95 s. Ten million keeps a run
// near a gigabyte and under a minute; a larger count fails with std::bad_alloc long before it ends.
constexpr long long kMaxServingRequests = 10'000'000;

std::string quote_list(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string near = closest_match(word, candidates);
  return near.empty() ? std::string() : "did you mean '" + near + "'?";
}

// --- --set overrides ---------------------------------------------------------------------------

std::string override_label(const Override& o) { return "--set " + o.key_path + "=" + o.value; }

// Keys whose value may be a catalog name that an override turns into {preset: name, ...}.
bool is_preset_key(const std::string& key) { return key == "model" || key == "gpu" || key == "network"; }

// The mapping a one-word precision stands for, so that `--set precision.KEY=...` can refine it:
// the loader reads {compute: W} as the word W (read_precision: both are precision_shorthand(W),
// or inference_shorthand(W) in an inference scenario), except int4, weight-only quantization
// with 16-bit compute, which only the word names: {compute: bf16, params: int4} is what
// inference_shorthand(int4) reads. A word that is no format stays the compute format's value and
// is refused there, as it would have been.
YAML::Node precision_mapping_of(const YAML::Node& word) {
  YAML::Node mapping(YAML::NodeType::Map);
  if (word.Scalar() == "int4") {
    mapping["compute"] = "bf16";
    mapping["params"] = "int4";
  } else {
    mapping["compute"] = word;
  }
  return mapping;
}

// Finds `key` in `map` without creating it (yaml-cpp's non-const operator[] would); binds `out`.
bool find_child(const YAML::Node& map, const std::string& key, YAML::Node& out) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      out.reset(it->second);
      return true;
    }
  }
  return false;
}

void apply_override(YAML::Node& root, const Override& o, DiagnosticSink& sink) {
  const std::string label = override_label(o);
  const Location where{label, 0, 0};
  sink.mark_override(o.key_path, label);
  YAML::Node value;
  try {
    value = YAML::Load(o.value);
  } catch (const YAML::Exception& e) {
    sink.error(where, o.key_path, "the value is not valid YAML: " + e.msg);
    return;
  }
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (start <= o.key_path.size()) {
    const std::size_t end = std::min(o.key_path.find('.', start), o.key_path.size());
    keys.push_back(o.key_path.substr(start, end - start));
    start = end + 1;
  }
  for (const auto& k : keys) {
    if (k.empty()) {
      sink.error(where, o.key_path, "the key path has an empty part");
      return;
    }
  }
  if (!root.IsMap()) return;  // the document itself is reported as not a mapping
  // yaml-cpp's Node is a handle: `a = b` overwrites the node `a` refers to, `a.reset(b)` rebinds `a`.
  YAML::Node node;
  node.reset(root);
  std::string path;
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    const std::string& key = keys[i];
    path += (path.empty() ? "" : ".") + key;
    YAML::Node child;
    if (!find_child(node, key, child)) {
      YAML::Node fresh(YAML::NodeType::Map);
      node[key] = fresh;
      node.reset(fresh);
      continue;
    }
    if (child.IsScalar() && is_preset_key(key)) {
      // `model: llama3-70b` with --set model.layers=40 becomes {preset: llama3-70b, layers: 40}.
      node.remove(key);
      YAML::Node mapping(YAML::NodeType::Map);
      mapping["preset"] = child;
      node[key] = mapping;
      node.reset(mapping);
      continue;
    }
    if (child.IsScalar() && path == "precision") {
      // `precision: fp8` with --set precision.fp8_attention=true becomes {compute: fp8, fp8_attention: true}.
      YAML::Node mapping = precision_mapping_of(child);
      node.remove(key);
      node[key] = mapping;
      node.reset(mapping);
      continue;
    }
    if (!child.IsMap()) {
      sink.error(where, o.key_path, "cannot set a key inside '" + path + "', which holds " + describe_node(child) +
                                        ", not a mapping");
      return;
    }
    node.reset(child);
  }
  node[keys.back()] = value;
}

// --- Sections ----------------------------------------------------------------------------------

struct Reader {
  DiagnosticSink& sink;
  const Catalog& catalog;
  std::filesystem::path base_dir;  // for trace files named relative to the scenario
};

std::optional<TransformerSpec> read_model(Reader& ctx, const YamlValue& v) {
  if (v.node.IsScalar()) {
    const std::string name = v.node.Scalar();
    if (const TransformerSpec* m = ctx.catalog.find_model(name)) return *m;
    ctx.sink.error(v.where, v.path, "unknown model '" + name + "' (not in the catalog; see `stepcast catalog models`)",
                   did_you_mean(name, ctx.catalog.model_names()));
    return std::nullopt;
  }
  const MapReader r(ctx.sink, v.node, v.path, v.where, with_keys(model_field_keys(), {"preset", "name", "sources", "notes"}));
  if (!r.is_mapping()) return std::nullopt;
  TransformerSpec model;
  model.name = "custom";
  if (const auto preset = r.get("preset")) {
    const auto name = read_string(ctx.sink, *preset);
    if (!name) return std::nullopt;
    const TransformerSpec* base = ctx.catalog.find_model(*name);
    if (base == nullptr) {
      ctx.sink.error(preset->where, preset->path, "unknown model '" + *name + "' (not in the catalog)",
                     did_you_mean(*name, ctx.catalog.model_names()));
      return std::nullopt;
    }
    model = *base;
  } else {
    require_model_fields(r);
  }
  read_model_fields(r, model);
  if (auto name = r.string("name")) model.name = *name;
  return model;
}

std::optional<GpuSpec> read_gpu(Reader& ctx, const YamlValue& v) {
  if (v.node.IsScalar()) {
    const std::string name = v.node.Scalar();
    if (const GpuSpec* g = ctx.catalog.find_gpu(name)) return *g;
    ctx.sink.error(v.where, v.path, "unknown GPU '" + name + "' (not in the catalog; see `stepcast catalog gpus`)",
                   did_you_mean(name, ctx.catalog.gpu_names()));
    return std::nullopt;
  }
  const MapReader r(ctx.sink, v.node, v.path, v.where, with_keys(gpu_field_keys(), {"preset", "name", "sources", "notes"}));
  if (!r.is_mapping()) return std::nullopt;
  GpuSpec gpu;
  gpu.name = "custom";
  if (const auto preset = r.get("preset")) {
    const auto name = read_string(ctx.sink, *preset);
    if (!name) return std::nullopt;
    const GpuSpec* base = ctx.catalog.find_gpu(*name);
    if (base == nullptr) {
      ctx.sink.error(preset->where, preset->path, "unknown GPU '" + *name + "' (not in the catalog)",
                     did_you_mean(*name, ctx.catalog.gpu_names()));
      return std::nullopt;
    }
    gpu = *base;
  } else {
    require_gpu_fields(r);
  }
  read_gpu_fields(r, gpu);
  if (auto name = r.string("name")) gpu.name = *name;
  if (!r.has("display_name") && !r.has("preset")) gpu.display_name = gpu.name;
  return gpu;
}

void read_network(Reader& ctx, const YamlValue& v, NetworkSpec& network) {
  const auto named = [&](const YamlValue& name_value) -> bool {
    const auto name = read_string(ctx.sink, name_value);
    if (!name) return false;
    const SystemSpec* s = ctx.catalog.find_system(*name);
    if (s == nullptr) {
      ctx.sink.error(name_value.where, name_value.path,
                     "unknown system '" + *name + "' (a network is named by the catalog system that has it)",
                     did_you_mean(*name, ctx.catalog.system_names()));
      return false;
    }
    network = s->network;
    return true;
  };
  if (v.node.IsScalar()) {
    named(v);
    return;
  }
  const MapReader r(ctx.sink, v.node, v.path, v.where, with_keys(network_field_keys(), {"preset"}));
  if (!r.is_mapping()) return;
  if (const auto preset = r.get("preset")) named(*preset);
  read_network_fields(r, network);
}

std::optional<SystemSpec> read_system(Reader& ctx, const YamlValue& v) {
  const MapReader r(ctx.sink, v.node, v.path, v.where,
                    with_keys(system_field_keys(), {"preset", "name", "gpu", "gpus", "network", "power_mode"}));
  if (!r.is_mapping()) return std::nullopt;
  std::optional<SystemSpec> system;
  if (const auto preset = r.get("preset")) {
    if (const auto name = read_string(ctx.sink, *preset)) {
      if (const SystemSpec* s = ctx.catalog.find_system(*name)) {
        system = *s;
      } else {
        ctx.sink.error(preset->where, preset->path, "unknown system '" + *name + "' (not in the catalog; see `stepcast catalog systems`)",
                       did_you_mean(*name, ctx.catalog.system_names()));
      }
    }
  }
  std::optional<GpuSpec> gpu;
  if (const auto g = r.get("gpu")) {
    gpu = read_gpu(ctx, *g);
  } else if (!r.has("preset")) {
    r.missing("gpu", "a GPU name from the catalog, or a mapping with its figures");
  }
  if (gpu && system) system->gpu = *gpu;
  if (gpu && !r.has("preset")) system = ctx.catalog.default_system_for(*gpu);
  if (!system) return std::nullopt;
  if (auto name = r.string("name")) system->name = *name;
  read_system_fields(r, *system);
  if (auto gpus = r.integer("gpus")) {
    system->gpus = static_cast<int>(*gpus);
  } else if (!r.has("gpus")) {
    r.missing("gpus", "the number of GPUs in the job");
  }
  if (const auto n = r.get("network")) read_network(ctx, *n, system->network);
  if (const auto mode = r.get("power_mode")) {
    if (const auto name = read_string(ctx.sink, *mode)) {
      if (!apply_power_mode(system->gpu, *name)) {
        std::vector<std::string> modes;
        for (const auto& m : system->gpu.power_modes) modes.push_back(m.name);
        ctx.sink.error(mode->where, mode->path,
                       modes.empty() ? "GPU '" + system->gpu.name + "' has no power modes"
                                     : "unknown power mode '" + *name + "' for GPU '" + system->gpu.name +
                                           "'; expected one of " + quote_list(modes),
                       did_you_mean(*name, modes));
      }
    }
  }
  return system;
}

std::optional<TrainingWorkload> read_training(Reader& ctx, const YamlValue& v) {
  const MapReader r(ctx.sink, v.node, v.path, v.where, {"seq_len", "global_batch", "micro_batch", "flash_attention", "attention_kernel",
                                                          "kernels", "cross_entropy_fusion", "repeat_kv", "document_tokens",
                                                          "goodput"});
  if (!r.is_mapping()) return std::nullopt;
  TrainingWorkload t;
  if (auto x = r.integer("seq_len")) t.seq_len = static_cast<int>(*x); else if (!r.has("seq_len")) r.missing("seq_len", "tokens per sequence");
  if (auto x = r.integer("global_batch")) t.global_batch = static_cast<int>(*x); else if (!r.has("global_batch")) r.missing("global_batch", "sequences per optimizer step");
  if (auto x = r.integer("micro_batch")) t.micro_batch = static_cast<int>(*x);
  if (auto x = r.boolean("flash_attention")) t.flash_attention = *x;
  if (auto x = r.enumeration<AttentionKernel>("attention_kernel")) t.attention_kernel = *x;
  if (auto x = r.enumeration<KernelFusion>("kernels")) t.kernels = *x;
  if (auto x = r.enumeration<CrossEntropyFusion>("cross_entropy_fusion")) t.cross_entropy_fusion = *x;
  if (auto x = r.boolean("repeat_kv")) t.repeat_kv = *x;
  if (auto x = r.integer("document_tokens", kPositive)) t.document_tokens = static_cast<int>(*x);
  if (const auto g = r.get("goodput")) {
    const MapReader gr(ctx.sink, g->node, g->path, g->where,
                       {"dataloader_rate", "straggler_cv", "checkpoint_interval", "checkpoint_size",
                        "checkpoint_write_bandwidth", "gpu_mtbf", "restart_time"});
    auto& gp = t.goodput;
    if (auto x = gr.quantity("dataloader_rate", Dimension::frequency)) gp.dataloader_samples_per_s = *x;
    if (auto x = gr.real("straggler_cv", {0.0, false})) gp.straggler_cv = *x;
    if (auto x = gr.quantity("checkpoint_interval", Dimension::time)) gp.checkpoint_interval = Seconds(*x);
    if (auto x = gr.quantity("checkpoint_size", Dimension::size)) gp.checkpoint_size = Bytes(*x);
    if (auto x = gr.quantity("checkpoint_write_bandwidth", Dimension::bandwidth)) gp.checkpoint_write_bandwidth = Bandwidth(*x);
    if (auto x = gr.quantity("gpu_mtbf", Dimension::time)) gp.gpu_mtbf_hours = *x / 3600.0;
    if (auto x = gr.quantity("restart_time", Dimension::time, false)) gp.restart_time = Seconds(*x);
  }
  return t;
}

std::optional<LengthSpec> read_length(Reader& ctx, const YamlValue& v) {
  if (v.node.IsScalar()) {
    const auto n = read_integer(ctx.sink, v);
    if (!n) return std::nullopt;
    LengthSpec l;
    l.dist = LengthDistribution::fixed;
    l.mean = static_cast<double>(*n);
    return l;
  }
  if (!v.node.IsMap()) {
    ctx.sink.error(v.where, v.path,
                   "expected a token count or a distribution {dist: lognormal, mean: ..., p99: ...}, found " +
                       describe_node(v.node));
    return std::nullopt;
  }
  const MapReader r(ctx.sink, v.node, v.path, v.where, {"dist", "mean", "p99", "min", "max"});
  const std::size_t before = ctx.sink.error_count();
  LengthSpec l;
  if (auto d = r.enumeration<LengthDistribution>("dist")) l.dist = *d; else if (!r.has("dist")) r.missing("dist", "fixed, uniform, lognormal or exponential");
  if (auto x = r.real("mean")) l.mean = *x;
  if (auto x = r.real("p99")) l.p99 = *x;
  if (auto x = r.real("min", {1.0, false})) l.min = *x;
  if (auto x = r.real("max")) l.max = *x;
  if (ctx.sink.error_count() != before) return std::nullopt;
  switch (l.dist) {
    case LengthDistribution::fixed:
    case LengthDistribution::exponential:
      if (!r.has("mean")) r.missing("mean", "the mean length in tokens");
      break;
    case LengthDistribution::lognormal:
      if (!r.has("mean")) r.missing("mean", "the mean length in tokens");
      if (!r.has("p99")) r.missing("p99", "the 99th-percentile length, which sets the spread");
      if (r.has("mean") && r.has("p99") && l.p99 <= l.mean) {
        ctx.sink.error_at(r.path_of("p99"), "p99 (" + format_number(l.p99) + ") must exceed mean (" +
                                                format_number(l.mean) + ") for a lognormal length");
      } else if (r.has("mean") && r.has("p99") && !serving::lognormal_sigma(l.mean, l.p99)) {
        ctx.sink.error_at(r.path_of("p99"), "p99/mean = " + format_number(l.p99 / l.mean) + " is more than a lognormal "
                                                "can have (at most exp(z99^2/2) = " +
                                                format_number(std::round(serving::lognormal_max_p99_ratio() * 100.0) / 100.0) +
                                                "); use a smaller p99 or dist: exponential");
      }
      break;
    case LengthDistribution::uniform:
      if (!r.has("min")) r.missing("min", "the shortest length");
      if (!r.has("max")) r.missing("max", "the longest length");
      if (r.has("min") && r.has("max") && l.max < l.min) {
        ctx.sink.error_at(r.path_of("max"), "max (" + format_number(l.max) + ") is below min (" + format_number(l.min) + ")");
      }
      if (!r.has("mean")) l.mean = (l.min + l.max) / 2.0;
      break;
  }
  if (r.has("max") && l.max < l.mean && l.dist != LengthDistribution::uniform) {
    ctx.sink.error_at(r.path_of("max"), "max (" + format_number(l.max) + ") is below mean (" + format_number(l.mean) + ")");
  }
  if (ctx.sink.error_count() != before) return std::nullopt;
  return l;
}

// One trace request, checked: arrival times in order, positive lengths.
bool valid_trace_row(const TraceRequest& r, const std::vector<TraceRequest>& before) {
  return r.arrival.value() >= 0.0 && std::isfinite(r.arrival.value()) && r.input_len > 0 && r.output_len > 0 &&
         (before.empty() || !(r.arrival < before.back().arrival));
}

// CSV with the header `arrival_s,input_len,output_len`, one request per line.
std::vector<TraceRequest> read_csv_trace(std::istream& in, const std::function<void(int, const std::string&)>& bad) {
  std::vector<TraceRequest> out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1) {
      if (line != "arrival_s,input_len,output_len") {
        bad(number, "expected the header 'arrival_s,input_len,output_len'");
        return {};
      }
      continue;
    }
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string a, i, o, extra;
    std::getline(fields, a, ',');
    std::getline(fields, i, ',');
    std::getline(fields, o, ',');
    try {
      std::size_t used_a = 0, used_i = 0, used_o = 0;
      TraceRequest r{Seconds(std::stod(a, &used_a)), std::stoi(i, &used_i), std::stoi(o, &used_o)};
      if (used_a != a.size() || used_i != i.size() || used_o != o.size() || std::getline(fields, extra) ||
          !valid_trace_row(r, out)) {
        throw std::invalid_argument("bad row");
      }
      out.push_back(r);
    } catch (const std::exception&) {
      bad(number, "expected 'arrival_s,input_len,output_len' with arrival times in order and positive lengths, "
                  "found '" + line + "'");
      return {};
    }
  }
  return out;
}

// JSON Lines: one object per line, {"arrival_s": 0.5, "input_len": 512, "output_len": 128}.
std::vector<TraceRequest> read_jsonl_trace(std::istream& in, const std::function<void(int, const std::string&)>& bad) {
  std::vector<TraceRequest> out;
  std::string line;
  int number = 0;
  const std::vector<std::string> keys = {"arrival_s", "input_len", "output_len"};
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      bad(number, "expected a JSON object {\"arrival_s\": ..., \"input_len\": ..., \"output_len\": ...}, found '" +
                      line + "'");
      return {};
    }
    for (const auto& item : j.items()) {
      if (std::find(keys.begin(), keys.end(), item.key()) == keys.end()) {
        const std::string near = closest_match(item.key(), keys);
        bad(number, "unknown key '" + item.key() + "' (expected arrival_s, input_len, output_len)" +
                        (near.empty() ? std::string() : "; did you mean '" + near + "'?"));
        return {};
      }
    }
    for (const auto& key : keys) {
      if (!j.contains(key)) {
        bad(number, "missing key '" + key + "'");
        return {};
      }
    }
    const auto& a = j["arrival_s"];
    const auto& i = j["input_len"];
    const auto& o = j["output_len"];
    if (!a.is_number() || !i.is_number_integer() || !o.is_number_integer()) {
      bad(number, "expected a number for arrival_s and whole numbers for input_len and output_len, found '" + line + "'");
      return {};
    }
    const TraceRequest r{Seconds(a.get<double>()), i.get<int>(), o.get<int>()};
    if (!valid_trace_row(r, out)) {
      bad(number, "expected arrival times in order (seconds, not negative) and positive lengths, found '" + line + "'");
      return {};
    }
    out.push_back(r);
  }
  return out;
}

// A trace file of requests: CSV (`arrival_s,input_len,output_len` header), or JSON Lines when
// the name ends in .jsonl.
std::vector<TraceRequest> read_trace(Reader& ctx, const YamlValue& v, const std::string& file) {
  std::filesystem::path path = file;
  if (path.is_relative() && !ctx.base_dir.empty()) path = ctx.base_dir / path;
  std::ifstream in(path);
  if (!in) {
    ctx.sink.error(v.where, v.path, "cannot read trace file '" + path.string() + "'");
    return {};
  }
  const auto bad = [&](int line, const std::string& what) {
    ctx.sink.error(v.where, v.path, "trace file '" + path.string() + "' line " + std::to_string(line) + ": " + what);
  };
  const bool jsonl = path.extension() == ".jsonl";
  const std::size_t errors_before = ctx.sink.error_count();
  std::vector<TraceRequest> out = jsonl ? read_jsonl_trace(in, bad) : read_csv_trace(in, bad);
  if (out.empty() && ctx.sink.error_count() == errors_before) {
    ctx.sink.error(v.where, v.path, "trace file '" + path.string() + "' has no requests");
  }
  return out;
}

const std::vector<std::string>& serving_keys() {
  static const std::vector<std::string> keys = {
      "arrivals", "arrival_rate", "gamma_cv",           "requests", "warmup_requests", "trace", "seed", "concurrency",
      "scheduler", "max_batch",   "max_batch_tokens",   "chunked_prefill", "prefill_first", "batch_timeout", "kv_block",
      "kv_memory_fraction", "preemption", "kv_admission", "max_output_tokens", "prefix_cache_hit_rate", "replicas", "disaggregation", "slo"};
  return keys;
}

std::optional<InferenceWorkload> read_inference(Reader& ctx, const YamlValue& v) {
  const MapReader r(ctx.sink, v.node, v.path, v.where,
                    with_keys({"mode", "batch", "input_len", "output_len", "cuda_graphs", "decode_attention"},
                              serving_keys()));
  if (!r.is_mapping()) return std::nullopt;
  InferenceWorkload w;
  const auto mode = r.enumeration<InferenceMode>("mode");
  if (!mode) {
    if (!r.has("mode")) r.missing("mode", "static or serving");
    return std::nullopt;
  }
  w.mode = *mode;
  if (auto x = r.boolean("cuda_graphs")) w.cuda_graphs = *x;
  if (auto x = r.enumeration<DecodeAttention>("decode_attention")) w.decode_attention = *x;
  if (w.mode == InferenceMode::static_batch) {
    for (const auto& key : serving_keys()) {
      if (r.has(key)) r.not_allowed(key, "it applies only with mode: serving");
    }
    if (auto x = r.integer("batch")) w.batch = static_cast<int>(*x);
    if (auto x = r.integer("input_len")) w.input_len = static_cast<int>(*x); else if (!r.has("input_len")) r.missing("input_len", "prompt tokens per sequence");
    if (auto x = r.integer("output_len")) w.output_len = static_cast<int>(*x); else if (!r.has("output_len")) r.missing("output_len", "generated tokens per sequence");
    return w;
  }

  ServingWorkload& s = w.serving;
  if (r.has("batch")) r.not_allowed("batch", "with mode: serving the batch forms itself; bound it with max_batch");
  const bool has_trace = r.has("trace");
  if (auto x = r.enumeration<ArrivalProcess>("arrivals")) s.arrivals = *x;
  if (has_trace && r.has("arrivals") && s.arrivals != ArrivalProcess::trace) {
    ctx.sink.error_at(r.path_of("trace"), "a trace file gives the arrivals; remove it or set arrivals: trace");
  }
  if (has_trace) s.arrivals = ArrivalProcess::trace;
  if (s.arrivals == ArrivalProcess::trace && !has_trace) {
    r.missing("trace", "a CSV file (arrival_s,input_len,output_len) or a .jsonl file of requests");
  }
  if (s.arrivals == ArrivalProcess::closed_loop) {
    // Completions set the arrival rate; the number of clients sets the load.
    if (r.has("arrival_rate")) {
      r.not_allowed("arrival_rate", "closed-loop clients send a request when their last one finishes; concurrency sets the load");
    }
    if (auto x = r.integer("concurrency")) s.concurrency = static_cast<int>(*x);
    else if (!r.has("concurrency")) r.missing("concurrency", "the number of clients, each with one request in flight");
  } else {
    if (r.has("concurrency")) r.not_allowed("concurrency", "it applies only with arrivals: closed-loop");
    if (auto x = r.quantity("arrival_rate", Dimension::frequency)) s.arrival_rate_per_s = *x;
    else if (!r.has("arrival_rate") && (s.arrivals == ArrivalProcess::poisson || s.arrivals == ArrivalProcess::gamma)) {
      r.missing("arrival_rate", "requests per second, e.g. \"8/s\"");
    }
  }
  if (auto x = r.real("gamma_cv")) s.gamma_cv = *x;
  if (auto x = r.integer("requests")) {
    s.requests = static_cast<int>(*x);
    if (*x > kMaxServingRequests) {
      ctx.sink.error_at(r.path_of("requests"), "at most " + std::to_string(kMaxServingRequests) +
                                                    " requests are simulated (each one is held in memory, ~110 bytes)");
    }
  }
  if (const auto t = r.get("trace")) {
    if (auto file = read_string(ctx.sink, *t)) {
      s.trace = read_trace(ctx, *t, *file);
      s.trace_file = *file;
    }
  }
  for (const char* key : {"input_len", "output_len"}) {
    if (const auto len = r.get(key)) {
      if (auto spec = read_length(ctx, *len)) {
        (std::string(key) == "input_len" ? s.input_len : s.output_len) = *spec;
        (std::string(key) == "input_len" ? w.input_len : w.output_len) = static_cast<int>(std::lround(spec->mean));
      }
    } else if (!has_trace) {
      r.missing(key, "a token count or a distribution {dist: lognormal, mean: ..., p99: ...}");
    }
  }
  if (auto x = r.integer("seed", {0, std::numeric_limits<long long>::max()})) s.seed = static_cast<std::uint64_t>(*x);
  if (auto x = r.integer("warmup_requests", kNonNegative)) {
    s.warmup_requests = static_cast<int>(*x);
    const auto total = s.arrivals == ArrivalProcess::trace ? static_cast<long long>(s.trace.size()) : s.requests;
    if (*x >= total) {
      ctx.sink.error_at(r.path_of("warmup_requests"),
                        "warm-up would leave no request to measure: it must be below the number of requests (" +
                            std::to_string(total) + ")");
    }
  }
  if (auto x = r.enumeration<BatchScheduler>("scheduler")) s.scheduler = *x;
  if (auto x = r.integer("max_batch")) s.max_batch = static_cast<int>(*x);
  if (auto x = r.integer("max_batch_tokens")) s.max_batch_tokens = static_cast<int>(*x);
  if (auto x = r.boolean("chunked_prefill")) s.chunked_prefill = *x;
  if (auto x = r.boolean("prefill_first")) {
    s.prefill_first = *x;
    if (s.prefill_first && s.chunked_prefill) {
      r.not_allowed("prefill_first", "prompts run in iterations of their own only without chunking: set chunked_prefill: false");
    }
  }
  if (auto x = r.quantity("batch_timeout", Dimension::time, false)) s.batch_timeout = Seconds(*x);
  if (auto x = r.integer("kv_block")) s.kv_block_tokens = static_cast<int>(*x);
  if (auto x = r.real("kv_memory_fraction", {0.0, true, 1.0})) s.kv_memory_fraction = *x;
  if (auto x = r.enumeration<ServingWorkload::Preemption>("preemption")) s.preemption = *x;
  if (auto x = r.enumeration<ServingWorkload::KvAdmission>("kv_admission")) s.kv_admission = *x;
  if (auto x = r.integer("max_output_tokens")) s.max_output_tokens = static_cast<int>(*x);
  if (auto x = r.real("prefix_cache_hit_rate", {0.0, false, 1.0})) s.prefix_cache_hit_rate = *x;
  if (auto x = r.integer("replicas")) s.replicas = static_cast<int>(*x);
  if (const auto d = r.get("disaggregation")) {
    const MapReader dr(ctx.sink, d->node, d->path, d->where, {"prefill_gpus", "decode_gpus"});
    if (dr.is_mapping()) {
      s.disaggregation.enabled = true;
      if (auto x = dr.integer("prefill_gpus")) s.disaggregation.prefill_gpus = static_cast<int>(*x); else if (!dr.has("prefill_gpus")) dr.missing("prefill_gpus", "GPUs serving prefill");
      if (auto x = dr.integer("decode_gpus")) s.disaggregation.decode_gpus = static_cast<int>(*x); else if (!dr.has("decode_gpus")) dr.missing("decode_gpus", "GPUs serving decode");
    }
  }
  if (const auto slo = r.get("slo")) {
    const MapReader sr(ctx.sink, slo->node, slo->path, slo->where, {"ttft", "tpot"});
    if (auto x = sr.quantity("ttft", Dimension::time)) s.slo.ttft = Seconds(*x);
    if (auto x = sr.quantity("tpot", Dimension::time)) s.slo.tpot = Seconds(*x);
  }
  return w;
}

std::optional<ParallelConfig> read_parallel(Reader& ctx, const YamlValue& v, bool& dp_given) {
  const MapReader r(ctx.sink, v.node, v.path, v.where,
                    {"tp", "pp", "dp", "cp", "ep", "expert_tp", "vpp", "first_stage_layers", "last_stage_layers",
                     "sequence_parallel", "schedule", "zero", "recompute", "recompute_layers", "recompute_modules", "offload", "activation_offload_layers", "cp_kind", "ep_dispatcher", "moe_grouped_gemm", "fsdp", "checkpoint", "overlap_grad_reduce",
                     "overlap_param_gather", "tp_comm_overlap", "ep_comm_overlap", "cuda_graphs", "order"});
  if (!r.is_mapping()) return std::nullopt;
  ParallelConfig p;
  const auto set = [&](const char* key, int& field, IntRange range = kPositive) {
    if (auto x = r.integer(key, range)) field = static_cast<int>(*x);
  };
  set("tp", p.tp);
  set("pp", p.pp);
  set("dp", p.dp);
  set("cp", p.cp);
  set("ep", p.ep);
  set("expert_tp", p.expert_tp);
  set("vpp", p.vpp);
  set("first_stage_layers", p.first_stage_layers, kNonNegative);
  set("last_stage_layers", p.last_stage_layers, kNonNegative);
  set("zero", p.zero, {0, 3});
  set("recompute_layers", p.recompute_layers, kNonNegative);
  set("activation_offload_layers", p.activation_offload_layers, kNonNegative);
  dp_given = r.has("dp");
  if (auto x = r.boolean("sequence_parallel")) p.sequence_parallel = *x;
  if (auto x = r.enumeration<PipelineSchedule>("schedule")) p.schedule = *x;
  if (auto x = r.enumeration<Recompute>("recompute")) p.recompute = *x;
  if (const auto modules_value = r.get("recompute_modules")) {
    // A list of Megatron-Core module names; each is checked, a typo gets a suggestion.
    if (modules_value->node.IsSequence()) {
      RecomputeModules modules = RecomputeModules::empty();
      for (std::size_t i = 0; i < modules_value->node.size(); ++i) {
        const YamlValue item{modules_value->node[i], modules_value->path + "[" + std::to_string(i) + "]",
                             modules_value->where};
        if (auto m = read_enum<RecomputeModule>(r.sink(), item)) modules.add(*m);
      }
      p.recompute_modules = modules;
    } else {
      r.sink().error(modules_value->where, modules_value->path,
                     "expected a list of modules such as [layernorm, moe_act], found " + describe_node(modules_value->node));
    }
  }
  if (auto x = r.enumeration<Offload>("offload")) p.offload = *x;
  if (auto x = r.enumeration<ContextParallelKind>("cp_kind")) p.cp_kind = *x;
  if (auto x = r.enumeration<ExpertDispatcher>("ep_dispatcher")) p.ep_dispatcher = *x;
  if (auto x = r.enumeration<MoeGroupedGemm>("moe_grouped_gemm")) p.moe_grouped_gemm = *x;
  if (auto x = r.enumeration<FsdpImplementation>("fsdp")) p.fsdp = *x;
  if (auto x = r.enumeration<CheckpointImplementation>("checkpoint")) p.checkpoint = *x;
  if (auto x = r.boolean("overlap_grad_reduce")) p.overlap_grad_reduce = *x;
  if (auto x = r.boolean("overlap_param_gather")) p.overlap_param_gather = *x;
  if (auto x = r.boolean("tp_comm_overlap")) p.tp_comm_overlap = *x;
  if (auto x = r.boolean("ep_comm_overlap")) p.ep_comm_overlap = *x;
  if (auto x = r.enumeration<CudaGraphs>("cuda_graphs")) p.cuda_graphs = *x;
  if (auto x = r.string("order")) p.order = *x;
  return p;
}

// The one-word precision of an inference scenario: int8 is W8A8 (SmoothQuant-style), int4 is
// weight-only with BF16 compute (AWQ/GPTQ-style), fp8 is W8A8 FP8 with FP8 weights.
PrecisionConfig inference_shorthand(DataType t) {
  PrecisionConfig p = precision_shorthand(t);
  switch (t) {
    case DataType::int8:
      p.params = DataType::int8;
      break;
    case DataType::int4:
      p.compute = DataType::bf16;
      p.params = DataType::int4;
      break;
    case DataType::fp8:
      p.params = DataType::fp8;
      break;
    default:
      break;
  }
  return p;
}

std::optional<PrecisionConfig> read_precision(Reader& ctx, const YamlValue& v, bool training) {
  const std::vector<std::string> training_words = {"fp32", "tf32", "fp16", "bf16", "fp8"};
  const std::vector<std::string> inference_words = {"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4"};
  const auto& words = training ? training_words : inference_words;
  const auto shorthand = [&](DataType t) { return training ? precision_shorthand(t) : inference_shorthand(t); };
  if (v.node.IsScalar()) {
    const auto word = read_choice(ctx.sink, v, words, "");
    if (!word) return std::nullopt;
    return shorthand(*parse_datatype(*word));
  }
  const MapReader r(ctx.sink, v.node, v.path, v.where,
                    {"compute", "params", "grads", "optimizer", "moments", "kv_cache", "fp8_scaling", "fp8_amax_group",
                     "master_weights", "master_remainders", "loss_scaling", "bf16_edge_layers", "fp8_attention"});
  if (!r.is_mapping()) return std::nullopt;
  std::vector<std::string> compute_formats = {"fp32", "tf32", "fp16", "bf16", "fp8", "mxfp8", "nvfp4"};
  if (!training) compute_formats.push_back("int8");
  PrecisionConfig p;
  const auto format = [&](const char* key, const std::vector<std::string>& allowed) -> std::optional<DataType> {
    const auto value = r.get(key);
    if (!value) return std::nullopt;
    const auto text = read_choice(ctx.sink, *value, allowed, "");
    return text ? parse_datatype(*text) : std::nullopt;
  };
  if (const auto c = format("compute", compute_formats)) {
    p = shorthand(*c);
  } else if (!r.has("compute")) {
    r.missing("compute", "the GEMM input format, e.g. bf16");
  }
  const std::vector<std::string> weight_formats =
      training ? std::vector<std::string>{"fp32", "fp16", "bf16", "fp8", "mxfp8"}
               : std::vector<std::string>{"fp32", "fp16", "bf16", "fp8", "int8", "int4", "mxfp8", "nvfp4"};
  const std::vector<std::string> state_formats = {"fp32", "fp16", "bf16"};
  if (auto t = format("params", weight_formats)) {
    p.params = *t;
    if (training && p.params == DataType::mxfp8 && p.compute != DataType::mxfp8) {
      const auto value = r.get("params");
      ctx.sink.error(value->where, value->path,
                     "params: mxfp8 keeps the weights as MXFP8 tensors for MXFP8 GEMMs; it needs compute: mxfp8, not " +
                         std::string(to_string(p.compute)),
                     "");
    }
  }
  if (auto t = format("grads", state_formats)) p.grads = *t;
  if (auto t = format("optimizer", state_formats)) p.optimizer = *t;
  if (auto t = format("moments", state_formats)) p.moments = *t;
  if (auto t = format("kv_cache", {"fp32", "fp16", "bf16", "fp8", "int8"})) p.kv_cache = *t;
  if (auto x = r.enumeration<Fp8Scaling>("fp8_scaling")) p.fp8_scaling = *x;
  if (auto x = r.enumeration<Fp8AmaxGroup>("fp8_amax_group")) {
    p.fp8_amax_group = *x;
    const auto value = r.get("fp8_amax_group");
    if (p.compute != DataType::fp8 || p.fp8_scaling != Fp8Scaling::delayed) {
      ctx.sink.error(value->where, value->path,
                     "fp8_amax_group says which ranks FP8 delayed scaling reduces its amaxes over; this precision "
                     "has none to reduce (it needs compute: fp8 with fp8_scaling: delayed; current scaling and the "
                     "MX/NV formats take each scale from the tensor itself)",
                     "");
    }
  }
  // 0: every Transformer layer in the quantized format (the performance scripts turn the edge layers off).
  if (auto x = r.integer("bf16_edge_layers", kNonNegative)) p.bf16_edge_layers = static_cast<int>(*x);
  if (auto x = r.boolean("master_weights")) p.master_weights = *x;
  if (auto x = r.boolean("loss_scaling")) p.loss_scaling = *x;
  if (auto x = r.boolean("fp8_attention")) p.fp8_attention = *x;
  if (auto x = r.boolean("master_remainders")) {
    p.master_remainders = *x;
    const auto value = r.get("master_remainders");
    if (*x && (p.params != DataType::bf16 || p.optimizer != DataType::fp32 || !p.master_weights)) {
      ctx.sink.error(value->where, value->path,
                     "master_remainders needs BF16 weights and an FP32 master copy (params: bf16, optimizer: fp32, "
                     "master_weights: true): it stores the 16 bits of the FP32 master the BF16 weight lacks",
                     "");
    }
  }
  return p;
}

Scenario read_document(YAML::Node& root, DiagnosticSink& sink, const Location& start, const std::string& source_name,
                       std::span<const Override> overrides, const Catalog& catalog);

}  // namespace

Override parse_override(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    throw UsageError("--set " + std::string(text) + ": expected key.path=value, e.g. --set parallel.tp=8");
  }
  Override o{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
  while (!o.key_path.empty() && o.key_path.back() == ' ') o.key_path.pop_back();
  while (!o.key_path.empty() && o.key_path.front() == ' ') o.key_path.erase(0, 1);
  if (o.key_path.empty()) {
    throw UsageError("--set " + std::string(text) + ": the key before '=' is empty, e.g. --set parallel.tp=8");
  }
  return o;
}

Scenario parse_scenario(std::string_view yaml_text, const std::string& source_name, std::span<const Override> overrides,
                        const Catalog& catalog) {
  DiagnosticSink sink(source_name);
  const std::string expected_document =
      "a scenario needs schema_version: 1, model, system, and training or inference (see DESIGN.md)";
  if (yaml_text.find('\0') != std::string_view::npos) {
    sink.error({source_name, 0, 0}, "", "not a text file (it contains NUL bytes); " + expected_document);
    sink.throw_if_errors();
  }
  const std::optional<YAML::Node> document = load_document(sink, std::string(yaml_text));
  sink.throw_if_errors();
  YAML::Node root = *document;
  if (root.IsNull()) {
    sink.error({source_name, 0, 0}, "", "the file is empty; " + expected_document);
    sink.throw_if_errors();
  }
  return read_document(root, sink, sink.start_of_file(), source_name, overrides, catalog);
}

std::string apply_overrides(std::string_view yaml_text, std::span<const Override> overrides) {
  DiagnosticSink sink("<document>");
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    sink.error({"<document>", e.mark.line + 1, e.mark.column + 1}, "", "not valid YAML: " + e.msg);
  }
  for (const Override& o : overrides) apply_override(root, o, sink);
  sink.throw_if_errors();
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

Scenario parse_scenario_node(const YAML::Node& document, const std::string& source_name, const Catalog& catalog) {
  DiagnosticSink sink(source_name);
  YAML::Node root = document;  // a handle; reading never changes the document (no overrides)
  return read_document(root, sink, sink.location_of(document, sink.start_of_file()), source_name, {}, catalog);
}

namespace {

Scenario read_document(YAML::Node& root, DiagnosticSink& sink, const Location& start, const std::string& source_name,
                       std::span<const Override> overrides, const Catalog& catalog) {
  const std::string expected_document =
      "a scenario needs schema_version: 1, model, system, and training or inference (see DESIGN.md)";
  if (!root.IsMap()) {
    sink.error(start, "", "expected a mapping at the top level, found " + describe_node(root) + "; " +
                              expected_document);
    sink.throw_if_errors();
  }
  for (const Override& o : overrides) apply_override(root, o, sink);

  std::filesystem::path base_dir;
  if (source_name.rfind("<builtin>", 0) != 0) base_dir = std::filesystem::path(source_name).parent_path();
  Reader ctx{sink, catalog, base_dir};

  const MapReader top(sink, root, "", start,
                      {"schema_version", "name", "model", "system", "training", "inference", "parallel", "precision"});
  Scenario scenario;
  scenario.source = source_name;
  scenario.name = std::filesystem::path(source_name).stem().string();
  ScenarioReadState state;

  if (const auto v = top.get("schema_version")) {
    if (!v->node.IsScalar() || v->node.Scalar() != std::to_string(kSchemaVersion)) {
      sink.error(v->where, v->path, "unsupported schema_version " + describe_node(v->node) +
                                        "; this stepcast reads schema_version 1");
    }
  } else {
    top.missing("schema_version", "1");
  }
  if (auto name = top.string("name")) scenario.name = *name;

  // Reads one top-level section; true when it yielded a value (its fields may still have errors).
  const auto section = [&](const char* key, auto read) -> bool {
    const auto v = top.get(key);
    if (!v) return false;
    return read(*v).has_value();
  };

  state.model_read = section("model", [&](const YamlValue& v) {
    auto m = read_model(ctx, v);
    if (m) {
      check_model(sink, "model", *m);
      scenario.model = *m;
    }
    return m;
  });
  if (!top.has("model")) top.missing("model", "a catalog model name, or a mapping with layers, hidden, heads, vocab");

  state.system_read = section("system", [&](const YamlValue& v) {
    auto s = read_system(ctx, v);
    if (s) scenario.system = *s;
    return s;
  });
  if (!top.has("system")) top.missing("system", "a mapping with gpu and gpus");

  const bool has_training = top.has("training");
  const bool has_inference = top.has("inference");
  if (has_training && has_inference) {
    top.not_allowed("inference", "a scenario has either training or inference, not both");
  } else if (!has_training && !has_inference) {
    sink.error(top.where(), "training", "missing required key 'training' or 'inference' (what the scenario runs)");
  } else if (has_training) {
    state.workload_read = section("training", [&](const YamlValue& v) {
      auto t = read_training(ctx, v);
      if (t) scenario.workload = *t;
      return t;
    });
  } else {
    state.workload_read = section("inference", [&](const YamlValue& v) {
      auto w = read_inference(ctx, v);
      if (w) scenario.workload = *w;
      return w;
    });
  }

  if (top.has("parallel")) {
    state.parallel_read = section("parallel", [&](const YamlValue& v) {
      auto p = read_parallel(ctx, v, state.dp_given);
      if (p) scenario.parallel = *p;
      return p;
    });
  } else {
    state.parallel_read = true;
  }

  const bool training = !has_inference;
  if (top.has("precision")) {
    state.precision_read = section("precision", [&](const YamlValue& v) {
      auto p = read_precision(ctx, v, training);
      if (p) scenario.precision = *p;
      return p;
    });
  } else {
    scenario.precision = precision_shorthand(DataType::bf16);
    state.precision_read = true;
  }

  state.reading_errors = sink.error_count();
  state.dp_valid = derive_data_parallel(sink, scenario, state);
  check_scenario(sink, scenario, state);
  sink.mark_consistency_errors(state.reading_errors);
  sink.throw_if_errors();
  return scenario;
}

}  // namespace

Scenario load_scenario(const std::string& name_or_path, std::span<const Override> overrides, const Catalog& catalog) {
  if (names_a_file(name_or_path)) {
    return parse_scenario(read_text_file(name_or_path), name_or_path, overrides, catalog);
  }
  if (const CatalogScenario* s = catalog.find_scenario(name_or_path)) {
    return parse_scenario(s->text, s->source, overrides, catalog);
  }
  const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                               name_or_path.find(".yaml") != std::string::npos ||
                               name_or_path.find(".yml") != std::string::npos;
  if (looks_like_path || std::filesystem::is_directory(name_or_path)) {
    read_text_file(name_or_path);  // throws, saying why: no such file, or a directory
  }
  throw InputError({Diagnostic{name_or_path, 0, 0, "",
                               "neither a scenario file nor a catalog scenario (see `stepcast catalog scenarios`)",
                               did_you_mean(name_or_path, catalog.scenario_names())}});
}

PrecisionConfig inference_precision_shorthand(DataType word) { return inference_shorthand(word); }

}  // namespace stepcast
