#pragma once
// Progress reports and cancellation for long runs (sweeps, searches), independent of who shows
// them: the CLI draws a bar on a terminal, the GUI a progress widget from a background thread.
//
// Engines call ProgressMeter::advance() from any worker thread; it forwards at most one report per
// `interval` to RunControl::on_progress, never two at once (a mutex), and always a final one.
// Cancellation is cooperative: engines poll RunControl::cancelled() between small units of work
// and return what they have, marked cancelled.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace stepcast {

struct Progress {
  std::string phase;          // "screening", "timing", "evaluating"
  std::uint64_t done = 0;     // units of work finished in this phase
  std::uint64_t total = 0;    // units in this phase (an upper bound where not known exactly)
  double elapsed_s = 0.0;     // since the run started
};

struct RunControl {
  std::function<void(const Progress&)> on_progress;  // may be empty
  const std::atomic<bool>* cancel = nullptr;          // may be null
  double interval_s = 0.1;

  [[nodiscard]] bool cancelled() const { return cancel != nullptr && cancel->load(std::memory_order_relaxed); }
};

class ProgressMeter {
 public:
  ProgressMeter(const RunControl& control, std::chrono::steady_clock::time_point start)
      : m_control(control), m_start(start) {}

  void begin(std::string phase, std::uint64_t total) {
    std::lock_guard lock(m_mutex);
    m_phase = std::move(phase);
    m_total = total;
    m_done.store(0, std::memory_order_relaxed);
    m_last = std::chrono::steady_clock::time_point{};
  }

  // Adds `n` finished units; reports when `interval` has passed since the last report.
  void advance(std::uint64_t n) {
    const std::uint64_t done = m_done.fetch_add(n, std::memory_order_relaxed) + n;
    if (!m_control.on_progress) return;
    const auto now = std::chrono::steady_clock::now();
    std::unique_lock lock(m_mutex, std::try_to_lock);
    if (!lock.owns_lock()) return;
    if (now - m_last < std::chrono::duration<double>(m_control.interval_s)) return;
    m_last = now;
    m_control.on_progress(Progress{m_phase, done, m_total, seconds(now)});
  }

  // Reports the phase's final state.
  void finish() {
    if (!m_control.on_progress) return;
    std::lock_guard lock(m_mutex);
    m_control.on_progress(Progress{m_phase, m_done.load(), m_total, seconds(std::chrono::steady_clock::now())});
  }

 private:
  double seconds(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration<double>(t - m_start).count();
  }

  const RunControl& m_control;
  std::chrono::steady_clock::time_point m_start;
  std::mutex m_mutex;
  std::string m_phase;
  std::uint64_t m_total = 0;
  std::atomic<std::uint64_t> m_done{0};
  std::chrono::steady_clock::time_point m_last{};
};

}  // namespace stepcast
