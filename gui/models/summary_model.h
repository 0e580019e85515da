#pragma once
// The headline figures of a prediction as a two-column table (quantity, value), with the
// calibration profile's interval where it has one, the parallel groups' placement and the
// predictor's notes. Empty when the scenario is invalid.

#include "gui/models/analysis.h"
#include "gui/models/table_model.h"

namespace stepcast::gui {

class SummaryModel : public TableModel {
  Q_OBJECT

 public:
  explicit SummaryModel(QObject* parent = nullptr);

  void set_analysis(const Analysis& analysis);
  void clear();

  // The headline as one line ("Step 13.7 s · 9,563 tokens/s · MFU 51.2 % · peak 62.1 of 80.0 GiB").
  [[nodiscard]] const QString& headline() const { return m_headline; }

 private:
  QString m_headline;
};

// "13.7 s (90 %: 12.9 - 14.6 s)" when an interval is given, else "13.7 s".
QString with_interval(double seconds, const std::optional<PredictionInterval>& interval);

}  // namespace stepcast::gui
