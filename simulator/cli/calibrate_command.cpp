// `stepcast calibrate MEASUREMENT... -o PROFILE.json [--name NAME] [--system NAME]
//  [--ranks-per-node N] [--ranks N] [--force]`: fits the cost model's constants to harness files
// and nccl-tests logs (validation/calibration.h) and writes a calibration profile
// (simulator/calibration_profile.h), then prints what it fitted and how well.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "simulator/cli/commands.h"
#include "simulator/diagnostics.h"
#include "validation/calibration.h"

namespace stepcast::cli {
namespace {

struct CalibrateOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::string name;
  std::string system;
  int ranks_per_node = 0;
  int ranks = 0;
  bool force = false;
};

std::string percent(const std::optional<double>& v) { return v ? fmt::format("{:.1f}%", 100.0 * *v) : "n/a"; }

void print_summary(const CalibrationProfile& p, const std::string& path, std::ostream& out) {
  out << fmt::format("calibration profile '{}' for {}{} -> {}\n", p.name, p.gpu, p.system.empty() ? "" : " / " + p.system,
                     path);
  for (const auto& in : p.inputs) out << fmt::format("  input {} ({}, {} points, sha256 {:.12})\n", in.path, in.kind, in.points, in.sha256);
  const auto print_values = [&out](const char* title, const std::vector<FittedValue>& values) {
    if (values.empty()) return;
    out << title << '\n';
    for (const auto& v : values) {
      out << fmt::format("  {:<46} {:>11.4g}  datasheet {:>9.4g} {:<5} {:+6.1f}%  from {}\n", v.name, v.value, v.datasheet,
                         v.unit, v.datasheet != 0.0 ? 100.0 * (v.value / v.datasheet - 1.0) : 0.0, v.fitted_from);
    }
  };
  print_values("fitted cost constants:", p.cost_parameters);
  print_values("fitted NCCL constants:", p.nccl_parameters);
  out << fmt::format("{:<24} {:>6}  {:>11}  {:>10}  {:>10}  {:>8}  {:>8}\n", "component", "points", "fit mean|e|",
                     "held-out", "max", "bias", "±90%");
  for (const auto& c : p.components) {
    out << fmt::format("{:<24} {:>6}  {:>10.1f}%  {:>9.1f}%  {:>9.1f}%  {:>+7.1f}%  {:>8}\n", c.name, c.points,
                       100.0 * c.in_sample.mean_abs, 100.0 * c.held_out.mean_abs, 100.0 * c.held_out.max_abs,
                       100.0 * c.held_out.bias, percent(c.held_out.half_width(0.9)));
  }
  out << "(errors of times, predicted / measured - 1; held-out: each point predicted by a fit that did not see it)\n";
  for (const auto& n : p.notes) out << "note: " << n << '\n';
}

int run_calibrate(const CalibrateOptions& o) {
  CalibrationRequest request;
  for (const auto& in : o.inputs) request.inputs.emplace_back(in);
  request.name = o.name.empty() ? std::filesystem::path(o.output).stem().string() : o.name;
  if (request.name == kDatasheetVariantName) throw UsageError("--name datasheet is reserved for the uncalibrated model");
  request.system = o.system;
  request.ranks_per_node = o.ranks_per_node;
  request.ranks = o.ranks;
  request.force = o.force;
  const CalibrationProfile profile = calibrate(request);
  save_profile(o.output, profile);
  print_summary(profile, o.output, std::cout);
  return 0;
}

}  // namespace

void add_calibrate_command(CLI::App& app, CommandSet& commands) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Fit the model's constants to harness measurements and nccl-tests logs; write a profile");
  cmd->add_option("measurements", options->inputs, "stepcast-harness JSON files and nccl-tests *_perf logs")->required();
  cmd->add_option("-o,--output", options->output, "Profile to write (JSON)")->required();
  cmd->add_option("--name", options->name, "Profile name, used as the model variant's name (default: file stem)");
  cmd->add_option("--system", options->system,
                  "Catalog system the collectives ran on (default: the harness GPU's default system)");
  cmd->add_option("--ranks-per-node", options->ranks_per_node, "nccl-tests logs: GPUs of each node in the run (default: all)");
  cmd->add_option("--ranks", options->ranks, "nccl-tests logs without a device list: ranks in the run");
  cmd->add_flag("--force", options->force,
                "Fit despite a GPU/system mismatch or a failed selftest (recorded in the profile)");
  cmd->callback([options, &commands] { commands.exit_code = run_calibrate(*options); });
}

}  // namespace stepcast::cli
