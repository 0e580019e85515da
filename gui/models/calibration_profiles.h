#pragma once
// The model variants the GUI can predict with (simulator/calibration_profile.h): the uncalibrated
// "datasheet" variant, always first, and one calibrated variant per profile file
// (`stepcast calibrate ... -o PROFILE.json`), behind a small source interface so that tests and
// other sources plug in without touching the window.
//
// Intervals: a profile stores the held-out residuals of each component it fitted (gemm.bf16,
// collective.all_reduce, ...); the window lists those intervals as they are. A step-time (or
// latency) interval is shown only when the choice carries one (`step_time`): how component errors
// combine into a step-time interval is the calibration's to define (issue 9), not the window's.

#include <QString>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "simulator/calibration_profile.h"

namespace stepcast::gui {

struct PredictionInterval {
  double confidence = 0.9;   // e.g. 0.9 for a 90% interval
  double lower_ratio = 1.0;  // lower bound / predicted value
  double upper_ratio = 1.0;  // upper bound / predicted value
};

struct CalibrationChoice {
  ModelVariant variant;                         // name, description, constants, profile
  std::optional<PredictionInterval> step_time;  // a step-time / latency interval, when known

  [[nodiscard]] const std::string& name() const { return variant.name; }
};

// One line per fitted component of a calibrated variant: "gemm.bf16: +-3.1 % (90 %, 24 held-out
// points)", or "... too few points for a 90 % interval". Empty for the datasheet variant.
std::vector<std::string> component_intervals(const CalibrationChoice& choice, double level = 0.9);

// Where choices come from.
class CalibrationProfileSource {
 public:
  virtual ~CalibrationProfileSource() = default;
  // Every choice on offer; the first is the default.
  [[nodiscard]] virtual std::vector<CalibrationChoice> profiles() const = 0;
};

// The datasheet variant followed by `extra` (calibrated variants from files, or given by tests).
class StaticProfileSource final : public CalibrationProfileSource {
 public:
  explicit StaticProfileSource(std::vector<CalibrationChoice> extra = {});
  [[nodiscard]] std::vector<CalibrationChoice> profiles() const override;

 private:
  std::vector<CalibrationChoice> m_choices;
};

CalibrationChoice datasheet_choice();
// Loads a profile file as a calibrated choice; throws InputError (from load_profile) when it cannot.
CalibrationChoice load_profile_choice(const std::string& path);

// `base` with model constants set by hand ("NAME=VALUE", stepcast-gui --constant; the rules and
// errors of simulator/constant_overrides.h): a what-if on the model, named after base and the
// constants set. It carries no interval and no profile: base's measured residuals describe base's
// constants, not these. Throws InputError on a bad NAME=VALUE.
CalibrationChoice with_constants(const CalibrationChoice& base, const std::vector<std::string>& constants);

}  // namespace stepcast::gui
