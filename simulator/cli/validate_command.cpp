// `stepcast validate MEASUREMENT... [--calibration PROFILE] [--holdout every-other|fraction[:F]|
//  by-group-size[:N]] [--format table|csv|json] [--system NAME] [--ranks-per-node N] [--ranks N]
//  [--force] [--constant NAME=VALUE ...]`: predicted against measured for harness files, nccl-tests
// logs and published-runs files, per point and per component (validation/validation_report.h).
// --constant sets model constants by hand on the variant (simulator/constant_overrides.h), so a
// what-if on the model is checked against measurements; the report's model line names them, and a
// --holdout fit starts from them (it refits the constants it fits).

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "simulator/calibration_profile.h"
#include "simulator/cli/commands.h"
#include "simulator/constant_overrides.h"
#include "simulator/diagnostics.h"
#include "validation/validation_report.h"

namespace stepcast::cli {
namespace {

struct ValidateOptions {
  std::vector<std::string> inputs;
  std::string calibration;
  std::vector<std::string> constants;
  std::string holdout = "none";
  std::string format = "table";
  std::string system;
  int ranks_per_node = 0;
  int ranks = 0;
  bool force = false;
};

int run_validate(const ValidateOptions& o) {
  const Holdout holdout = parse_holdout(o.holdout);
  const ReportFormat format = parse_report_format(o.format);
  ModelVariant variant = model_variant_named(o.calibration);
  InferenceCostParameters inference_constants;
  const std::vector<ConstantSet> constants_set =
      apply_constant_overrides(o.constants, variant.cost, variant.nccl, &inference_constants);
  variant.name += constants_set_label(constants_set);
  if (!constants_set.empty()) {
    std::cerr << "stepcast: warning: model constants set by hand (--constant): " << describe_constants_set(constants_set)
              << '\n';
  }
  ValidationReport report;
  report.variant = variant.name;
  report.variant_description = variant.description;

  CalibrationRequest request;
  request.system = o.system;
  request.ranks_per_node = o.ranks_per_node;
  request.ranks = o.ranks;
  request.force = o.force;
  std::vector<std::string> published;
  for (const auto& in : o.inputs) {
    if (detect_input_kind(in) == InputKind::published_runs) {
      published.push_back(in);
    } else {
      request.inputs.emplace_back(in);
    }
  }
  if (!published.empty() && holdout.kind != Holdout::Kind::none) {
    throw UsageError("--holdout applies to measurement files; published runs are never fitted (validate them without it)");
  }
  if (!request.inputs.empty()) validate_measurements(load_measurements(request), variant, holdout, request, report);
  for (const auto& path : published) validate_published_runs(path, variant, o.force, report, inference_constants);
  summarize(report);
  std::cout << format_validation(report, format);
  return 0;
}

}  // namespace

void add_validate_command(CLI::App& app, CommandSet& commands) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "Predicted against measured, per point and per component: harness files, nccl-tests logs, published runs");
  cmd->add_option("measurements", options->inputs,
                  "stepcast-harness JSON files, nccl-tests *_perf logs, published-runs YAML files")
      ->required();
  cmd->add_option("--calibration", options->calibration, "Calibration profile, or 'datasheet' (the default: the uncalibrated model)");
  cmd->add_option("--holdout", options->holdout,
                  "Fit on part of the measurements, report the rest: every-other, fraction[:F], by-group-size[:N]");
  cmd->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("--system", options->system, "Catalog system the collectives ran on");
  cmd->add_option("--ranks-per-node", options->ranks_per_node, "nccl-tests logs: GPUs of each node in the run (default: all)");
  cmd->add_option("--ranks", options->ranks, "nccl-tests logs without a device list: ranks in the run");
  cmd->add_flag("--force", options->force, "Use the profile even where it was measured on another GPU or system");
  cmd->add_option("--constant", options->constants,
                  "Set a model constant by hand, NAME=VALUE (repeatable; names as in explain's sensitivity table), "
                  "after any profile");
  cmd->callback([options, &commands] { commands.exit_code = run_validate(*options); });
}

}  // namespace stepcast::cli
