#include "simulator/calibrated_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "simulator/inference_report.h"

namespace stepcast {

namespace {

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
  i["extrapolated"] = interval.extrapolated;
  return i;
}

nlohmann::ordered_json profile_json(const CalibrationProfile& profile) {
  return {{"name", profile.name}, {"gpu", profile.gpu}, {"system", profile.system}, {"created_utc", profile.created_utc}};
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
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(base);
      nlohmann::ordered_json c;
      c["model"] = variant.name;
      c["profile"] = profile_json(profile);
      c["ttft"] = interval_json(intervals.prefill, ttft, "ttft_s");
      c["tpot"] = interval_json(intervals.decode, tpot, "tpot_s");
      j["calibration"] = c;
      return j.dump(2) + "\n";
    }
    case ReportFormat::csv: {
      const auto newline = base.find('\n');
      std::string header = base.substr(0, newline);
      std::string row = base.substr(newline + 1);
      while (!row.empty() && row.back() == '\n') row.pop_back();
      header += ",model,ttft_interval_90,tpot_interval_90,extrapolated";
      std::vector<std::string> extrapolated;
      for (const auto& e : intervals.prefill.extrapolated) extrapolated.push_back("prefill " + e);
      for (const auto& e : intervals.decode.extrapolated) extrapolated.push_back("decode " + e);
      row += fmt::format(",{},{},{},{}", csv_field(variant.name), half_width_field(intervals.prefill),
                         half_width_field(intervals.decode), csv_field(fmt::format("{}", fmt::join(extrapolated, ";"))));
      return header + "\n" + row + "\n";
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
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(base);
      nlohmann::ordered_json c;
      c["model"] = variant.name;
      c["profile"] = profile_json(profile);
      nlohmann::ordered_json i;
      i["level"] = interval.level;
      if (interval.relative_half_width) {
        const double h = *interval.relative_half_width;
        i["relative_half_width"] = round_significant(h);
        i["step_time_s"] = {round_significant(step * (1.0 - h)), round_significant(step * (1.0 + h))};
      } else {
        i["relative_half_width"] = nullptr;
        i["step_time_s"] = nullptr;
      }
      i["covered_share"] = round_significant(interval.covered_share);
      i["not_covered"] = interval.not_covered;
      i["too_few_points"] = interval.too_few_points;
      c["interval"] = i;
      nlohmann::ordered_json shares = nlohmann::ordered_json::object();
      for (const auto& [name, share] : interval.shares) shares[name] = round_significant(share);
      c["shares"] = shares;
      c["extrapolated"] = interval.extrapolated;
      j["calibration"] = c;
      return j.dump(2) + "\n";
    }
    case ReportFormat::csv: {
      const auto newline = base.find('\n');
      std::string header = base.substr(0, newline);
      std::string row = base.substr(newline + 1);
      while (!row.empty() && row.back() == '\n') row.pop_back();
      std::string extrapolated;
      for (const auto& e : interval.extrapolated) {
        if (!extrapolated.empty()) extrapolated += "; ";
        extrapolated += e;
      }
      header += ",model,step_time_interval_90,extrapolated";
      row += fmt::format(",{},{},{}", csv_field(variant.name),
                         interval.relative_half_width
                             ? fmt::format("{:g}", round_significant(*interval.relative_half_width))
                             : std::string(),
                         csv_field(extrapolated));
      return header + "\n" + row + "\n";
    }
  }
  return base;
}

}  // namespace stepcast
