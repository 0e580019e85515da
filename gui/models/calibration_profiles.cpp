#include "gui/models/calibration_profiles.h"

namespace stepcast::gui {

CalibrationProfile datasheet_profile() {
  CalibrationProfile p;
  p.name = "datasheet (uncalibrated)";
  p.description =
      "stepcast's documented default constants (model/cost_parameters.h): datasheet peaks and "
      "published efficiencies; no measurements, so no prediction interval";
  return p;
}

StaticProfileSource::StaticProfileSource(std::vector<CalibrationProfile> extra) {
  m_profiles.push_back(datasheet_profile());
  for (auto& p : extra) m_profiles.push_back(std::move(p));
}

std::vector<CalibrationProfile> StaticProfileSource::profiles() const { return m_profiles; }

}  // namespace stepcast::gui
