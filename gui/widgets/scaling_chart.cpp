#include "gui/widgets/scaling_chart.h"

#include <QChart>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "gui/models/scaling_model.h"
#include "gui/widgets/chart_style.h"

namespace stepcast::gui {

ScalingChart::ScalingChart(ScalingModel& model, QWidget* parent) : QChartView(parent), m_model(model) {
  style_view(this);
  auto* chart = new QChart;
  style_chart(chart, QString());
  m_throughput = new QLineSeries;
  m_throughput->setPointsVisible(true);
  QPen tp_pen(QColor(0, 114, 178));
  tp_pen.setWidthF(2.0);
  m_throughput->setPen(tp_pen);
  m_mfu = new QLineSeries;
  m_mfu->setName(tr("MFU (%)"));
  m_mfu->setPointsVisible(true);
  QPen mfu_pen(QColor(0, 158, 115));
  mfu_pen.setWidthF(2.0);
  mfu_pen.setStyle(Qt::DashLine);
  m_mfu->setPen(mfu_pen);
  m_current = new QScatterSeries;
  m_current->setName(tr("this scenario"));
  m_current->setMarkerSize(13.0);
  m_current->setColor(QColor(0, 114, 178));
  m_current->setBorderColor(Qt::black);
  m_oom = new QScatterSeries;
  m_oom->setName(tr("does not fit"));
  m_oom->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  m_oom->setMarkerSize(9.0);
  m_oom->setColor(QColor(200, 0, 0));
  for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(m_throughput), static_cast<QAbstractSeries*>(m_mfu),
                             static_cast<QAbstractSeries*>(m_current), static_cast<QAbstractSeries*>(m_oom)}) {
    chart->addSeries(s);
  }
  m_gpus = new QLogValueAxis;
  m_gpus->setBase(2.0);
  m_gpus->setLabelFormat(QStringLiteral("%.0f"));
  m_gpus->setMinorTickCount(0);
  style_axis(m_gpus, tr("GPUs"));
  chart->addAxis(m_gpus, Qt::AlignBottom);
  m_rate = new QValueAxis;
  m_rate->setLabelFormat(QStringLiteral("%.3g"));
  style_axis(m_rate, tr("Throughput"));
  chart->addAxis(m_rate, Qt::AlignLeft);
  m_percent = new QValueAxis;
  m_percent->setTickType(QValueAxis::TicksDynamic);
  m_percent->setTickAnchor(0.0);
  m_percent->setTickInterval(20.0);
  m_percent->setLabelFormat(QStringLiteral("%.0f"));
  style_axis(m_percent, tr("MFU (%)"));
  chart->addAxis(m_percent, Qt::AlignRight);
  for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(m_throughput), static_cast<QAbstractSeries*>(m_current),
                             static_cast<QAbstractSeries*>(m_oom)}) {
    s->attachAxis(m_gpus);
    s->attachAxis(m_rate);
  }
  m_mfu->attachAxis(m_gpus);
  m_mfu->attachAxis(m_percent);
  setChart(chart);
  connect(&m_model, &QAbstractItemModel::modelReset, this, &ScalingChart::rebuild);
  rebuild();
}

void ScalingChart::rebuild() {
  const auto& points = m_model.points();
  retitle(chart(), points.empty() ? tr("Scaling (no curve)") : tr("Scaling with data parallelism (layout and batch kept)"));
  // Throughput in tokens/s, thousand or million tokens/s, whichever keeps labels short.
  double top = 0.0;
  double mfu_top = 0.0;
  for (const auto& p : points) {
    top = std::max(top, p.tokens_per_s);
    mfu_top = std::max(mfu_top, p.mfu * 100.0);
  }
  const double scale = top >= 1e6 ? 1e6 : top >= 1e4 ? 1e3 : 1.0;
  const QString rate_unit = scale == 1e6 ? tr("M tokens/s") : scale == 1e3 ? tr("k tokens/s") : tr("tokens/s");
  QList<QPointF> throughput;
  QList<QPointF> mfu;
  QList<QPointF> current;
  QList<QPointF> oom;
  for (const auto& p : points) {
    throughput << QPointF(p.gpus, p.tokens_per_s / scale);
    mfu << QPointF(p.gpus, p.mfu * 100.0);
    if (p.current) current << QPointF(p.gpus, p.tokens_per_s / scale);
    if (!p.fits) oom << QPointF(p.gpus, p.tokens_per_s / scale);
  }
  const QString rate_name = tr("Throughput (%1)").arg(rate_unit);
  if (m_throughput->name() != rate_name) m_throughput->setName(rate_name);
  m_throughput->replace(throughput);
  m_mfu->replace(mfu);
  m_current->replace(current);
  m_oom->replace(oom);
  // The "does not fit" entry only when some size does not fit.
  for (QLegendMarker* marker : chart()->legend()->markers(m_oom)) marker->setVisible(!oom.isEmpty());
  if (!points.empty() && (m_gpus->min() != points.front().gpus / 1.4 || m_gpus->max() != points.back().gpus * 1.4)) {
    m_gpus->setRange(points.front().gpus / 1.4, points.back().gpus * 1.4);
  }
  set_nice_range(m_rate, 0.0, top / scale * 1.05);
  retitle(m_rate, rate_name);
  const double percent_top = std::max(100.0, std::ceil(mfu_top / 20.0) * 20.0);
  if (m_percent->max() != percent_top) m_percent->setRange(0.0, percent_top);
  for (QAbstractAxis* a : {static_cast<QAbstractAxis*>(m_gpus), static_cast<QAbstractAxis*>(m_rate),
                           static_cast<QAbstractAxis*>(m_percent)}) {
    a->setVisible(!points.empty());
  }
}

}  // namespace stepcast::gui
