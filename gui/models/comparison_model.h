#pragma once
// Two configurations side by side: A (a pinned baseline) and B (the scenario being edited). Rows
// are the headline time (a training step, or an inference decode step) and each of its
// components, then the other figures (throughput, MFU, latencies) and peak memory with its
// components; columns A, B, the difference B - A and, for time components, the share of the
// headline-time difference each explains. Because the components sum to the headline time exactly
// (model/prediction.h), those shares sum to 100 %: the difference is attributed, not estimated.
// Rows are matched by label, so a training and an inference prediction show side by side with
// "-" where one has no such row.

#include <optional>

#include "gui/models/components.h"
#include "gui/models/table_model.h"
#include "model/prediction.h"

namespace stepcast::gui {

// One prediction as the comparison reads it.
struct ComparisonSide {
  enum class Unit { seconds, bytes, percent, tokens_per_s, requests_per_s };
  struct Row {
    QString label;
    double value = 0.0;
    Unit unit = Unit::seconds;
    QColor color;               // components only
    bool time_component = false;  // a part of the headline time
  };
  QString name;
  std::vector<Row> rows;        // the headline time first
};

ComparisonSide comparison_side(const TrainingPrediction& p, const QString& name);
ComparisonSide comparison_side(const InferencePrediction& p, const QString& name);

class ComparisonModel : public TableModel {
  Q_OBJECT

 public:
  explicit ComparisonModel(QObject* parent = nullptr);

  void set_pair(const std::optional<ComparisonSide>& a, const std::optional<ComparisonSide>& b);

  // For the chart: per time component, B - A in seconds (only components that differ), with labels
  // and colours; empty without both sides.
  struct Delta {
    QString label;
    double seconds = 0.0;
    QColor color;
  };
  [[nodiscard]] const std::vector<Delta>& time_deltas() const { return m_deltas; }
  [[nodiscard]] bool complete() const { return m_complete; }
  [[nodiscard]] const QString& headline_label() const { return m_headline; }

 private:
  std::vector<Delta> m_deltas;
  bool m_complete = false;
  QString m_headline;
};

}  // namespace stepcast::gui
