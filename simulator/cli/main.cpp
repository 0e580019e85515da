// `stepcast`: predict, explain, sweep, search, merge, diff, collective, calibrate, validate,
// catalog. The only place that turns errors into exit codes.

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "simulator/cli/commands.h"
#include "simulator/diagnostics.h"

int main(int argc, char** argv) {
  CLI::App app{"stepcast: predicts what large-model training and inference will cost, and why"};
  app.set_version_flag("--version", std::string("stepcast ") + STEPCAST_VERSION + " (" + STEPCAST_GIT_SHA + ")");
  app.require_subcommand(1);
  stepcast::cli::CommandSet commands;
  stepcast::cli::add_catalog_command(app, commands);
  stepcast::cli::add_collective_command(app, commands);
  stepcast::cli::add_predict_command(app, commands);
  stepcast::cli::add_calibrate_command(app, commands);
  stepcast::cli::add_validate_command(app, commands);
  stepcast::cli::add_sweep_command(app, commands);
  stepcast::cli::add_search_command(app, commands);
  stepcast::cli::add_merge_command(app, commands);
  stepcast::cli::add_explain_command(app, commands);
  stepcast::cli::add_diff_command(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const stepcast::UsageError& e) {
    std::cerr << "stepcast: " << e.what() << '\n';
    return 2;
  } catch (const stepcast::InputError& e) {
    std::cerr << e.what() << '\n';
    return 1;
  } catch (const stepcast::InfeasibleError& e) {
    std::cerr << "stepcast: infeasible: " << e.what() << '\n';
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "stepcast: internal error: " << e.what() << '\n';
    return 4;
  }
  return commands.exit_code;
}
