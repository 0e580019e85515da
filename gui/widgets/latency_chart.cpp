#include "gui/widgets/latency_chart.h"

#include <QChart>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "gui/models/latency_curve_model.h"
#include "gui/widgets/chart_style.h"

namespace stepcast::gui {
namespace {

QLineSeries* line(const QColor& color, Qt::PenStyle style, double width) {
  auto* s = new QLineSeries;
  QPen pen(color);
  pen.setWidthF(width);
  pen.setStyle(style);
  s->setPen(pen);
  return s;
}

const QColor kTtftColor(0, 114, 178);
const QColor kTpotColor(213, 94, 0);

}  // namespace

LatencyChart::LatencyChart(LatencyCurveModel& model, QWidget* parent) : QChartView(parent), m_model(model) {
  style_view(this);
  auto* chart = new QChart;
  style_chart(chart, QString());
  chart->legend()->setAlignment(Qt::AlignRight);  // six entries do not fit under a half-width chart
  m_ttft = line(kTtftColor, Qt::SolidLine, 2.0);
  m_ttft->setName(tr("TTFT p90"));
  m_ttft->setPointsVisible(true);
  m_tpot = line(kTpotColor, Qt::SolidLine, 2.0);
  m_tpot->setName(tr("TPOT p90"));
  m_tpot->setPointsVisible(true);
  m_ttft_slo = line(kTtftColor, Qt::DashLine, 1.5);
  m_tpot_slo = line(kTpotColor, Qt::DashLine, 1.5);
  m_current = new QScatterSeries;
  m_current->setName(tr("this scenario"));
  m_current->setMarkerSize(12.0);
  m_current->setColor(Qt::white);
  m_current->setBorderColor(Qt::black);
  m_bad = new QScatterSeries;
  m_bad->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  m_bad->setMarkerSize(8.0);
  m_bad->setColor(QColor(200, 0, 0));
  for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(m_ttft), static_cast<QAbstractSeries*>(m_tpot),
                             static_cast<QAbstractSeries*>(m_ttft_slo), static_cast<QAbstractSeries*>(m_tpot_slo),
                             static_cast<QAbstractSeries*>(m_current), static_cast<QAbstractSeries*>(m_bad)}) {
    chart->addSeries(s);
  }
  m_rate = new QValueAxis;
  m_rate->setLabelFormat(QStringLiteral("%.0f"));
  style_axis(m_rate, tr("Output tokens/s (all GPUs)"));
  chart->addAxis(m_rate, Qt::AlignBottom);
  m_ttft_axis = new QLogValueAxis;
  m_ttft_axis->setBase(10.0);
  m_ttft_axis->setMinorTickCount(8);
  m_ttft_axis->setLabelFormat(QStringLiteral("%g"));
  style_axis(m_ttft_axis, tr("Time to first token, p90 (ms)"));
  m_ttft_axis->setLinePenColor(kTtftColor);
  chart->addAxis(m_ttft_axis, Qt::AlignLeft);
  m_tpot_axis = new QValueAxis;
  m_tpot_axis->setLabelFormat(QStringLiteral("%.3g"));
  style_axis(m_tpot_axis, tr("Time per output token, p90 (ms)"));
  m_tpot_axis->setLinePenColor(kTpotColor);
  chart->addAxis(m_tpot_axis, Qt::AlignRight);
  for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(m_ttft), static_cast<QAbstractSeries*>(m_ttft_slo),
                             static_cast<QAbstractSeries*>(m_current), static_cast<QAbstractSeries*>(m_bad)}) {
    s->attachAxis(m_rate);
    s->attachAxis(m_ttft_axis);
  }
  m_tpot->attachAxis(m_rate);
  m_tpot->attachAxis(m_tpot_axis);
  m_tpot_slo->attachAxis(m_rate);
  m_tpot_slo->attachAxis(m_tpot_axis);
  setChart(chart);
  connect(&m_model, &QAbstractItemModel::modelReset, this, &LatencyChart::rebuild);
  rebuild();
}

void LatencyChart::rebuild() {
  const LatencyCurve& c = m_model.curve();
  retitle(chart(), c.points.empty() ? tr("Latency vs throughput (no curve)")
                   : c.serving      ? tr("Latency vs throughput as the arrival rate grows")
                                    : tr("Latency vs throughput as the batch grows"));
  QList<QPointF> ttft;
  QList<QPointF> tpot;
  QList<QPointF> current;
  QList<QPointF> bad;
  double x_max = 0.0;
  double ttft_max = c.ttft_slo.value() * 1e3;
  double ttft_min = ttft_max > 0.0 ? ttft_max : 1e300;
  double tpot_max = c.tpot_slo.value() * 1e3;
  for (const auto& p : c.points) {
    const double x = p.output_tokens_per_s;
    ttft << QPointF(x, p.ttft_p90.value() * 1e3);
    tpot << QPointF(x, p.tpot_p90.value() * 1e3);
    if (p.current) current << QPointF(x, p.ttft_p90.value() * 1e3);
    if (p.saturated || !p.fits) bad << QPointF(x, p.ttft_p90.value() * 1e3);
    x_max = std::max(x_max, x);
    ttft_max = std::max(ttft_max, p.ttft_p90.value() * 1e3);
    if (p.ttft_p90.value() > 0.0) ttft_min = std::min(ttft_min, p.ttft_p90.value() * 1e3);
    tpot_max = std::max(tpot_max, p.tpot_p90.value() * 1e3);
  }
  m_ttft->replace(ttft);
  m_tpot->replace(tpot);
  m_current->replace(current);
  m_bad->replace(bad);
  const QString bad_name = c.serving ? tr("saturated") : tr("does not fit");
  if (m_bad->name() != bad_name) m_bad->setName(bad_name);
  for (QLegendMarker* marker : chart()->legend()->markers(m_bad)) marker->setVisible(!bad.isEmpty());
  const double x_top = x_max * 1.05;
  const auto slo = [&](QLineSeries* s, Seconds value, const QString& what) {
    const bool on = value.value() > 0.0 && !c.points.empty();
    s->replace(on ? QList<QPointF>{{0.0, value.value() * 1e3}, {x_top, value.value() * 1e3}} : QList<QPointF>{});
    const QString name = tr("%1 SLO").arg(what);
    if (s->name() != name) s->setName(name);
    for (QLegendMarker* marker : chart()->legend()->markers(s)) marker->setVisible(on);
  };
  slo(m_ttft_slo, c.ttft_slo, tr("TTFT"));
  slo(m_tpot_slo, c.tpot_slo, tr("TPOT"));
  set_nice_range(m_rate, 0.0, x_top);
  // Whole decades around the TTFTs.
  if (ttft_min < 1e300) {
    const double lo = std::pow(10.0, std::floor(std::log10(ttft_min)));
    const double hi = std::pow(10.0, std::ceil(std::log10(ttft_max * 1.01)));
    if (m_ttft_axis->min() != lo || m_ttft_axis->max() != hi) m_ttft_axis->setRange(lo, hi);
  }
  set_nice_range(m_tpot_axis, 0.0, tpot_max * 1.05);
  for (QAbstractAxis* a : {static_cast<QAbstractAxis*>(m_rate), static_cast<QAbstractAxis*>(m_ttft_axis),
                           static_cast<QAbstractAxis*>(m_tpot_axis)}) {
    a->setVisible(!c.points.empty());
  }
}

}  // namespace stepcast::gui
