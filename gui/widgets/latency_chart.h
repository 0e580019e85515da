#pragma once
// The latency-throughput curve of an inference scenario (LatencyCurveModel): output tokens/s on
// the x axis, p90 time to first token (left axis, ms, logarithmic: queueing past saturation grows it
// by orders of magnitude) and p90 time per output token (right axis, ms), one point per load (arrival rate, or batch for a static scenario). The SLOs are dashed
// horizontal lines on their axes; the scenario's own load is marked, saturated or non-fitting
// loads are red squares.

#include <QChartView>

class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QValueAxis;

namespace stepcast::gui {

class LatencyCurveModel;

class LatencyChart : public QChartView {
  Q_OBJECT

 public:
  explicit LatencyChart(LatencyCurveModel& model, QWidget* parent = nullptr);
  void rebuild();

 private:
  LatencyCurveModel& m_model;
  QLineSeries* m_ttft = nullptr;
  QLineSeries* m_tpot = nullptr;
  QLineSeries* m_ttft_slo = nullptr;
  QLineSeries* m_tpot_slo = nullptr;
  QScatterSeries* m_current = nullptr;
  QScatterSeries* m_bad = nullptr;
  QValueAxis* m_rate = nullptr;
  QLogValueAxis* m_ttft_axis = nullptr;  // log: past saturation TTFT grows by orders of magnitude
  QValueAxis* m_tpot_axis = nullptr;
};

}  // namespace stepcast::gui
