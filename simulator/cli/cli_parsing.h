#pragma once
// Command-line values shared by sweep, search and merge: --shard I/N, expressions given as
// options (--objective, --constraint), and the output format of result tables.

#include <string>
#include <utility>
#include <vector>

#include "simulator/ranking.h"
#include "simulator/result_fields.h"
#include "simulator/result_table.h"

namespace stepcast::cli {

// "2/8" -> {2, 8}; throws UsageError unless 0 <= I < N.
std::pair<int, int> parse_shard(const std::string& text);

// "min step_time_s" from --objective; throws InputError naming the option and the column.
Objective parse_objective_option(const std::string& text, const FieldTable& fields = FieldTable::training());
// A condition from --constraint; throws InputError naming the option and the column.
Expression parse_condition_option(const std::string& text, const FieldTable& fields = FieldTable::training());

// The table format for --out FILE: --format csv|jsonl if given, else from the file's extension
// (.jsonl / .json -> jsonl, anything else csv).
TableFormat table_format_for(const std::string& format, const std::string& path);

}  // namespace stepcast::cli
