#pragma once
// Command-line values shared by sweep, search and merge: --shard I/N, expressions given as
// options (--objective, --constraint), and the output format of result tables.

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "simulator/ranking.h"
#include "simulator/result_fields.h"
#include "simulator/result_table.h"

namespace stepcast::cli {

// --threads N of sweep and search: more workers than this only queue on the cores (no machine we
// run on has as many), so a larger count is a typo and is refused.
inline constexpr int kMaxWorkerThreads = 1024;

// --top K of sweep and search: kept rows are sorted and printed, so K is at most a million.
inline constexpr long long kMaxTop = 1'000'000;

// An option check: a whole number from `min` to `max`; anything else (0, -3, 1.5, 2e9 past max)
// is refused with a message that names the accepted range.
CLI::Validator whole_number_in(long long min, long long max);

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
