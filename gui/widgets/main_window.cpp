#include "gui/widgets/main_window.h"

#include <QAction>
#include <QChartView>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QScrollArea>
#include <QSettings>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "gui/models/csv_export.h"
#include "gui/models/explorer_session.h"
#include "gui/models/table_model.h"
#include "gui/widgets/breakdown_chart.h"
#include "gui/widgets/comparison_view.h"
#include "gui/widgets/image_export.h"
#include "gui/widgets/latency_chart.h"
#include "gui/widgets/memory_chart.h"
#include "gui/widgets/scaling_chart.h"
#include "gui/widgets/scenario_editor_widget.h"
#include "gui/widgets/serving_chart.h"
#include "gui/widgets/sweep_view.h"
#include "gui/widgets/timeline_view.h"

namespace stepcast::gui {
namespace {

QTableView* make_table(QAbstractItemModel* model, QWidget* parent) {
  auto* proxy = new QSortFilterProxyModel(parent);
  proxy->setSourceModel(model);
  proxy->setSortRole(TableModel::SortRole);
  auto* view = new QTableView(parent);
  view->setModel(proxy);
  view->setSortingEnabled(true);
  view->sortByColumn(-1, Qt::AscendingOrder);
  view->verticalHeader()->hide();
  view->horizontalHeader()->setStretchLastSection(true);
  view->setAlternatingRowColors(true);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  // Fitting columns reads every cell: done for short tables only (the timeline has thousands).
  constexpr int kFitRows = 100;
  // Hidden tables are fitted when they are shown (see MainWindow's page and tab switches).
  QObject::connect(model, &QAbstractItemModel::modelReset, view, [view, model] {
    if (view->isVisible() && model->rowCount() <= kFitRows) view->resizeColumnsToContents();
  });
  return view;
}

QString escaped_lines(const QStringList& lines) {
  QStringList out;
  for (const QString& l : lines) out << l.toHtmlEscaped();
  return out.join(QStringLiteral("<br>"));
}

}  // namespace

MainWindow::MainWindow(ExplorerSession& session, QSettings& settings, QWidget* parent)
    : QMainWindow(parent), m_session(session), m_settings(settings) {
  setWindowTitle(tr("stepcast"));
  setObjectName(QStringLiteral("stepcast_main_window"));

  // Scenario dock: profile picker above the editor.
  auto* dock = new QDockWidget(tr("Scenario"), this);
  dock->setObjectName(QStringLiteral("scenario_dock"));
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  auto* dock_body = new QWidget(dock);
  auto* dock_layout = new QVBoxLayout(dock_body);
  dock_layout->setContentsMargins(2, 2, 2, 2);
  auto* picker_row = new QHBoxLayout;
  auto* picker_label = new QLabel(tr("Calibrat&ion profile:"), dock_body);
  m_profiles = new QComboBox(dock_body);
  m_profiles->setObjectName(QStringLiteral("profile_picker"));
  refresh_profiles();
  connect(&m_session, &ExplorerSession::profiles_changed, this, &MainWindow::refresh_profiles);
  picker_label->setBuddy(m_profiles);
  picker_row->addWidget(picker_label);
  picker_row->addWidget(m_profiles, 1);
  dock_layout->addLayout(picker_row);
  connect(m_profiles, &QComboBox::currentIndexChanged, &m_session, &ExplorerSession::set_profile_index);
  m_editor = new ScenarioEditorWidget(m_session.editor());
  auto* scroll = new QScrollArea(dock_body);
  scroll->setWidget(m_editor);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  dock_body->setMinimumWidth(370);
  dock_layout->addWidget(scroll, 1);
  dock->setWidget(dock_body);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  m_pages = new QTabWidget(this);
  m_pages->setObjectName(QStringLiteral("pages"));
  m_pages->addTab(build_overview(), tr("Overview"));
  m_sweep = new SweepView(m_session, m_session.sweep_results(), m_session.sweep(), m_pages);
  m_sweep->setObjectName(QStringLiteral("sweep"));
  connect(m_sweep, &SweepView::layout_loaded, this, [this] { show_page(Page::overview); });
  m_pages->addTab(m_sweep, tr("Sweep"));
  m_comparison = new ComparisonView(m_session.comparison(), m_pages);
  connect(m_comparison, &ComparisonView::pin_requested, &m_session, &ExplorerSession::pin_baseline);
  m_pages->addTab(m_comparison, tr("Compare"));
  m_pages->addTab(build_tables(), tr("Tables"));
  setCentralWidget(m_pages);

  m_status = new QLabel(this);
  statusBar()->addPermanentWidget(m_status);
  build_menus();
  connect(&m_session, &ExplorerSession::analysis_changed, this, &MainWindow::update_from_analysis);
  connect(&m_session, &ExplorerSession::busy_changed, this, [this](bool busy) {
    if (busy) {
      m_status->setText(tr("computing..."));
    } else {
      update_from_analysis();
    }
  });
  restore_layout();
  update_from_analysis();
}

MainWindow::~MainWindow() = default;

QWidget* MainWindow::build_overview() {
  m_overview = new QWidget(this);
  m_overview->setObjectName(QStringLiteral("overview"));
  auto* layout = new QVBoxLayout(m_overview);
  layout->setContentsMargins(4, 4, 4, 4);
  m_headline = new QLabel(m_overview);
  m_headline->setObjectName(QStringLiteral("headline"));
  QFont big = m_headline->font();
  big.setPointSizeF(big.pointSizeF() * 1.15);
  big.setBold(true);
  m_headline->setFont(big);
  m_headline->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_problems = new QLabel(m_overview);
  m_problems->setObjectName(QStringLiteral("problems"));
  m_problems->setWordWrap(true);
  m_problems->setTextFormat(Qt::RichText);
  m_problems->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  m_problems->setStyleSheet(QStringLiteral("QLabel { color: #b41414; background: #fdecea; padding: 6px; }"));
  m_problems->hide();
  layout->addWidget(m_headline);
  layout->addWidget(m_problems);

  m_breakdown = new BreakdownChart(m_session.breakdown());
  m_breakdown->setObjectName(QStringLiteral("breakdown_chart"));
  m_memory = new MemoryChart(m_session.memory());
  m_memory->setObjectName(QStringLiteral("memory_chart"));
  m_timeline = new TimelineView(m_session.timeline());
  m_timeline->setObjectName(QStringLiteral("timeline_view"));
  m_scaling = new ScalingChart(m_session.scaling());
  m_scaling->setObjectName(QStringLiteral("scaling_chart"));
  m_serving = new ServingChart(m_session.serving_series());
  m_serving->setObjectName(QStringLiteral("serving_chart"));
  m_latency = new LatencyChart(m_session.latency_curve());
  m_latency->setObjectName(QStringLiteral("latency_chart"));

  auto* rows = new QSplitter(Qt::Vertical, m_overview);
  rows->setObjectName(QStringLiteral("overview_rows"));
  auto* top = new QSplitter(Qt::Horizontal, rows);
  top->setObjectName(QStringLiteral("overview_top"));
  top->addWidget(m_breakdown);
  top->addWidget(m_memory);
  auto* bottom = new QSplitter(Qt::Horizontal, rows);
  bottom->setObjectName(QStringLiteral("overview_bottom"));
  m_bottom_left = new QStackedWidget(bottom);
  m_bottom_left->addWidget(m_timeline);
  m_bottom_left->addWidget(m_serving);
  m_bottom_right = new QStackedWidget(bottom);
  m_bottom_right->addWidget(m_scaling);
  m_bottom_right->addWidget(m_latency);
  bottom->addWidget(m_bottom_left);
  bottom->addWidget(m_bottom_right);
  bottom->setStretchFactor(0, 3);
  bottom->setStretchFactor(1, 2);
  m_splitters = {rows, top, bottom};
  layout->addWidget(rows, 1);
  return m_overview;
}

QWidget* MainWindow::build_tables() {
  m_table_tabs = new QTabWidget(this);
  m_table_tabs->setObjectName(QStringLiteral("tables"));
  m_table_tabs->addTab(make_table(&m_session.summary(), m_table_tabs), tr("Summary"));
  m_table_tabs->addTab(make_table(&m_session.breakdown(), m_table_tabs), tr("Breakdown"));
  m_table_tabs->addTab(make_table(&m_session.memory(), m_table_tabs), tr("Memory"));
  m_table_tabs->addTab(make_table(&m_session.scaling(), m_table_tabs), tr("Scaling"));
  m_table_tabs->addTab(make_table(&m_session.timeline(), m_table_tabs), tr("Timeline"));
  m_table_tabs->addTab(make_table(&m_session.serving_series(), m_table_tabs), tr("Serving run"));
  m_table_tabs->addTab(make_table(&m_session.latency_curve(), m_table_tabs), tr("Latency curve"));
  const auto fit = [this] {
    auto* view = qobject_cast<QTableView*>(m_table_tabs->currentWidget());
    if (view != nullptr && view->model()->rowCount() <= 100) view->resizeColumnsToContents();
  };
  connect(m_table_tabs, &QTabWidget::currentChanged, this, fit);
  connect(m_pages, &QTabWidget::currentChanged, this, fit);
  return m_table_tabs;
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open scenario..."), this, &MainWindow::open_dialog);
  open->setShortcut(QKeySequence::Open);
  file->addAction(tr("Open calibration &profile..."), this, &MainWindow::open_profile_dialog);
  QMenu* examples = file->addMenu(tr("Open &example"));
  for (const std::string& name : m_session.catalog().scenario_names()) {
    const QString q = QString::fromStdString(name);
    examples->addAction(q, this, [this, q] { open_scenario(q); });
  }
  QAction* save = file->addAction(tr("&Save"), this, [this] {
    const QString source = QString::fromStdString(m_session.editor().document().source());
    if (source.isEmpty() || source.startsWith(QLatin1String("<builtin>")) || !QFileInfo(source).isFile()) {
      save_dialog();
    } else {
      save_to(source);
    }
  });
  save->setShortcut(QKeySequence::Save);
  QAction* save_as = file->addAction(tr("Save &as..."), this, &MainWindow::save_dialog);
  save_as->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+S")));
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* exports = menuBar()->addMenu(tr("E&xport"));
  QAction* chart = exports->addAction(tr("Chart of this page as PNG/SVG..."), this, &MainWindow::export_current_chart);
  chart->setShortcut(QKeySequence(QStringLiteral("Ctrl+E")));
  QAction* table = exports->addAction(tr("Table of this page as CSV..."), this, &MainWindow::export_current_table);
  table->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+E")));
  exports->addSeparator();
  const std::pair<const char*, QString> charts[] = {{"breakdown", tr("Step-time breakdown chart...")},
                                                    {"memory", tr("Memory chart...")},
                                                    {"timeline", tr("Pipeline timeline...")},
                                                    {"scaling", tr("Scaling chart...")},
                                                    {"serving", tr("Serving run chart...")},
                                                    {"latency", tr("Latency-throughput chart...")},
                                                    {"pareto", tr("Sweep Pareto chart...")},
                                                    {"comparison", tr("Comparison chart...")}};
  for (const auto& [name, text] : charts) {
    const QString n = QString::fromLatin1(name);
    exports->addAction(text, this, [this, n] { export_chart_dialog(n); });
  }
  exports->addSeparator();
  const std::pair<const char*, QString> tables[] = {{"summary", tr("Summary table (CSV)...")},
                                                    {"breakdown", tr("Breakdown table (CSV)...")},
                                                    {"memory", tr("Memory table (CSV)...")},
                                                    {"scaling", tr("Scaling table (CSV)...")},
                                                    {"timeline", tr("Timeline table (CSV)...")},
                                                    {"serving", tr("Serving run table (CSV)...")},
                                                    {"latency", tr("Latency curve table (CSV)...")},
                                                    {"sweep", tr("Sweep results (CSV)...")},
                                                    {"comparison", tr("Comparison table (CSV)...")}};
  for (const auto& [name, text] : tables) {
    const QString n = QString::fromLatin1(name);
    exports->addAction(text, this, [this, n] { export_table_dialog(n); });
  }

  QMenu* view = menuBar()->addMenu(tr("&Window"));
  const std::pair<Page, QString> pages[] = {{Page::overview, tr("Overview")},
                                            {Page::sweep, tr("Sweep")},
                                            {Page::compare, tr("Compare")},
                                            {Page::tables, tr("Tables")}};
  int number = 1;
  for (const auto& [page, text] : pages) {
    const Page p = page;
    QAction* a = view->addAction(text, this, [this, p] { show_page(p); });
    a->setShortcut(QKeySequence(QStringLiteral("Ctrl+%1").arg(number++)));
  }
  view->addSeparator();
  QAction* pin = view->addAction(tr("&Pin current as comparison baseline (A)"), &m_session, &ExplorerSession::pin_baseline);
  pin->setShortcut(QKeySequence(QStringLiteral("Ctrl+B")));
}

void MainWindow::show_page(Page page) {
  switch (page) {
    case Page::overview:
      m_pages->setCurrentWidget(m_overview);
      break;
    case Page::sweep:
      m_pages->setCurrentWidget(m_sweep);
      break;
    case Page::compare:
      m_pages->setCurrentWidget(m_comparison);
      break;
    case Page::tables:
      m_pages->setCurrentWidget(m_table_tabs);
      break;
  }
}

QWidget* MainWindow::chart(const QString& name) const {
  if (name == QLatin1String("breakdown")) return m_breakdown;
  if (name == QLatin1String("memory")) return m_memory;
  if (name == QLatin1String("timeline")) return m_timeline;
  if (name == QLatin1String("scaling")) return m_scaling;
  if (name == QLatin1String("serving")) return m_serving;
  if (name == QLatin1String("latency")) return m_latency;
  if (name == QLatin1String("pareto")) return m_sweep->chart_view();
  if (name == QLatin1String("comparison")) {
    m_comparison->ensure_current();
    return m_comparison->chart_view();
  }
  return nullptr;
}

QAbstractItemModel* MainWindow::table(const QString& name) const {
  if (name == QLatin1String("summary")) return &m_session.summary();
  if (name == QLatin1String("breakdown")) return &m_session.breakdown();
  if (name == QLatin1String("memory")) return &m_session.memory();
  if (name == QLatin1String("scaling")) return &m_session.scaling();
  if (name == QLatin1String("timeline")) return &m_session.timeline();
  if (name == QLatin1String("serving")) return &m_session.serving_series();
  if (name == QLatin1String("latency")) return &m_session.latency_curve();
  if (name == QLatin1String("comparison")) return &m_session.comparison();
  if (name == QLatin1String("sweep")) return &m_session.sweep_results();
  return nullptr;
}

void MainWindow::open_scenario(const QString& name_or_path) {
  m_session.open(name_or_path);
  setWindowTitle(tr("stepcast - %1").arg(name_or_path));
}

bool MainWindow::save_to(const QString& path) {
  std::string text;
  try {
    text = m_session.editor().document().text_to_save(m_session.catalog());
  } catch (const InputError&) {
    show_message(tr("Not saved: the scenario has problems (listed above)."), true);
    return false;
  }
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
      file.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size())) {
    show_message(tr("Not saved: cannot write %1 (%2)").arg(path, file.errorString()), true);
    return false;
  }
  file.close();
  m_session.editor().mark_saved(text, path.toStdString());
  setWindowTitle(tr("stepcast - %1").arg(path));
  show_message(tr("Saved %1").arg(path), false);
  return true;
}

void MainWindow::refresh_profiles() {
  const QSignalBlocker block(m_profiles);
  m_profiles->clear();
  for (const auto& p : m_session.profiles()) {
    m_profiles->addItem(QString::fromStdString(p.name()));
    m_profiles->setItemData(m_profiles->count() - 1, QString::fromStdString(p.variant.description), Qt::ToolTipRole);
  }
  m_profiles->setCurrentIndex(m_session.profile_index());
}

bool MainWindow::open_profile(const QString& path) {
  try {
    const int index = m_session.add_profile(load_profile_choice(path.toStdString()));
    m_profiles->setCurrentIndex(index);
    show_message(tr("Calibration profile %1 loaded").arg(path), false);
    return true;
  } catch (const InputError& e) {
    QStringList lines;
    for (const auto& d : e.diagnostics()) lines << QString::fromStdString(describe_diagnostic(d));
    if (lines.isEmpty()) lines << QString::fromUtf8(e.what());
    m_problems->setText(tr("<b>The calibration profile was not loaded:</b><br>") + escaped_lines(lines));
    m_problems->show();
    show_message(tr("Calibration profile not loaded"), true);
    return false;
  }
}

void MainWindow::add_variant(CalibrationChoice choice) {
  const QString name = QString::fromStdString(choice.name());
  m_profiles->setCurrentIndex(m_session.add_profile(std::move(choice)));
  show_message(tr("Model variant %1").arg(name), false);
}

void MainWindow::open_profile_dialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open calibration profile"), m_last_dir,
                                                    tr("Calibration profiles (*.json);;All files (*)"));
  if (path.isEmpty()) return;
  m_last_dir = QFileInfo(path).absolutePath();
  open_profile(path);
}

void MainWindow::open_dialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), m_last_dir,
                                                    tr("Scenario files (*.yaml *.yml);;All files (*)"));
  if (path.isEmpty()) return;
  m_last_dir = QFileInfo(path).absolutePath();
  open_scenario(path);
}

bool MainWindow::save_dialog() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save scenario"), m_last_dir,
                                                    tr("Scenario files (*.yaml *.yml)"));
  if (path.isEmpty()) return false;
  m_last_dir = QFileInfo(path).absolutePath();
  return save_to(path);
}

void MainWindow::export_chart_dialog(const QString& name) {
  QWidget* widget = chart(name);
  if (widget == nullptr) return;
  const QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), m_last_dir + QStringLiteral("/") + name,
                                                    tr("PNG image (*.png);;SVG image (*.svg)"));
  if (path.isEmpty()) return;
  m_last_dir = QFileInfo(path).absolutePath();
  QString error;
  if (export_widget_image(*widget, path, &error)) {
    show_message(tr("Exported %1").arg(path), false);
  } else {
    show_message(error, true);
  }
}

void MainWindow::export_table_dialog(const QString& name) {
  QAbstractItemModel* model = table(name);
  if (model == nullptr) return;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export table"), m_last_dir + QStringLiteral("/") + name + QStringLiteral(".csv"), tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  m_last_dir = QFileInfo(path).absolutePath();
  QString error;
  if (write_csv_file(*model, path, &error)) {
    show_message(tr("Exported %1").arg(path), false);
  } else {
    show_message(tr("Cannot write %1: %2").arg(path, error), true);
  }
}

void MainWindow::export_current_chart() {
  QWidget* page = m_pages->currentWidget();
  if (page == m_sweep) {
    export_chart_dialog(QStringLiteral("pareto"));
    return;
  }
  if (page == m_comparison) {
    export_chart_dialog(QStringLiteral("comparison"));
    return;
  }
  // On the overview, the chart with focus (or the breakdown).
  for (const char* name : {"breakdown", "memory", "timeline", "scaling", "serving", "latency"}) {
    QWidget* w = chart(QString::fromLatin1(name));
    if (w->isVisible() && (w->hasFocus() || w->isAncestorOf(QApplication::focusWidget()))) {
      export_chart_dialog(QString::fromLatin1(name));
      return;
    }
  }
  export_chart_dialog(QStringLiteral("breakdown"));
}

void MainWindow::export_current_table() {
  if (m_pages->currentWidget() == m_sweep) {
    export_table_dialog(QStringLiteral("sweep"));
    return;
  }
  if (m_pages->currentWidget() == m_comparison) {
    export_table_dialog(QStringLiteral("comparison"));
    return;
  }
  if (m_pages->currentWidget() == m_table_tabs) {
    static const char* names[] = {"summary", "breakdown", "memory", "scaling", "timeline", "serving", "latency"};
    export_table_dialog(QString::fromLatin1(names[std::clamp(m_table_tabs->currentIndex(), 0, 6)]));
    return;
  }
  export_table_dialog(QStringLiteral("summary"));
}

void MainWindow::show_message(const QString& text, bool error) {
  statusBar()->showMessage(text, error ? 0 : 5000);
}

void MainWindow::update_from_analysis() {
  const Analysis& a = m_session.analysis();
  // Training views, or inference views; a static batch has no request stream to draw over time.
  const bool inference = a.evaluation.scenario && !a.evaluation.scenario->is_training();
  const bool static_batch = inference && a.evaluation.scenario->inference().mode == InferenceMode::static_batch;
  m_bottom_left->setCurrentIndex(inference ? 1 : 0);
  m_bottom_right->setCurrentIndex(inference ? 1 : 0);
  m_bottom_left->setVisible(!static_batch);
  QStringList problems;
  for (const auto& d : a.evaluation.diagnostics) problems << QString::fromStdString(describe_diagnostic(d));
  if (!a.failure.empty()) problems << QString::fromStdString(a.failure);
  for (const auto& w : a.warnings) problems << QStringLiteral("warning: ") + QString::fromStdString(w);
  m_problems->setText(problems.isEmpty() ? QString()
                                         : tr("<b>The scenario has problems:</b><br>") + escaped_lines(problems));
  m_problems->setVisible(!problems.isEmpty());
  m_headline->setText(m_session.summary().headline().isEmpty() ? tr("No prediction") : m_session.summary().headline());
  if (a.evaluation.scenario || !a.evaluation.diagnostics.empty()) {
    m_status->setText(tr("%1 · recomputed in %2 ms")
                          .arg(QString::fromStdString(m_session.editor().document().source()))
                          .arg(a.compute_seconds * 1e3, 0, 'f', 2));
  }
}

void MainWindow::restore_layout() {
  m_settings.beginGroup(QStringLiteral("main_window"));
  if (m_settings.contains(QStringLiteral("geometry"))) restoreGeometry(m_settings.value(QStringLiteral("geometry")).toByteArray());
  if (m_settings.contains(QStringLiteral("state"))) restoreState(m_settings.value(QStringLiteral("state")).toByteArray());
  for (QSplitter* s : m_splitters) {
    const QString key = QStringLiteral("splitter/") + s->objectName();
    if (m_settings.contains(key)) s->restoreState(m_settings.value(key).toByteArray());
  }
  m_pages->setCurrentIndex(m_settings.value(QStringLiteral("page"), 0).toInt());
  m_last_dir = m_settings.value(QStringLiteral("last_directory")).toString();
  const QString profile = m_settings.value(QStringLiteral("profile")).toString();
  const int index = m_profiles->findText(profile);
  if (index >= 0) m_profiles->setCurrentIndex(index);
  m_settings.endGroup();
}

void MainWindow::save_layout() {
  m_settings.beginGroup(QStringLiteral("main_window"));
  m_settings.setValue(QStringLiteral("geometry"), saveGeometry());
  m_settings.setValue(QStringLiteral("state"), saveState());
  for (QSplitter* s : m_splitters) m_settings.setValue(QStringLiteral("splitter/") + s->objectName(), s->saveState());
  m_settings.setValue(QStringLiteral("page"), m_pages->currentIndex());
  m_settings.setValue(QStringLiteral("last_directory"), m_last_dir);
  m_settings.setValue(QStringLiteral("profile"), m_profiles->currentText());
  m_settings.endGroup();
  m_settings.sync();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  save_layout();
  event->accept();
}

}  // namespace stepcast::gui
