#include "simulator/serving/engine.h"

#include <algorithm>
#include <cassert>

namespace stepcast::serving {

Engine::Engine(EngineRole role, const SchedulerConfig& config, int total_blocks, StepCostModel& cost)
    : m_role(role), m_config(config), m_cost(&cost), m_total_blocks(total_blocks) {
  m_config.max_batch = std::max(m_config.max_batch, 1);
  m_config.max_batch_tokens = std::max(m_config.max_batch_tokens, 1);
  m_config.block_tokens = std::max(m_config.block_tokens, 1);
}

void Engine::enqueue(int request) { m_waiting.push_back(request); }

bool Engine::try_start(double now, std::vector<RequestState>& requests, bool stream_ended) {
  if (m_busy) return false;
  m_decodes.clear();
  m_prefills.clear();
  m_extra_s = 0.0;
  const bool planned = m_config.policy == BatchScheduler::continuous ? plan_continuous(requests)
                                                                     : plan_batch(now, requests, stream_ended);
  if (!planned) return false;
  start(now, requests);
  return true;
}

void Engine::preempt_last(std::vector<RequestState>& requests) {
  assert(!m_running.empty());
  const int id = m_running.back();
  m_running.pop_back();
  RequestState& r = requests[static_cast<std::size_t>(id)];
  m_used_blocks -= r.blocks;
  ++r.preemptions;
  ++m_counters.preemptions;
  if (m_config.swap && r.prefilled >= r.prompt) {
    // Its blocks go to host memory now and come back when it resumes.
    m_extra_s += r.blocks * m_config.swap_seconds_per_block;
    r.swapped = true;
    m_swapped.push_front(id);
    return;
  }
  // Recompute: everything it has (input and the tokens generated so far) becomes its prompt.
  r.prompt = r.input + r.generated;
  r.prefilled = r.cached;
  r.kv = r.cached;
  r.blocks = 0;
  m_waiting.push_front(id);
}

bool Engine::schedule_prefill(std::vector<RequestState>& requests, int id, int& budget, bool whole_prompt_only) {
  RequestState& r = requests[static_cast<std::size_t>(id)];
  const int remaining = r.prompt - r.prefilled;
  if (remaining <= 0) return false;
  int chunk = std::min(remaining, budget);
  if (whole_prompt_only && remaining > budget) {
    // A prompt that does not fit what is left of the budget waits for the next iteration, unless
    // it could never fit: a prompt longer than the whole budget runs as the iteration's only one.
    if (!m_prefills.empty() || remaining <= m_config.max_batch_tokens) return false;
    chunk = remaining;
  }
  if (chunk <= 0) return false;
  const int free = m_total_blocks - m_used_blocks;
  int need = std::max(blocks_for(r, r.prefilled + chunk) - r.blocks, 0);  // 0 when reserved up front
  if (need > free) {
    if (whole_prompt_only) return false;
    // Chunked: prefill what the free blocks hold.
    chunk = (r.blocks + free) * m_config.block_tokens + r.cached - r.prefilled;
    chunk = std::min(chunk, remaining);
    if (chunk <= 0) return false;
    need = std::max(blocks_for(r, r.prefilled + chunk) - r.blocks, 0);
  }
  r.blocks += need;
  m_used_blocks += need;
  m_prefills.push_back({id, chunk});
  budget -= chunk;
  return true;
}

void Engine::admit_swapped(std::vector<RequestState>& requests, int& budget) {
  while (!m_swapped.empty() && static_cast<int>(m_running.size()) < m_config.max_batch && budget > 0) {
    const int id = m_swapped.front();
    RequestState& r = requests[static_cast<std::size_t>(id)];
    if (r.blocks > m_total_blocks - m_used_blocks) break;
    m_used_blocks += r.blocks;
    m_extra_s += r.blocks * m_config.swap_seconds_per_block;
    r.swapped = false;
    m_swapped.pop_front();
    m_running.push_back(id);
  }
}

bool Engine::plan_continuous(std::vector<RequestState>& requests) {
  const bool chunked = m_config.prefill == PrefillPacking::chunked;
  const bool prefill_first = m_config.prefill == PrefillPacking::prefill_first;
  int stuck_rounds = 0;
  for (;;) {
    m_decodes.clear();
    m_prefills.clear();
    int budget = m_config.max_batch_tokens;
    bool preempted = false;  // a decode of this round preempted a running request

    // Admission from the waiting queue (FCFS, no skipping). Requests that arrive already
    // prefilled (disaggregated decode) only need blocks for their cache.
    const auto admit = [&](bool whole_prompt_only) {
      while (!m_waiting.empty() && static_cast<int>(m_running.size()) < m_config.max_batch) {
        const int id = m_waiting.front();
        RequestState& r = requests[static_cast<std::size_t>(id)];
        if (blocks_for(r, sequence_bound(r)) > m_total_blocks) {
          // Its whole sequence can never fit the pool.
          r.dropped = true;
          m_dropped.push_back(id);
          m_waiting.pop_front();
          continue;
        }
        if (m_config.reserve_whole_sequence) {
          // Its whole sequence's blocks now, or it waits (and so does everyone behind it).
          const int need = blocks_for(r, sequence_bound(r)) - r.blocks;
          if (need > m_total_blocks - m_used_blocks) break;
          if (need > 0) {
            r.blocks += need;
            m_used_blocks += need;
          }
        }
        if (r.prefilled >= r.prompt) {
          const int need = blocks_for(r, r.kv) - r.blocks;
          if (need > m_total_blocks - m_used_blocks) break;
          r.blocks += need;
          m_used_blocks += need;
          m_waiting.pop_front();
          m_running.push_back(id);
          continue;
        }
        if (budget <= 0 || !schedule_prefill(requests, id, budget, whole_prompt_only)) break;
        m_waiting.pop_front();
        m_running.push_back(id);
      }
    };

    if (prefill_first) {
      // Prefill-first: an iteration of whole prompts whenever one can be admitted.
      admit(true);
      if (!m_prefills.empty()) return true;
    }

    // Decodes, in admission order; a decode that needs a block nobody can give preempts the
    // most recently admitted request (possibly itself).
    for (std::size_t i = 0; i < m_running.size() && budget > 0; ++i) {
      const int id = m_running[i];
      RequestState& r = requests[static_cast<std::size_t>(id)];
      if (r.prefilled < r.prompt) continue;
      const int need = std::max(blocks_for(r, r.kv + 1) - r.blocks, 0);
      bool self_preempted = false;
      while (need > m_total_blocks - m_used_blocks) {
        preempted = true;
        if (m_running.back() == id) {
          preempt_last(requests);
          self_preempted = true;
          break;
        }
        preempt_last(requests);
      }
      if (self_preempted) break;
      r.blocks += need;
      m_used_blocks += need;
      m_decodes.push_back(id);
      --budget;
    }

    // An iteration whose decodes had to preempt admits nobody new: the pool is full, and a
    // request admitted now would only be preempted by the next decode that needs a block (vLLM
    // V1's scheduler schedules waiting requests only when this step preempted none:
    // vllm/v1/core/sched/scheduler.py, `if not preempted_reqs`).
    if (!preempted) admit_swapped(requests, budget);
    if (chunked) {
      for (const int id : m_running) {
        if (budget <= 0) break;
        const RequestState& r = requests[static_cast<std::size_t>(id)];
        if (r.prefilled < r.prompt) schedule_prefill(requests, id, budget, false);
      }
      if (!preempted) admit(false);
    } else if (!prefill_first && !preempted) {
      // Whole prompts in what the decodes left of the budget.
      admit(true);
    }

    if (!m_decodes.empty() || !m_prefills.empty() || m_extra_s > 0.0) return true;
    if (m_running.empty()) {
      // Either nothing waits, or decodes preempted every running request this round: the pool is
      // empty now, so the head of the queue (which fits it, or was dropped) is admitted next round.
      if ((m_waiting.empty() && m_swapped.empty()) || ++stuck_rounds > 2) return false;
      continue;
    }
    // Every running request is a prefill stuck without blocks: free some by preemption.
    preempt_last(requests);
  }
}

bool Engine::plan_batch(double now, std::vector<RequestState>& requests, bool stream_ended) {
  if (m_batch_active) {
    m_decodes.assign(m_running.begin(), m_running.end());
    return !m_decodes.empty();
  }
  if (m_waiting.empty()) return false;
  const auto size = static_cast<int>(m_waiting.size());
  // A static batcher waits for a full batch; at the end of the stream the simulation flushes the
  // last, partial one. A dynamic batcher knows no future: its window bounds the wait.
  bool launch = size >= m_config.max_batch || (m_config.policy == BatchScheduler::static_batch && stream_ended);
  if (!launch && m_config.policy == BatchScheduler::dynamic) {
    launch = now >= requests[static_cast<std::size_t>(m_waiting.front())].arrival + m_config.batch_timeout_s;
  }
  if (!launch) return false;
  while (!m_waiting.empty() && static_cast<int>(m_running.size()) < m_config.max_batch) {
    const int id = m_waiting.front();
    RequestState& r = requests[static_cast<std::size_t>(id)];
    // A static batch reserves every request's whole input + output up front.
    const int need = blocks_for(r, r.input + r.output);
    if (need > m_total_blocks) {
      r.dropped = true;
      m_dropped.push_back(id);
      m_waiting.pop_front();
      continue;
    }
    if (need > m_total_blocks - m_used_blocks) break;
    r.blocks = need;
    m_used_blocks += need;
    m_waiting.pop_front();
    m_running.push_back(id);
    m_prefills.push_back({id, r.prompt - r.prefilled});
  }
  if (m_prefills.empty()) return false;
  m_batch_active = true;
  m_batch_prefilled = false;
  return true;
}

void Engine::start(double now, std::vector<RequestState>& requests) {
  StepWork work;
  for (const int id : m_decodes) {
    const RequestState& r = requests[static_cast<std::size_t>(id)];
    work.decode_sequences += 1.0;
    work.decode_context += r.kv + 1.0;
  }
  work.tokens = work.decode_sequences;
  work.logit_rows = work.decode_sequences;
  for (const Chunk& c : m_prefills) {
    const RequestState& r = requests[static_cast<std::size_t>(c.request)];
    work.prefill.add_chunk(c.tokens, r.prefilled);
    work.tokens += c.tokens;
    if (r.prefilled + c.tokens >= r.prompt) work.logit_rows += 1.0;
  }
  const double dt = m_cost->time(work).value() + m_extra_s;
  m_busy = true;
  m_start = now;
  m_end = now + dt;
  ++m_counters.iterations;
  m_counters.busy_s += dt;
  m_saturated = !m_waiting.empty() || !m_swapped.empty();
  if (m_saturated) m_counters.saturated_s += dt;
  m_counters.batch_seconds += static_cast<double>(m_decodes.size() + m_prefills.size()) * dt;
}

void Engine::complete(std::vector<RequestState>& requests, std::vector<int>& finished, std::vector<int>& handed_off) {
  assert(m_busy);
  m_busy = false;
  const std::size_t before = finished.size() + handed_off.size();
  apply_iteration(requests, finished, handed_off);
  if (m_saturated) m_counters.saturated_completions += static_cast<int>(finished.size() + handed_off.size() - before);
}

void Engine::apply_iteration(std::vector<RequestState>& requests, std::vector<int>& finished,
                             std::vector<int>& handed_off) {
  const double now = m_end;

  if (m_config.policy != BatchScheduler::continuous) {
    if (!m_batch_prefilled) {
      for (const Chunk& c : m_prefills) {
        RequestState& r = requests[static_cast<std::size_t>(c.request)];
        r.prefilled = r.prompt;
        r.kv = r.prompt;
        r.generated = 1;
        r.first_token = now;
      }
      m_batch_prefilled = true;
    } else {
      for (const int id : m_decodes) {
        RequestState& r = requests[static_cast<std::size_t>(id)];
        if (r.generated < r.output) {
          ++r.kv;
          ++r.generated;
        }
      }
    }
    const bool done = std::all_of(m_running.begin(), m_running.end(), [&](int id) {
      return requests[static_cast<std::size_t>(id)].generated >= requests[static_cast<std::size_t>(id)].output;
    });
    if (done) {
      for (const int id : m_running) {
        RequestState& r = requests[static_cast<std::size_t>(id)];
        r.finish = now;
        m_used_blocks -= r.blocks;
        r.blocks = 0;
        finished.push_back(id);
      }
      m_running.clear();
      m_batch_active = false;
    }
    return;
  }

  for (const int id : m_decodes) {
    RequestState& r = requests[static_cast<std::size_t>(id)];
    ++r.kv;
    ++r.generated;
    if (r.generated >= r.output) r.finish = now;
  }
  for (const Chunk& c : m_prefills) {
    RequestState& r = requests[static_cast<std::size_t>(c.request)];
    r.prefilled += c.tokens;
    r.kv = r.prefilled;
    if (r.prefilled < r.prompt) continue;
    ++r.generated;
    if (r.first_token < 0.0) r.first_token = now;
    if (r.generated >= r.output) r.finish = now;
  }
  // Remove what leaves the batch: finished requests, and prefilled ones on a prefill-only engine.
  const auto leaves = [&](int id) {
    RequestState& r = requests[static_cast<std::size_t>(id)];
    const bool done = r.finish >= 0.0;
    const bool handoff = !done && m_role == EngineRole::prefill_only && r.prefilled >= r.prompt;
    if (!done && !handoff) return false;
    m_used_blocks -= r.blocks;
    r.blocks = 0;
    (done ? finished : handed_off).push_back(id);
    return true;
  };
  m_running.erase(std::remove_if(m_running.begin(), m_running.end(), leaves), m_running.end());
}

std::optional<double> Engine::wake_time(const std::vector<RequestState>& requests) const {
  if (m_busy || m_batch_active || m_config.policy != BatchScheduler::dynamic || m_waiting.empty()) return std::nullopt;
  return requests[static_cast<std::size_t>(m_waiting.front())].arrival + m_config.batch_timeout_s;
}

}  // namespace stepcast::serving
