#include "gui/models/latency_curve_model.h"

namespace stepcast::gui {

LatencyCurveModel::LatencyCurveModel(QObject* parent)
    : TableModel({QStringLiteral("Load"), QStringLiteral("Output tokens/s"), QStringLiteral("Requests/s"),
                  QStringLiteral("TTFT p90 (ms)"), QStringLiteral("TPOT p90 (ms)"), QStringLiteral("State")},
                 parent) {}

void LatencyCurveModel::set_curve(LatencyCurve curve) {
  m_curve = std::move(curve);
  std::vector<std::vector<Cell>> rows;
  for (const auto& p : m_curve.points) {
    const QString load = m_curve.serving ? QStringLiteral("%1 requests/s").arg(p.load, 0, 'g', 4)
                                         : QStringLiteral("batch %1").arg(p.load, 0, 'f', 0);
    QString state = p.current ? QStringLiteral("this scenario") : QString();
    if (p.saturated) state += (state.isEmpty() ? QString() : QStringLiteral(", ")) + QStringLiteral("saturated");
    if (!p.fits) state += (state.isEmpty() ? QString() : QStringLiteral(", ")) + QStringLiteral("does not fit");
    rows.push_back({number_cell(p.load, load), number_cell(p.output_tokens_per_s, QString::number(p.output_tokens_per_s, 'f', 0)),
                    number_cell(p.requests_per_s, QString::number(p.requests_per_s, 'f', 2)),
                    number_cell(p.ttft_p90.value(), QString::number(p.ttft_p90.value() * 1e3, 'f', 1)),
                    number_cell(p.tpot_p90.value(), QString::number(p.tpot_p90.value() * 1e3, 'f', 2)),
                    text_cell(state)});
  }
  const QString load_header = m_curve.serving ? QStringLiteral("Arrival rate") : QStringLiteral("Batch");
  reset_table({load_header, QStringLiteral("Output tokens/s"), QStringLiteral("Requests/s"), QStringLiteral("TTFT p90 (ms)"),
               QStringLiteral("TPOT p90 (ms)"), QStringLiteral("State")},
              std::move(rows));
}

}  // namespace stepcast::gui
