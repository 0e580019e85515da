#include "validation/validation_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "simulator/collective_models.h"
#include "simulator/diagnostics.h"
#include "simulator/inference/inference_predictor.h"
#include "simulator/prediction_interval.h"
#include "simulator/published_runs.h"
#include "simulator/training_predictor.h"
#include "validation/kernel_fit.h"

namespace stepcast {

namespace {

// Which positions of `n` ordered points are held out.
std::vector<bool> held_out_positions(std::size_t n, const Holdout& h) {
  std::vector<bool> out(n, false);
  if (h.kind == Holdout::Kind::every_other) {
    for (std::size_t i = 1; i < n; i += 2) out[i] = true;
  } else if (h.kind == Holdout::Kind::fraction) {
    const auto step = static_cast<std::size_t>(std::max(1.0, std::round(1.0 / h.fraction)));
    for (std::size_t i = step / 2; i < n; i += step) out[i] = true;
  }
  return out;
}

std::string format_time(double s) {
  if (s >= 1.0) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}

std::string short_source(const std::string& path) {
  return path.empty() ? std::string() : std::filesystem::path(path).filename().string();
}

// Throws InputError unless the profile of `variant` applies to a GPU (and, for collectives, a
// system); with --force the disagreements become notes.
void require_profile_applies(const ModelVariant& variant, const GpuSpec& gpu, const std::string& system, bool force,
                             std::vector<std::string>& notes) {
  if (!variant.profile) return;
  SystemSpec s;
  s.gpu = gpu;
  s.name = system.empty() ? variant.profile->system : system;
  const auto warnings = check_profile_applies(*variant.profile, s, force);
  for (const auto& w : warnings) notes.push_back("accepted with --force: " + w);
}

}  // namespace

Holdout parse_holdout(const std::string& text) {
  Holdout h;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  try {
    if (kind == "none" && arg.empty()) return h;
    if (kind == "every-other" && arg.empty()) {
      h.kind = Holdout::Kind::every_other;
      return h;
    }
    if (kind == "fraction") {
      h.kind = Holdout::Kind::fraction;
      if (!arg.empty()) h.fraction = std::stod(arg);
      if (!(h.fraction > 0.0 && h.fraction < 1.0)) throw UsageError("");
      return h;
    }
    if (kind == "by-group-size") {
      h.kind = Holdout::Kind::by_group_size;
      if (!arg.empty()) h.group_size = std::stoi(arg);
      if (h.group_size < 0) throw UsageError("");
      return h;
    }
  } catch (const std::exception&) {
  }
  throw UsageError("--holdout '" + text + "': expected every-other, fraction[:F] with 0 < F < 1, or by-group-size[:N]");
}

std::string to_string(const Holdout& h) {
  switch (h.kind) {
    case Holdout::Kind::none: return "none";
    case Holdout::Kind::every_other: return "every-other";
    case Holdout::Kind::fraction: return fmt::format("fraction:{:g}", h.fraction);
    case Holdout::Kind::by_group_size:
      return h.group_size > 0 ? fmt::format("by-group-size:{}", h.group_size) : "by-group-size";
  }
  return "?";
}

namespace {

// A holdout fit for an attention implementation that does not set the model's constants
// (stepcast's own flash kernels: validation/kernel_fit.h fits cuDNN's): the one compute efficiency
// its kernels read (flash.fwd_eta.<arch> or flash.bwd_eta.<arch>), from its training points
// alone, by least squares on relative errors with the kernel gap g held:
//   t_i(eta) = a_i / eta + g, a_i = (t_i(eta0) - g) * eta0  (compute-bound points)
//   1/eta = sum (a_i/m_i)(1 - g/m_i) / sum (a_i/m_i)^2.
// This checks the model's shape terms (FLOPs, causal halving, head count and dimension) on
// shapes the fit did not see; the fitted value is the implementation's own, never the profile's.
std::optional<std::pair<std::string, CostParameters>> own_attention_efficiency(const std::vector<KernelPoint>& train,
                                                                               const GpuSpec& gpu,
                                                                               const CostParameters& params) {
  if (train.size() < 2) return std::nullopt;
  const std::string name = efficiency_constant(train.front().op, gpu.architecture);
  if (name.empty()) return std::nullopt;
  double eta0 = 0.0;
  CostParameters copy = params;
  copy.for_each_constant([&](std::string_view n, double& v, std::string_view) {
    if (n == name) eta0 = v;
  });
  if (!(eta0 > 0.0)) return std::nullopt;
  const double g = params.kernel_gap_s;
  double num = 0.0;
  double den = 0.0;
  for (const auto& p : train) {
    const double a = (predict_kernel(p, gpu, params) - g) * eta0;
    if (!(a > 0.0) || !(p.measured_s > 0.0)) return std::nullopt;
    num += (a / p.measured_s) * (1.0 - g / p.measured_s);
    den += (a / p.measured_s) * (a / p.measured_s);
  }
  if (!(num > 0.0) || !(den > 0.0)) return std::nullopt;
  const double eta = den / num;
  copy.for_each_constant([&](std::string_view n, double& v, std::string_view) {
    if (n == name) v = eta;
  });
  return std::make_pair(name, copy);
}

bool is_other_attention_implementation(const std::string& component) {
  return component.rfind("attention.forward.", 0) == 0 || component.rfind("attention.backward.", 0) == 0;
}

}  // namespace

void validate_measurements(const LoadedMeasurements& m, const ModelVariant& variant, const Holdout& holdout,
                           const CalibrationRequest& fit_options, ValidationReport& report) {
  require_profile_applies(variant, m.gpu, m.system ? m.system->name : std::string(), fit_options.force, report.notes);
  report.holdout = to_string(holdout);
  const std::string model = holdout.kind == Holdout::Kind::none ? variant.name : variant.name + " + holdout fit";

  // --- Kernels ------------------------------------------------------------------------------------
  if (!m.kernels.empty()) {
    std::vector<bool> test(m.kernels.size(), holdout.kind == Holdout::Kind::none);
    if (holdout.kind == Holdout::Kind::every_other || holdout.kind == Holdout::Kind::fraction) {
      // Per source and component, in increasing measured time.
      std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> groups;
      for (std::size_t i = 0; i < m.kernels.size(); ++i) groups[{m.kernels[i].source, m.kernels[i].component}].push_back(i);
      for (auto& [key, members] : groups) {
        std::stable_sort(members.begin(), members.end(),
                         [&](std::size_t a, std::size_t b) { return m.kernels[a].measured_s < m.kernels[b].measured_s; });
        const auto held = held_out_positions(members.size(), holdout);
        for (std::size_t r = 0; r < members.size(); ++r) test[members[r]] = held[r];
      }
    } else if (holdout.kind == Holdout::Kind::by_group_size) {
      std::fill(test.begin(), test.end(), true);
      report.notes.push_back("by-group-size splits collectives only: kernels are predicted with the '" + variant.name +
                             "' constants, unfitted");
    }
    CostParameters params = variant.cost;
    const bool fit = holdout.kind == Holdout::Kind::every_other || holdout.kind == Holdout::Kind::fraction;
    if (fit) {
      std::vector<KernelPoint> train;
      for (std::size_t i = 0; i < m.kernels.size(); ++i) {
        if (!test[i]) train.push_back(m.kernels[i]);
      }
      KernelFitOptions options = fit_options.kernel_options;
      options.folds = 0;  // the held-out points are the check
      const KernelFit f = fit_kernels(train, m.gpu, variant.cost, options);
      params = f.params;
      report.fitted_points += static_cast<int>(train.size());
      report.fitted.insert(report.fitted.end(), f.fitted.begin(), f.fitted.end());
    }
    // Other attention implementations get their own efficiency from their own training points.
    std::map<std::string, CostParameters> own;
    if (fit) {
      std::map<std::string, std::vector<KernelPoint>> by_component;
      for (std::size_t i = 0; i < m.kernels.size(); ++i) {
        if (!test[i] && is_other_attention_implementation(m.kernels[i].component)) {
          by_component[m.kernels[i].component].push_back(m.kernels[i]);
        }
      }
      for (const auto& [component, points] : by_component) {
        const auto fitted = own_attention_efficiency(points, m.gpu, params);
        if (!fitted) continue;
        own[component] = fitted->second;
        double value = 0.0;
        double datasheet = 0.0;
        fitted->second.for_each_constant([&](std::string_view n, const double& v, std::string_view) {
          if (n == fitted->first) value = v;
        });
        variant.cost.for_each_constant([&](std::string_view n, const double& v, std::string_view) {
          if (n == fitted->first) datasheet = v;
        });
        report.fitted.push_back(FittedValue{fitted->first + " [" + component + " only]", value, datasheet, "1",
                                            fmt::format("{} ({} points)", component, points.size())});
        report.notes.push_back(fmt::format("{}: its own efficiency was fitted on its {} training points and predicts its "
                                           "held-out shapes (model column 'own efficiency'); it is not the profile's "
                                           "constant, which cuDNN's fused attention sets",
                                           component, points.size()));
      }
    }
    for (std::size_t i = 0; i < m.kernels.size(); ++i) {
      if (!test[i]) continue;
      const KernelPoint& k = m.kernels[i];
      const auto o = own.find(k.component);
      const bool with_own = o != own.end();
      report.rows.push_back(ValidationRow{k.source, k.component, k.label,
                                          holdout.kind == Holdout::Kind::by_group_size ? variant.name
                                          : with_own                                    ? model + " (own efficiency)"
                                                                                        : model,
                                          k.measured_s, predict_kernel(k, m.gpu, with_own ? o->second : params),
                                          std::nullopt, k.kernel});
    }
  }

  // --- Collectives --------------------------------------------------------------------------------
  if (!m.collectives.empty()) {
    std::vector<CollectiveDataset> train = m.collectives;
    std::vector<CollectiveDataset> test = m.collectives;
    if (holdout.kind != Holdout::Kind::none) {
      int group = holdout.group_size;
      if (holdout.kind == Holdout::Kind::by_group_size && group == 0) {
        group = std::numeric_limits<int>::max();
        for (const auto& d : m.collectives) {
          for (const auto& p : d.points) group = std::min(group, p.group.size);
        }
      }
      int held = 0;
      for (std::size_t di = 0; di < m.collectives.size(); ++di) {
        const auto& pts = m.collectives[di].points;
        train[di].points.clear();
        test[di].points.clear();
        std::vector<std::size_t> order(pts.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return pts[a].bytes < pts[b].bytes; });
        const auto positions = held_out_positions(order.size(), holdout);
        for (std::size_t r = 0; r < order.size(); ++r) {
          const auto& p = pts[order[r]];
          const bool out = holdout.kind == Holdout::Kind::by_group_size ? p.group.size != group : positions[r];
          (out ? test[di] : train[di]).points.push_back(p);
          held += out ? 1 : 0;
        }
      }
      std::size_t trained = 0;
      for (const auto& d : train) trained += d.points.size();
      if (held == 0 || trained == 0) {
        throw UsageError(fmt::format("--holdout {}: {} (nothing to {})", to_string(holdout),
                                     held == 0 ? "every collective point is in the fitted part"
                                               : "no collective point is in the fitted part",
                                     held == 0 ? "report" : "fit"));
      }
      if (holdout.kind == Holdout::Kind::by_group_size) report.holdout += fmt::format(" (fitted on {} ranks)", group);
    }
    NcclParameters params = variant.nccl;
    if (holdout.kind != Holdout::Kind::none) {
      std::vector<FittedValue> fitted;
      params = fit_collective_parameters(train, variant.nccl, fit_options.collective_options, &fitted);
      for (const auto& d : train) report.fitted_points += static_cast<int>(d.points.size());
      report.fitted.insert(report.fitted.end(), fitted.begin(), fitted.end());
    }
    for (const auto& r : collective_residuals(test, params)) {
      report.rows.push_back(ValidationRow{r.source, r.component,
                                          fmt::format("{} ({}/{})", r.label, to_string(r.algorithm), to_string(r.protocol)),
                                          model, r.measured_s, r.predicted_s, std::nullopt, {}});
    }
  }
  for (const auto& n : m.notes) report.notes.push_back(n);
}

namespace {

// The variant a published row is predicted with: `variant`, or the datasheet model when its profile
// is for another GPU (named so in the row's model column); warnings accepted with --force become
// notes of the report.
std::pair<const ModelVariant*, std::string> variant_for_run(const ModelVariant& variant, const ModelVariant& datasheet,
                                                            const std::string& run_id, const SystemSpec& system,
                                                            bool force, ValidationReport& report) {
  if (!variant.profile) return {&variant, variant.name};
  try {
    for (const auto& w : check_profile_applies(*variant.profile, system, force)) {
      report.notes.push_back(run_id + ": accepted with --force: " + w);
    }
  } catch (const InputError&) {
    return {&datasheet, "datasheet (profile is for " + variant.profile->gpu + ")"};
  }
  return {&variant, variant.name};
}

}  // namespace

void validate_published_runs(const std::string& path, const ModelVariant& variant, bool force,
                             ValidationReport& report, const InferenceCostParameters& inference) {
  std::vector<std::string> skipped;
  const auto runs = load_published_training_runs(path, &skipped);
  const ModelVariant datasheet = datasheet_variant();
  for (const auto& run : runs) {
    const auto [use, model] = variant_for_run(variant, datasheet, run.id, run.scenario.system, force, report);
    TrainingPredictor predictor(use->cost);
    const auto collectives = make_collective_model(default_collective_model(), run.scenario.system, use->cost, use->nccl);
    const TrainingPrediction p = predictor.predict(run.scenario, *collectives);
    ValidationRow row{path, "training.step_time", run.id, model, run.measured_step_s, p.step_time.value(), std::nullopt, {}};
    if (use->profile) {
      const PredictionInterval interval = training_interval(*use->profile, run.scenario, p, use->cost, 0.9);
      row.half_width_90 = interval.relative_half_width;
    }
    report.rows.push_back(std::move(row));
  }
  for (const auto& id : skipped) report.notes.push_back(short_source(path) + ": " + id + " skipped (no single configuration)");

  // Inference rows through the inference predictor: first-token rows as the time to first token,
  // throughput rows as seconds per output token per GPU (the inverse of the throughput), so
  // errors stay errors of times.
  for (const auto& run : load_published_inference_runs(path)) {
    const auto [use, model] = variant_for_run(variant, datasheet, run.id, run.scenario.system, force, report);
    const auto collectives = make_collective_model(default_collective_model(), run.scenario.system, use->cost, use->nccl);
    InferencePredictorOptions options;
    options.cost = use->cost;
    options.inference = inference;
    options.collectives = collectives.get();
    options.time_series = false;
    const InferencePrediction p = predict_inference(run.scenario, options);
    // With a profile, a first-token row carries the prefill step's interval and a throughput row
    // the decode step's (the static run's time is dominated by its decode steps).
    std::optional<double> ttft_half;
    std::optional<double> tpot_half;
    if (use->profile) {
      const InferenceIntervals intervals = inference_intervals(*use->profile, run.scenario, p, 0.9);
      ttft_half = intervals.prefill.relative_half_width;
      tpot_half = intervals.decode.relative_half_width;
    }
    if (run.measured_ttft_s > 0.0) {
      report.rows.push_back(
          ValidationRow{path, "inference.ttft", run.id, model, run.measured_ttft_s, p.ttft.mean.value(), ttft_half, {}});
    }
    if (run.measured_tokens_per_s_per_gpu > 0.0) {
      const double predicted = p.output_tokens_per_s / run.scenario.system.gpus;
      report.rows.push_back(ValidationRow{path, "inference.time_per_output_token_per_gpu", run.id, model,
                                          1.0 / run.measured_tokens_per_s_per_gpu, 1.0 / predicted, tpot_half, {}});
    }
  }
}

void summarize(ValidationReport& report) {
  std::map<std::string, std::vector<double>> by;
  std::vector<double> all;
  for (const auto& r : report.rows) {
    by[r.component].push_back(r.error());
    all.push_back(r.error());
  }
  report.components.clear();
  for (const auto& [c, errors] : by) report.components.push_back({c, summarize_residuals(errors)});
  if (!all.empty()) report.components.push_back({"all", summarize_residuals(all)});
}

std::string format_validation(const ValidationReport& report, ReportFormat format) {
  std::string out;
  const bool intervals =
      std::any_of(report.rows.begin(), report.rows.end(), [](const ValidationRow& r) { return r.half_width_90.has_value(); });
  // The kernel column appears only when a point recorded its kernel (harness files from
  // schema_version 2 on), so older files print exactly as before.
  const bool kernels =
      std::any_of(report.rows.begin(), report.rows.end(), [](const ValidationRow& r) { return !r.kernel.empty(); });
  if (format == ReportFormat::json) {
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["model"] = {{"name", report.variant}, {"description", report.variant_description}};
    j["holdout"] = report.holdout;
    j["fitted_points"] = report.fitted_points;
    nlohmann::ordered_json fitted = nlohmann::ordered_json::array();
    for (const auto& f : report.fitted) {
      fitted.push_back({{"name", f.name}, {"value", f.value}, {"start", f.datasheet}, {"unit", f.unit}});
    }
    j["fitted"] = fitted;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& r : report.rows) {
      nlohmann::ordered_json row{{"source", r.source},     {"component", r.component},
                                 {"point", r.label},       {"model", r.model},
                                 {"measured_s", round_significant(r.measured_s)},
                                 {"predicted_s", round_significant(r.predicted_s)},
                                 {"error", round_significant(r.error())}};
      if (r.half_width_90) row["interval_90"] = round_significant(*r.half_width_90);
      if (!r.kernel.empty()) row["kernel"] = r.kernel;
      rows.push_back(row);
    }
    j["rows"] = rows;
    nlohmann::ordered_json components = nlohmann::ordered_json::array();
    for (const auto& c : report.components) {
      components.push_back({{"component", c.component},
                            {"points", c.stats.n},
                            {"mean_abs_error", round_significant(c.stats.mean_abs)},
                            {"max_abs_error", round_significant(c.stats.max_abs)},
                            {"bias", round_significant(c.stats.bias)}});
    }
    j["components"] = components;
    j["notes"] = report.notes;
    return j.dump(2) + "\n";
  }
  if (format == ReportFormat::csv) {
    out = "source,component,point,model,measured_s,predicted_s,error";
    out += intervals ? ",interval_90" : "";
    out += kernels ? ",kernel\n" : "\n";
    for (const auto& r : report.rows) {
      out += fmt::format("{},{},{},{},{:g},{:g},{:g}", csv_field(r.source), csv_field(r.component), csv_field(r.label), csv_field(r.model),
                         round_significant(r.measured_s), round_significant(r.predicted_s), round_significant(r.error()));
      if (intervals) out += r.half_width_90 ? fmt::format(",{:g}", round_significant(*r.half_width_90)) : ",";
      if (kernels) out += "," + csv_field(r.kernel);
      out += "\n";
    }
    return out;
  }
  out += fmt::format("model: {} ({})\nholdout: {}", report.variant, report.variant_description, report.holdout);
  if (report.holdout != "none") out += fmt::format("; fitted on {} points, {} held out", report.fitted_points, report.rows.size());
  out += "\n";
  if (!report.fitted.empty()) {
    out += "fitted by the holdout:\n";
    for (const auto& f : report.fitted) out += fmt::format("  {:<46} {:>10.4g}  (from {:.4g} {})\n", f.name, f.value, f.datasheet, f.unit);
  }
  out += "\n";
  std::size_t label_width = 5;
  std::size_t model_width = 5;
  std::size_t source_width = 6;
  std::size_t component_width = 9;
  for (const auto& r : report.rows) {
    label_width = std::max(label_width, r.label.size());
    model_width = std::max(model_width, r.model.size());
    source_width = std::max(source_width, short_source(r.source).size());
    component_width = std::max(component_width, r.component.size());
  }
  label_width = std::min<std::size_t>(label_width, 60);
  out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {:>12}  {:>12}  {:>8}{}{}\n", "source", source_width, "component",
                     component_width, "point", label_width, "model", model_width, "measured", "predicted", "error",
                     intervals ? "  ±90%" : "", kernels ? "  kernel" : "");
  for (const auto& r : report.rows) {
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {:>12}  {:>12}  {:>+7.1f}%", short_source(r.source), source_width,
                       r.component, component_width, r.label.substr(0, label_width), label_width, r.model, model_width,
                       format_time(r.measured_s), format_time(r.predicted_s), 100.0 * r.error());
    if (r.half_width_90) {
      out += fmt::format("  {:>4.1f}%", 100.0 * *r.half_width_90);
    } else if (intervals && kernels) {
      out += "       ";  // keeps the kernel column aligned
    }
    if (kernels && !r.kernel.empty()) out += "  " + r.kernel;
    out += "\n";
  }
  std::size_t name_width = 9;
  for (const auto& c : report.components) name_width = std::max(name_width, c.component.size());
  out += fmt::format("\n{:<{}} {:>6}  {:>9}  {:>9}  {:>8}\n", "component", name_width, "points", "mean|err|", "max|err|",
                     "bias");
  for (const auto& c : report.components) {
    out += fmt::format("{:<{}} {:>6}  {:>8.1f}%  {:>8.1f}%  {:>+7.1f}%\n", c.component, name_width, c.stats.n,
                       100.0 * c.stats.mean_abs, 100.0 * c.stats.max_abs, 100.0 * c.stats.bias);
  }
  if (!report.components.empty()) {
    const auto& all = report.components.back();
    out += fmt::format("mean absolute error: {:.1f}% over {} points (max {:.1f}%, bias {:+.1f}%)\n",
                       100.0 * all.stats.mean_abs, all.stats.n, 100.0 * all.stats.max_abs, 100.0 * all.stats.bias);
  }
  for (const auto& n : report.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace stepcast
