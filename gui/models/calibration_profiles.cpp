#include "gui/models/calibration_profiles.h"

#include <cmath>
#include <sstream>

#include "simulator/constant_overrides.h"

namespace stepcast::gui {

std::vector<std::string> component_intervals(const CalibrationChoice& choice, double level) {
  std::vector<std::string> out;
  if (!choice.variant.profile) return out;
  for (const ComponentCalibration& c : choice.variant.profile->components) {
    std::ostringstream line;
    line << c.name << ": ";
    const std::optional<double> half = c.held_out.half_width(level);
    if (half) {
      line.setf(std::ios::fixed);
      line.precision(1);
      line << "+-" << *half * 100.0 << " % (" << std::lround(level * 100.0) << " %, " << c.held_out.n
           << " held-out points)";
    } else {
      line << "too few points (" << c.held_out.n << ") for a " << std::lround(level * 100.0) << " % interval";
    }
    out.push_back(line.str());
  }
  return out;
}

CalibrationChoice datasheet_choice() { return CalibrationChoice{datasheet_variant(), std::nullopt}; }

CalibrationChoice load_profile_choice(const std::string& path) {
  auto profile = std::make_shared<const CalibrationProfile>(load_profile(path));
  return CalibrationChoice{calibrated_variant(std::move(profile)), std::nullopt};
}

CalibrationChoice with_constants(const CalibrationChoice& base, const std::vector<std::string>& constants) {
  CalibrationChoice out{base.variant, std::nullopt};
  const std::vector<ConstantSet> set = apply_constant_overrides(constants, out.variant.cost, out.variant.nccl);
  if (set.empty()) return base;
  out.variant.name = base.variant.name + constants_set_label(set);
  out.variant.description =
      "'" + base.variant.name + "' with model constants set by hand (" + describe_constants_set(set) + ")";
  out.variant.profile = nullptr;
  return out;
}

StaticProfileSource::StaticProfileSource(std::vector<CalibrationChoice> extra) {
  m_choices.push_back(datasheet_choice());
  for (auto& c : extra) m_choices.push_back(std::move(c));
}

std::vector<CalibrationChoice> StaticProfileSource::profiles() const { return m_choices; }

}  // namespace stepcast::gui
