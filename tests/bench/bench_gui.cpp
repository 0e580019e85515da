// One configuration recomputed and drawn (issue 7: within a 16 ms frame). Runs offscreen.
//
//   BM_RecomputeAndDraw  what one edit costs the user: an edit of TP in the document (alternating
//                        8 and 4), the scenario loader and the training predictor with its pipeline
//                        timeline (the job the worker runs), every model and chart updated from the
//                        result (the GUI thread's part), and the overview page rendered (breakdown,
//                        memory, Gantt chart, scaling chart, headline) into an image.
//   BM_Analyse           the worker's part alone.
//   BM_UpdateViews       the GUI thread's part alone (models reset, charts rebuilt).
//   BM_RenderOverview    painting the overview page alone; BM_RenderView each view alone.
//   BM_ScalingCurve      the second job (nine re-predictions at other GPU counts), which arrives
//                        after the frame and is not part of it.
// Scenario: GPT-3 175B on 1024 A100s (TP 8, PP 8, VPP 3, 96 micro-batches: 4608 pipeline passes
// in the Gantt chart), the window at 1600x1000.
//
// Run: build/bin/bench_gui [--benchmark_min_time=2]

#include <benchmark/benchmark.h>

#include <QApplication>
#include <QImage>
#include <QPainter>
#include <QSettings>
#include <QTemporaryDir>

#include "gui/models/analysis.h"
#include "gui/models/explorer_session.h"
#include "gui/widgets/main_window.h"

using namespace stepcast;
using namespace stepcast::gui;

namespace {

struct Fixture {
  QTemporaryDir dir;
  QSettings settings{dir.filePath(QStringLiteral("bench.ini")), QSettings::IniFormat};
  StaticProfileSource profiles;
  ExplorerSession session{profiles};
  MainWindow window{session, settings};
  QImage image;

  Fixture() {
    window.resize(1600, 1000);
    window.open_scenario(QStringLiteral("gpt3-175b-selene"));
    window.show();
    session.wait_until_idle();
    QApplication::processEvents();
    image = QImage(window.overview_page().size(), QImage::Format_ARGB32_Premultiplied);
  }
  void render() {
    QPainter painter(&image);
    window.overview_page().render(&painter);
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_RecomputeAndDraw(benchmark::State& state) {
  Fixture& f = fixture();
  ScenarioDocument document = f.session.editor().document();
  int tp = 8;
  for (auto _ : state) {
    tp = tp == 8 ? 4 : 8;
    document.set("parallel.tp", std::to_string(tp));
    document.set("parallel.dp", std::to_string(1024 / (tp * 8)));
    const Analysis a = analyse(document, f.session.profile());
    if (!a.predicted()) state.SkipWithError("the edited scenario did not predict");
    f.session.apply(a);
    f.render();
    benchmark::DoNotOptimize(f.image.constBits());
  }
}
BENCHMARK(BM_RecomputeAndDraw)->Unit(benchmark::kMillisecond);

void BM_Analyse(benchmark::State& state) {
  Fixture& f = fixture();
  const ScenarioDocument document = f.session.editor().document();
  for (auto _ : state) {
    const Analysis a = analyse(document, f.session.profile());
    benchmark::DoNotOptimize(a.training->step_time);
  }
}
BENCHMARK(BM_Analyse)->Unit(benchmark::kMillisecond);

void BM_UpdateViews(benchmark::State& state) {
  Fixture& f = fixture();
  const Analysis a = analyse(f.session.editor().document(), f.session.profile());
  for (auto _ : state) f.session.apply(a);
}
BENCHMARK(BM_UpdateViews)->Unit(benchmark::kMillisecond);

void BM_RenderOverview(benchmark::State& state) {
  Fixture& f = fixture();
  for (auto _ : state) {
    f.render();
    benchmark::DoNotOptimize(f.image.constBits());
  }
}
BENCHMARK(BM_RenderOverview)->Unit(benchmark::kMillisecond);

// Painting each view alone: 0 breakdown, 1 memory, 2 pipeline Gantt chart, 3 scaling curve.
void BM_RenderView(benchmark::State& state) {
  Fixture& f = fixture();
  static const char* const names[] = {"breakdown", "memory", "timeline", "scaling"};
  QWidget* view = f.window.chart(QString::fromLatin1(names[state.range(0)]));
  QImage image(view->size(), QImage::Format_ARGB32_Premultiplied);
  for (auto _ : state) {
    QPainter painter(&image);
    view->render(&painter);
  }
  state.SetLabel(names[state.range(0)]);
}
BENCHMARK(BM_RenderView)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

void BM_ScalingCurve(benchmark::State& state) {
  Fixture& f = fixture();
  const Scenario scenario = *f.session.analysis().evaluation.scenario;
  for (auto _ : state) {
    const Curves c = compute_curves(scenario, f.session.profile());
    benchmark::DoNotOptimize(c.scaling.data());
  }
}
BENCHMARK(BM_ScalingCurve)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
