#include "gui/widgets/comparison_view.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QShowEvent>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "gui/models/comparison_model.h"
#include "gui/models/display_units.h"
#include "gui/widgets/chart_style.h"

namespace stepcast::gui {

ComparisonView::ComparisonView(ComparisonModel& model, QWidget* parent) : QWidget(parent), m_model(model) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  m_hint = new QLabel(this);
  m_hint->setWordWrap(true);
  auto* pin = new QPushButton(tr("Pin current as A (Ctrl+B)"), this);
  pin->setToolTip(tr("Make the current prediction the baseline A (Ctrl+B); then edit the scenario to get B"));
  connect(pin, &QPushButton::clicked, this, &ComparisonView::pin_requested);
  top->addWidget(m_hint, 1);
  top->addWidget(pin);
  layout->addLayout(top);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setObjectName(QStringLiteral("compare_splitter"));
  m_table = new QTableView(split);
  m_table->setModel(&m_model);
  m_table->verticalHeader()->hide();
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setAlternatingRowColors(true);
  m_chart = new QChartView(split);
  style_view(m_chart);
  m_chart->setChart(new QChart);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setSizes({700, 450});
  layout->addWidget(split, 1);
  // Rebuilt when shown: the comparison follows every edit, but nobody sees it on another page.
  connect(&m_model, &QAbstractItemModel::modelReset, this, [this] {
    m_stale = true;
    if (isVisible()) rebuild_chart();
  });
}

void ComparisonView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (m_stale) rebuild_chart();
}

void ComparisonView::rebuild_chart() {
  m_stale = false;
  m_hint->setText(m_model.complete()
                      ? tr("B - A by component: the time rows' shares add up to the whole step-time change.")
                      : tr("Pin the current prediction as A (Ctrl+B), then change the scenario: B follows your edits."));
  m_table->resizeColumnsToContents();
  auto* chart = new QChart;
  const auto& deltas = m_model.time_deltas();
  style_chart(chart, tr("Where the step-time change comes from (B - A)"));
  if (!deltas.empty()) {
    double largest = 0.0;
    for (const auto& d : deltas) largest = std::max(largest, std::abs(d.seconds));
    const TimeUnit unit = time_unit_for(largest);
    auto* series = new QHorizontalBarSeries;
    auto* set = new QBarSet(tr("B - A (%1)").arg(unit.name));
    auto* categories = new QBarCategoryAxis;
    for (const auto& d : deltas) {
      *set << d.seconds * unit.per_second;
      categories->append(d.label);
    }
    set->setColor(QColor(0, 114, 178));
    series->append(set);
    series->setLabelsVisible(true);
    series->setLabelsFormat(QStringLiteral("@value"));
    series->setLabelsPrecision(3);
    chart->addSeries(series);
    style_axis(categories, QString());
    chart->addAxis(categories, Qt::AlignLeft);
    series->attachAxis(categories);
    auto* values = new QValueAxis;
    const double span = largest * unit.per_second * 1.15;
    values->setLabelFormat(QStringLiteral("%.3g"));
    set_nice_range(values, -span, span, 6);
    style_axis(values, tr("Change in time per step (%1); right of 0: B is slower").arg(unit.name));
    chart->addAxis(values, Qt::AlignBottom);
    series->attachAxis(values);
    chart->legend()->hide();
  }
  QChart* old = m_chart->chart();
  m_chart->setChart(chart);
  delete old;
}

}  // namespace stepcast::gui
