#pragma once
// Runs the training layout search (simulator/training_search.h, the engine behind `stepcast
// search`) off the GUI thread for the Sweep page, with progress and cancellation.
//
// start() searches every valid layout of the scenario's model on its GPUs at its global batch,
// ranked by one objective ("min step_time_s", "max tokens_per_s", ...), keeping the best K or the
// Pareto set of that objective against peak memory per GPU. Progress reports (phase, done, total)
// arrive as progress() signals; cancel() asks the engine to stop, and it returns the best found so
// far, marked cancelled. The results land in the SweepResultsModel given to the constructor. A
// newer start() makes an older run's results stale (dropped), like every job of the window.

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

#include "gui/models/calibration_profiles.h"
#include "gui/models/job_tracker.h"
#include "gui/models/sweep_results_model.h"

namespace stepcast::gui {

struct SweepSettings {
  QString objective = QStringLiteral("min step_time_s");
  int top = 200;
  bool pareto = false;  // keep the Pareto set of (objective, min memory_per_gpu_bytes.peak)
  int threads = 0;      // 0: every core
};

class SweepRunner : public QObject {
  Q_OBJECT

 public:
  explicit SweepRunner(SweepResultsModel& results, QObject* parent = nullptr);
  ~SweepRunner() override;

  // False with `error` set when the search cannot start (an inference scenario, a bad objective).
  bool start(const Scenario& base, const CalibrationChoice& choice, const SweepSettings& settings,
             QString* error = nullptr);
  void cancel();
  [[nodiscard]] bool running() const { return m_jobs.busy(); }
  bool wait_until_idle(int timeout_ms = 60000) { return m_jobs.wait_until_idle(timeout_ms); }

  // The last delivered run.
  [[nodiscard]] const SearchCounts& counts() const { return m_results.result().counts; }
  [[nodiscard]] bool cancelled() const { return m_results.result().cancelled; }

 Q_SIGNALS:
  void started();
  void progress(qint64 done, qint64 total, const QString& phase);
  void finished(bool cancelled);

 private:
  SweepResultsModel& m_results;
  JobTracker m_jobs;
  std::shared_ptr<std::atomic<bool>> m_cancel;
};

}  // namespace stepcast::gui
