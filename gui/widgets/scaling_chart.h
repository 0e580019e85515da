#pragma once
// The scaling curve: GPUs (log2 axis) against throughput (left axis) and MFU (%, right axis), from
// ScalingModel; the scenario's own size is marked, sizes that do not fit in memory are drawn as red
// squares. The chart, series and axes are made once; a model reset replaces the points.

#include <QChartView>

class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QValueAxis;

namespace stepcast::gui {

class ScalingModel;

class ScalingChart : public QChartView {
  Q_OBJECT

 public:
  explicit ScalingChart(ScalingModel& model, QWidget* parent = nullptr);
  void rebuild();

 private:
  ScalingModel& m_model;
  QLineSeries* m_throughput = nullptr;
  QLineSeries* m_mfu = nullptr;
  QScatterSeries* m_current = nullptr;
  QScatterSeries* m_oom = nullptr;
  QLogValueAxis* m_gpus = nullptr;
  QValueAxis* m_rate = nullptr;
  QValueAxis* m_percent = nullptr;
};

}  // namespace stepcast::gui
