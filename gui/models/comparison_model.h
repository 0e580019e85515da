#pragma once
// Two configurations side by side: A (a pinned baseline) and B (the scenario being edited). Rows
// are the step time and each of its components, then throughput, MFU, and peak memory with its
// components; columns A, B, the difference B - A and, for time components, the share of the
// step-time difference each explains. Because the components sum to the step time exactly
// (model/prediction.h), the shares of the time rows sum to 100 %: the difference is attributed,
// not estimated.

#include <optional>

#include "gui/models/table_model.h"
#include "model/prediction.h"

namespace stepcast::gui {

class ComparisonModel : public TableModel {
  Q_OBJECT

 public:
  explicit ComparisonModel(QObject* parent = nullptr);

  void set_pair(const std::optional<TrainingPrediction>& a, const QString& a_name,
                const std::optional<TrainingPrediction>& b, const QString& b_name);

  // For the chart: per time component, B - A in seconds (only components that differ), with labels
  // and colours; empty without both predictions.
  struct Delta {
    QString label;
    double seconds = 0.0;
    QColor color;
  };
  [[nodiscard]] const std::vector<Delta>& time_deltas() const { return m_deltas; }
  [[nodiscard]] bool complete() const { return m_complete; }

 private:
  std::vector<Delta> m_deltas;
  bool m_complete = false;
};

}  // namespace stepcast::gui
