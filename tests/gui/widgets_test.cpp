// The real window driven as a user would, offscreen: typing into the editor's spin boxes,
// keyboard mnemonics and shortcuts, opening broken files, saving, exporting, and the saved layout.

#include <QAbstractBarSeries>
#include <QApplication>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFile>
#include <QImageReader>
#include <QLabel>
#include <QSettings>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

#include "gui/models/explorer_session.h"
#include "gui/widgets/breakdown_chart.h"
#include "gui/widgets/image_export.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/scenario_editor_widget.h"
#include "gui/widgets/sweep_view.h"
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSortFilterProxyModel>
#include <QTableView>
#include "gui/models/csv_export.h"
#include "simulator/calibration_profile.h"
#include "simulator/residual_stats.h"

using namespace stepcast;
using namespace stepcast::gui;

namespace {

const QString kSmall = QStringLiteral("tests/gui/fixtures/llama3-8b-small.yaml");
const QString kBroken = QStringLiteral("tests/gui/fixtures/heads-not-divisible.yaml");

// A window with its own session and throw-away settings.
struct Window {
  explicit Window(const QString& settings_path, std::vector<CalibrationChoice> extra = {})
      : profiles(std::move(extra)), settings(settings_path, QSettings::IniFormat), window(session, settings) {
    window.resize(1400, 900);
    window.show();
  }
  StaticProfileSource profiles;
  ExplorerSession session{profiles};
  QSettings settings;
  MainWindow window;

  void open(const QString& path) {
    window.open_scenario(path);
    QVERIFY(session.wait_until_idle());
  }
};

// The value of the breakdown chart's segment whose legend label starts with `label`.
double chart_segment(const BreakdownChart& chart, const QString& label) {
  for (QAbstractSeries* s : chart.chart()->series()) {
    auto* bars = qobject_cast<QAbstractBarSeries*>(s);
    if (bars == nullptr) continue;
    for (QBarSet* set : bars->barSets()) {
      if (set->label().startsWith(label)) return set->at(0);
    }
  }
  return -1.0;
}

// Types `text` into a spin box and presses Enter, as a user does.
void type_into(QWidget* field, const QString& text) {
  field->setFocus();
  QTest::keyClick(field, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClicks(field, text);
  QTest::keyClick(field, Qt::Key_Return);
}

}  // namespace

class WidgetsTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init() { QVERIFY(m_dir.isValid()); }
  void typing_a_new_tp_changes_the_breakdown_chart();
  void an_invalid_tp_is_explained_under_its_field();
  void opening_a_broken_file_shows_the_loaders_file_line_column_message();
  void saving_and_reopening_reproduces_the_prediction();
  void charts_export_to_png_and_svg_and_tables_to_csv();
  void the_layout_is_saved_in_the_given_settings_and_restored();
  void mnemonics_and_shortcuts_reach_fields_and_pages();
  void picking_a_calibration_profile_with_an_interval_shows_the_interval();
  void the_sweep_runs_filters_and_a_clicked_point_loads_its_layout();
  void escape_cancels_a_running_sweep();
  void a_profile_file_loads_into_the_picker_with_its_component_intervals();

 private:
  QString path(const QString& name) const { return m_dir.filePath(name); }
  QTemporaryDir m_dir;
};

void WidgetsTest::typing_a_new_tp_changes_the_breakdown_chart() {
  Window w(path(QStringLiteral("a.ini")));
  w.open(kSmall);
  // The editor's form appears in a window that is already shown.
  QVERIFY(w.window.editor().field_widget(QStringLiteral("parallel.tp"))->isVisible());
  const double tp_comm_before = chart_segment(w.window.breakdown_chart(), QStringLiteral("TP comm"));
  QVERIFY(tp_comm_before > 0.0);
  QWidget* tp = w.window.editor().field_widget(QStringLiteral("parallel.tp"));
  QVERIFY(qobject_cast<QSpinBox*>(tp) != nullptr);
  type_into(tp, QStringLiteral("4"));
  QVERIFY(w.session.wait_until_idle());
  QCOMPARE(qobject_cast<QSpinBox*>(tp)->value(), 4);
  QCOMPARE(w.session.analysis().evaluation.scenario->parallel.tp, 4);
  // TP 4 moves more of each step into tensor-parallel all-reduces (and halves dp to 1).
  QVERIFY(chart_segment(w.window.breakdown_chart(), QStringLiteral("TP comm")) != tp_comm_before);
  QVERIFY(w.window.problems_label().isHidden());
}

void WidgetsTest::an_invalid_tp_is_explained_under_its_field() {
  Window w(path(QStringLiteral("b.ini")));
  w.open(kSmall);
  type_into(w.window.editor().field_widget(QStringLiteral("parallel.tp")), QStringLiteral("5"));
  QVERIFY(w.session.wait_until_idle());
  QLabel* problem = w.window.editor().problem_label(QStringLiteral("parallel.tp"));
  QVERIFY(problem->isVisible());
  QVERIFY2(problem->text().contains(QStringLiteral("model heads (32) are not divisible by tp (5)")),
           qPrintable(problem->text()));
  QVERIFY(w.window.problems_label().isVisible());
  QVERIFY(w.window.problems_label().text().contains(QStringLiteral("edit parallel.tp=5")));
  // Fixing it clears the message.
  type_into(w.window.editor().field_widget(QStringLiteral("parallel.tp")), QStringLiteral("2"));
  QVERIFY(w.session.wait_until_idle());
  QVERIFY(!w.window.editor().problem_label(QStringLiteral("parallel.tp"))->isVisible());
  QVERIFY(w.window.problems_label().isHidden());
}

void WidgetsTest::opening_a_broken_file_shows_the_loaders_file_line_column_message() {
  Window w(path(QStringLiteral("c.ini")));
  w.open(kBroken);
  QVERIFY(w.window.problems_label().isVisible());
  const QString text = w.window.problems_label().text();
  QVERIFY2(text.contains(QStringLiteral("tests/gui/fixtures/heads-not-divisible.yaml:8:7: error: parallel.tp:")),
           qPrintable(text));
  QCOMPARE(w.window.headline_label().text(), QStringLiteral("No prediction"));
  // A file that does not exist is reported the same way.
  w.open(path(QStringLiteral("missing.yaml")));
  QVERIFY(w.window.problems_label().text().contains(QStringLiteral("cannot read the file")));
}

void WidgetsTest::saving_and_reopening_reproduces_the_prediction() {
  Window w(path(QStringLiteral("d.ini")));
  w.open(kSmall);
  type_into(w.window.editor().field_widget(QStringLiteral("training.micro_batch")), QStringLiteral("2"));
  QVERIFY(w.session.wait_until_idle());
  const QString headline = w.window.headline_label().text();
  const double step = w.session.analysis().training->step_time.value();
  const QString saved = path(QStringLiteral("saved.yaml"));
  QVERIFY(w.window.save_to(saved));
  w.open(kSmall);
  QVERIFY(w.session.analysis().training->step_time.value() != step);
  w.open(saved);
  QCOMPARE(w.session.analysis().training->step_time.value(), step);
  QCOMPARE(w.window.headline_label().text(), headline);
  QCOMPARE(w.session.editor().value(QStringLiteral("training.micro_batch")).toInt(), 2);
}

void WidgetsTest::charts_export_to_png_and_svg_and_tables_to_csv() {
  Window w(path(QStringLiteral("e.ini")));
  w.open(kSmall);
  w.session.pin_baseline();
  for (const char* name : {"breakdown", "memory", "timeline", "scaling", "comparison"}) {
    QWidget* chart = w.window.chart(QString::fromLatin1(name));
    QVERIFY(chart != nullptr);
    const QString png = path(QString::fromLatin1(name) + QStringLiteral(".png"));
    const QString svg = path(QString::fromLatin1(name) + QStringLiteral(".svg"));
    QString error;
    QVERIFY2(export_widget_image(*chart, png, &error), qPrintable(error));
    QVERIFY2(export_widget_image(*chart, svg, &error), qPrintable(error));
    QImageReader reader(png);
    QCOMPARE(reader.format(), QByteArray("png"));
    QVERIFY(reader.size().width() >= chart->width());
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QVERIFY(text.contains("<svg"));
  }
  QString error;
  QVERIFY(!export_widget_image(w.window.breakdown_chart(), path(QStringLiteral("x.bmpx")), &error));
  QVERIFY(error.contains(QStringLiteral("use .png or .svg")));
  for (const char* name : {"summary", "breakdown", "memory", "scaling", "timeline", "comparison"}) {
    QAbstractItemModel* model = w.window.table(QString::fromLatin1(name));
    QVERIFY(model != nullptr);
    const QString csv = path(QString::fromLatin1(name) + QStringLiteral(".csv"));
    QVERIFY(write_csv_file(*model, csv));
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = file.readAll().split('\n');
    // A header line, one line per row, and the empty string after the last line break.
    QCOMPARE(lines.size(), model->rowCount() + 2);
  }
}

void WidgetsTest::the_layout_is_saved_in_the_given_settings_and_restored() {
  const QString settings = path(QStringLiteral("layout.ini"));
  {
    Window w(settings);
    w.open(kSmall);
    w.window.show_page(MainWindow::Page::tables);
    w.window.resize(1234, 777);
    w.window.close();  // saves the layout
  }
  QSettings written(settings, QSettings::IniFormat);
  QCOMPARE(written.value(QStringLiteral("main_window/page")).toInt(), 3);
  QVERIFY(written.contains(QStringLiteral("main_window/geometry")));
  QVERIFY(written.contains(QStringLiteral("main_window/splitter/overview_rows")));
  Window again(settings);
  auto* pages = again.window.findChild<QTabWidget*>(QStringLiteral("pages"));
  QCOMPARE(pages->currentIndex(), 3);
}

void WidgetsTest::mnemonics_and_shortcuts_reach_fields_and_pages() {
  Window w(path(QStringLiteral("f.ini")));
  w.open(kSmall);
  QApplication::setActiveWindow(&w.window);
  QVERIFY(QTest::qWaitForWindowActive(&w.window));
  QTest::keyClick(&w.window, Qt::Key_T, Qt::AltModifier);
  QCOMPARE(QApplication::focusWidget(), w.window.editor().field_widget(QStringLiteral("parallel.tp")));
  QTest::keyClick(&w.window, Qt::Key_B, Qt::AltModifier);
  QCOMPARE(QApplication::focusWidget(), w.window.editor().field_widget(QStringLiteral("training.micro_batch")));
  auto* pages = w.window.findChild<QTabWidget*>(QStringLiteral("pages"));
  QTest::keyClick(&w.window, Qt::Key_2, Qt::ControlModifier);
  QCOMPARE(pages->currentIndex(), 1);
  QTest::keyClick(&w.window, Qt::Key_B, Qt::ControlModifier);  // pin as baseline
  QVERIFY(w.session.has_baseline());
  QTest::keyClick(&w.window, Qt::Key_1, Qt::ControlModifier);
  QCOMPARE(pages->currentIndex(), 0);
}

void WidgetsTest::picking_a_calibration_profile_with_an_interval_shows_the_interval() {
  CalibrationChoice fitted = datasheet_choice();
  fitted.variant.name = "fitted on test data";
  fitted.step_time = PredictionInterval{0.9, 0.9, 1.1};
  Window w(path(QStringLiteral("g.ini")), {fitted});
  w.open(kSmall);
  QComboBox& picker = w.window.profile_picker();
  QCOMPARE(picker.count(), 2);
  QVERIFY(!w.window.headline_label().text().contains(QStringLiteral("90 %")));
  picker.setCurrentIndex(1);
  QVERIFY(w.session.wait_until_idle());
  QVERIFY2(w.window.headline_label().text().contains(QStringLiteral("(90 %: ")), qPrintable(w.window.headline_label().text()));
}

void WidgetsTest::the_sweep_runs_filters_and_a_clicked_point_loads_its_layout() {
  Window w(path(QStringLiteral("h.ini")));
  w.open(kSmall);
  w.window.show_page(MainWindow::Page::sweep);
  SweepView& sweep = w.window.sweep_view();
  QTest::mouseClick(sweep.run_button(), Qt::LeftButton);
  QVERIFY(sweep.cancel_button()->isEnabled());
  QVERIFY(w.session.sweep().wait_until_idle());
  QVERIFY(!w.session.sweep().cancelled());
  QVERIFY(sweep.run_button()->isEnabled());
  QVERIFY(sweep.status()->text().contains(QStringLiteral("layouts in the space")));
  const SweepResultsModel& results = w.session.sweep_results();
  QVERIFY(results.rowCount() > 10);
  QCOMPARE(sweep.progress_bar()->value(), sweep.progress_bar()->maximum());

  // The filter keeps only matching rows.
  sweep.filter()->setText(QStringLiteral("selective"));
  QVERIFY(sweep.proxy()->rowCount() > 0);
  QVERIFY(sweep.proxy()->rowCount() < results.rowCount());
  for (int r = 0; r < sweep.proxy()->rowCount(); ++r) {
    bool found = false;
    for (int c = 0; c < sweep.proxy()->columnCount(); ++c) {
      found = found || sweep.proxy()->index(r, c).data().toString().contains(QStringLiteral("selective"));
    }
    QVERIFY(found);
  }
  sweep.filter()->clear();

  // Clicking the scatter point of the third-ranked layout loads that layout into the editor.
  const int row = 2;
  const auto& point = results.points()[row];
  QScatterSeries* series = sweep.layouts_series();
  // (The throughput axis is in k tokens/s for this scenario.)
  QVERIFY(point.tokens_per_s >= 1e4 && point.tokens_per_s < 1e6);
  Q_EMIT series->clicked(QPointF(point.peak_memory / kGiB, point.tokens_per_s / 1e3));
  QVERIFY(w.session.wait_until_idle());
  QCOMPARE(qobject_cast<QTabWidget*>(w.window.centralWidget())->currentIndex(), 0);  // back to the overview
  const Scenario expected = *results.scenario_of(row);
  const Scenario& loaded = *w.session.analysis().evaluation.scenario;
  QCOMPARE(loaded.parallel, expected.parallel);
  QCOMPARE(loaded.training().micro_batch, expected.training().micro_batch);
  QCOMPARE(w.session.editor().value(QStringLiteral("parallel.tp")).toInt(), expected.parallel.tp);
  // The step time the search reported for it is the prediction the overview shows.
  const int step_column = 12;  // "Step time (s)"
  QCOMPARE(results.headerData(step_column, Qt::Horizontal).toString(), QStringLiteral("Step time (s)"));
  QCOMPARE(w.session.analysis().training->step_time.value(),
           results.index(row, step_column).data(TableModel::SortRole).toDouble());
}

void WidgetsTest::escape_cancels_a_running_sweep() {
  Window w(path(QStringLiteral("i.ini")));
  w.open(QStringLiteral("gpt3-175b-selene"));  // a large space: the search takes long enough to cancel
  w.window.show_page(MainWindow::Page::sweep);
  QApplication::setActiveWindow(&w.window);
  QVERIFY(QTest::qWaitForWindowActive(&w.window));
  SweepView& sweep = w.window.sweep_view();
  QTest::keyClick(&w.window, Qt::Key_F5);
  QVERIFY(w.session.sweep().running());
  QTest::keyClick(&w.window, Qt::Key_Escape);
  QVERIFY(w.session.sweep().wait_until_idle());
  QVERIFY(w.session.sweep().cancelled());
  QVERIFY2(sweep.status()->text().startsWith(QStringLiteral("Cancelled")), qPrintable(sweep.status()->text()));
  QVERIFY(sweep.run_button()->isEnabled());
  QVERIFY(!sweep.cancel_button()->isEnabled());
}

// A calibration profile as `stepcast calibrate` writes it, for one component fitted on 10 points.
CalibrationProfile test_profile(const std::string& gpu) {
  CalibrationProfile p;
  p.name = "test-" + gpu;
  p.created_utc = "2025-01-01T00:00:00Z";
  p.tool_version = "0.1.0";
  p.git_sha = "0000000";
  p.gpu = gpu;
  p.inputs.push_back(InputProvenance{"memory.json", std::string(64, '0'), "harness", 10, {}});
  p.cost_parameters.push_back(FittedValue{"memory.bandwidth_eta", 0.80, 0.85, "", "memory (10 points)"});
  ComponentCalibration memory;
  memory.name = "memory";
  memory.points = 10;
  const std::vector<double> errors = {0.01, -0.02, 0.03, -0.01, 0.02, 0.04, -0.03, 0.01, 0.02, -0.05};
  memory.in_sample = summarize_residuals(errors);
  memory.held_out = summarize_residuals(errors);
  p.components.push_back(memory);
  return p;
}

void WidgetsTest::a_profile_file_loads_into_the_picker_with_its_component_intervals() {
  Window w(path(QStringLiteral("j.ini")));
  w.open(kSmall);  // on H100s
  const QString file = path(QStringLiteral("h100.json"));
  save_profile(file.toStdString(), test_profile("h100-sxm-80gb"));
  QVERIFY2(w.window.open_profile(file), qPrintable(w.window.problems_label().text()));
  QCOMPARE(w.window.profile_picker().count(), 2);
  QCOMPARE(w.window.profile_picker().currentText(), QStringLiteral("test-h100-sxm-80gb"));
  QVERIFY(w.session.wait_until_idle());
  QCOMPARE(w.session.analysis().profile, std::string("test-h100-sxm-80gb"));
  // The conformal 90 % half-width of 10 held-out errors is the ceil(11 x 0.9) = 10th smallest
  // |error|: 0.05 (simulator/residual_stats.h).
  const QString csv = table_to_csv(*w.window.table(QStringLiteral("summary")));
  QVERIFY2(csv.contains(QStringLiteral("memory: +-5.0 % (90 %, 10 held-out points)")), qPrintable(csv));
  // The fitted constant is in use: memory-bound kernels are slower than with the datasheet's 0.85.
  const double calibrated = w.session.analysis().training->step_time.value();
  w.window.profile_picker().setCurrentIndex(0);
  QVERIFY(w.session.wait_until_idle());
  QVERIFY(w.session.analysis().training->step_time.value() < calibrated);
  QVERIFY(w.window.problems_label().isHidden());

  // A profile measured on another GPU is used when picked, with the mismatch said in the window.
  const QString h200 = path(QStringLiteral("h200.json"));
  save_profile(h200.toStdString(), test_profile("h200-sxm-141gb"));
  QVERIFY(w.window.open_profile(h200));
  QVERIFY(w.session.wait_until_idle());
  QVERIFY(w.window.problems_label().isVisible());
  QVERIFY(w.window.problems_label().text().contains(QStringLiteral("warning: profile")));

  // A file that is not a profile is refused with the loader's message, and the picker is unchanged.
  const QString broken = path(QStringLiteral("broken.json"));
  {
    QFile f(broken);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"schema\": \"stepcast.calibration.profile\", \"schema_version\": 1}");
  }
  QVERIFY(!w.window.open_profile(broken));
  QCOMPARE(w.window.profile_picker().count(), 3);
  QVERIFY(w.window.problems_label().text().contains(QStringLiteral("was not loaded")));
}

QTEST_MAIN(WidgetsTest)
#include "widgets_test.moc"
