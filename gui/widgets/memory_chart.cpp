#include "gui/widgets/memory_chart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QLineSeries>
#include <QStackedBarSeries>
#include <QValueAxis>

#include <algorithm>

#include "gui/models/components.h"
#include "gui/models/display_units.h"
#include "gui/models/memory_model.h"
#include "gui/widgets/chart_style.h"

namespace stepcast::gui {

MemoryChart::MemoryChart(MemoryModel& model, QWidget* parent) : QChartView(parent), m_model(model) {
  style_view(this);
  auto* chart = new QChart;
  style_chart(chart, QString());
  chart->legend()->setAlignment(Qt::AlignRight);
  m_series = new QStackedBarSeries;
  m_series->setBarWidth(0.65);
  chart->addSeries(m_series);
  m_limit = new QLineSeries;
  QPen pen(QColor(200, 0, 0));
  pen.setWidthF(2.0);
  pen.setStyle(Qt::DashLine);
  m_limit->setPen(pen);
  chart->addSeries(m_limit);
  m_categories = new QBarCategoryAxis;
  style_axis(m_categories, tr("Pipeline stage"));
  chart->addAxis(m_categories, Qt::AlignBottom);
  m_values = new QValueAxis;
  m_values->setLabelFormat(QStringLiteral("%.0f"));
  style_axis(m_values, tr("Memory per GPU (GiB)"));
  chart->addAxis(m_values, Qt::AlignLeft);
  for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(m_series), static_cast<QAbstractSeries*>(m_limit)}) {
    s->attachAxis(m_categories);
    s->attachAxis(m_values);
  }
  setChart(chart);
  connect(&m_model, &QAbstractItemModel::modelReset, this, &MemoryChart::rebuild);
  rebuild();
}

void MemoryChart::rebuild() {
  const auto& rows = m_model.rows();
  double peak = 0.0;
  for (const auto& m : rows) peak = std::max(peak, m.peak.value());
  const double capacity = m_model.capacity();
  retitle(chart(), rows.empty() ? tr("Memory per GPU (no prediction)")
                                 : tr("Memory per GPU: peak %1 of %2").arg(format_bytes(peak), format_bytes(capacity)));
  // Stage numbers alone when there are many bars (the axis title says what they are).
  QStringList names = m_model.row_names();
  if (names.size() > 4) {
    for (int i = 0; i < names.size(); ++i) names[i] = QString::number(i);
  }
  // Same components and stages as before (the usual edit): update the sets in place.
  const auto& shown = m_model.shown_components();
  const QList<QBarSet*> existing = m_series->barSets();
  bool reuse = existing.size() == static_cast<qsizetype>(shown.size()) && m_categories->categories() == names;
  for (qsizetype k = 0; reuse && k < existing.size(); ++k) {
    reuse = existing[k]->label() == memory_components(rows.front())[static_cast<std::size_t>(shown[static_cast<std::size_t>(k)])].label;
  }
  if (!reuse) {
    m_series->clear();
    m_categories->clear();
    m_categories->append(names);
  }
  for (std::size_t k = 0; k < shown.size(); ++k) {
    const auto index = static_cast<std::size_t>(shown[k]);
    if (reuse) {
      QBarSet* set = existing[static_cast<qsizetype>(k)];
      for (std::size_t r = 0; r < rows.size(); ++r) {
        set->replace(static_cast<qsizetype>(r), memory_components(rows[r])[index].value / kGiB);
      }
      continue;
    }
    const Component first = memory_components(rows.front())[index];
    auto* set = new QBarSet(first.label);
    set->setColor(first.color);
    set->setBorderColor(first.color.darker(130));
    for (const auto& m : rows) *set << memory_components(m)[index].value / kGiB;
    m_series->append(set);
  }
  retitle(m_categories, rows.size() > 1 ? tr("Pipeline stage") : QString());
  // The capacity line spans the category axis (categories sit at 0 .. n-1).
  const QString limit_name = tr("Capacity %1 (OOM above)").arg(format_bytes(capacity));
  if (m_limit->name() != limit_name) m_limit->setName(limit_name);
  m_limit->replace(QList<QPointF>{{-0.5, capacity / kGiB}, {static_cast<double>(rows.size()) - 0.5, capacity / kGiB}});
  m_limit->setVisible(!rows.empty());
  set_nice_range(m_values, 0.0, std::max(peak, capacity) / kGiB * 1.04);
  m_values->setVisible(!rows.empty());
  m_categories->setVisible(!rows.empty());
}

}  // namespace stepcast::gui
