#include "gui/widgets/breakdown_chart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>

#include <algorithm>

#include "gui/models/breakdown_model.h"
#include "gui/models/display_units.h"
#include "gui/widgets/chart_style.h"

namespace stepcast::gui {

BreakdownChart::BreakdownChart(BreakdownModel& model, QWidget* parent) : QChartView(parent), m_model(model) {
  style_view(this);
  auto* chart = new QChart;
  style_chart(chart, QString());
  chart->legend()->setAlignment(Qt::AlignRight);
  m_series = new QHorizontalStackedBarSeries;
  chart->addSeries(m_series);
  m_categories = new QBarCategoryAxis;
  style_axis(m_categories, QString());
  chart->addAxis(m_categories, Qt::AlignLeft);
  m_series->attachAxis(m_categories);
  m_values = new QValueAxis;
  m_values->setLabelFormat(QStringLiteral("%.3g"));
  style_axis(m_values, tr("Time per step (s)"));
  chart->addAxis(m_values, Qt::AlignBottom);
  m_series->attachAxis(m_values);
  setChart(chart);
  connect(&m_model, &QAbstractItemModel::modelReset, this, &BreakdownChart::rebuild);
  rebuild();
}

void BreakdownChart::rebuild() {
  const auto& bars = m_model.bars();
  double largest = 0.0;
  for (const auto& b : bars) {
    double total = 0.0;
    for (const auto& c : b.components) total += c.value;
    largest = std::max(largest, total);
  }
  const TimeUnit unit = time_unit_for(largest);
  // One bar: a training step. Several: inference iterations (prefill, decode step).
  const bool iterations = bars.size() > 1;
  retitle(chart(), bars.empty()  ? tr("Step-time breakdown (no prediction)")
                   : iterations ? tr("Iteration time breakdown: prefill and decode")
                                : tr("Step-time breakdown: %1").arg(format_seconds(largest)));
  m_series->setBarWidth(bars.size() == 1 ? 0.45 : 0.6);
  // Same components and bars as before (the usual edit): update the sets in place, which keeps
  // their legend markers; otherwise make new ones.
  const auto& shown = m_model.shown_components();
  QStringList names;
  for (const auto& b : bars) names << b.name;
  const QList<QBarSet*> existing = m_series->barSets();
  bool reuse = existing.size() == static_cast<qsizetype>(shown.size()) && m_categories->categories() == names;
  for (qsizetype k = 0; reuse && k < existing.size(); ++k) {
    reuse = existing[k]->color() == bars.front().components[static_cast<std::size_t>(shown[static_cast<std::size_t>(k)])].color;
  }
  if (!reuse) {
    m_series->clear();
    m_categories->clear();
    m_categories->append(names);
  }
  for (std::size_t k = 0; k < shown.size(); ++k) {
    const auto& first = bars.front().components[static_cast<std::size_t>(shown[k])];
    // With one bar the legend carries each component's time; with several the table does.
    const QString label = iterations ? first.label : QStringLiteral("%1 %2").arg(first.label, format_seconds(first.value));
    QBarSet* set = reuse ? existing[static_cast<qsizetype>(k)] : new QBarSet(label);
    if (reuse) {
      set->setLabel(label);
      for (std::size_t b = 0; b < bars.size(); ++b) {
        set->replace(static_cast<qsizetype>(b), bars[b].components[static_cast<std::size_t>(shown[k])].value * unit.per_second);
      }
    } else {
      set->setColor(first.color);
      set->setBorderColor(first.color.darker(130));
      for (const auto& b : bars) *set << b.components[static_cast<std::size_t>(shown[k])].value * unit.per_second;
      m_series->append(set);
    }
  }
  retitle(m_values, (iterations ? tr("Time per iteration (%1)") : tr("Time per step (%1)")).arg(unit.name));
  set_nice_range(m_values, 0.0, largest * unit.per_second);
  m_values->setVisible(!bars.empty());
  m_categories->setVisible(!bars.empty());
}

}  // namespace stepcast::gui
