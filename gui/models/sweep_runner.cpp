#include "gui/models/sweep_runner.h"

#include "simulator/result_fields.h"

namespace stepcast::gui {

SweepRunner::SweepRunner(SweepResultsModel& results, QObject* parent) : QObject(parent), m_results(results) {
  connect(&m_jobs, &JobTracker::progress, this,
          [this](quint64, qint64 done, qint64 total, const QString& phase) { Q_EMIT progress(done, total, phase); });
}

SweepRunner::~SweepRunner() {
  if (m_cancel) m_cancel->store(true);
}

bool SweepRunner::start(const Scenario& base, const CalibrationChoice& choice, const SweepSettings& settings,
                        QString* error) {
  const auto fail = [&](const QString& why) {
    if (error != nullptr) *error = why;
    return false;
  };
  if (!base.is_training()) {
    return fail(tr("The layout search covers training scenarios; stepcast has no serving search yet."));
  }
  const FieldTable& fields = FieldTable::training();
  ExprError parse_error;
  const auto objective = parse_objective(settings.objective.toStdString(), fields.resolver(), parse_error);
  if (!objective) return fail(tr("objective '%1': %2").arg(settings.objective, QString::fromStdString(parse_error.message)));
  SearchOptions options;
  options.objectives.push_back(*objective);
  if (settings.pareto) {
    const auto memory = parse_objective("min memory_per_gpu_bytes.peak", fields.resolver(), parse_error);
    options.objectives.push_back(*memory);
  }
  options.top = static_cast<std::size_t>(std::max(1, settings.top));
  options.pareto = settings.pareto;
  options.threads = settings.threads;
  options.parameters = choice.variant.cost;

  if (m_cancel) m_cancel->store(true);  // a running search stops; its result is stale anyway
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  m_cancel = cancel;
  Q_EMIT started();
  m_jobs.start(
      [base, options, cancel](const JobContext& job) {
        RunControl control;
        control.cancel = cancel.get();
        control.interval_s = 0.05;
        control.on_progress = [&job](const Progress& p) {
          job.report_progress(static_cast<qint64>(p.done), static_cast<qint64>(p.total), QString::fromStdString(p.phase));
        };
        return run_training_search(base, options, control);
      },
      [this, base, space = options.space](SearchResult result) {
        const bool was_cancelled = result.cancelled;
        m_results.set_result(base, space, std::move(result));
        Q_EMIT finished(was_cancelled);
      });
  return true;
}

void SweepRunner::cancel() {
  if (m_cancel) m_cancel->store(true);
}

}  // namespace stepcast::gui
