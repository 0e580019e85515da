// Headless tests of gui/models: the session, the editor model and the result tables, driven without
// a window. Every model is watched by QAbstractItemModelTester (QtTest mode), which fails the test
// on any broken model contract (rows/columns/parents/signals) while the test edits and reloads.

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "gui/models/analysis.h"
#include "gui/models/explorer_session.h"
#include "gui/models/job_tracker.h"
#include "gui/models/scaling_curve.h"
#include "gui/models/scenario_document.h"
#include "gui/models/scenario_variants.h"
#include "gui/models/sweep_runner.h"
#include "simulator/diagnostics.h"
#include "simulator/training_predictor.h"

using namespace stepcast;
using namespace stepcast::gui;

namespace {

const QString kSmall = QStringLiteral("tests/gui/fixtures/llama3-8b-small.yaml");
const QString kBroken = QStringLiteral("tests/gui/fixtures/heads-not-divisible.yaml");

// The first column of every row, one per line: the structure of a table, not its numbers.
QString row_labels(const QAbstractItemModel& model) {
  QStringList out;
  for (int r = 0; r < model.rowCount(); ++r) out << model.index(r, 0).data().toString();
  return out.join(QLatin1Char('\n'));
}

QString headers(const QAbstractItemModel& model) {
  QStringList out;
  for (int c = 0; c < model.columnCount(); ++c) out << model.headerData(c, Qt::Horizontal).toString();
  return out.join(QStringLiteral(" | "));
}

double breakdown_seconds(const BreakdownModel& model, const QString& key) {
  for (int r = 0; r < model.rowCount(); ++r) {
    if (model.index(r, 0).data(Qt::ToolTipRole).toString() == key) return model.index(r, 1).data(TableModel::SortRole).toDouble();
  }
  return 0.0;
}

std::string read_file(const QString& path) {
  std::ifstream in(path.toStdString());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

class ModelsTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void every_model_keeps_the_item_model_contract_while_editing();
  void changing_tp_changes_the_breakdown();
  void an_invalid_tp_is_explained_at_the_tp_field_in_the_loaders_words();
  void a_broken_file_reports_file_line_and_column();
  void an_unreadable_file_is_a_diagnostic_not_a_crash();
  void dp_follows_the_layout_until_set();
  void document_length_speeds_attention_and_whole_sequence_removes_the_key();
  void saving_an_unedited_document_keeps_its_text();
  void save_then_load_gives_an_equal_scenario_and_identical_prediction();
  void stale_job_results_are_dropped();
  void jobs_are_coalesced_while_one_runs();
  void scaling_curve_keeps_the_layout_and_contains_the_current_point();
  void result_tables_list_the_components_of_the_prediction();
  void comparison_attributes_the_whole_step_time_change();
  void a_profile_with_an_interval_shows_it_in_the_summary();
  void a_variant_with_constants_set_by_hand_is_named_and_predicts_with_them();
  void a_serving_scenario_fills_the_inference_views_and_slo_lines();
  void the_search_ranks_layouts_marks_the_pareto_front_and_rebuilds_each_scenario();
  void a_cancelled_search_returns_marked_cancelled();
  void the_fsdp_and_checkpoint_rows_follow_zero_and_recompute_and_price_their_choice();
};

void ModelsTest::every_model_keeps_the_item_model_contract_while_editing() {
  StaticProfileSource profiles;
  ExplorerSession session(profiles);
  const auto mode = QAbstractItemModelTester::FailureReportingMode::QtTest;
  QAbstractItemModelTester t1(&session.editor(), mode);
  QAbstractItemModelTester t2(&session.breakdown(), mode);
  QAbstractItemModelTester t3(&session.memory(), mode);
  QAbstractItemModelTester t4(&session.timeline(), mode);
  QAbstractItemModelTester t5(&session.scaling(), mode);
  QAbstractItemModelTester t6(&session.summary(), mode);
  QAbstractItemModelTester t7(&session.comparison(), mode);
  session.open(kSmall);
  QVERIFY(session.wait_until_idle());
  QVERIFY(session.editor().rowCount() > 10);
  session.pin_baseline();
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.tp"), 4));
  QVERIFY(session.wait_until_idle());
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.tp"), 3));  // invalid: 32 heads
  QVERIFY(session.wait_until_idle());
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.tp"), 2));
  QVERIFY(session.wait_until_idle());
  session.open(kBroken);
  QVERIFY(session.wait_until_idle());
  session.open(QStringLiteral("llama3-70b-serving"));  // an inference scenario: other rows
  QVERIFY(session.wait_until_idle());
}

void ModelsTest::changing_tp_changes_the_breakdown() {
  StaticProfileSource profiles;
  ExplorerSession session(profiles);
  session.open(kSmall);
  QVERIFY(session.wait_until_idle());
  QVERIFY(session.analysis().predicted());
  const double tp_comm_at_2 = breakdown_seconds(session.breakdown(), QStringLiteral("tp_comm_exposed"));
  const double step_at_2 = session.analysis().training->step_time.value();
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.tp"), 4));  // 4 x 2 x 1 = 8 GPUs
  QVERIFY(session.wait_until_idle());
  QVERIFY2(session.analysis().predicted(), session.analysis().failure.c_str());
  QCOMPARE(session.analysis().evaluation.scenario->parallel.tp, 4);
  QCOMPARE(session.analysis().evaluation.scenario->parallel.dp, 1);
  // Twice the TP degree, half the data-parallel replicas: each GPU does the same FLOPs per step
  // but more of its time is tensor-parallel traffic, so that component grows.
  QVERIFY(breakdown_seconds(session.breakdown(), QStringLiteral("tp_comm_exposed")) > tp_comm_at_2);
  QVERIFY(session.analysis().training->step_time.value() != step_at_2);
}

void ModelsTest::an_invalid_tp_is_explained_at_the_tp_field_in_the_loaders_words() {
  StaticProfileSource profiles;
  ExplorerSession session(profiles);
  session.open(kSmall);
  QVERIFY(session.wait_until_idle());
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.tp"), 5));
  QVERIFY(session.wait_until_idle());
  QVERIFY(!session.analysis().valid());
  const int row = session.editor().row_of(QStringLiteral("parallel.tp"));
  const QString problem = session.editor().index(row, 0).data(ScenarioEditorModel::ProblemRole).toString();
  QVERIFY2(problem.contains(QStringLiteral("model heads (32) are not divisible by tp (5)")), qPrintable(problem));
  // The edited value stays as typed, and the full diagnostic names the edit.
  QCOMPARE(session.editor().value(QStringLiteral("parallel.tp")).toInt(), 5);
  bool named = false;
  for (const auto& d : session.editor().diagnostics()) {
    named = named || describe_diagnostic(d).find("edit parallel.tp=5: error: parallel.tp:") == 0;
  }
  QVERIFY(named);
  // The views show nothing stale for an invalid scenario.
  QCOMPARE(session.breakdown().rowCount(), 0);
}

void ModelsTest::a_broken_file_reports_file_line_and_column() {
  StaticProfileSource profiles;
  ExplorerSession session(profiles);
  session.open(kBroken);
  QVERIFY(session.wait_until_idle());
  QVERIFY(!session.analysis().valid());
  QVERIFY(!session.editor().diagnostics().empty());
  // `tp: 5` is on line 8, its value at column 7.
  const std::string first = describe_diagnostic(session.editor().diagnostics().front());
  QVERIFY2(first.find("tests/gui/fixtures/heads-not-divisible.yaml:8:7: error: parallel.tp:") == 0, first.c_str());
}

void ModelsTest::an_unreadable_file_is_a_diagnostic_not_a_crash() {
  StaticProfileSource profiles;
  ExplorerSession session(profiles);
  session.open(QStringLiteral("tests/gui/fixtures"));  // a directory
  QVERIFY(session.wait_until_idle());
  QCOMPARE(session.editor().diagnostics().size(), std::size_t{1});
  QVERIFY(session.editor().diagnostics().front().message.find("cannot read") != std::string::npos);
}

void ModelsTest::dp_follows_the_layout_until_set() {
  StaticProfileSource profiles;
  ExplorerSession session(profiles);
  session.open(kSmall);
  QVERIFY(session.wait_until_idle());
  QCOMPARE(session.editor().value(QStringLiteral("parallel.dp")).toInt(), 2);
  QVERIFY(session.editor().set_value(QStringLiteral("system.gpus"), 16));  // two nodes: dp 4
  QVERIFY(session.wait_until_idle());
  QVERIFY(session.analysis().valid());
  QCOMPARE(session.editor().value(QStringLiteral("parallel.dp")).toInt(), 4);
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.dp"), 2));  // explicit now: 2*2*2 != 16
  QVERIFY(session.wait_until_idle());
  QVERIFY(!session.analysis().valid());
  QVERIFY(!session.editor().dp_auto());
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.dp"), 0));  // back to auto
  QVERIFY(session.wait_until_idle());
  QVERIFY(session.analysis().valid());
  QCOMPARE(session.editor().value(QStringLiteral("parallel.dp")).toInt(), 4);
}

void ModelsTest::document_length_speeds_attention_and_whole_sequence_removes_the_key() {
  StaticProfileSource profiles;
  ExplorerSession session(profiles);
  session.open(kSmall);
  QVERIFY(session.wait_until_idle());
  QCOMPARE(session.editor().value(QStringLiteral("training.document_tokens")).toInt(), 0);  // whole sequence
  const double whole = session.analysis().training->step_time.value();
  QVERIFY(session.editor().set_value(QStringLiteral("training.document_tokens"), 512));
  QVERIFY(session.wait_until_idle());
  QVERIFY(session.analysis().valid());
  QVERIFY(session.analysis().training->step_time.value() < whole);
  QVERIFY(session.editor().set_value(QStringLiteral("training.document_tokens"), 8192));  // longer than seq_len
  QVERIFY(session.wait_until_idle());
  QVERIFY(!session.analysis().valid());
  QVERIFY(session.editor().set_value(QStringLiteral("training.document_tokens"), 0));  // back to whole sequences
  QVERIFY(session.wait_until_idle());
  QVERIFY(session.analysis().valid());
  QCOMPARE(session.analysis().training->step_time.value(), whole);
}

void ModelsTest::saving_an_unedited_document_keeps_its_text() {
  const ScenarioDocument document = ScenarioDocument::open(kSmall.toStdString());
  QCOMPARE(document.text_to_save(), read_file(kSmall));
}

void ModelsTest::save_then_load_gives_an_equal_scenario_and_identical_prediction() {
  StaticProfileSource profiles;
  ExplorerSession session(profiles);
  session.open(QStringLiteral("gpt3-175b-selene"));
  QVERIFY(session.wait_until_idle());
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.pp"), 16));
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.vpp"), 2));
  QVERIFY(session.wait_until_idle());
  QVERIFY(session.analysis().predicted());
  const Scenario edited = *session.analysis().evaluation.scenario;

  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("saved.yaml"));
  const std::string text = session.editor().document().text_to_save();
  {
    std::ofstream out(path.toStdString());
    out << text;
  }
  Scenario loaded = load_scenario(path.toStdString());
  loaded.source = edited.source;  // where it was read from is the only difference
  QVERIFY(loaded == edited);
  const TrainingPrediction a = predict_training(edited);
  const TrainingPrediction b = predict_training(loaded);
  QCOMPARE(a.step_time.value(), b.step_time.value());
  QCOMPARE(a.memory.peak.value(), b.memory.peak.value());

  // A saved file, reopened and saved again unchanged, keeps its text byte for byte.
  session.open(path);
  QVERIFY(session.wait_until_idle());
  QCOMPARE(session.editor().document().text_to_save(), text);
}

void ModelsTest::stale_job_results_are_dropped() {
  JobTracker tracker;
  std::atomic<bool> release{false};
  QList<int> delivered;
  tracker.start(
      [&](const JobContext&) {
        while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return 1;
      },
      [&](int v) { delivered << v; });
  tracker.start([](const JobContext&) { return 2; }, [&](int v) { delivered << v; });
  release = true;
  QVERIFY(tracker.wait_until_idle());
  QCOMPARE(delivered, QList<int>{2});
}

void ModelsTest::jobs_are_coalesced_while_one_runs() {
  JobTracker tracker;
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  QList<int> delivered;
  for (int i = 0; i < 20; ++i) {
    tracker.start(
        [&, i](const JobContext&) {
          ++ran;
          while (i == 0 && !release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          return i;
        },
        [&](int v) { delivered << v; });
  }
  release = true;
  QVERIFY(tracker.wait_until_idle());
  // The first job was running; of the 19 started behind it only the last waited and ran.
  QCOMPARE(ran.load(), 2);
  QCOMPARE(delivered, QList<int>{19});
}

void ModelsTest::scaling_curve_keeps_the_layout_and_contains_the_current_point() {
  const Scenario s = load_scenario("gpt3-175b-selene");
  const std::vector<ScalingPoint> points = scaling_curve(s, datasheet_variant());
  QVERIFY(points.size() >= 5);
  int current = 0;
  for (const ScalingPoint& p : points) {
    QCOMPARE(p.gpus, s.parallel.tp * s.parallel.pp * s.parallel.cp * p.dp);
    QVERIFY(p.mfu > 0.0 && p.mfu < 1.0);
    if (p.current) {
      ++current;
      // The curve's own point is the scenario's prediction, not an approximation of it.
      QCOMPARE(p.tokens_per_s, predict_training(s).tokens_per_s);
      QCOMPARE(p.gpus, s.system.gpus);
    }
  }
  QCOMPARE(current, 1);
  // dp = 16 * 2^k for k = -4..4 all divide the global batch of 1536, but the interleaved schedule
  // needs a multiple of pp = 8 micro-batches per replica (1536 / dp): dp 128 (12) and 256 (6) are
  // rejected by the loader's checks, leaving 1, 2, 4, ... 64.
  QCOMPARE(points.front().dp, 1);
  QCOMPARE(points.back().dp, 64);
}

void ModelsTest::result_tables_list_the_components_of_the_prediction() {
  StaticProfileSource profiles;
  ExplorerSession session(profiles);
  session.open(kSmall);
  QVERIFY(session.wait_until_idle());
  // Rows are the non-zero components in TimeBreakdown order; the time unit is in the header.
  const QString header = headers(session.breakdown());
  QVERIFY2(QRegularExpression(QStringLiteral("^Component \\| Step \\((s|ms|us)\\) \\| Share of step$")).match(header).hasMatch(),
           qPrintable(header));
  const QString labels = row_labels(session.breakdown());
  QVERIFY2(labels.startsWith(QStringLiteral("Compute\nRecompute\nTP comm (exposed)")), qPrintable(labels));
  QVERIFY(labels.contains(QStringLiteral("Pipeline bubble")));
  // Shares sum to one: the components add up to the step time.
  double share = 0.0;
  for (int r = 0; r < session.breakdown().rowCount(); ++r) {
    share += session.breakdown().index(r, 2).data(TableModel::SortRole).toDouble();
  }
  QVERIFY(std::abs(share - 1.0) < 1e-9);
  QCOMPARE(row_labels(session.memory()), QStringLiteral("Stage 0\nStage 1"));
  QVERIFY(headers(session.memory()).endsWith(QStringLiteral("Peak (GiB) | Capacity (GiB) | Fits")));
  // Timeline: 8 micro-batches x 2 stages x (forward + backward) passes.
  int passes = 0;
  for (const auto& e : session.timeline().entries()) passes += e.kind != TimelineEntry::Kind::comm ? 1 : 0;
  QCOMPARE(passes, 8 * 2 * 2);
  QCOMPARE(session.timeline().stages(), 2);
  QVERIFY(session.scaling().rowCount() > 0);
  QVERIFY(session.summary().headline().contains(QStringLiteral("tokens/s")));
}

void ModelsTest::comparison_attributes_the_whole_step_time_change() {
  StaticProfileSource profiles;
  ExplorerSession session(profiles);
  session.open(kSmall);
  QVERIFY(session.wait_until_idle());
  session.pin_baseline();
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.recompute"), QStringLiteral("full")));
  QVERIFY(session.wait_until_idle());
  const ComparisonModel& c = session.comparison();
  QVERIFY(c.complete());
  double shares = 0.0;
  double deltas = 0.0;
  for (int r = 1; r < c.rowCount(); ++r) {
    if (!c.index(r, 0).data().toString().startsWith(QStringLiteral("  "))) break;  // time components only
    shares += c.index(r, 4).data(TableModel::SortRole).toDouble();
  }
  for (const auto& d : c.time_deltas()) deltas += d.seconds;
  const double step_delta = c.index(0, 3).data(TableModel::SortRole).toDouble();
  QVERIFY(step_delta > 0.0);  // full recompute re-runs the whole forward pass
  QVERIFY(std::abs(shares - 1.0) < 1e-9);
  QVERIFY(std::abs(deltas - step_delta) < 1e-12 * std::max(1.0, step_delta));
}

void ModelsTest::a_profile_with_an_interval_shows_it_in_the_summary() {
  CalibrationChoice fitted = datasheet_choice();
  fitted.variant.name = "test profile";
  fitted.step_time = PredictionInterval{0.9, 0.95, 1.08};
  StaticProfileSource profiles({fitted});
  ExplorerSession session(profiles);
  QCOMPARE(session.profiles().size(), std::size_t{2});
  session.open(kSmall);
  QVERIFY(session.wait_until_idle());
  QVERIFY(!session.summary().headline().contains(QStringLiteral("90 %")));
  session.set_profile_index(1);
  QVERIFY(session.wait_until_idle());
  QVERIFY2(session.summary().headline().contains(QStringLiteral("(90 %: ")), qPrintable(session.summary().headline()));
}

void ModelsTest::a_variant_with_constants_set_by_hand_is_named_and_predicts_with_them() {
  CalibrationChoice fitted = datasheet_choice();
  fitted.step_time = PredictionInterval{0.9, 0.95, 1.08};
  const CalibrationChoice what_if = with_constants(fitted, {"compute.sustained_derate=1"});
  QVERIFY2(what_if.name().find("constants set by hand: compute.sustained_derate=1 (was 0.935)") != std::string::npos,
           what_if.name().c_str());
  QCOMPARE(what_if.variant.cost.sustained_derate, 1.0);
  QVERIFY(!what_if.step_time.has_value());  // the base's interval does not describe these constants
  QVERIFY(what_if.variant.profile == nullptr);
  QVERIFY_THROWS_EXCEPTION(InputError, with_constants(fitted, {"compute.sustained_derate=-1"}));
  QVERIFY_THROWS_EXCEPTION(InputError, with_constants(fitted, {"no.such.constant=1"}));
  QCOMPARE(with_constants(fitted, {}).name(), fitted.name());

  // A compute-bound scenario runs faster without the sustained-clock derate.
  StaticProfileSource profiles({what_if});
  ExplorerSession session(profiles);
  session.open(kSmall);
  QVERIFY(session.wait_until_idle());
  QVERIFY(session.analysis().training.has_value());
  const double datasheet = session.analysis().training->step_time.value();
  session.set_profile_index(1);
  QVERIFY(session.wait_until_idle());
  QVERIFY(session.analysis().training.has_value());
  QVERIFY2(session.analysis().training->step_time.value() < datasheet,
           qPrintable(QString::number(session.analysis().training->step_time.value())));
}

void ModelsTest::a_serving_scenario_fills_the_inference_views_and_slo_lines() {
  StaticProfileSource profiles;
  ExplorerSession session(profiles);
  QAbstractItemModelTester t1(&session.serving_series(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  QAbstractItemModelTester t2(&session.latency_curve(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  session.open(QStringLiteral("llama3-70b-serving"));
  QVERIFY(session.wait_until_idle(120000));
  QVERIFY2(session.analysis().inference.has_value(), session.analysis().failure.c_str());
  // Two bars: the prefill of a mean prompt and one decode step.
  QCOMPARE(session.breakdown().bars().size(), std::size_t{2});
  QCOMPARE(session.memory().rowCount(), 1);
  QVERIFY(session.serving_series().rowCount() > 10);
  QCOMPARE(session.timeline().rowCount(), 0);
  const LatencyCurve& curve = session.latency_curve().curve();
  QVERIFY(curve.serving);
  // The example's SLOs: 500 ms to first token, 50 ms per output token.
  QCOMPARE(curve.ttft_slo.value(), 0.5);
  QCOMPARE(curve.tpot_slo.value(), 0.05);
  QVERIFY(curve.points.size() >= 10);
  int current = 0;
  for (std::size_t i = 0; i < curve.points.size(); ++i) {
    if (curve.points[i].current) {
      ++current;
      // The scenario's own point is its prediction.
      QCOMPARE(curve.points[i].ttft_p90.value(), session.analysis().inference->ttft.p90.value());
    }
    if (i > 0) QVERIFY(curve.points[i].load >= curve.points[i - 1].load);
  }
  QCOMPARE(current, 1);
  // Past the capacity the queue grows: the highest load waits far longer for its first token.
  QVERIFY(curve.points.back().ttft_p90 > curve.points.front().ttft_p90);
  QVERIFY(session.summary().headline().startsWith(QStringLiteral("TTFT p90")));
}

void ModelsTest::the_search_ranks_layouts_marks_the_pareto_front_and_rebuilds_each_scenario() {
  const Scenario base = load_scenario(kSmall.toStdString());
  SweepResultsModel results;
  QAbstractItemModelTester tester(&results, QAbstractItemModelTester::FailureReportingMode::QtTest);
  SweepRunner runner(results);
  SweepSettings settings;
  settings.top = 40;
  QSignalSpy finished(&runner, &SweepRunner::finished);
  QVERIFY(runner.start(base, datasheet_choice(), settings));
  QVERIFY(runner.wait_until_idle());
  QCOMPARE(finished.count(), 1);
  QVERIFY(!runner.cancelled());
  QVERIFY(runner.counts().space > 40);
  QCOMPARE(results.rowCount(), 40);
  // Ranked by step time, best first.
  const int step = 12;
  for (int r = 1; r < results.rowCount(); ++r) {
    QVERIFY(results.index(r, step).data(TableModel::SortRole).toDouble() >=
            results.index(r - 1, step).data(TableModel::SortRole).toDouble());
  }
  // No Pareto row is dominated by another fitting row (more tokens/s and no more memory).
  const auto& points = results.points();
  int front = 0;
  for (const auto& p : points) {
    if (!p.pareto) continue;
    ++front;
    for (const auto& q : points) {
      QVERIFY(!(q.fits && q.tokens_per_s > p.tokens_per_s && q.peak_memory < p.peak_memory));
    }
  }
  QVERIFY(front >= 1);
  // Each row's layout, rebuilt as a scenario, is valid and predicts the step time the search ranked it by.
  for (int r : {0, 7, 39}) {
    const Scenario s = *results.scenario_of(r);
    QVERIFY(is_consistent(s));
    QCOMPARE(predict_training(s).step_time.value(), results.index(r, step).data(TableModel::SortRole).toDouble());
  }
  QString error;
  QVERIFY(!runner.start(load_scenario("llama3-70b-serving"), datasheet_choice(), settings, &error));
  QVERIFY(error.contains(QStringLiteral("training")));
}

void ModelsTest::a_cancelled_search_returns_marked_cancelled() {
  const Scenario base = load_scenario("gpt3-175b-selene");
  SweepResultsModel results;
  SweepRunner runner(results);
  QVERIFY(runner.start(base, datasheet_choice(), SweepSettings{}));
  runner.cancel();
  QVERIFY(runner.wait_until_idle());
  QVERIFY(runner.cancelled());
  QVERIFY(runner.counts().enumerated < runner.counts().space);
}

QTEST_GUILESS_MAIN(ModelsTest)
#include "models_test.moc"

void ModelsTest::the_fsdp_and_checkpoint_rows_follow_zero_and_recompute_and_price_their_choice() {
  // parallel.fsdp only means something under ZeRO-3, parallel.checkpoint only under full
  // recomputation: each row appears with its condition, and choosing the PyTorch behaviour moves
  // the prediction the way the model prices it (FSDP2's copies cost time; the early stop saves it).
  StaticProfileSource profiles;
  ExplorerSession session(profiles);
  session.open(kSmall);
  QVERIFY(session.wait_until_idle());
  QCOMPARE(session.editor().row_of(QStringLiteral("parallel.fsdp")), -1);
  QCOMPARE(session.editor().row_of(QStringLiteral("parallel.checkpoint")), -1);
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.zero"), 3));
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.recompute"), QStringLiteral("full")));
  QVERIFY(session.wait_until_idle());
  QVERIFY2(session.analysis().predicted(), session.analysis().failure.c_str());
  QVERIFY(session.editor().row_of(QStringLiteral("parallel.fsdp")) >= 0);
  QVERIFY(session.editor().row_of(QStringLiteral("parallel.checkpoint")) >= 0);
  const double in_place = session.analysis().training->step_time.value();
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.fsdp"), QStringLiteral("fsdp2")));
  QVERIFY(session.wait_until_idle());
  QVERIFY2(session.analysis().predicted(), session.analysis().failure.c_str());
  const double copies = session.analysis().training->step_time.value();
  QVERIFY(copies > in_place);
  QVERIFY(session.editor().set_value(QStringLiteral("parallel.checkpoint"), QStringLiteral("pytorch")));
  QVERIFY(session.wait_until_idle());
  QVERIFY2(session.analysis().predicted(), session.analysis().failure.c_str());
  QVERIFY(session.analysis().training->step_time.value() < copies);
}
