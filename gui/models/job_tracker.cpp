#include "gui/models/job_tracker.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QThread>

namespace stepcast::gui {

bool JobContext::cancelled() const { return m_tracker->m_latest.load() != m_id; }

void JobContext::report_progress(qint64 done, qint64 total, const QString& phase) const {
  JobTracker* tracker = m_tracker;
  const quint64 id = m_id;
  QMetaObject::invokeMethod(
      tracker,
      [tracker, id, done, total, phase] {
        if (id == tracker->m_latest.load()) Q_EMIT tracker->progress(id, done, total, phase);
      },
      Qt::QueuedConnection);
}

JobTracker::JobTracker(QObject* parent) : QObject(parent) { m_pool.setMaxThreadCount(1); }

JobTracker::~JobTracker() {
  cancel();
  m_pending.reset();
  m_pool.waitForDone();
}

void JobTracker::cancel() {
  ++m_latest;
  m_pending.reset();
}

void JobTracker::submit(std::function<void()> task) {
  if (m_running) {
    m_pending = std::make_unique<std::function<void()>>(std::move(task));
    return;
  }
  m_running = true;
  m_pool.start(std::move(task));
}

void JobTracker::task_finished() {
  m_running = false;
  if (m_pending) {
    auto next = std::move(m_pending);
    submit(std::move(*next));
    return;
  }
  Q_EMIT idle();
}

bool JobTracker::wait_until_idle(int timeout_ms) {
  QDeadlineTimer deadline(timeout_ms);
  while (busy()) {
    if (deadline.hasExpired()) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    if (busy()) QThread::msleep(1);
  }
  return true;
}

}  // namespace stepcast::gui
