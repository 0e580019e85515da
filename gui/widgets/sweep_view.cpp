#include "gui/widgets/sweep_view.h"

#include <QAction>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScatterSeries>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gui/models/display_units.h"
#include "gui/models/explorer_session.h"
#include "gui/models/sweep_results_model.h"
#include "gui/models/sweep_runner.h"
#include "gui/widgets/chart_style.h"

namespace stepcast::gui {

SweepView::SweepView(ExplorerSession& session, SweepResultsModel& results, SweepRunner& runner, QWidget* parent)
    : QWidget(parent), m_session(session), m_results(results), m_runner(runner) {
  auto* layout = new QVBoxLayout(this);

  auto* controls = new QHBoxLayout;
  auto* objective_label = new QLabel(tr("Ob&jective:"), this);
  m_objective = new QComboBox(this);
  m_objective->addItem(tr("fastest step"), QStringLiteral("min step_time_s"));
  m_objective->addItem(tr("highest MFU"), QStringLiteral("max mfu"));
  m_objective->addItem(tr("least GPU memory"), QStringLiteral("min memory_per_gpu_bytes.peak"));
  objective_label->setBuddy(m_objective);
  auto* keep_label = new QLabel(tr("&Keep:"), this);
  m_keep = new QComboBox(this);
  m_keep->addItem(tr("best K layouts"));
  m_keep->addItem(tr("Pareto set vs peak memory"));
  keep_label->setBuddy(m_keep);
  m_top = new QSpinBox(this);
  m_top->setRange(1, 100000);
  m_top->setValue(500);
  m_top->setPrefix(tr("K = "));
  m_top->setToolTip(tr("How many of the best layouts to keep"));
  m_run = new QPushButton(tr("&Run search (F5)"), this);
  m_cancel = new QPushButton(tr("Cancel (Esc)"), this);
  m_cancel->setEnabled(false);
  // Window-wide while this page is shown (a button's own shortcut would click it 100 ms later).
  auto* run_action = new QAction(tr("Run search"), this);
  run_action->setShortcut(QKeySequence(Qt::Key_F5));
  run_action->setShortcutContext(Qt::WindowShortcut);
  connect(run_action, &QAction::triggered, this, &SweepView::run);
  addAction(run_action);
  auto* cancel_action = new QAction(tr("Cancel search"), this);
  cancel_action->setShortcut(QKeySequence(Qt::Key_Escape));
  cancel_action->setShortcutContext(Qt::WindowShortcut);
  connect(cancel_action, &QAction::triggered, this, &SweepView::cancel);
  addAction(cancel_action);
  m_progress = new QProgressBar(this);
  m_progress->setTextVisible(true);
  m_progress->setMinimumWidth(220);
  m_progress->setValue(0);
  controls->addWidget(objective_label);
  controls->addWidget(m_objective);
  controls->addWidget(keep_label);
  controls->addWidget(m_keep);
  controls->addWidget(m_top);
  controls->addWidget(m_run);
  controls->addWidget(m_cancel);
  controls->addWidget(m_progress, 1);
  layout->addLayout(controls);

  m_status = new QLabel(tr("Searches every valid training layout of the scenario's model on its GPUs at its global "
                           "batch (tp, pp, dp, vpp, micro-batch, sequence parallelism, schedule, recompute, ZeRO)."),
                        this);
  m_status->setWordWrap(true);
  m_status->setObjectName(QStringLiteral("sweep_status"));
  layout->addWidget(m_status);

  auto* filter_row = new QHBoxLayout;
  auto* filter_label = new QLabel(tr("&Filter:"), this);
  m_filter = new QLineEdit(this);
  m_filter->setPlaceholderText(tr("text or regular expression, e.g. selective or ^8$"));
  m_filter->setClearButtonEnabled(true);
  filter_label->setBuddy(m_filter);
  m_filter_column = new QComboBox(this);
  m_filter_column->addItem(tr("any column"), -1);
  for (int c = 0; c < m_results.columnCount(); ++c) {
    m_filter_column->addItem(m_results.headerData(c, Qt::Horizontal).toString(), c);
  }
  filter_row->addWidget(filter_label);
  filter_row->addWidget(m_filter, 1);
  filter_row->addWidget(new QLabel(tr("in"), this));
  filter_row->addWidget(m_filter_column);
  layout->addLayout(filter_row);

  m_proxy = new QSortFilterProxyModel(this);
  m_proxy->setSourceModel(&m_results);
  m_proxy->setSortRole(TableModel::SortRole);
  m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
  m_proxy->setFilterKeyColumn(-1);
  const auto apply_filter = [this] {
    m_proxy->setFilterKeyColumn(m_filter_column->currentData().toInt());
    m_proxy->setFilterRegularExpression(
        QRegularExpression(m_filter->text(), QRegularExpression::CaseInsensitiveOption));
  };
  connect(m_filter, &QLineEdit::textChanged, this, apply_filter);
  connect(m_filter_column, &QComboBox::currentIndexChanged, this, apply_filter);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setObjectName(QStringLiteral("sweep_splitter"));
  m_table = new QTableView(split);
  m_table->setModel(m_proxy);
  m_table->setSortingEnabled(true);
  m_table->sortByColumn(0, Qt::AscendingOrder);
  m_table->verticalHeader()->hide();
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setAlternatingRowColors(true);
  m_table->setToolTip(tr("Double-click (or Enter) a row to load its layout into the editor"));
  connect(m_table, &QTableView::activated, this,
          [this](const QModelIndex& index) { load_row(m_proxy->mapToSource(index).row()); });

  m_chart = new QChartView(split);
  style_view(m_chart);
  auto* chart = new QChart;
  style_chart(chart, tr("Throughput against memory: click a point to load it"));
  m_all = new QScatterSeries;
  m_all->setName(tr("layouts kept"));
  m_all->setMarkerSize(7.0);
  m_all->setColor(QColor(86, 180, 233));
  m_all->setBorderColor(QColor(0, 114, 178));
  m_unfit = new QScatterSeries;
  m_unfit->setName(tr("does not fit"));
  m_unfit->setMarkerSize(6.0);
  m_unfit->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  m_unfit->setColor(QColor(200, 200, 200));
  m_front_line = new QLineSeries;
  m_front_line->setName(tr("Pareto front"));
  QPen pen(QColor(213, 94, 0));
  pen.setWidthF(1.5);
  m_front_line->setPen(pen);
  m_front = new QScatterSeries;
  m_front->setName(tr("Pareto-optimal"));
  m_front->setMarkerSize(10.0);
  m_front->setColor(QColor(213, 94, 0));
  for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(m_unfit), static_cast<QAbstractSeries*>(m_all),
                             static_cast<QAbstractSeries*>(m_front_line), static_cast<QAbstractSeries*>(m_front)}) {
    chart->addSeries(s);
  }
  m_x = new QValueAxis;
  m_x->setLabelFormat(QStringLiteral("%.0f"));
  style_axis(m_x, tr("Peak memory per GPU (GiB)"));
  chart->addAxis(m_x, Qt::AlignBottom);
  m_y = new QValueAxis;
  m_y->setLabelFormat(QStringLiteral("%.4g"));
  style_axis(m_y, tr("Throughput (tokens/s)"));
  chart->addAxis(m_y, Qt::AlignLeft);
  for (QAbstractSeries* s : chart->series()) {
    s->attachAxis(m_x);
    s->attachAxis(m_y);
  }
  m_chart->setChart(chart);
  connect(m_all, &QScatterSeries::clicked, this, &SweepView::on_point_clicked);
  connect(m_front, &QScatterSeries::clicked, this, &SweepView::on_point_clicked);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  layout->addWidget(split, 1);

  connect(m_run, &QPushButton::clicked, this, &SweepView::run);
  connect(m_cancel, &QPushButton::clicked, this, &SweepView::cancel);
  connect(&m_runner, &SweepRunner::progress, this, [this](qint64 done, qint64 total, const QString& phase) {
    m_progress->setRange(0, 1000);
    m_progress->setValue(total > 0 ? static_cast<int>(1000.0 * static_cast<double>(done) / static_cast<double>(total)) : 0);
    m_progress->setFormat(QStringLiteral("%1: %2 / %3").arg(phase, QLocale().toString(done), QLocale().toString(total)));
  });
  connect(&m_runner, &SweepRunner::finished, this, &SweepView::finished);
  connect(&m_results, &QAbstractItemModel::modelReset, this, &SweepView::rebuild_chart);
  rebuild_chart();
}

void SweepView::run() {
  if (m_runner.running()) return;
  const auto& scenario = m_session.analysis().evaluation.scenario;
  if (!scenario) {
    m_status->setText(tr("No valid scenario to search: fix the problems shown on the Overview first."));
    return;
  }
  SweepSettings settings;
  settings.objective = m_objective->currentData().toString();
  settings.pareto = m_keep->currentIndex() == 1;
  settings.top = m_top->value();
  QString error;
  if (!m_runner.start(*scenario, m_session.profile(), settings, &error)) {
    m_status->setText(error);
    return;
  }
  m_run->setEnabled(false);
  m_cancel->setEnabled(true);
  m_progress->setRange(0, 0);  // busy until the first report
  m_status->setText(tr("Searching the layouts of %1 on %2 GPUs...")
                        .arg(QString::fromStdString(scenario->model.name))
                        .arg(scenario->system.gpus));
}

void SweepView::cancel() {
  if (!m_runner.running()) return;
  m_runner.cancel();
  m_status->setText(tr("Cancelling..."));
}

void SweepView::finished(bool cancelled) {
  m_run->setEnabled(true);
  m_cancel->setEnabled(false);
  m_progress->setRange(0, 1000);
  m_progress->setValue(1000);
  m_progress->setFormat(cancelled ? tr("cancelled") : tr("done"));
  const SearchCounts& c = m_runner.counts();
  const QLocale locale;
  const double rate = c.seconds > 0.0 ? static_cast<double>(c.enumerated) / c.seconds : 0.0;
  m_status->setText(
      (cancelled ? tr("Cancelled: the best found before stopping. ") : QString()) +
      tr("%1 layouts in the space; %2 fit in memory, %3 do not, %4 pruned by constraints; %5 fully simulated, %6 "
         "skipped by their bound; %7 s (%8 layouts/s). Kept %9.")
          .arg(locale.toString(static_cast<qulonglong>(c.space)), locale.toString(static_cast<qulonglong>(c.feasible)),
               locale.toString(static_cast<qulonglong>(c.infeasible)), locale.toString(static_cast<qulonglong>(c.pruned)),
               locale.toString(static_cast<qulonglong>(c.timed)), locale.toString(static_cast<qulonglong>(c.skipped)))
          .arg(c.seconds, 0, 'f', 2)
          .arg(locale.toString(rate, 'f', 0))
          .arg(m_results.rowCount()));
  m_table->resizeColumnsToContents();
}

void SweepView::rebuild_chart() {
  const auto& points = m_results.points();
  QList<QPointF> all;
  QList<QPointF> unfit;
  QList<QPointF> front;
  m_all_rows.clear();
  m_front_rows.clear();
  double x_max = 0.0;
  double y_max = 0.0;
  double y_min = points.empty() ? 0.0 : std::numeric_limits<double>::infinity();
  for (const auto& p : points) y_max = std::max(y_max, p.tokens_per_s);
  m_y_scale = y_max >= 1e6 ? 1e6 : y_max >= 1e4 ? 1e3 : 1.0;
  retitle(m_y, m_y_scale == 1e6 ? tr("Throughput (M tokens/s)")
               : m_y_scale == 1e3 ? tr("Throughput (k tokens/s)")
                                  : tr("Throughput (tokens/s)"));
  y_max = 0.0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    const QPointF xy(p.peak_memory / kGiB, p.tokens_per_s / m_y_scale);
    y_min = std::min(y_min, xy.y());
    x_max = std::max(x_max, xy.x());
    y_max = std::max(y_max, xy.y());
    if (!p.fits) {
      unfit << xy;
    } else if (p.pareto) {
      front << xy;
      m_front_rows.push_back(static_cast<int>(i));
    } else {
      all << xy;
      m_all_rows.push_back(static_cast<int>(i));
    }
  }
  m_all->replace(all);
  m_unfit->replace(unfit);
  m_front->replace(front);
  QList<QPointF> line = front;
  std::sort(line.begin(), line.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
  m_front_line->replace(line);
  for (QLegendMarker* marker : m_chart->chart()->legend()->markers(m_unfit)) marker->setVisible(!unfit.isEmpty());
  set_nice_range(m_x, 0.0, std::max(1.0, x_max * 1.05));
  // The throughput axis spans the points (kept layouts are often within a few percent).
  const double span = std::max(y_max - y_min, 0.02 * y_max);
  set_nice_range(m_y, std::max(0.0, y_min - 0.1 * span), std::max(1e-9, y_max + 0.1 * span));
}

void SweepView::on_point_clicked(const QPointF& clicked) {
  // The nearest point in screen terms (axes scaled to their ranges).
  const auto& points = m_results.points();
  const double sx = std::max(1e-12, m_x->max() - m_x->min());
  const double sy = std::max(1e-12, m_y->max() - m_y->min());
  int best = -1;
  double best_d = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double dx = (points[i].peak_memory / kGiB - clicked.x()) / sx;
    const double dy = (points[i].tokens_per_s / m_y_scale - clicked.y()) / sy;
    const double d = dx * dx + dy * dy;
    if (d < best_d) {
      best_d = d;
      best = static_cast<int>(i);
    }
  }
  if (best >= 0) load_row(best);
}

void SweepView::load_row(int row) {
  const auto scenario = m_results.scenario_of(row);
  if (!scenario) return;
  const QString label = QStringLiteral("search result #%1 (%2)").arg(row + 1).arg(m_results.describe(row));
  m_session.open_scenario(*scenario, label);
  m_status->setText(tr("Loaded #%1 into the editor: %2").arg(row + 1).arg(m_results.describe(row)));
  Q_EMIT layout_loaded();
}

}  // namespace stepcast::gui
