#include "validation/calibration.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <variant>

#include <fmt/format.h>

#include "simulator/diagnostics.h"
#include "validation/gpu_names.h"
#include "validation/measurement_input.h"
#include "validation/measurement_records.h"
#include "validation/sha256.h"

namespace stepcast {

namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(std::vector<Diagnostic>{{path.string(), 0, 0, "", "cannot open the file", ""}});
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

// The catalog GPU of a device: the key the harness recorded, else the name mapping.
std::optional<std::string> catalog_key(const DeviceInfo& d) {
  if (d.catalog_gpu) return d.catalog_gpu;
  return catalog_gpu_for(d.name, d.memory_bytes);
}

std::map<std::string, std::string> harness_provenance(const MeasurementFile& f) {
  const Provenance& p = f.provenance;
  std::map<std::string, std::string> out{{"tool", p.tool},
                                         {"tool_version", p.tool_version},
                                         {"git_sha", p.git_sha},
                                         {"command", p.command},
                                         {"argv", join(p.argv, " ")},
                                         {"host", p.host},
                                         {"started_utc", p.started_utc},
                                         {"finished_utc", p.finished_utc},
                                         {"cuda_driver_api", p.cuda_driver_api},
                                         {"cuda_runtime", p.cuda_runtime},
                                         {"cublas", p.cublas},
                                         {"ranks", std::to_string(p.ranks)},
                                         {"nodes", std::to_string(p.nodes)},
                                         {"complete", f.complete ? "true" : "false"}};
  if (p.driver_version) out["driver"] = *p.driver_version;
  if (p.cudnn) out["cudnn"] = *p.cudnn;
  if (p.nccl) out["nccl"] = *p.nccl;
  std::vector<std::string> devices;
  for (const auto& d : p.devices) devices.push_back(fmt::format("{} ({} SMs, cc {})", d.name, d.sm_count, d.compute_capability));
  out["devices"] = join(devices, "; ");
  return out;
}

std::map<std::string, std::string> log_provenance(const NcclTestsLog& log) {
  std::map<std::string, std::string> out{{"tool", "nccl-tests"},
                                         {"op", log.op ? std::string(to_string(*log.op)) : ""},
                                         {"ranks", std::to_string(log.ranks)},
                                         {"gpus_per_thread", std::to_string(log.gpus_per_thread)}};
  if (!log.nccl_version.empty()) out["nccl"] = log.nccl_version;
  // The fixture header (`# key: value`) keeps where a public log came from.
  for (const char* key : {"title", "system", "source", "nccl_version", "command", "env", "status"}) {
    const auto it = log.metadata.find(key);
    if (it != log.metadata.end()) out[std::string("log.") + key] = it->second;
  }
  return out;
}

// One measured point's errors and what its coverage records.
struct Row {
  std::string component;
  double measured = 0.0;
  double predicted = 0.0;
  double held_out = 0.0;  // 0: not cross-validated (the in-sample prediction stands in)
  std::map<std::string, double> quantities;
  std::map<std::string, std::string> values;
};

std::vector<ComponentCalibration> components_of(const std::vector<Row>& rows) {
  std::map<std::string, std::vector<const Row*>> by;
  for (const auto& r : rows) by[r.component].push_back(&r);
  std::vector<ComponentCalibration> out;
  for (const auto& [name, members] : by) {
    ComponentCalibration c;
    c.name = name;
    c.points = static_cast<int>(members.size());
    std::vector<double> in_sample;
    std::vector<double> held_out;
    for (const Row* r : members) {
      in_sample.push_back(r->predicted / r->measured - 1.0);
      held_out.push_back((r->held_out > 0.0 ? r->held_out : r->predicted) / r->measured - 1.0);
      for (const auto& [q, v] : r->quantities) c.coverage.include(q, v);
      for (const auto& [q, v] : r->values) c.coverage.include_value(q, v);
    }
    c.in_sample = summarize_residuals(in_sample);
    c.held_out = summarize_residuals(held_out);
    out.push_back(std::move(c));
  }
  return out;
}

void add_problem(std::vector<std::string>& notes, bool force, const std::string& message) {
  if (!force) throw InputError(message + " (--force uses the measurements anyway and records this in the profile)");
  notes.push_back("accepted with --force: " + message);
}

}  // namespace

std::string_view to_string(InputKind kind) {
  switch (kind) {
    case InputKind::harness: return "harness";
    case InputKind::nccl_tests: return "nccl-tests";
    case InputKind::published_runs: return "published-runs";
  }
  return "?";
}

InputKind detect_input_kind(const std::filesystem::path& path) {
  const std::string text = read_text(path);
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i < text.size() && text[i] == '{') return InputKind::harness;
  // A published-runs file is YAML with these top-level sections.
  if (text.find("\ntraining_runs:") != std::string::npos || text.rfind("training_runs:", 0) == 0 ||
      text.find("\ninference_runs:") != std::string::npos) {
    return InputKind::published_runs;
  }
  return InputKind::nccl_tests;
}

LoadedMeasurements load_measurements(const CalibrationRequest& request, const Catalog& catalog) {
  LoadedMeasurements out;
  if (request.inputs.empty()) throw UsageError("no measurement files given");
  std::optional<std::string> gpu_key;
  std::string gpu_source;
  std::vector<std::pair<MeasurementFile, std::string>> harness_files;
  std::vector<NcclTestsLog> logs;

  for (const auto& path : request.inputs) {
    const InputKind kind = detect_input_kind(path);
    InputProvenance prov;
    prov.path = path.string();
    prov.kind = std::string(to_string(kind));
    prov.sha256 = sha256_file_hex(path);
    if (kind == InputKind::published_runs) {
      throw InputError(path.string() + ": a published-runs file holds no kernel or collective measurements to fit; "
                                       "use it with `stepcast validate`");
    }
    if (kind == InputKind::harness) {
      MeasurementFile file = load_measurement_file(path);
      prov.provenance = harness_provenance(file);
      if (!file.complete) {
        out.notes.push_back(path.string() + ": the run ended early (complete: false); its measured points are used");
      }
      if (!file.skipped.empty()) {
        out.notes.push_back(fmt::format("{}: {} points were skipped by the harness (see the file's `skipped`)",
                                        path.string(), file.skipped.size()));
      }
      // Which GPU: every device a record used must be the same catalog GPU.
      std::map<int, const DeviceInfo*> devices;
      for (const auto& d : file.provenance.devices) devices[d.index] = &d;
      for (std::size_t i = 0; i < file.records.size(); ++i) {
        const Measurement& r = file.records[i];
        if (const auto* s = std::get_if<SelftestInputs>(&r.inputs)) {
          if (!s->passed) {
            add_problem(out.notes, request.force,
                        fmt::format("{}: records[{}] selftest '{}' failed (measured {:g}, expected {:g}): this run's "
                                    "timings are not trustworthy",
                                    path.string(), i, s->test, s->measured, s->expected));
          }
          continue;
        }
        if (!r.check.passed) {
          throw InputError(fmt::format("{}: records[{}] ({}) failed its result check ({}); a failed measurement "
                                       "is never fitted: re-measure it",
                                       path.string(), i, r.name, r.check.method.empty() ? "no method" : r.check.method));
        }
        const auto it = devices.find(r.device);
        if (it == devices.end()) continue;  // the reader already checks device indices
        const auto key = catalog_key(*it->second);
        if (!key) {
          throw InputError(fmt::format("{}: GPU '{}' is not in the catalog (stepcast catalog gpus); a profile must "
                                       "name the catalog GPU it applies to",
                                       path.string(), it->second->name));
        }
        if (!gpu_key) {
          gpu_key = key;
          gpu_source = path.string();
          out.gpu_device_name = it->second->name;
          out.sm_count = it->second->sm_count;
        } else if (*gpu_key != *key) {
          throw InputError(fmt::format("{}: measured on '{}', but {} was measured on '{}': a profile applies to one GPU",
                                       path.string(), *key, gpu_source, *gpu_key));
        }
      }
      harness_files.emplace_back(std::move(file), path.string());
    } else {
      NcclTestsLog log = read_nccl_tests_log(path);
      prov.provenance = log_provenance(log);
      logs.push_back(std::move(log));
    }
    out.inputs.push_back(std::move(prov));
  }

  // The system collectives ran on, and the GPU.
  const bool has_collectives =
      !logs.empty() || std::any_of(harness_files.begin(), harness_files.end(), [](const auto& f) {
        return std::any_of(f.first.records.begin(), f.first.records.end(),
                           [](const Measurement& r) { return r.kind() == MeasurementKind::collective; });
      });
  std::string system_name = request.system;
  if (system_name.empty() && has_collectives) {
    if (!gpu_key) {
      throw UsageError("nccl-tests logs do not say which machines they ran on: give --system NAME "
                       "(`stepcast catalog systems` lists them)");
    }
    system_name = catalog.default_system_name(*gpu_key);
    if (system_name.empty()) {
      throw UsageError("collectives were measured on '" + *gpu_key +
                       "', which has no default catalog system: give --system NAME");
    }
    out.notes.push_back("collectives placed on '" + system_name + "', the catalog's default system for " + *gpu_key +
                        " (give --system to choose)");
  }
  if (!system_name.empty()) {
    const SystemSpec* s = catalog.find_system(system_name);
    if (s == nullptr) {
      const std::string guess = closest_match(system_name, catalog.system_names());
      throw UsageError("unknown --system '" + system_name + "'" + (guess.empty() ? "" : "; did you mean '" + guess + "'?") +
                       " (`stepcast catalog systems` lists them)");
    }
    out.system = *s;
    if (gpu_key && *gpu_key != s->gpu.name) {
      add_problem(out.notes, request.force,
                  fmt::format("the harness measured '{}' ({}), but system '{}' has '{}'", *gpu_key, gpu_source,
                              system_name, s->gpu.name));
    }
    if (!gpu_key) gpu_key = s->gpu.name;
  }
  const GpuSpec* gpu = catalog.find_gpu(*gpu_key);
  if (gpu == nullptr) throw InputError("GPU '" + *gpu_key + "' is not in the catalog");
  out.gpu = *gpu;
  if (out.sm_count > 0 && gpu->sm_count > 0 && out.sm_count != gpu->sm_count) {
    add_problem(out.notes, request.force,
                fmt::format("{} reports {} SMs, the catalog's {} has {}: not the catalog part", gpu_source, out.sm_count,
                            gpu->name, gpu->sm_count));
  }
  if (out.sm_count == 0) out.sm_count = gpu->sm_count;

  // Points, counted per input file.
  std::map<std::string, int> counts;
  for (const auto& [file, source] : harness_files) {
    auto kernels = kernel_points(file);
    for (auto& k : kernels) k.source = source;
    counts[source] += static_cast<int>(kernels.size());
    out.kernels.insert(out.kernels.end(), kernels.begin(), kernels.end());
    if (out.system) {
      CollectiveDataset d = collective_dataset(file, source, *out.system);
      counts[source] += static_cast<int>(d.points.size());
      if (!d.points.empty()) out.collectives.push_back(std::move(d));
    }
  }
  for (const auto& log : logs) {
    out.collectives.push_back(collective_dataset(log, *out.system, request.ranks_per_node, request.ranks));
    counts[log.source] += static_cast<int>(out.collectives.back().points.size());
  }
  for (auto& in : out.inputs) in.points = counts[in.path];
  if (out.kernels.empty() && out.collectives.empty()) throw InputError("the measurement files hold no points to fit");
  return out;
}

CalibrationProfile calibrate(const LoadedMeasurements& m, const CalibrationRequest& request) {
  CalibrationProfile profile;
  profile.name = request.name;
  profile.created_utc = utc_timestamp_now();
  profile.tool_version = STEPCAST_VERSION;
  profile.git_sha = STEPCAST_GIT_SHA;
  profile.gpu = m.gpu.name;
  profile.gpu_device_name = m.gpu_device_name;
  profile.sm_count = m.sm_count;
  profile.inputs = m.inputs;
  profile.notes = m.notes;
  std::vector<Row> rows;

  if (!m.kernels.empty()) {
    const KernelFit fit = fit_kernels(m.kernels, m.gpu, CostParameters{}, request.kernel_options);
    profile.cost_parameters = fit.fitted;
    for (const auto& n : fit.notes) profile.notes.push_back(n);
    profile.notes.push_back("kernel efficiencies are burst figures (the harness discards throttled samples); "
                            "training predictions apply compute.sustained_derate on top");
    for (std::size_t i = 0; i < m.kernels.size(); ++i) {
      const KernelResidual& r = fit.points[i];
      Row row;
      row.component = r.component;
      row.measured = r.measured_s;
      row.predicted = r.predicted_s;
      row.held_out = r.fitted ? r.held_out_predicted_s : 0.0;
      row.quantities = m.kernels[i].shape;
      if (m.kernels[i].op.kind == OpKind::gemm) row.values["precision"] = std::string(to_string(m.kernels[i].op.dtype));
      rows.push_back(std::move(row));
    }
  }
  if (!m.collectives.empty()) {
    profile.system = m.system->name;
    const CollectiveFit fit = fit_collectives(m.collectives, NcclParameters{}, request.collective_options);
    profile.nccl_parameters = fit.fitted;
    for (const auto& n : fit.notes) profile.notes.push_back(n);
    for (const auto& r : fit.points) {
      Row row;
      row.component = r.component;
      row.measured = r.measured_s;
      row.predicted = r.predicted_s;
      row.held_out = r.held_out_predicted_s;
      row.quantities = {{"bytes", r.bytes}, {"ranks", static_cast<double>(r.ranks)}, {"nodes", static_cast<double>(r.nodes)}};
      rows.push_back(std::move(row));
    }
  }
  profile.components = components_of(rows);
  return profile;
}

CalibrationProfile calibrate(const CalibrationRequest& request, const Catalog& catalog) {
  return calibrate(load_measurements(request, catalog), request);
}

}  // namespace stepcast
