#pragma once
// Scaling curve table: one row per GPU count (gui/models/scaling_curve.h), with data-parallel
// replicas, step time, throughput, MFU and whether memory fits.

#include <vector>

#include "gui/models/scaling_curve.h"
#include "gui/models/table_model.h"

namespace stepcast::gui {

class ScalingModel : public TableModel {
  Q_OBJECT

 public:
  explicit ScalingModel(QObject* parent = nullptr);

  void set_points(std::vector<ScalingPoint> points);
  void clear() { set_points({}); }
  [[nodiscard]] const std::vector<ScalingPoint>& points() const { return m_points; }

 private:
  std::vector<ScalingPoint> m_points;
};

}  // namespace stepcast::gui
