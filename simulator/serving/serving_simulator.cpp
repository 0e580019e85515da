#include "simulator/serving/serving_simulator.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <queue>

#include "simulator/serving/serving_metrics.h"

namespace stepcast::serving {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

enum class EventKind { engine, transfer, wake, arrival };

// Join-the-shortest-queue among engines of the allowed roles; ties go to the engine after the
// last chosen, so equal engines take turns.
class Router {
 public:
  explicit Router(std::vector<std::size_t> members) : m_members(std::move(members)) {}
  [[nodiscard]] bool empty() const { return m_members.empty(); }
  std::size_t pick(const std::vector<Engine>& engines) {
    assert(!m_members.empty());
    std::size_t best = m_members[(m_next) % m_members.size()];
    std::size_t best_load = engines[best].load();
    for (std::size_t k = 1; k < m_members.size(); ++k) {
      const std::size_t e = m_members[(m_next + k) % m_members.size()];
      if (engines[e].load() < best_load) {
        best = e;
        best_load = engines[e].load();
      }
    }
    m_next = (std::find(m_members.begin(), m_members.end(), best) - m_members.begin() + 1) % m_members.size();
    return best;
  }

 private:
  std::vector<std::size_t> m_members;
  std::size_t m_next = 0;
};

}  // namespace

ServingRun simulate_serving(const std::vector<RequestSpec>& stream, const ServingSetup& setup) {
  ServingRun run;
  const std::size_t n = stream.size();
  if (n == 0 || setup.engines.empty() || setup.cost == nullptr) return run;
  const int block = std::max(setup.scheduler.block_tokens, 1);

  run.requests.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    RequestState& r = run.requests[i];
    r.input = std::max(stream[i].input_len, 1);
    r.output = std::max(stream[i].output_len, 1);
    r.prompt = r.input;
    // Prefix-cache hits: whole blocks of the prompt, always leaving a token to compute.
    const int hit = static_cast<int>(setup.prefix_hit_rate * r.input) / block * block;
    r.cached = std::min(hit, (r.input - 1) / block * block);
    r.prefilled = r.cached;
    r.kv = r.cached;
    run.cached_prompt_tokens += r.cached;
    run.prompt_tokens += r.input;
  }
  // When each request arrives: the stream's times, or in a closed loop the first `concurrency`
  // at the start and the rest when released by a finish (kNever until then).
  const bool closed_loop = setup.closed_loop_concurrency > 0;
  std::vector<double> arrival_at(n);
  std::size_t released = n;
  if (closed_loop) {
    released = std::min(static_cast<std::size_t>(setup.closed_loop_concurrency), n);
    for (std::size_t i = 0; i < n; ++i) arrival_at[i] = i < released ? stream.front().arrival_s : kNever;
  } else {
    for (std::size_t i = 0; i < n; ++i) arrival_at[i] = stream[i].arrival_s;
  }
  for (std::size_t i = 0; i < n; ++i) run.requests[i].arrival = arrival_at[i];
  run.first_arrival = stream.front().arrival_s;
  // Closed loop: the window is known only at the end; the time series coarsens as it goes.
  run.last_arrival = closed_loop ? run.first_arrival : stream.back().arrival_s;

  std::vector<Engine> engines;
  engines.reserve(setup.engines.size());
  std::vector<std::size_t> entry_members;
  std::vector<std::size_t> decode_members;
  int total_blocks = 0;
  for (std::size_t e = 0; e < setup.engines.size(); ++e) {
    const EnginePlan& plan = setup.engines[e];
    engines.emplace_back(plan.role, setup.scheduler, plan.kv_blocks, *setup.cost);
    (plan.role == EngineRole::decode_only ? decode_members : entry_members).push_back(e);
    total_blocks += plan.kv_blocks;
  }
  Router entry(entry_members);
  Router decode(decode_members);

  using Transfer = std::pair<double, int>;
  std::priority_queue<Transfer, std::vector<Transfer>, std::greater<>> transfers;

  double window = run.last_arrival - run.first_arrival;
  const std::size_t points = std::max<std::size_t>(setup.max_time_series_points, 4);
  TimeSeriesRecorder series(run.first_arrival, window > 0.0 ? 2.0 * window / static_cast<double>(points) : 1e-3,
                            points);

  std::vector<int> finished;
  std::vector<int> handed_off;
  std::vector<std::size_t> dropped_seen(engines.size(), 0);
  std::size_t next_arrival = 0;
  std::size_t done = 0;
  double in_system = 0.0;
  double t = run.first_arrival;
  double in_system_integral = 0.0;
  double kv_integral = 0.0;

  const auto stream_ended = [&] { return next_arrival >= n && transfers.empty(); };
  const auto start_if_idle = [&](std::size_t e) {
    if (!engines[e].busy()) engines[e].try_start(t, run.requests, stream_ended());
  };
  // Closed loop: a request that left frees its client, whose next request arrives now.
  const auto release_next = [&] {
    if (!closed_loop || released >= n) return;
    arrival_at[released] = t;
    run.requests[released].arrival = t;
    ++released;
  };
  const auto collect_drops = [&](std::size_t e) {
    const auto& dropped = engines[e].dropped();
    for (; dropped_seen[e] < dropped.size(); ++dropped_seen[e]) {
      ++done;
      ++run.dropped;
      in_system -= 1.0;
      release_next();
    }
  };

  while (done < n) {
    // The next event; on a tie, engines first, then transfers, windows and arrivals.
    double t_next = next_arrival < n ? arrival_at[next_arrival] : kNever;
    EventKind kind = EventKind::arrival;
    std::size_t which = 0;
    for (std::size_t e = 0; e < engines.size(); ++e) {
      if (engines[e].busy()) continue;
      if (const auto wake = engines[e].wake_time(run.requests); wake && std::max(*wake, t) <= t_next) {
        t_next = std::max(*wake, t);
        kind = EventKind::wake;
        which = e;
      }
    }
    if (!transfers.empty() && transfers.top().first <= t_next) {
      t_next = transfers.top().first;
      kind = EventKind::transfer;
    }
    for (std::size_t e = 0; e < engines.size(); ++e) {
      if (engines[e].busy() && engines[e].busy_until() <= t_next) {
        t_next = engines[e].busy_until();
        kind = EventKind::engine;
        which = e;
      }
    }
    if (t_next == kNever) break;  // nothing can happen any more (cannot occur: see Engine)

    // The state held over [t, t_next).
    ServingSample state;
    int used = 0;
    for (const Engine& e : engines) {
      state.queued += static_cast<double>(e.waiting());
      state.running += static_cast<double>(e.running());
      used += e.used_blocks();
    }
    state.kv_occupancy = total_blocks > 0 ? static_cast<double>(used) / total_blocks : 0.0;
    run.peak_kv_occupancy = std::max(run.peak_kv_occupancy, state.kv_occupancy);
    series.advance(t_next, state);
    const double dt = t_next - t;
    in_system_integral += in_system * dt;
    kv_integral += state.kv_occupancy * dt;
    t = t_next;

    switch (kind) {
      case EventKind::engine: {
        finished.clear();
        handed_off.clear();
        engines[which].complete(run.requests, finished, handed_off);
        done += finished.size();
        in_system -= static_cast<double>(finished.size());
        for (std::size_t k = 0; k < finished.size(); ++k) release_next();
        for (const int id : handed_off) {
          const double transfer = setup.kv_transfer_s ? setup.kv_transfer_s(run.requests[static_cast<std::size_t>(id)].prompt) : 0.0;
          transfers.emplace(t + transfer, id);
        }
        start_if_idle(which);
        break;
      }
      case EventKind::transfer: {
        const int id = transfers.top().second;
        transfers.pop();
        const std::size_t e = decode.empty() ? entry.pick(engines) : decode.pick(engines);
        engines[e].enqueue(id);
        start_if_idle(e);
        break;
      }
      case EventKind::wake:
        start_if_idle(which);
        break;
      case EventKind::arrival: {
        // Every request arriving at this instant joins a queue before any engine plans its
        // iteration (a burst, or a closed loop's first clients, is batched together).
        double queued = state.queued;
        do {
          const std::size_t e = entry.pick(engines);
          engines[e].enqueue(static_cast<int>(next_arrival));
          ++next_arrival;
          in_system += 1.0;
          queued += 1.0;
        } while (next_arrival < n && arrival_at[next_arrival] <= t);
        if (next_arrival == n) run.queue_at_last_arrival = queued;
        for (std::size_t k = 0; k < engines.size(); ++k) start_if_idle(k);
        break;
      }
    }
    for (std::size_t e = 0; e < engines.size(); ++e) collect_drops(e);
  }

  run.end = t;
  if (closed_loop) {
    run.last_arrival = arrival_at[n - 1] == kNever ? run.first_arrival : arrival_at[n - 1];
    window = run.last_arrival - run.first_arrival;
  }
  const double span = run.end - run.first_arrival;
  if (span > 0.0) {
    run.mean_in_system = in_system_integral / span;
    run.mean_kv_occupancy = kv_integral / span;
  }
  run.offline = window <= 0.01 * span;
  // Capacity: each role's engines serve at their saturated rate; the slower role binds.
  double capacity = 0.0;
  bool measured = false;
  double saturated_time = 0.0;
  for (const EngineRole role : {EngineRole::mixed, EngineRole::prefill_only, EngineRole::decode_only}) {
    double rate_sum = 0.0;
    int measured_engines = 0;
    int role_engines = 0;
    for (const Engine& e : engines) {
      if (e.role() != role) continue;
      ++role_engines;
      saturated_time += e.counters().saturated_s;
      if (e.counters().saturated_s > 0.0) {
        rate_sum += e.counters().saturated_completions / e.counters().saturated_s;
        ++measured_engines;
      }
    }
    if (measured_engines == 0) continue;
    const double role_capacity = rate_sum / measured_engines * role_engines;
    capacity = measured ? std::min(capacity, role_capacity) : role_capacity;
    measured = true;
  }
  run.capacity_requests_per_s = capacity;
  run.saturated_share = window > 0.0 ? saturated_time / (static_cast<double>(engines.size()) * window) : 1.0;
  double busy = 0.0;
  double batch_seconds = 0.0;
  for (const Engine& e : engines) {
    busy += e.counters().busy_s;
    batch_seconds += e.counters().batch_seconds;
    run.preemptions += e.counters().preemptions;
    run.iterations += e.counters().iterations;
  }
  run.mean_batch = busy > 0.0 ? batch_seconds / busy : 0.0;
  run.time_series = series.samples();
  run.time_series_interval_s = series.interval();
  return run;
}

}  // namespace stepcast::serving
