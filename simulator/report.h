#pragma once
// Reports of a training prediction, in three formats:
//   table  for people: units in every cell (s/ms, GiB, %), the breakdown with shares, placement
//          and notes;
//   json   the public contract of `stepcast predict --format json` (DESIGN.md): schema_version,
//          mode, step_time_s, tokens_per_s, mfu, hfu, time_breakdown_s{...},
//          memory_per_gpu_bytes{...}, fits — plus extras (scenario, per-stage memory, placement,
//          notes, FLOPs) that may grow but never rename;
//   csv    one header line and one row per prediction, flat column names, for sweeps/notebooks.
// Numbers in JSON and CSV are SI (seconds, bytes, tokens/s) rounded to 6 significant digits so
// reports are stable across platforms; bytes are integers.

#include <cstdint>
#include <string>
#include <string_view>

#include "model/prediction.h"
#include "model/scenario.h"

namespace stepcast {

enum class ReportFormat { table, json, csv };

// "table", "json", "csv"; throws UsageError otherwise.
ReportFormat parse_report_format(std::string_view text);

std::string training_report_table(const Scenario& scenario, const TrainingPrediction& prediction);
std::string training_report_json(const Scenario& scenario, const TrainingPrediction& prediction);
std::string training_csv_header();
std::string training_csv_row(const Scenario& scenario, const TrainingPrediction& prediction);

// The report in `format`, ending with a newline.
std::string training_report(const Scenario& scenario, const TrainingPrediction& prediction, ReportFormat format);

// v rounded to `digits` significant digits (the JSON/CSV convention above).
double round_significant(double v, int digits = 6);

// CSV cells shared by every report: a number at 6 significant digits, a byte count as a whole
// number (never negative), and text quoted per RFC 4180 when it holds a comma, quote or newline.
std::string csv_number(double v);
std::string csv_bytes(Bytes b);
std::string csv_field(const std::string& text);

// A CSV report (`report`: a header line and one row) with more columns appended: `header` and
// `row` each start with their comma.
std::string with_csv_columns(const std::string& report, const std::string& header, const std::string& row);

// A byte count in a JSON report: a whole number (never negative).
std::uint64_t json_bytes(Bytes b);

}  // namespace stepcast
