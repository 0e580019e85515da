#pragma once
// The step-time breakdown as stacked bars: one horizontal bar per BreakdownModel bar (a training
// step; prefill and decode for serving), one segment per component, legend entries with values.
// The chart, series and axes are made once; a model reset replaces the bar sets and rescales.

#include <QChartView>

class QBarCategoryAxis;
class QHorizontalStackedBarSeries;
class QValueAxis;

namespace stepcast::gui {

class BreakdownModel;

class BreakdownChart : public QChartView {
  Q_OBJECT

 public:
  explicit BreakdownChart(BreakdownModel& model, QWidget* parent = nullptr);
  void rebuild();

 private:
  BreakdownModel& m_model;
  QHorizontalStackedBarSeries* m_series = nullptr;
  QBarCategoryAxis* m_categories = nullptr;
  QValueAxis* m_values = nullptr;
};

}  // namespace stepcast::gui
