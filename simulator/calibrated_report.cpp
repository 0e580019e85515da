#include "simulator/calibrated_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "simulator/inference_report.h"

namespace stepcast {

namespace {

// An interval as the JSON reports write it: level, relative_half_width, `key`: [lo, hi] around
// `value` (both null when there is no interval), covered_share, not_covered, too_few_points.
nlohmann::ordered_json interval_json(const PredictionInterval& interval, double value, const char* key) {
  nlohmann::ordered_json i;
  i["level"] = interval.level;
  if (interval.relative_half_width) {
    const double h = *interval.relative_half_width;
    i["relative_half_width"] = round_significant(h);
    i[key] = {round_significant(value * (1.0 - h)), round_significant(value * (1.0 + h))};
  } else {
    i["relative_half_width"] = nullptr;
    i[key] = nullptr;
  }
  i["covered_share"] = round_significant(interval.covered_share);
  i["not_covered"] = interval.not_covered;
  i["too_few_points"] = interval.too_few_points;
  return i;
}

// interval_json with the interval's extrapolated inputs last: the inference report's form.
nlohmann::ordered_json interval_json_with_extrapolated(const PredictionInterval& interval, double value,
                                                       const char* key) {
  nlohmann::ordered_json i = interval_json(interval, value, key);
  i["extrapolated"] = interval.extrapolated;
  return i;
}

nlohmann::ordered_json profile_json(const CalibrationProfile& profile) {
  return {{"name", profile.name}, {"gpu", profile.gpu}, {"system", profile.system}, {"created_utc", profile.created_utc}};
}

// The "calibration" object's opening members: the model variant and its profile.
nlohmann::ordered_json calibration_json(const ModelVariant& variant, const CalibrationProfile& profile) {
  nlohmann::ordered_json c;
  c["model"] = variant.name;
  c["profile"] = profile_json(profile);
  return c;
}

// A JSON report (`base`) with `calibration` as its last member, written as the reports are.
std::string with_calibration(const std::string& base, const nlohmann::ordered_json& calibration) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(base);
  j["calibration"] = calibration;
  return j.dump(2) + "\n";
}

std::string half_width_field(const PredictionInterval& interval) {
  return interval.relative_half_width ? fmt::format("{:g}", round_significant(*interval.relative_half_width))
                                      : std::string();
}

}  // namespace

std::string calibrated_inference_report(const Scenario& scenario, const InferencePrediction& prediction,
                                        ReportFormat format, const ModelVariant& variant) {
  std::string base = inference_report(scenario, prediction, format);
  if (!variant.profile) return base;
  const CalibrationProfile& profile = *variant.profile;
  const InferenceIntervals intervals = inference_intervals(profile, scenario, prediction, 0.9);
  const double ttft = prediction.ttft.mean.value();
  const double tpot = prediction.tpot.mean.value();
  switch (format) {
    case ReportFormat::table: {
      std::string out = base;
      out += fmt::format("\ncalibration: model '{}' — {}\n", variant.name, variant.description);
      out += fmt::format("  time to first token {}\n", intervals.prefill.describe(ttft, "s"));
      out += fmt::format("  time per output token {}\n", intervals.decode.describe(tpot, "s"));
      out += "  (intervals of the prefill and decode step costs; queueing in a serving run is not in them)\n";
      return out;
    }
    case ReportFormat::json: {
      nlohmann::ordered_json c = calibration_json(variant, profile);
      c["ttft"] = interval_json_with_extrapolated(intervals.prefill, ttft, "ttft_s");
      c["tpot"] = interval_json_with_extrapolated(intervals.decode, tpot, "tpot_s");
      return with_calibration(base, c);
    }
    case ReportFormat::csv: {
      std::vector<std::string> extrapolated;
      for (const auto& e : intervals.prefill.extrapolated) extrapolated.push_back("prefill " + e);
      for (const auto& e : intervals.decode.extrapolated) extrapolated.push_back("decode " + e);
      return with_csv_columns(base, ",model,ttft_interval_90,tpot_interval_90,extrapolated",
                              fmt::format(",{},{},{},{}", csv_field(variant.name), half_width_field(intervals.prefill),
                                          half_width_field(intervals.decode),
                                          csv_field(fmt::format("{}", fmt::join(extrapolated, ";")))));
    }
  }
  return base;
}

std::string calibrated_training_report(const Scenario& scenario, const TrainingPrediction& prediction,
                                       ReportFormat format, const ModelVariant& variant) {
  std::string base = training_report(scenario, prediction, format);
  if (!variant.profile) return base;
  const CalibrationProfile& profile = *variant.profile;
  const PredictionInterval interval = training_interval(profile, scenario, prediction, variant.cost, 0.9);
  const double step = prediction.step_time.value();
  switch (format) {
    case ReportFormat::table: {
      std::string out = base;
      out += fmt::format("\ncalibration: model '{}' — {}\n", variant.name, variant.description);
      out += fmt::format("  step time {}\n", interval.describe(step, "s"));
      if (!interval.shares.empty()) {
        out += "  interval by component:";
        for (const auto& [c, share] : interval.shares) out += fmt::format(" {} {:.0f}%", c, 100.0 * share);
        out += "\n";
      }
      for (const auto& n : profile.notes) out += fmt::format("  profile note: {}\n", n);
      return out;
    }
    case ReportFormat::json: {
      nlohmann::ordered_json c = calibration_json(variant, profile);
      c["interval"] = interval_json(interval, step, "step_time_s");
      nlohmann::ordered_json shares = nlohmann::ordered_json::object();
      for (const auto& [name, share] : interval.shares) shares[name] = round_significant(share);
      c["shares"] = shares;
      c["extrapolated"] = interval.extrapolated;
      return with_calibration(base, c);
    }
    case ReportFormat::csv: {
      std::string extrapolated;
      for (const auto& e : interval.extrapolated) {
        if (!extrapolated.empty()) extrapolated += "; ";
        extrapolated += e;
      }
      return with_csv_columns(base, ",model,step_time_interval_90,extrapolated",
                              fmt::format(",{},{},{}", csv_field(variant.name), half_width_field(interval),
                                          csv_field(extrapolated)));
    }
  }
  return base;
}

}  // namespace stepcast
