#include "gui/widgets/serving_chart.h"

#include <QChart>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>

#include "gui/models/serving_series_model.h"
#include "gui/widgets/chart_style.h"

namespace stepcast::gui {

ServingChart::ServingChart(ServingSeriesModel& model, QWidget* parent) : QChartView(parent), m_model(model) {
  style_view(this);
  auto* chart = new QChart;
  style_chart(chart, QString());
  const auto line = [](const QString& name, const QColor& color, Qt::PenStyle style) {
    auto* s = new QLineSeries;
    s->setName(name);
    QPen pen(color);
    pen.setWidthF(2.0);
    pen.setStyle(style);
    s->setPen(pen);
    return s;
  };
  m_queued = line(tr("Queued requests"), QColor(213, 94, 0), Qt::SolidLine);
  m_running = line(tr("Running sequences"), QColor(0, 114, 178), Qt::SolidLine);
  m_kv = line(tr("KV cache used (%)"), QColor(0, 158, 115), Qt::DashLine);
  chart->addSeries(m_queued);
  chart->addSeries(m_running);
  chart->addSeries(m_kv);
  m_time = new QValueAxis;
  m_time->setLabelFormat(QStringLiteral("%.4g"));
  style_axis(m_time, tr("Simulated time (s)"));
  chart->addAxis(m_time, Qt::AlignBottom);
  m_count = new QValueAxis;
  m_count->setLabelFormat(QStringLiteral("%.4g"));
  style_axis(m_count, tr("Requests / sequences"));
  chart->addAxis(m_count, Qt::AlignLeft);
  m_percent = new QValueAxis;
  m_percent->setLabelFormat(QStringLiteral("%.0f"));
  m_percent->setRange(0.0, 100.0);
  m_percent->setTickCount(6);
  style_axis(m_percent, tr("KV cache used (%)"));
  chart->addAxis(m_percent, Qt::AlignRight);
  for (QLineSeries* s : {m_queued, m_running}) {
    s->attachAxis(m_time);
    s->attachAxis(m_count);
  }
  m_kv->attachAxis(m_time);
  m_kv->attachAxis(m_percent);
  setChart(chart);
  connect(&m_model, &QAbstractItemModel::modelReset, this, &ServingChart::rebuild);
  rebuild();
}

void ServingChart::rebuild() {
  const auto& samples = m_model.samples();
  retitle(chart(), samples.empty() ? tr("Serving run over time (static batch: no request stream)")
                                   : tr("Serving run over time"));
  QList<QPointF> queued;
  QList<QPointF> running;
  QList<QPointF> kv;
  double t_max = 0.0;
  double count_max = 0.0;
  for (const auto& s : samples) {
    queued << QPointF(s.time.value(), s.queued);
    running << QPointF(s.time.value(), s.running);
    kv << QPointF(s.time.value(), s.kv_occupancy * 100.0);
    t_max = std::max(t_max, s.time.value());
    count_max = std::max({count_max, s.queued, s.running});
  }
  m_queued->replace(queued);
  m_running->replace(running);
  m_kv->replace(kv);
  set_nice_range(m_time, 0.0, t_max);
  set_nice_range(m_count, 0.0, count_max * 1.05);
  for (QAbstractAxis* a : {static_cast<QAbstractAxis*>(m_time), static_cast<QAbstractAxis*>(m_count),
                           static_cast<QAbstractAxis*>(m_percent)}) {
    a->setVisible(!samples.empty());
  }
}

}  // namespace stepcast::gui
