#include "gui/models/explorer_session.h"

#include <QElapsedTimer>

namespace stepcast::gui {

ExplorerSession::ExplorerSession(const CalibrationProfileSource& profiles, const Catalog& catalog, QObject* parent)
    : QObject(parent), m_catalog(catalog), m_profiles(profiles.profiles()), m_editor(catalog) {
  if (m_profiles.empty()) m_profiles.push_back(datasheet_choice());
  connect(&m_editor, &ScenarioEditorModel::document_changed, this, &ExplorerSession::recompute);
  connect(&m_analysis_jobs, &JobTracker::idle, this, [this] { Q_EMIT busy_changed(busy()); });
  connect(&m_curve_jobs, &JobTracker::idle, this, [this] { Q_EMIT busy_changed(busy()); });
}

ExplorerSession::~ExplorerSession() = default;

void ExplorerSession::open(const QString& name_or_path) {
  open_document(ScenarioDocument::open(name_or_path.toStdString(), m_catalog));
}

void ExplorerSession::open_document(ScenarioDocument document) { m_editor.open(std::move(document)); }

void ExplorerSession::open_scenario(const Scenario& scenario, const QString& source) {
  m_editor.open(ScenarioDocument::from_scenario(scenario, source.toStdString()));
}

void ExplorerSession::set_profile_index(int index) {
  if (index < 0 || index >= static_cast<int>(m_profiles.size()) || index == m_profile) return;
  m_profile = index;
  recompute();
}

int ExplorerSession::add_profile(CalibrationChoice choice) {
  m_profiles.push_back(std::move(choice));
  Q_EMIT profiles_changed();
  return static_cast<int>(m_profiles.size()) - 1;
}

void ExplorerSession::recompute() {
  const ScenarioDocument document = m_editor.document();
  const CalibrationChoice profile = this->profile();
  const Catalog* catalog = &m_catalog;
  Q_EMIT busy_changed(true);
  m_analysis_jobs.start([document, profile, catalog](const JobContext&) { return analyse(document, profile, *catalog); },
                        [this](Analysis a) { apply(a); });
  m_curve_jobs.start(
      [document, profile, catalog](const JobContext& job) {
        const Evaluation e = document.evaluate(*catalog);
        if (!e.scenario || job.cancelled()) return Curves{};
        return compute_curves(*e.scenario, profile, [&job] { return job.cancelled(); });
      },
      [this](Curves c) { apply_curves(c); });
}

void ExplorerSession::apply(const Analysis& a) {
  m_analysis = a;
  m_editor.apply_evaluation(a.evaluation);
  if (a.training) {
    const TrainingPrediction& p = *a.training;
    m_breakdown.set_bars({BreakdownModel::Bar{QStringLiteral("Step"), time_components(p.time)}});
    QStringList names;
    for (std::size_t i = 0; i < p.per_stage.size(); ++i) names << QStringLiteral("Stage %1").arg(i);
    m_memory.set_memory(p.per_stage, names, a.evaluation.scenario->system.gpu.memory.value());
    m_timeline.set_timeline(p.timeline, a.evaluation.scenario->parallel.pp, p.bubble_fraction);
  } else {
    m_timeline.clear();
  }
  if (a.inference) {
    const InferencePrediction& p = *a.inference;
    m_breakdown.set_bars({BreakdownModel::Bar{p.serving ? QStringLiteral("Prefill (mean prompt)") : QStringLiteral("Prefill (batch)"),
                                              step_components(p.prefill_step)},
                          BreakdownModel::Bar{QStringLiteral("Decode step"), step_components(p.decode_step)}});
    m_memory.set_memory({p.memory}, {QStringLiteral("Each GPU")}, a.evaluation.scenario->system.gpu.memory.value());
    m_serving_series.set_series(p.time_series);
  } else {
    m_serving_series.clear();
  }
  if (!a.predicted()) {
    m_breakdown.clear();
    m_memory.clear();
  }
  if (!a.valid()) {
    m_scaling.clear();
    m_latency_curve.clear();
  }
  m_summary.set_analysis(a);
  update_comparison();
  Q_EMIT analysis_changed();
}

void ExplorerSession::apply_curves(const Curves& c) {
  m_scaling.set_points(c.scaling);
  m_latency_curve.set_curve(c.latency);
  Q_EMIT curves_changed();
}

namespace {
std::optional<ComparisonSide> side_of(const Analysis& a, const QString& name) {
  if (a.training) return comparison_side(*a.training, name);
  if (a.inference) return comparison_side(*a.inference, name);
  return std::nullopt;
}
}  // namespace

void ExplorerSession::pin_baseline() {
  const QString name = m_analysis.evaluation.scenario
                           ? QString::fromStdString(m_analysis.evaluation.scenario->name) + QStringLiteral(" (pinned)")
                           : QString();
  m_baseline = side_of(m_analysis, name);
  update_comparison();
}

void ExplorerSession::update_comparison() {
  const QString current = m_analysis.evaluation.scenario ? QString::fromStdString(m_analysis.evaluation.scenario->name)
                                                         : QStringLiteral("current");
  m_comparison.set_pair(m_baseline, side_of(m_analysis, current));
  Q_EMIT comparison_changed();
}

bool ExplorerSession::wait_until_idle(int timeout_ms) {
  QElapsedTimer timer;
  timer.start();
  if (!m_analysis_jobs.wait_until_idle(timeout_ms)) return false;
  return m_curve_jobs.wait_until_idle(static_cast<int>(std::max<qint64>(1, timeout_ms - timer.elapsed())));
}

}  // namespace stepcast::gui
