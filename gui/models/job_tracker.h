#pragma once
// Runs the simulator off the GUI thread and drops results an edit made stale (the job tracker of
// KDAB/hotspot, src/jobtracker.h, rewritten for this app).
//
// Every start() gets a higher id. Work runs on one worker thread of the tracker's own pool; its
// result comes back to the tracker's thread (the GUI thread) through a queued call and is handed
// to `done` only if no newer job was started meanwhile. Jobs are coalesced: while one runs, a
// newer start() replaces any job still waiting, so dragging a slider queues at most one job behind
// the running one. Work polls JobContext::cancelled() to stop early once it is stale or cancel()
// was called; progress reports reach the GUI thread as progress() signals, only for the latest
// job. Destroying the tracker cancels and waits for the running job; its result is dropped.

#include <QObject>
#include <QString>
#include <QThreadPool>

#include <atomic>
#include <functional>
#include <memory>

namespace stepcast::gui {

class JobTracker;

// What a running job can ask: should it stop, and how far it got.
class JobContext {
 public:
  JobContext(JobTracker* tracker, quint64 id) : m_tracker(tracker), m_id(id) {}
  [[nodiscard]] quint64 id() const { return m_id; }
  [[nodiscard]] bool cancelled() const;
  // Thread-safe; reaches the GUI thread as JobTracker::progress(done, total, phase) if still current.
  void report_progress(qint64 done, qint64 total, const QString& phase = {}) const;

 private:
  JobTracker* m_tracker;
  quint64 m_id;
};

class JobTracker : public QObject {
  Q_OBJECT

 public:
  explicit JobTracker(QObject* parent = nullptr);
  ~JobTracker() override;

  // Starts a job: `work(const JobContext&)` on the worker thread, then `done(result)` on this
  // object's thread if the job is still the latest. Returns the job's id.
  template <class Work, class Done>
  quint64 start(Work work, Done done);

  // Makes every started job stale: the running one should stop, and no result is delivered.
  void cancel();

  [[nodiscard]] quint64 latest_id() const { return m_latest.load(); }
  // True while a job runs or waits.
  [[nodiscard]] bool busy() const { return m_running || m_pending != nullptr; }
  // Processes events until no job runs or waits (tests, screenshots, benchmarks). False on timeout.
  bool wait_until_idle(int timeout_ms = 30000);

 Q_SIGNALS:
  void progress(quint64 id, qint64 done, qint64 total, const QString& phase);
  // Emitted after a job's result was delivered (or dropped as stale) and nothing else runs.
  void idle();

 private:
  friend class JobContext;
  void submit(std::function<void()> task);
  void task_finished();

  QThreadPool m_pool;
  std::atomic<quint64> m_latest{0};
  bool m_running = false;
  std::unique_ptr<std::function<void()>> m_pending;
};

template <class Work, class Done>
quint64 JobTracker::start(Work work, Done done) {
  const quint64 id = ++m_latest;
  submit([this, id, work = std::move(work), done = std::move(done)]() mutable {
    const JobContext context(this, id);
    auto result = work(context);
    QMetaObject::invokeMethod(
        this,
        [this, id, result = std::move(result), done = std::move(done)]() mutable {
          if (id == m_latest.load()) done(std::move(result));
          task_finished();
        },
        Qt::QueuedConnection);
  });
  return id;
}

}  // namespace stepcast::gui
