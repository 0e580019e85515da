#pragma once
// The calibration profiles the GUI can predict with, behind a small interface so that the
// profile files of issue 9 (`stepcast calibrate ... -o PROFILE.json`) plug in without touching
// the window.
//
// A profile is a named set of cost constants (model/cost_parameters.h) and, when it was fitted to
// measurements, the spread of its residuals as a prediction interval: a predicted value v is
// shown as [v * lower_ratio, v * upper_ratio] at `confidence`. The uncalibrated datasheet model is
// always offered, first, and has no interval (nothing was measured).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/cost_parameters.h"

namespace stepcast::gui {

struct PredictionInterval {
  double confidence = 0.9;   // e.g. 0.9 for a 90% interval
  double lower_ratio = 1.0;  // lower bound / predicted value
  double upper_ratio = 1.0;  // upper bound / predicted value
};

struct CalibrationProfile {
  std::string name;          // shown in the picker; unique within a source
  std::string description;   // where it came from (file, date, GPU), shown as a tooltip
  CostParameters parameters;
  std::optional<PredictionInterval> step_time;  // training step time / inference latency interval
};

// Where profiles come from.
class CalibrationProfileSource {
 public:
  virtual ~CalibrationProfileSource() = default;
  // Every profile on offer; the first is the default.
  [[nodiscard]] virtual std::vector<CalibrationProfile> profiles() const = 0;
};

// The uncalibrated model: CostParameters' documented defaults (datasheet peaks and the published
// efficiencies cited in model/cost_parameters.h), with no interval.
CalibrationProfile datasheet_profile();

// Offers datasheet_profile() followed by `extra` (profiles loaded from files, or given by tests).
class StaticProfileSource final : public CalibrationProfileSource {
 public:
  explicit StaticProfileSource(std::vector<CalibrationProfile> extra = {});
  [[nodiscard]] std::vector<CalibrationProfile> profiles() const override;

 private:
  std::vector<CalibrationProfile> m_profiles;
};

}  // namespace stepcast::gui
