#pragma once
// The latency-throughput curve (gui/models/latency_curve.h) as a table: one row per load (arrival
// rate or batch) with the throughput it reached and its p90 latencies, plus the SLOs for the chart.

#include "gui/models/latency_curve.h"
#include "gui/models/table_model.h"

namespace stepcast::gui {

class LatencyCurveModel : public TableModel {
  Q_OBJECT

 public:
  explicit LatencyCurveModel(QObject* parent = nullptr);

  void set_curve(LatencyCurve curve);
  void clear() { set_curve({}); }
  [[nodiscard]] const LatencyCurve& curve() const { return m_curve; }

 private:
  LatencyCurve m_curve;
};

}  // namespace stepcast::gui
