// `stepcast explain SCENARIO [--set key=value ...] [--changes N] [--sensitivity N | --no-sensitivity]
//                  [--ops N] [--collectives MODEL] [--calibration PROFILE]`
// Where a training step's time and memory go, its bottleneck in words and numbers, the changes
// that would make it faster (each predicted), and a tornado table of how much each hardware figure
// and cost constant moves the step (simulator/explain.h). With --ops N, the N longest kernels of
// one micro-batch of each layer kind on the critical stage (simulator/explain_ops.h); training
// scenarios only, as is the rest of `explain`.

#include <CLI/CLI.hpp>

#include <charconv>
#include <iostream>
#include <memory>

#include "simulator/cli/commands.h"
#include "simulator/cli/model_choice.h"
#include "simulator/diagnostics.h"
#include "simulator/explain.h"
#include "simulator/explain_ops.h"
#include "simulator/prediction_interval.h"
#include "simulator/scenario_loader.h"

namespace stepcast::cli {
namespace {

struct ExplainCommandOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::size_t changes = 10;
  std::size_t sensitivity = 15;
  bool no_sensitivity = false;
  std::string ops;  // --ops N, checked by ops_rows
  ModelChoice model;
};

// --ops N: a whole number of rows, at least 1 (0 when the option is absent).
std::size_t ops_rows(const std::string& text) {
  if (text.empty()) return 0;
  std::size_t rows = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), rows);
  if (error != std::errc() || end != text.data() + text.size() || rows == 0) {
    throw UsageError("--ops takes how many kernel rows to show per layer, a whole number >= 1; got '" + text + "'");
  }
  return rows;
}

void run_explain(const ExplainCommandOptions& o) {
  const std::size_t ops = ops_rows(o.ops);
  std::vector<Override> overrides;
  for (const auto& text : o.overrides) overrides.push_back(parse_override(text));
  const Scenario scenario = load_scenario(o.scenario, overrides);
  if (!scenario.is_training()) {
    throw InputError(scenario.source + (ops > 0 ? ": `explain --ops` lists the kernels of training steps only"
                                                  " (not inference prefill or decode steps); this is an inference scenario"
                                                : ": `explain` explains training steps; this is an inference scenario"));
  }
  const ChosenModel model = choose_model(o.model, scenario.system);
  for (const auto& w : model.warnings) std::cerr << "stepcast: warning: " << w << '\n';
  ExplainOptions options;
  options.parameters = model.cost;
  options.collectives = model.maker;
  options.sensitivity = !o.no_sensitivity;
  options.kernels = ops > 0;
  const Explanation e = explain_training(scenario, options);
  std::cout << explanation_text(scenario, e, o.changes, o.sensitivity);
  if (e.kernels) std::cout << kernel_tables_text(scenario, *e.kernels, ops);
  std::cout << "cost model: " << model.variant << '\n';
  if (model.profile) {
    const PredictionInterval interval = training_interval(*model.profile, scenario, e.base, model.cost);
    std::cout << "step time with calibration: " << interval.describe(e.base.step_time.value(), "s") << '\n';
  }
  std::cout.flush();
}

}  // namespace

void add_explain_command(CLI::App& app, CommandSet& commands) {
  auto o = std::make_shared<ExplainCommandOptions>();
  CLI::App* cmd = app.add_subcommand("explain", "Where the time and memory go, the bottleneck, and what would help");
  cmd->add_option("scenario", o->scenario, "Scenario file, or the name of a catalog scenario")->required();
  cmd->add_option("--set", o->overrides, "Override a scenario key: key.path=value (repeatable)");
  cmd->add_option("--changes", o->changes, "How many faster changes to list (default 10)");
  cmd->add_option("--sensitivity", o->sensitivity, "How many rows of the sensitivity table to show (default 15)");
  cmd->add_flag("--no-sensitivity", o->no_sensitivity, "Skip the +-10% sensitivity analysis");
  cmd->add_option("--ops", o->ops,
                  "Show the N longest kernels of one micro-batch of each layer kind on the critical stage, "
                  "with shapes, FLOPs, bytes, time and bound (training scenarios)");
  add_model_options(*cmd, o->model);
  cmd->callback([o, &commands] {
    run_explain(*o);
    commands.exit_code = 0;
  });
}

}  // namespace stepcast::cli
