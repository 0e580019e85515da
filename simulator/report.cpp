#include "simulator/report.h"

#include <cmath>

#include "simulator/diagnostics.h"

namespace stepcast {

ReportFormat parse_report_format(std::string_view text) {
  if (text == "table") return ReportFormat::table;
  if (text == "json") return ReportFormat::json;
  if (text == "csv") return ReportFormat::csv;
  throw UsageError("unknown format '" + std::string(text) + "' (expected table, json or csv)");
}

std::string training_report(const Scenario& scenario, const TrainingPrediction& prediction, ReportFormat format) {
  switch (format) {
    case ReportFormat::table: return training_report_table(scenario, prediction);
    case ReportFormat::json: return training_report_json(scenario, prediction) + "\n";
    case ReportFormat::csv: return training_csv_header() + "\n" + training_csv_row(scenario, prediction) + "\n";
  }
  return {};
}

double round_significant(double v, int digits) {
  if (v == 0.0 || !std::isfinite(v)) return v;
  const double magnitude = std::floor(std::log10(std::fabs(v)));
  const double scale = std::pow(10.0, digits - 1 - magnitude);
  return std::round(v * scale) / scale;
}

}  // namespace stepcast
