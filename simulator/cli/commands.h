#pragma once
// Subcommands of `stepcast`. Each add_* function registers one subcommand on the app; its
// callback does the work and stores the process exit code in `exit_code`. Errors travel as
// exceptions (simulator/diagnostics.h) and main() maps them to exit codes:
//   0 ok, 1 bad input, 2 usage, 3 infeasible (only where --strict asks for it).

namespace CLI {
class App;
}

namespace stepcast::cli {

struct CommandSet {
  int exit_code = 0;
};

// `stepcast catalog [gpus|systems|models|scenarios] [NAME]` (catalog_command.cpp).
void add_catalog_command(CLI::App& app, CommandSet& commands);
// `stepcast collective --system NAME --nodes N --op OP --sizes MIN:MAX [...]`
// (collective_command.cpp).
void add_collective_command(CLI::App& app, CommandSet& commands);
// `stepcast predict SCENARIO [--set key.path=value ...] [--format table|json|csv] [--strict]
// [--collectives MODEL] [--calibration PROFILE]` (predict_command.cpp).
void add_predict_command(CLI::App& app, CommandSet& commands);
// `stepcast calibrate MEASUREMENT... -o PROFILE [--name N] [--system S] [--force]` (calibrate_command.cpp).
void add_calibrate_command(CLI::App& app, CommandSet& commands);
// `stepcast validate MEASUREMENT... [--calibration PROFILE] [--holdout H] [--format F]` (validate_command.cpp).
void add_validate_command(CLI::App& app, CommandSet& commands);

// `stepcast search SCENARIO [...]` (search_command.cpp).
void add_search_command(CLI::App& app, CommandSet& commands);
// `stepcast sweep SWEEP [...]` (sweep_command.cpp).
void add_sweep_command(CLI::App& app, CommandSet& commands);
// `stepcast merge SHARD... [--out FILE]` (merge_command.cpp).
void add_merge_command(CLI::App& app, CommandSet& commands);

// `stepcast explain SCENARIO [...]` (explain_command.cpp).
void add_explain_command(CLI::App& app, CommandSet& commands);

// `stepcast diff A B [...]` (diff_command.cpp).
void add_diff_command(CLI::App& app, CommandSet& commands);

}  // namespace stepcast::cli
