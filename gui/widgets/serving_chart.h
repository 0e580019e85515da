#pragma once
// A serving run over time (ServingSeriesModel): requests waiting for admission and sequences in
// running batches (left axis), and KV-cache occupancy (right axis, %). A queue that keeps growing
// is what a saturated run looks like.

#include <QChartView>

class QLineSeries;
class QValueAxis;

namespace stepcast::gui {

class ServingSeriesModel;

class ServingChart : public QChartView {
  Q_OBJECT

 public:
  explicit ServingChart(ServingSeriesModel& model, QWidget* parent = nullptr);
  void rebuild();

 private:
  ServingSeriesModel& m_model;
  QLineSeries* m_queued = nullptr;
  QLineSeries* m_running = nullptr;
  QLineSeries* m_kv = nullptr;
  QValueAxis* m_time = nullptr;
  QValueAxis* m_count = nullptr;
  QValueAxis* m_percent = nullptr;
};

}  // namespace stepcast::gui
