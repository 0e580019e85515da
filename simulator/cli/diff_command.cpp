// `stepcast diff A B [--set-a key=value ...] [--set-b key=value ...] [--collectives MODEL]
//               [--calibration PROFILE]`
// Attributes the difference in step time and memory between two training scenarios to the
// components of the step and to the changes that turn A into B (simulator/diff.h).

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "simulator/cli/commands.h"
#include "simulator/cli/model_choice.h"
#include "simulator/diagnostics.h"
#include "simulator/diff.h"
#include "simulator/prediction_interval.h"
#include "simulator/scenario_loader.h"

namespace stepcast::cli {
namespace {

struct DiffOptions {
  std::string a;
  std::string b;
  std::vector<std::string> set_a;
  std::vector<std::string> set_b;
  ModelChoice model;
};

Scenario load(const std::string& name, const std::vector<std::string>& sets) {
  std::vector<Override> overrides;
  for (const auto& text : sets) overrides.push_back(parse_override(text));
  Scenario s = load_scenario(name, overrides);
  if (!s.is_training()) throw InputError(s.source + ": `diff` compares training scenarios; this is an inference scenario");
  return s;
}

void run_diff(const DiffOptions& o) {
  const Scenario a = load(o.a, o.set_a);
  const Scenario b = load(o.b, o.set_b);
  const ChosenModel model = choose_model(o.model, a.system);
  for (const auto& w : model.warnings) std::cerr << "stepcast: warning: " << w << '\n';
  const ScenarioDiff d = diff_training(a, b, model.cost, model.maker);
  std::cout << diff_text(a, b, d);
  // With a profile, both step times get their intervals (simulator/prediction_interval.h).
  if (model.profile) {
    std::cout << "\nstep times with calibration '" << model.profile->name << "':\n"
              << "  A " << training_interval(*model.profile, a, d.a, model.cost).describe(d.a.step_time.value(), "s") << '\n'
              << "  B " << training_interval(*model.profile, b, d.b, model.cost).describe(d.b.step_time.value(), "s") << '\n';
  }
  std::cout.flush();
}

}  // namespace

void add_diff_command(CLI::App& app, CommandSet& commands) {
  auto o = std::make_shared<DiffOptions>();
  CLI::App* cmd = app.add_subcommand("diff", "Attribute the difference between two training scenarios to its causes");
  cmd->add_option("a", o->a, "Scenario A (a file or a catalog scenario)")->required();
  cmd->add_option("b", o->b, "Scenario B (a file or a catalog scenario; may be A again with --set-b)")->required();
  cmd->add_option("--set-a", o->set_a, "Override a key of A: key.path=value (repeatable)");
  cmd->add_option("--set-b", o->set_b, "Override a key of B: key.path=value (repeatable)");
  add_model_options(*cmd, o->model);
  cmd->callback([o, &commands] {
    run_diff(*o);
    commands.exit_code = 0;
  });
}

}  // namespace stepcast::cli
