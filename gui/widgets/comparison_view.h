#pragma once
// Compare: configuration A (pinned with "Pin as baseline") and B (the scenario being edited) side
// by side. A table lists both predictions and their difference by component; a bar chart shows
// which time components the step-time change comes from (bars right of zero: B is slower there).

#include <QWidget>

class QChartView;
class QLabel;
class QTableView;

namespace stepcast::gui {

class ComparisonModel;

class ComparisonView : public QWidget {
  Q_OBJECT

 public:
  explicit ComparisonView(ComparisonModel& model, QWidget* parent = nullptr);
  [[nodiscard]] QChartView* chart_view() const { return m_chart; }
  [[nodiscard]] QTableView* table() const { return m_table; }
  // Brings the chart up to date if the model changed while the page was hidden (before export).
  void ensure_current() {
    if (m_stale) rebuild_chart();
  }

 Q_SIGNALS:
  void pin_requested();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void rebuild_chart();

  ComparisonModel& m_model;
  QLabel* m_hint = nullptr;
  QTableView* m_table = nullptr;
  QChartView* m_chart = nullptr;
  bool m_stale = true;  // the model changed while the page was hidden
};

}  // namespace stepcast::gui
