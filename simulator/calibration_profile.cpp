#include "simulator/calibration_profile.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "simulator/diagnostics.h"
#include "simulator/text_file.h"

namespace stepcast {

namespace {

using nlohmann::ordered_json;

std::string level_key(double level) { return fmt::format("{:g}", level); }

// --- Writing -----------------------------------------------------------------------------------

ordered_json stats_json(const ResidualStats& s) {
  ordered_json j;
  j["n"] = s.n;
  j["mean_abs"] = s.mean_abs;
  j["max_abs"] = s.max_abs;
  j["bias"] = s.bias;
  j["rms"] = s.rms;
  ordered_json q = ordered_json::object();
  for (std::size_t i = 0; i < kIntervalLevels.size(); ++i) {
    q[level_key(kIntervalLevels[i])] = s.abs_quantiles[i] ? ordered_json(*s.abs_quantiles[i]) : ordered_json(nullptr);
  }
  j["abs_quantiles"] = q;
  return j;
}

ordered_json coverage_json(const Coverage& c) {
  ordered_json ranges = ordered_json::object();
  for (const auto& [k, r] : c.ranges) ranges[k] = ordered_json::array({r.first, r.second});
  ordered_json values = ordered_json::object();
  for (const auto& [k, v] : c.values) values[k] = v;
  return ordered_json{{"ranges", ranges}, {"values", values}};
}

ordered_json fitted_json(const std::vector<FittedValue>& values) {
  ordered_json out = ordered_json::array();
  for (const auto& v : values) {
    out.push_back(ordered_json{{"name", v.name},
                               {"value", v.value},
                               {"datasheet", v.datasheet},
                               {"unit", v.unit},
                               {"fitted_from", v.fitted_from}});
  }
  return out;
}

// --- Reading: strict, every error names the key path -------------------------------------------

class Reader {
 public:
  explicit Reader(std::string source) : m_source(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    Diagnostic d;
    d.file = m_source;
    d.key_path = path;
    d.message = message;
    throw InputError(std::vector<Diagnostic>{d});
  }

  const ordered_json& member(const ordered_json& object, const std::string& path, const char* key) const {
    const auto it = object.find(key);
    if (it == object.end()) fail(join(path, key), "missing required key");
    return *it;
  }

  void only_keys(const ordered_json& object, const std::string& path, std::initializer_list<const char*> keys) const {
    if (!object.is_object()) fail(path, std::string("expected an object, found ") + object.type_name());
    std::vector<std::string> allowed(keys.begin(), keys.end());
    for (const auto& [key, value] : object.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      const std::string guess = closest_match(key, allowed);
      Diagnostic d;
      d.file = m_source;
      d.key_path = join(path, key.c_str());
      d.message = "unknown key '" + key + "'";
      if (!guess.empty()) d.suggestion = "did you mean '" + guess + "'?";
      throw InputError(std::vector<Diagnostic>{d});
    }
  }

  std::string string(const ordered_json& object, const std::string& path, const char* key) const {
    const auto& v = member(object, path, key);
    if (!v.is_string()) fail(join(path, key), std::string("expected a string, found ") + v.type_name());
    return v.get<std::string>();
  }

  double number(const ordered_json& object, const std::string& path, const char* key) const {
    const auto& v = member(object, path, key);
    if (!v.is_number()) fail(join(path, key), std::string("expected a number, found ") + v.type_name());
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(join(path, key), "expected a finite number");
    return d;
  }

  int integer(const ordered_json& object, const std::string& path, const char* key) const {
    const double d = number(object, path, key);
    if (d != std::floor(d) || d < 0) fail(join(path, key), "expected a non-negative integer");
    return static_cast<int>(d);
  }

  const ordered_json& array(const ordered_json& object, const std::string& path, const char* key) const {
    const auto& v = member(object, path, key);
    if (!v.is_array()) fail(join(path, key), std::string("expected an array, found ") + v.type_name());
    return v;
  }

  static std::string join(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }
  static std::string index(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

 private:
  std::string m_source;
};

ResidualStats read_stats(const Reader& r, const ordered_json& j, const std::string& path) {
  r.only_keys(j, path, {"n", "mean_abs", "max_abs", "bias", "rms", "abs_quantiles"});
  ResidualStats s;
  s.n = r.integer(j, path, "n");
  s.mean_abs = r.number(j, path, "mean_abs");
  s.max_abs = r.number(j, path, "max_abs");
  s.bias = r.number(j, path, "bias");
  s.rms = r.number(j, path, "rms");
  const std::string qpath = Reader::join(path, "abs_quantiles");
  const auto& q = r.member(j, path, "abs_quantiles");
  if (!q.is_object()) r.fail(qpath, "expected an object");
  for (std::size_t i = 0; i < kIntervalLevels.size(); ++i) {
    const std::string key = level_key(kIntervalLevels[i]);
    const auto it = q.find(key);
    if (it == q.end()) r.fail(qpath + "." + key, "missing required key");
    if (it->is_null()) continue;
    if (!it->is_number() || it->get<double>() < 0.0) r.fail(qpath + "." + key, "expected a non-negative number or null");
    s.abs_quantiles[i] = it->get<double>();
  }
  if (q.size() != kIntervalLevels.size()) r.fail(qpath, "expected exactly the levels 0.5, 0.8, 0.9, 0.95");
  return s;
}

Coverage read_coverage(const Reader& r, const ordered_json& j, const std::string& path) {
  r.only_keys(j, path, {"ranges", "values"});
  Coverage c;
  const auto& ranges = r.member(j, path, "ranges");
  if (!ranges.is_object()) r.fail(Reader::join(path, "ranges"), "expected an object");
  for (const auto& [key, v] : ranges.items()) {
    const std::string p = Reader::join(path, "ranges") + "." + key;
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number()) r.fail(p, "expected [min, max]");
    if (v[0].get<double>() > v[1].get<double>()) r.fail(p, "min is above max");
    c.ranges[key] = {v[0].get<double>(), v[1].get<double>()};
  }
  const auto& values = r.member(j, path, "values");
  if (!values.is_object()) r.fail(Reader::join(path, "values"), "expected an object");
  for (const auto& [key, v] : values.items()) {
    const std::string p = Reader::join(path, "values") + "." + key;
    if (!v.is_array()) r.fail(p, "expected an array of strings");
    for (const auto& s : v) {
      if (!s.is_string()) r.fail(p, "expected an array of strings");
      c.values[key].push_back(s.get<std::string>());
    }
  }
  return c;
}

template <class Params>
std::set<std::string> parameter_names(Params params) {
  std::set<std::string> names;
  if constexpr (std::is_same_v<Params, CostParameters>) {
    params.for_each_constant([&](std::string_view name, double&, std::string_view) { names.emplace(name); });
  } else {
    params.for_each_parameter([&](std::string_view name, double&, std::string_view, std::string_view) {
      names.emplace(name);
    });
  }
  return names;
}

std::vector<FittedValue> read_fitted(const Reader& r, const ordered_json& j, const char* key,
                                     const std::set<std::string>& known) {
  std::vector<FittedValue> out;
  const auto& items = r.array(j, "", key);
  std::set<std::string> seen;
  std::vector<std::string> known_list(known.begin(), known.end());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string path = Reader::index(key, i);
    r.only_keys(items[i], path, {"name", "value", "datasheet", "unit", "fitted_from"});
    FittedValue v;
    v.name = r.string(items[i], path, "name");
    v.value = r.number(items[i], path, "value");
    v.datasheet = r.number(items[i], path, "datasheet");
    v.unit = r.string(items[i], path, "unit");
    v.fitted_from = r.string(items[i], path, "fitted_from");
    if (known.count(v.name) == 0) {
      const std::string guess = closest_match(v.name, known_list);
      r.fail(path + ".name", "the model has no constant '" + v.name + "'" +
                                 (guess.empty() ? std::string() : "; did you mean '" + guess + "'?"));
    }
    if (!seen.insert(v.name).second) r.fail(path + ".name", "'" + v.name + "' is fitted twice");
    out.push_back(std::move(v));
  }
  return out;
}

template <class Params, class Visit>
void set_by_name(Params& params, const std::vector<FittedValue>& values, Visit&& visit_all) {
  std::map<std::string, double> by_name;
  for (const auto& v : values) by_name[v.name] = v.value;
  visit_all(params, [&](std::string_view name, double& value) {
    const auto it = by_name.find(std::string(name));
    if (it != by_name.end()) value = it->second;
  });
}

std::string describe_range(double lo, double hi) {
  return lo == hi ? fmt::format("{:g}", lo) : fmt::format("{:g}..{:g}", lo, hi);
}

}  // namespace

// --- Coverage ------------------------------------------------------------------------------------

void Coverage::include(const std::string& quantity, double value) {
  auto [it, inserted] = ranges.try_emplace(quantity, value, value);
  if (!inserted) {
    it->second.first = std::min(it->second.first, value);
    it->second.second = std::max(it->second.second, value);
  }
}

void Coverage::include_value(const std::string& quantity, const std::string& value) {
  auto& list = values[quantity];
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

std::vector<std::string> Coverage::outside(const std::map<std::string, double>& quantities) const {
  std::vector<std::string> out;
  for (const auto& [name, value] : quantities) {
    const auto it = ranges.find(name);
    if (it == ranges.end()) continue;
    const auto [lo, hi] = it->second;
    // A relative tolerance: coverage records the exact values measured.
    if (value < lo * (1.0 - 1e-9)) {
      out.push_back(fmt::format("{} = {:g} below the measured {}", name, value, describe_range(lo, hi)));
    } else if (value > hi * (1.0 + 1e-9)) {
      out.push_back(fmt::format("{} = {:g} above the measured {}", name, value, describe_range(lo, hi)));
    }
  }
  return out;
}

const ComponentCalibration* CalibrationProfile::component(const std::string& component_name) const {
  for (const auto& c : components) {
    if (c.name == component_name) return &c;
  }
  return nullptr;
}

// --- JSON ----------------------------------------------------------------------------------------

std::string profile_to_json_text(const CalibrationProfile& p) {
  ordered_json j;
  j["schema"] = std::string(kProfileSchemaName);
  j["schema_version"] = p.schema_version;
  j["name"] = p.name;
  j["created_utc"] = p.created_utc;
  j["tool"] = ordered_json{{"name", "stepcast"}, {"version", p.tool_version}, {"git_sha", p.git_sha}};
  j["applies_to"] = ordered_json{
      {"gpu", p.gpu}, {"gpu_device_name", p.gpu_device_name}, {"sm_count", p.sm_count}, {"system", p.system}};
  ordered_json inputs = ordered_json::array();
  for (const auto& in : p.inputs) {
    ordered_json prov = ordered_json::object();
    for (const auto& [k, v] : in.provenance) prov[k] = v;
    inputs.push_back(ordered_json{{"path", in.path},
                                  {"sha256", in.sha256},
                                  {"kind", in.kind},
                                  {"points", in.points},
                                  {"provenance", prov}});
  }
  j["inputs"] = inputs;
  j["cost_parameters"] = fitted_json(p.cost_parameters);
  j["nccl_parameters"] = fitted_json(p.nccl_parameters);
  ordered_json components = ordered_json::array();
  for (const auto& c : p.components) {
    components.push_back(ordered_json{{"name", c.name},
                                      {"points", c.points},
                                      {"in_sample", stats_json(c.in_sample)},
                                      {"held_out", stats_json(c.held_out)},
                                      {"coverage", coverage_json(c.coverage)}});
  }
  j["components"] = components;
  j["notes"] = p.notes;
  return j.dump(2) + "\n";
}

CalibrationProfile parse_profile_text(const std::string& text, const std::string& source) {
  const Reader r(source);
  ordered_json j;
  try {
    j = ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    r.fail("", std::string("not valid JSON: ") + e.what());
  }
  r.only_keys(j, "", {"schema", "schema_version", "name", "created_utc", "tool", "applies_to", "inputs",
                      "cost_parameters", "nccl_parameters", "components", "notes"});
  if (r.string(j, "", "schema") != kProfileSchemaName) {
    r.fail("schema", "expected \"" + std::string(kProfileSchemaName) + "\" (is this a calibration profile?)");
  }
  CalibrationProfile p;
  p.schema_version = r.integer(j, "", "schema_version");
  if (p.schema_version != kProfileSchemaVersion) {
    r.fail("schema_version", "version " + std::to_string(p.schema_version) + " is not supported (this stepcast reads " +
                                 std::to_string(kProfileSchemaVersion) + ")");
  }
  p.name = r.string(j, "", "name");
  if (p.name.empty()) r.fail("name", "a profile needs a name");
  if (p.name == kDatasheetVariantName) r.fail("name", "'datasheet' is reserved for the uncalibrated model");
  p.created_utc = r.string(j, "", "created_utc");
  const auto& tool = r.member(j, "", "tool");
  r.only_keys(tool, "tool", {"name", "version", "git_sha"});
  r.string(tool, "tool", "name");
  p.tool_version = r.string(tool, "tool", "version");
  p.git_sha = r.string(tool, "tool", "git_sha");
  const auto& applies = r.member(j, "", "applies_to");
  r.only_keys(applies, "applies_to", {"gpu", "gpu_device_name", "sm_count", "system"});
  p.gpu = r.string(applies, "applies_to", "gpu");
  p.gpu_device_name = r.string(applies, "applies_to", "gpu_device_name");
  p.sm_count = r.integer(applies, "applies_to", "sm_count");
  p.system = r.string(applies, "applies_to", "system");
  if (p.gpu.empty()) r.fail("applies_to.gpu", "a profile must name the GPU it was measured on");

  const auto& inputs = r.array(j, "", "inputs");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string path = Reader::index("inputs", i);
    r.only_keys(inputs[i], path, {"path", "sha256", "kind", "points", "provenance"});
    InputProvenance in;
    in.path = r.string(inputs[i], path, "path");
    in.sha256 = r.string(inputs[i], path, "sha256");
    in.kind = r.string(inputs[i], path, "kind");
    in.points = r.integer(inputs[i], path, "points");
    const auto& prov = r.member(inputs[i], path, "provenance");
    if (!prov.is_object()) r.fail(path + ".provenance", "expected an object of strings");
    for (const auto& [k, v] : prov.items()) {
      if (!v.is_string()) r.fail(path + ".provenance." + k, "expected a string");
      in.provenance[k] = v.get<std::string>();
    }
    p.inputs.push_back(std::move(in));
  }
  p.cost_parameters = read_fitted(r, j, "cost_parameters", parameter_names(CostParameters{}));
  p.nccl_parameters = read_fitted(r, j, "nccl_parameters", parameter_names(NcclParameters{}));
  const auto& components = r.array(j, "", "components");
  for (std::size_t i = 0; i < components.size(); ++i) {
    const std::string path = Reader::index("components", i);
    r.only_keys(components[i], path, {"name", "points", "in_sample", "held_out", "coverage"});
    ComponentCalibration c;
    c.name = r.string(components[i], path, "name");
    c.points = r.integer(components[i], path, "points");
    c.in_sample = read_stats(r, r.member(components[i], path, "in_sample"), path + ".in_sample");
    c.held_out = read_stats(r, r.member(components[i], path, "held_out"), path + ".held_out");
    c.coverage = read_coverage(r, r.member(components[i], path, "coverage"), path + ".coverage");
    p.components.push_back(std::move(c));
  }
  const auto& notes = r.array(j, "", "notes");
  for (std::size_t i = 0; i < notes.size(); ++i) {
    if (!notes[i].is_string()) r.fail(Reader::index("notes", i), "expected a string");
    p.notes.push_back(notes[i].get<std::string>());
  }
  return p;
}

CalibrationProfile load_profile(const std::filesystem::path& path) {
  return parse_profile_text(read_text_file(path), path.string());
}

void save_profile(const std::filesystem::path& path, const CalibrationProfile& profile) {
  const std::string text = profile_to_json_text(profile);
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path.string() + ": cannot write the calibration profile");
    out << text;
    if (!out.flush()) throw InputError(path.string() + ": cannot write the calibration profile");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) throw InputError(path.string() + ": cannot write the calibration profile (" + ec.message() + ")");
}

// --- Applying ------------------------------------------------------------------------------------

CostParameters apply_profile(const CalibrationProfile& profile, CostParameters base) {
  set_by_name(base, profile.cost_parameters, [](CostParameters& p, auto&& set) {
    p.for_each_constant([&](std::string_view name, double& value, std::string_view) { set(name, value); });
  });
  return base;
}

NcclParameters apply_profile(const CalibrationProfile& profile, NcclParameters base) {
  set_by_name(base, profile.nccl_parameters, [](NcclParameters& p, auto&& set) {
    p.for_each_parameter(
        [&](std::string_view name, double& value, std::string_view, std::string_view) { set(name, value); });
  });
  return base;
}

std::vector<std::string> check_profile_applies(const CalibrationProfile& profile, const SystemSpec& system,
                                               bool force) {
  std::vector<std::string> problems;
  if (profile.gpu != system.gpu.name) {
    problems.push_back("profile '" + profile.name + "' was measured on GPU '" + profile.gpu + "', the scenario runs on '" +
                       (system.gpu.name.empty() ? "(unnamed GPU)" : system.gpu.name) + "'");
  } else if (profile.sm_count > 0 && system.gpu.sm_count > 0 && profile.sm_count != system.gpu.sm_count) {
    problems.push_back("profile '" + profile.name + "' was measured on a GPU with " + std::to_string(profile.sm_count) +
                       " SMs, the scenario's has " + std::to_string(system.gpu.sm_count));
  }
  if (!profile.system.empty() && profile.system != system.name) {
    problems.push_back("profile '" + profile.name + "' fitted collectives on system '" + profile.system +
                       "', the scenario runs on '" + (system.name.empty() ? "(unnamed system)" : system.name) + "'");
  }
  if (problems.empty() || force) return problems;
  std::string message = problems.front();
  for (std::size_t i = 1; i < problems.size(); ++i) message += "; " + problems[i];
  throw InputError(message + " (a profile applies only to what it was measured on; --force uses it anyway)");
}

ModelVariant datasheet_variant() {
  ModelVariant v;
  v.name = std::string(kDatasheetVariantName);
  v.description = "uncalibrated: datasheet peaks with the documented default constants";
  return v;
}

ModelVariant model_variant_named(const std::string& calibration) {
  if (calibration.empty() || calibration == kDatasheetVariantName) return datasheet_variant();
  return calibrated_variant(std::make_shared<const CalibrationProfile>(load_profile(calibration)));
}

ModelVariant calibrated_variant(std::shared_ptr<const CalibrationProfile> profile) {
  ModelVariant v;
  v.name = profile->name;
  v.description = fmt::format("calibrated on {}{} ({} input file{}, {})", profile->gpu,
                              profile->system.empty() ? "" : " / " + profile->system, profile->inputs.size(),
                              profile->inputs.size() == 1 ? "" : "s", profile->created_utc);
  v.cost = apply_profile(*profile);
  v.nccl = apply_profile(*profile, NcclParameters{});
  v.profile = std::move(profile);
  return v;
}

}  // namespace stepcast
