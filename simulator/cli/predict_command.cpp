// `stepcast predict SCENARIO [--set key.path=value ...] [--format table|json|csv] [--strict]
//                            [--collectives MODEL] [--calibration PROFILE] [--constant NAME=VALUE ...]`
// Loads a scenario (a file or a catalog scenario name) strictly, applies the overrides, predicts
// it and prints the report: a training step (simulator/training_predictor.h), or an inference
// workload, static or served (simulator/inference/inference_predictor.h). --strict turns "does
// not fit in GPU memory" into exit code 3.
// --calibration uses a profile's fitted constants (the model variant named after it) and adds the
// step-time interval and extrapolation notes to the report (simulator/calibrated_report.h); a
// profile measured on another GPU or system is an error unless --force.
// --constant sets model constants by hand after the profile (simulator/constant_overrides.h); the
// report then names them: a line in the table, "constants_set" in JSON, a column in CSV.

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "simulator/calibrated_report.h"
#include "simulator/calibration_profile.h"
#include "simulator/cli/commands.h"
#include "simulator/collective_models.h"
#include "simulator/constant_overrides.h"
#include "simulator/diagnostics.h"
#include "simulator/inference/inference_predictor.h"
#include "simulator/inference_report.h"
#include "simulator/report.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"

namespace stepcast::cli {
namespace {

struct PredictOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::vector<std::string> constants;
  std::string format = "table";
  std::string collectives;
  std::string calibration;
  bool strict = false;
  bool force = false;
};

// The model variant for this run: "datasheet", or the profile's (checked against the scenario's
// GPU and system; mismatches are errors unless --force, then warnings on stderr).
ModelVariant model_variant(const PredictOptions& options, const Scenario& scenario) {
  ModelVariant variant = model_variant_named(options.calibration);
  if (!variant.profile) return variant;
  for (const auto& warning : check_profile_applies(*variant.profile, scenario.system, options.force)) {
    std::cerr << "stepcast: warning: " << warning << " (--force)\n";
  }
  return variant;
}

// `report` with the constants set by hand named in it, in the report's own format.
std::string with_constants_set(std::string report, ReportFormat format, const std::vector<ConstantSet>& set) {
  if (set.empty()) return report;
  switch (format) {
    case ReportFormat::table:
      return report + "\nconstants set by hand (--constant): " + describe_constants_set(set) + "\n";
    case ReportFormat::json: {
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(report);
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto& c : set) list.push_back({{"name", c.name}, {"value", c.value}, {"previous", c.previous}});
      j["constants_set"] = std::move(list);
      return j.dump(2) + "\n";
    }
    case ReportFormat::csv:
      return with_csv_columns(report, ",constants_set", "," + csv_field(describe_constants_set(set)));
  }
  return report;
}

void run_predict(const PredictOptions& options, std::ostream& out) {
  const ReportFormat format = parse_report_format(options.format);
  std::vector<Override> overrides;
  overrides.reserve(options.overrides.size());
  for (const auto& text : options.overrides) overrides.push_back(parse_override(text));
  const Scenario scenario = load_scenario(options.scenario, overrides);
  ModelVariant variant = model_variant(options, scenario);
  InferenceCostParameters inference_constants;
  const std::vector<ConstantSet> constants_set =
      apply_constant_overrides(options.constants, variant.cost, variant.nccl, &inference_constants);
  const std::string model_name =
      options.collectives.empty() ? std::string(default_collective_model()) : options.collectives;
  const auto collectives = make_collective_model(model_name, scenario.system, variant.cost, variant.nccl);
  if (!scenario.is_training()) {
    InferencePredictorOptions inference;
    inference.cost = variant.cost;
    inference.inference = inference_constants;
    inference.collectives = collectives.get();
    const InferencePrediction prediction = predict_inference(scenario, inference);
    out << with_constants_set(calibrated_inference_report(scenario, prediction, format, variant), format, constants_set);
    out.flush();
    if (options.strict && !prediction.fits) {
      throw InfeasibleError(fmt::format("{}: needs {:.1f} GB per GPU; the GPU has {:.1f} GB", scenario.name,
                                        prediction.memory.peak.value() / 1e9, scenario.system.gpu.memory.value() / 1e9));
    }
    return;
  }
  TrainingPredictor predictor(variant.cost);
  const TrainingPrediction prediction = predictor.predict(scenario, *collectives);
  out << with_constants_set(calibrated_training_report(scenario, prediction, format, variant), format, constants_set);
  out.flush();
  if (options.strict && !prediction.fits) {
    throw InfeasibleError(fmt::format("{}: needs {:.1f} GB per GPU on pipeline stage {}; the GPU has {:.1f} GB",
                                      scenario.name, prediction.memory.peak.value() / 1e9, prediction.peak_stage,
                                      scenario.system.gpu.memory.value() / 1e9));
  }
}

}  // namespace

void add_predict_command(CLI::App& app, CommandSet& commands) {
  auto options = std::make_shared<PredictOptions>();
  CLI::App* cmd = app.add_subcommand(
      "predict", "Predict a scenario: training step time, throughput, MFU and memory per GPU, or inference latency "
                 "(TTFT, TPOT, end to end), throughput and memory");
  cmd->add_option("scenario", options->scenario, "Scenario file, or the name of a catalog scenario")->required();
  cmd->add_option("--set", options->overrides, "Override a scenario key: key.path=value (repeatable)");
  cmd->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("--collectives", options->collectives, "Collective cost model (default: " +
                                                             std::string(default_collective_model()) + ")");
  cmd->add_option("--calibration", options->calibration,
                  "Calibration profile from `stepcast calibrate`, or 'datasheet' (the default: the uncalibrated model)");
  cmd->add_option("--constant", options->constants,
                  "Set a model constant by hand, NAME=VALUE (repeatable; names as in explain's sensitivity table), "
                  "after any profile");
  cmd->add_flag("--force", options->force, "Use the profile even if it was measured on another GPU or system");
  cmd->add_flag("--strict", options->strict, "Exit with code 3 when the scenario does not fit in GPU memory");
  cmd->callback([options, &commands] {
    run_predict(*options, std::cout);
    commands.exit_code = 0;
  });
}

}  // namespace stepcast::cli
