#pragma once
// Memory per GPU against capacity: one stacked bar per pipeline stage (components in GiB), and the
// GPU's capacity as a red dashed line; a bar above the line does not fit (out of memory). The
// chart, series and axes are made once; a model reset replaces the bar sets and rescales.

#include <QChartView>

class QBarCategoryAxis;
class QLineSeries;
class QStackedBarSeries;
class QValueAxis;

namespace stepcast::gui {

class MemoryModel;

class MemoryChart : public QChartView {
  Q_OBJECT

 public:
  explicit MemoryChart(MemoryModel& model, QWidget* parent = nullptr);
  void rebuild();

 private:
  MemoryModel& m_model;
  QStackedBarSeries* m_series = nullptr;
  QLineSeries* m_limit = nullptr;
  QBarCategoryAxis* m_categories = nullptr;
  QValueAxis* m_values = nullptr;
};

}  // namespace stepcast::gui
