#include "simulator/pipeline_schedule.h"

#include <algorithm>
#include <cassert>

namespace stepcast {
void PipelineSimulator::build_order(const PipelineSpec& spec, Order& order) {
  const int p = spec.stages;
  const int v = spec.chunks;
  const PipelineSchedule schedule = spec.schedule;
  const int mbc = microbatches_per_chunk(schedule, spec.microbatches);
  const auto per_kind = static_cast<std::uint32_t>(p * v * mbc);  // slots of one pass kind
  const std::uint32_t none = 3 * per_kind;                         // the always-zero slot
  order.schedule = schedule;
  order.stages = p;
  order.chunks = v;
  order.microbatches = spec.microbatches;
  order.extra_warmup = spec.extra_warmup;
  order.steps.clear();

  std::vector<PipelinePass> passes;
  std::vector<int> begin;
  build_stage_orders(schedule, p, v, spec.microbatches, passes, begin, spec.extra_warmup);
  order.steps.reserve(passes.size());
  std::vector<int> upstream(static_cast<std::size_t>(p * v));
  std::vector<int> downstream(static_cast<std::size_t>(p * v));
  for (int vs = 0; vs < p * v; ++vs) {
    upstream[static_cast<std::size_t>(vs)] = upstream_virtual_stage(schedule, p, v, vs);
    downstream[static_cast<std::size_t>(vs)] = downstream_virtual_stage(schedule, p, v, vs);
  }
  // List scheduling without times: a stage advances while each next pass's input is done.
  std::vector<char> done(static_cast<std::size_t>(none), 0);
  std::vector<int> position(begin.begin(), begin.end() - 1);
  long remaining = static_cast<long>(passes.size());
  bool upward = true;
  auto advance = [&](int s) {
    int& pos = position[static_cast<std::size_t>(s)];
    const int start = pos;
    const int stop = begin[static_cast<std::size_t>(s) + 1];
    while (pos < stop) {
      const PipelinePass pass = passes[static_cast<std::size_t>(pos)];
      const int vs = pass.chunk * p + s;
      const auto slot = static_cast<std::uint32_t>(vs * mbc + pass.microbatch);
      Step step{};
      step.stage = static_cast<std::uint16_t>(s);
      step.duration = static_cast<std::uint16_t>(vs * 4 + static_cast<int>(pass.kind));
      step.transfer = 0;
      step.also = none;
      step.also_transfer = 0;
      if (pass.paired_with_next) {
        // The pair's backward input: F waits for it too.
        const PipelinePass next = passes[static_cast<std::size_t>(pos) + 1];
        const int nvs = next.chunk * p + s;
        const auto nslot = static_cast<std::uint32_t>(nvs * mbc + next.microbatch);
        const int d = downstream[static_cast<std::size_t>(nvs)];
        step.also = d >= 0 ? per_kind + static_cast<std::uint32_t>(d * mbc + next.microbatch) : nslot;
        step.also_transfer = d >= 0 && d % p != s ? 1 : 0;
      }
      if (pass.kind == PassKind::forward) {
        step.self = slot;
        const int u = upstream[static_cast<std::size_t>(vs)];
        step.input = u >= 0 ? static_cast<std::uint32_t>(u * mbc + pass.microbatch) : none;
        step.transfer = u >= 0 && u % p != s ? 1 : 0;
      } else if (pass.kind == PassKind::backward_weight) {
        step.self = 2 * per_kind + slot;
        step.input = per_kind + slot;  // its own B_input, earlier on this stage
      } else {
        step.self = per_kind + slot;
        const int d = downstream[static_cast<std::size_t>(vs)];
        step.input = d >= 0 ? per_kind + static_cast<std::uint32_t>(d * mbc + pass.microbatch) : slot;
        step.transfer = d >= 0 && d % p != s ? 1 : 0;
      }
      if ((step.input != none && !done[step.input]) || (step.also != none && !done[step.also])) break;
      done[step.self] = 1;
      order.steps.push_back(step);
      ++pos;
    }
    remaining -= pos - start;
    return pos > start;
  };
  while (remaining > 0) {
    bool progressed = false;
    if (upward) {
      for (int s = 0; s < p; ++s) progressed = advance(s) || progressed;
    } else {
      for (int s = p - 1; s >= 0; --s) progressed = advance(s) || progressed;
    }
    upward = !upward;
    assert(progressed);  // every order of pipeline_schedule_orders.h is deadlock-free
    if (!progressed) break;
  }
}

namespace {

// Adds the held counts `held` to a stage's Pareto-maximal candidates (flattened, `width` per
// candidate): a count some candidate dominates or equals changes nothing; otherwise it joins and
// drops those it dominates.
void offer_held(const std::vector<int>& held, std::vector<int>& candidates, std::vector<int>& kept) {
  const std::size_t width = held.size();
  for (std::size_t k = 0; k + width <= candidates.size(); k += width) {
    bool le = true;
    for (std::size_t c = 0; c < width; ++c) le = le && held[c] <= candidates[k + c];
    if (le) return;
  }
  kept.clear();
  for (std::size_t k = 0; k + width <= candidates.size(); k += width) {
    bool ge = true;
    for (std::size_t c = 0; c < width; ++c) ge = ge && held[c] >= candidates[k + c];
    if (!ge) kept.insert(kept.end(), candidates.begin() + static_cast<long>(k), candidates.begin() + static_cast<long>(k + width));
  }
  kept.insert(kept.end(), held.begin(), held.end());
  candidates.swap(kept);
}

// Megatron-Core's combined 1F1B (extra_warmup > 0) runs each steady-state forward merged with the
// backward it is paired with, layer by layer: forward layer i beside backward layer n - 1 - i
// (megatron/core/models/common/model_chunk_schedule_plan.py, TransformerModelChunkSchedulePlan.run;
// the backward layer's state is released after each pair). The forward fills as the backward
// frees, so the held bytes move linearly from the state before the pair to the state after it, and
// the peak is one of the two, not the state after the forward alone. (One layer's activations on
// top, the pair in progress, are left out, as the one-layer working sets are elsewhere.)
bool merged_pairs(const PipelineSpec& spec) {
  return spec.extra_warmup > 0 &&
         (spec.schedule == PipelineSchedule::one_f_one_b || spec.schedule == PipelineSchedule::gpipe);
}

// Walks every stage's passes in order: the reference, and the way for the schedules the periodic
// form below does not cover. A micro-batch's activations are held from its F to the end of its
// backward: the whole B, or its W when the backward is split (B_input frees nothing the W still
// needs to read: the GEMM inputs; Qi et al. 2023 count M_B per micro-batch until W). Merged pairs
// (merged_pairs()) are counted after the pair's backward.
void hold_pattern_by_walking(const PipelineSpec& spec, std::vector<int>& peak_in_flight,
                             std::vector<std::vector<int>>& held_candidates) {
  const int p = spec.stages;
  const int v = spec.chunks;
  std::vector<PipelinePass> passes;
  std::vector<int> begin;
  build_stage_orders(spec.schedule, p, v, spec.microbatches, passes, begin, spec.extra_warmup);
  // Activations held: micro-batches per chunk after each forward; keep the Pareto-maximal counts.
  peak_in_flight.assign(static_cast<std::size_t>(p), 0);
  held_candidates.assign(static_cast<std::size_t>(p), {});
  std::vector<int> held(static_cast<std::size_t>(v));
  std::vector<int> kept;
  for (int s = 0; s < p; ++s) {
    std::fill(held.begin(), held.end(), 0);
    int total = 0;
    auto& candidates = held_candidates[static_cast<std::size_t>(s)];
    const int end = begin[static_cast<std::size_t>(s) + 1];
    const bool merged = merged_pairs(spec);
    for (int i = begin[static_cast<std::size_t>(s)]; i < end; ++i) {
      const PipelinePass pass = passes[static_cast<std::size_t>(i)];
      const int delta = pass.kind == PassKind::forward ? 1 : pass.kind == PassKind::backward_input ? 0 : -1;
      held[static_cast<std::size_t>(pass.chunk)] += delta;
      total += delta;
      if (pass.kind != PassKind::forward) continue;
      if (merged && i + 1 < end && passes[static_cast<std::size_t>(i) + 1].kind == PassKind::backward) {
        // A steady-state pair: its backward runs merged with this forward.
        const PipelinePass paired = passes[static_cast<std::size_t>(++i)];
        held[static_cast<std::size_t>(paired.chunk)] -= 1;
        total -= 1;
      }
      peak_in_flight[static_cast<std::size_t>(s)] = std::max(peak_in_flight[static_cast<std::size_t>(s)], total);
      offer_held(held, candidates, kept);
    }
  }
}

// Forward passes of chunk c among the first n of a stage's forward order (groups of p micro-batches
// go through every chunk in turn: pass k belongs to chunk (k / p) mod v; needs m % p == 0 when v > 1).
int forwards_of_chunk(int c, int n, int p, int v) {
  const int q = n / (p * v);
  const int r = n % (p * v);
  return q * p + std::clamp(r - c * p, 0, p);
}

}  // namespace

void PipelineSimulator::build_hold_pattern(const PipelineSpec& spec, HoldPattern& pattern) {
  const int p = spec.stages;
  const int v = spec.chunks;
  const int m = spec.microbatches;
  pattern.schedule = spec.schedule;
  pattern.stages = p;
  pattern.chunks = v;
  pattern.microbatches = m;
  pattern.extra_warmup = spec.extra_warmup;
  const bool periodic = spec.schedule == PipelineSchedule::gpipe || spec.schedule == PipelineSchedule::one_f_one_b;
  if (!periodic || (v > 1 && m % p != 0)) {
    hold_pattern_by_walking(spec, pattern.peak_in_flight, pattern.held_candidates);
    return;
  }
  // The same states as walking the orders of stage_orders(), found in O(p v) per stage: a stage
  // holds the most after a forward pass. During warm-up (W forwards) the counts only grow, so
  // the state after the first steady forward dominates them; in the steady phase forward W + i
  // follows backward i - 1, and both orders advance by one group of p passes through each chunk
  // every p v steps, so the counts repeat with period p v. Backwards visit the chunks in reverse.
  const int total = m * v;
  pattern.peak_in_flight.assign(static_cast<std::size_t>(p), 0);
  pattern.held_candidates.assign(static_cast<std::size_t>(p), {});
  std::vector<int> held(static_cast<std::size_t>(v));
  std::vector<int> kept;
  for (int s = 0; s < p; ++s) {
    const int warmup = one_f_one_b_warmup(spec.schedule, p, v, m, s, spec.extra_warmup);
    auto& candidates = pattern.held_candidates[static_cast<std::size_t>(s)];
    int& peak = pattern.peak_in_flight[static_cast<std::size_t>(s)];
    const int steady = total - warmup;
    const int period = v == 1 ? 1 : p * v;  // one chunk: the count stays warmup + 1
    // Merged pairs (merged_pairs()): the states after each pair, and the end of the warm-up.
    const int paired = merged_pairs(spec) && steady > 0 ? 1 : 0;
    const int states = steady == 0 ? 1 : std::min(steady, period) + paired;
    for (int i = 0; i < states; ++i) {
      // After forward warmup + i (or, with no steady phase, after the last forward); merged, after
      // the pair's backward, state 0 being the end of the warm-up.
      const int forwards = steady == 0 ? total : warmup + i + 1 - paired;
      const int backwards = steady == 0 ? 0 : i;
      int sum = 0;
      for (int c = 0; c < v; ++c) {
        held[static_cast<std::size_t>(c)] = forwards_of_chunk(c, forwards, p, v) - forwards_of_chunk(v - 1 - c, backwards, p, v);
        sum += held[static_cast<std::size_t>(c)];
      }
      peak = std::max(peak, sum);
      offer_held(held, candidates, kept);
    }
  }
}

std::vector<Bytes> detail::peak_activations_by_walking(const PipelineSpec& spec) {
  std::vector<int> peak_in_flight;
  std::vector<std::vector<int>> held_candidates;
  hold_pattern_by_walking(spec, peak_in_flight, held_candidates);
  std::vector<Bytes> out(static_cast<std::size_t>(spec.stages));
  for (int s = 0; s < spec.stages; ++s) {
    double peak = 0.0;
    const auto& candidates = held_candidates[static_cast<std::size_t>(s)];
    for (std::size_t k = 0; k < candidates.size(); k += static_cast<std::size_t>(spec.chunks)) {
      double bytes = 0.0;
      for (int c = 0; c < spec.chunks; ++c) {
        bytes += candidates[k + static_cast<std::size_t>(c)] * spec.activations[static_cast<std::size_t>(c * spec.stages + s)].value();
      }
      peak = std::max(peak, bytes);
    }
    out[static_cast<std::size_t>(s)] = Bytes(peak);
  }
  return out;
}

const PipelineSimulator::HoldPattern& PipelineSimulator::hold_pattern_for(const PipelineSpec& spec) {
  const std::uint64_t key = (static_cast<std::uint64_t>(spec.schedule) << 56) ^
                            (static_cast<std::uint64_t>(spec.stages) << 40) ^
                            (static_cast<std::uint64_t>(spec.chunks) << 24) ^ static_cast<std::uint64_t>(spec.microbatches) ^
                            (static_cast<std::uint64_t>(spec.extra_warmup) << 61);
  const auto it = m_holds.find(key);
  if (it != m_holds.end() && it->second.schedule == spec.schedule && it->second.stages == spec.stages &&
      it->second.chunks == spec.chunks && it->second.microbatches == spec.microbatches &&
      it->second.extra_warmup == spec.extra_warmup) {
    return it->second;
  }
  constexpr std::size_t kCachedShapes = 8192;  // each holds a few counts per stage
  if (m_holds.size() >= kCachedShapes) m_holds.clear();
  HoldPattern& slot = m_holds[key];
  build_hold_pattern(spec, slot);
  return slot;
}

void PipelineSimulator::fill_peak_activations(const HoldPattern& pattern, const PipelineSpec& spec,
                                              std::vector<Bytes>& out) {
  const int p = spec.stages;
  const int v = spec.chunks;
  out.resize(static_cast<std::size_t>(p));
  for (std::size_t s = 0; s < static_cast<std::size_t>(p); ++s) {
    double peak = 0.0;
    const auto& candidates = pattern.held_candidates[s];
    for (std::size_t k = 0; k + static_cast<std::size_t>(v) <= candidates.size(); k += static_cast<std::size_t>(v)) {
      double bytes = 0.0;
      for (int c = 0; c < v; ++c) {
        const std::size_t vs = static_cast<std::size_t>(c * p) + s;
        const double per_microbatch = spec.activations.empty() ? 0.0 : spec.activations[vs].value();
        bytes += candidates[k + static_cast<std::size_t>(c)] * per_microbatch;
      }
      peak = std::max(peak, bytes);
    }
    out[s] = Bytes(peak);
  }
}

std::span<const Bytes> PipelineSimulator::peak_activations(const PipelineSpec& spec) {
  fill_peak_activations(hold_pattern_for(spec), spec, m_peaks);
  return m_peaks;
}

Seconds PipelineSimulator::makespan_lower_bound(const PipelineSpec& spec) {
  const int p = spec.stages;
  const int v = spec.chunks;
  const int m = spec.microbatches;
  const double mbc = microbatches_per_chunk(spec.schedule, m);
  const std::size_t virtual_stages = static_cast<std::size_t>(p * v);
  double f_min = spec.forward[0].value();
  double b_min = spec.backward[0].value();
  double busiest = 0.0;
  for (std::size_t vs = 0; vs < virtual_stages; ++vs) {
    f_min = std::min(f_min, spec.forward[vs].value());
    b_min = std::min(b_min, spec.backward[vs].value());
  }
  for (int s = 0; s < p; ++s) {
    double busy = 0.0;
    for (int c = 0; c < v; ++c) {
      const std::size_t vs = static_cast<std::size_t>(c * p + s);
      busy += mbc * (spec.forward[vs].value() + spec.backward[vs].value());
    }
    busiest = std::max(busiest, busy);
  }
  double bound = busiest;
  // The closed form is the makespan of the plain orders; with extra warm-up forwards only the
  // busy-stage bound is claimed.
  if ((spec.schedule == PipelineSchedule::gpipe || spec.schedule == PipelineSchedule::one_f_one_b) &&
      spec.extra_warmup == 0) {
    const Seconds identical = closed_form_makespan(spec.schedule, p, v, m, Seconds(f_min * v), Seconds(b_min * v));
    bound = std::max(bound, identical.value());
  }
  return Seconds(bound);
}

const PipelineSimulator::Order& PipelineSimulator::order_for(const PipelineSpec& spec) {
  for (const Order& o : m_orders) {
    if (o.schedule == spec.schedule && o.stages == spec.stages && o.chunks == spec.chunks &&
        o.microbatches == spec.microbatches && o.extra_warmup == spec.extra_warmup) {
      return o;
    }
  }
  constexpr std::size_t kCachedShapes = 16;
  if (m_orders.size() < kCachedShapes) {
    m_orders.emplace_back();
    build_order(spec, m_orders.back());
    return m_orders.back();
  }
  Order& slot = m_orders[m_next_evict];
  m_next_evict = (m_next_evict + 1) % kCachedShapes;
  build_order(spec, slot);
  return slot;
}

const PipelineResult& PipelineSimulator::run(const PipelineSpec& spec) {
  const int p = spec.stages;
  const int v = spec.chunks;
  const int mbc = microbatches_per_chunk(spec.schedule, spec.microbatches);
  const int virtual_stages = p * v;
  assert(static_cast<int>(spec.forward.size()) == virtual_stages);
  assert(static_cast<int>(spec.backward.size()) == virtual_stages);
  assert(spec.weight_gradient.empty() || static_cast<int>(spec.weight_gradient.size()) == virtual_stages);
  assert(spec.activations.empty() || static_cast<int>(spec.activations.size()) == virtual_stages);
  const Order& order = order_for(spec);

  const auto vs_count = static_cast<std::size_t>(virtual_stages);
  const auto stage_count = static_cast<std::size_t>(p);
  const std::size_t per_kind = vs_count * static_cast<std::size_t>(mbc);
  m_end.assign(3 * per_kind + 1, 0.0);
  m_duration.resize(4 * vs_count);
  for (std::size_t i = 0; i < vs_count; ++i) {
    const double w = spec.weight_gradient.empty() ? 0.0 : std::min(spec.weight_gradient[i], spec.backward[i]).value();
    m_duration[4 * i + static_cast<std::size_t>(PassKind::forward)] = spec.forward[i].value();
    m_duration[4 * i + static_cast<std::size_t>(PassKind::backward)] = spec.backward[i].value();
    m_duration[4 * i + static_cast<std::size_t>(PassKind::backward_input)] = spec.backward[i].value() - w;
    m_duration[4 * i + static_cast<std::size_t>(PassKind::backward_weight)] = w;
  }
  m_clock.assign(stage_count, 0.0);
  m_wait.assign(stage_count, 0.0);
  PipelineResult& r = m_result;
  r.last_backward_start.assign(vs_count, Seconds(0.0));
  r.last_backward_end.assign(vs_count, Seconds(0.0));
  r.timeline.clear();

  // The sweep: every pass starts when its stage is free and its input has arrived.
  const double p2p = p > 1 ? spec.p2p.value() : 0.0;
  double* end = m_end.data();
  const double* duration = m_duration.data();
  double* clock = m_clock.data();
  double* wait = m_wait.data();
  for (const Step& step : order.steps) {
    const std::size_t s = step.stage;
    const double transfer = p2p * step.transfer;
    const double also_ready = end[step.also] + p2p * step.also_transfer;
    const double input_ready = end[step.input] + transfer;
    const double ready = input_ready > also_ready ? input_ready : also_ready;
    const double now = clock[s];
    const double start = now > ready ? now : ready;
    const double waited = start - now;
    wait[s] += waited < transfer ? waited : transfer;
    const double finish = start + duration[step.duration];
    end[step.self] = finish;
    clock[s] = finish;
  }

  // Each virtual stage's final gradient pass (a whole B or a W): the one that ends last.
  for (const Step& step : order.steps) {
    const auto kind = static_cast<PassKind>(step.duration & 3);
    if (kind != PassKind::backward && kind != PassKind::backward_weight) continue;
    const auto vs = static_cast<std::size_t>(step.duration >> 2);
    const double finish = end[step.self];
    if (finish >= r.last_backward_end[vs].value()) {
      r.last_backward_end[vs] = Seconds(finish);
      r.last_backward_start[vs] = Seconds(finish - duration[step.duration]);
    }
  }
  if (spec.record_timeline) {
    r.timeline.reserve(order.steps.size());
    for (const Step& step : order.steps) {
      const auto kind = static_cast<PassKind>(step.duration & 3);
      const std::uint32_t slot = step.self % static_cast<std::uint32_t>(per_kind);
      TimelineEntry e;
      switch (kind) {
        case PassKind::forward: e.kind = TimelineEntry::Kind::forward; break;
        case PassKind::backward: e.kind = TimelineEntry::Kind::backward; break;
        case PassKind::backward_input: e.kind = TimelineEntry::Kind::backward_input; break;
        case PassKind::backward_weight: e.kind = TimelineEntry::Kind::backward_weight; break;
      }
      e.stage = step.stage;
      e.chunk = static_cast<int>(slot / static_cast<std::uint32_t>(mbc)) / p;
      e.microbatch = static_cast<int>(slot % static_cast<std::uint32_t>(mbc));
      e.end = Seconds(end[step.self]);
      e.start = e.end - Seconds(duration[step.duration]);
      r.timeline.push_back(e);
    }
  }

  r.first_forward_end.assign(stage_count, Seconds(-1.0));
  r.first_start.assign(stage_count, Seconds(0.0));
  r.chunk_first_forward_start.assign(vs_count, Seconds(-1.0));
  r.chunk_first_forward_end.assign(vs_count, Seconds(-1.0));
  for (const Step& step : order.steps) {
    Seconds& first = r.first_forward_end[step.stage];
    if (first.value() < 0.0) {
      first = Seconds(end[step.self]);
      r.first_start[step.stage] = first - Seconds(duration[step.duration]);
    }
    if (static_cast<PassKind>(step.duration & 3) != PassKind::forward) continue;
    const auto vs = static_cast<std::size_t>(step.duration >> 2);
    const double start = end[step.self] - duration[step.duration];
    if (r.chunk_first_forward_start[vs].value() < 0.0 || start < r.chunk_first_forward_start[vs].value()) {
      r.chunk_first_forward_start[vs] = Seconds(start);
      r.chunk_first_forward_end[vs] = Seconds(end[step.self]);
    }
  }
  r.busy.resize(stage_count);
  r.finish.resize(stage_count);
  r.p2p_wait.resize(stage_count);
  r.peak_activations.resize(stage_count);
  const HoldPattern& hold = hold_pattern_for(spec);
  r.peak_in_flight = hold.peak_in_flight;
  fill_peak_activations(hold, spec, r.peak_activations);
  r.makespan = Seconds(0.0);
  for (std::size_t s = 0; s < stage_count; ++s) {
    // Every stage runs each of its chunks' forward and backward once per micro-batch of the chunk.
    double busy = 0.0;
    for (int c = 0; c < v; ++c) {
      const std::size_t vs = static_cast<std::size_t>(c * p) + s;
      busy += mbc * (m_duration[4 * vs] + m_duration[4 * vs + 1]);
    }
    r.busy[s] = Seconds(busy);
    r.finish[s] = Seconds(clock[s]);
    r.p2p_wait[s] = Seconds(wait[s]);
    r.makespan = max(r.makespan, r.finish[s]);
  }
  return r;
}

Seconds closed_form_makespan(PipelineSchedule schedule, int stages, int chunks, int microbatches, Seconds forward,
                             Seconds backward) {
  const double v = schedule == PipelineSchedule::gpipe ? 1.0 : chunks;
  return (forward + backward) * (microbatches + (stages - 1) / v);
}

double closed_form_bubble_fraction(PipelineSchedule schedule, int stages, int chunks, int microbatches) {
  const double v = schedule == PipelineSchedule::gpipe ? 1.0 : chunks;
  return (stages - 1) / (v * microbatches);
}

Seconds closed_form_bubble(PipelineSchedule schedule, int stages, int chunks, Seconds forward, Seconds backward,
                           Seconds weight_gradient) {
  const double p = stages;
  const double f = forward.value();
  const double b = backward.value();
  const double w = weight_gradient.value();
  switch (schedule) {
    case PipelineSchedule::gpipe:
      return Seconds((p - 1.0) * (f + b));
    case PipelineSchedule::one_f_one_b:
      return Seconds((p - 1.0) * (f + b) / std::max(chunks, 1));
    case PipelineSchedule::zb_h1:
      return Seconds((p - 1.0) * (f + b - 2.0 * w));
    case PipelineSchedule::zb_h2:
      return Seconds(std::max(0.0, (p - 1.0) * (f + b - 3.0 * w)));
    case PipelineSchedule::dualpipe:
      return Seconds((p / 2.0 - 1.0) * ((f + b) + b - 3.0 * w));
  }
  return Seconds(0.0);
}

}  // namespace stepcast
