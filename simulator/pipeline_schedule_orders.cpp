#include "simulator/pipeline_schedule_orders.h"

#include <algorithm>
#include <cassert>
#include <deque>

namespace stepcast {
namespace {

bool is_dualpipe(PipelineSchedule s) { return s == PipelineSchedule::dualpipe; }

// GPipe, 1F1B and interleaved 1F1B (whole backward passes).
void one_f_one_b_orders(PipelineSchedule schedule, int p, int v, int m, int extra_warmup,
                        std::vector<PipelinePass>& passes, std::vector<int>& begin) {
  const int total = m * v;
  std::vector<PipelinePass> forward;
  std::vector<PipelinePass> backward;
  forward.reserve(static_cast<std::size_t>(total));
  backward.reserve(static_cast<std::size_t>(total));
  // Groups of p micro-batches go through every chunk before the next group starts (Megatron's
  // interleaved order); with one chunk this is simply micro-batch order.
  for (int first = 0; first < m; first += p) {
    const int last = std::min(first + p, m);
    for (int c = 0; c < v; ++c) {
      for (int mb = first; mb < last; ++mb) forward.push_back({mb, c, PassKind::forward});
    }
    for (int c = v - 1; c >= 0; --c) {
      for (int mb = first; mb < last; ++mb) backward.push_back({mb, c, PassKind::backward});
    }
  }
  for (int s = 0; s < p; ++s) {
    begin.push_back(static_cast<int>(passes.size()));
    const int warmup = one_f_one_b_warmup(schedule, p, v, m, s, extra_warmup);
    for (int i = 0; i < warmup; ++i) passes.push_back(forward[static_cast<std::size_t>(i)]);
    for (int i = 0; i < total - warmup; ++i) {
      passes.push_back(forward[static_cast<std::size_t>(warmup + i)]);
      passes.push_back(backward[static_cast<std::size_t>(i)]);
    }
    for (int i = total - warmup; i < total; ++i) passes.push_back(backward[static_cast<std::size_t>(i)]);
  }
}

// ZB-H1 (k = 1) and ZB-H2 (k = 2): slot x runs F_x, B_input_{x - k(p-1-s)}, W_{x - k(p-1)}.
void zero_bubble_orders(int k, int p, int m, std::vector<PipelinePass>& passes, std::vector<int>& begin) {
  for (int s = 0; s < p; ++s) {
    begin.push_back(static_cast<int>(passes.size()));
    const int input_lag = k * (p - 1 - s);
    const int weight_lag = k * (p - 1);
    for (int x = 0; x < m + weight_lag; ++x) {
      if (x < m) passes.push_back({x, 0, PassKind::forward});
      const int b = x - input_lag;
      if (b >= 0 && b < m) passes.push_back({b, 0, PassKind::backward_input});
      const int w = x - weight_lag;
      if (w >= 0 && w < m) passes.push_back({w, 0, PassKind::backward_weight});
    }
  }
}

// deepseek-ai/DualPipe DualPipe.step() for every rank (see the header).
void dualpipe_orders(int p, int m, std::vector<PipelinePass>& passes, std::vector<int>& begin) {
  const int half_ranks = p / 2;
  const int half_chunks = m / 2;
  for (int s = 0; s < p; ++s) {
    begin.push_back(static_cast<int>(passes.size()));
    const int h = std::min(s, p - 1 - s);
    const int second_half = s >= half_ranks ? 1 : 0;
    const bool middle = s == half_ranks - 1 || s == half_ranks;
    int next_forward[2] = {0, 0};
    int next_backward[2] = {0, 0};
    std::deque<PipelinePass> deferred;  // weight gradients waiting for a W pass
    auto forward = [&](int phase, bool paired = false) {
      const int chunk = phase ^ second_half;
      passes.push_back({next_forward[chunk]++, chunk, PassKind::forward, paired});
    };
    auto backward = [&](int phase, bool split) {
      const int chunk = phase ^ second_half;
      const int mb = next_backward[chunk]++;
      passes.push_back({mb, chunk, split ? PassKind::backward_input : PassKind::backward});
      if (split) deferred.push_back({mb, chunk, PassKind::backward_weight});
    };
    auto weight = [&] {
      assert(!deferred.empty());
      passes.push_back(deferred.front());
      deferred.pop_front();
    };
    for (int i = 0; i < (half_ranks - h - 1) * 2; ++i) forward(0);  // 1: nF0
    for (int i = 0; i < h + 1; ++i) {                               // 2: nF0F1
      forward(0);
      forward(1);
    }
    for (int i = 0; i < half_ranks - h - 1; ++i) {  // 3: nB1W1F1 (zero bubble)
      backward(1, true);
      weight();
      forward(1);
    }
    for (int i = 0; i < half_chunks - p + h + 1; ++i) {  // 4: nF0B1F1B0
      forward(0, !(i == 0 && middle));
      backward(1, false);
      forward(1, true);
      backward(0, false);
    }
    for (int i = 0; i < half_ranks - h - 1; ++i) {  // 5: nB1F1B0
      backward(1, false);
      forward(1, true);
      backward(0, false);
    }
    bool split = false;  // 6: nB1B0, the later half split
    for (int i = 0; i < h + 1; ++i) {
      if (i == (h + 1) / 2 && h % 2 == 1) split = true;
      backward(1, split);
      if (i == (h + 1) / 2 && h % 2 == 0) split = true;
      backward(0, split);
    }
    for (int i = 0; i < half_ranks - h - 1; ++i) {  // 7: nWB0 (zero bubble)
      weight();
      backward(0, true);
    }
    for (int i = 0; i < h + 1; ++i) weight();  // 8: nW
    assert(deferred.empty());
    assert(next_forward[0] == half_chunks && next_forward[1] == half_chunks);
    assert(next_backward[0] == half_chunks && next_backward[1] == half_chunks);
  }
}

}  // namespace

int pipeline_chunks(PipelineSchedule schedule, int vpp) { return is_dualpipe(schedule) ? 2 : std::max(vpp, 1); }

int microbatches_per_chunk(PipelineSchedule schedule, int microbatches) {
  return is_dualpipe(schedule) ? microbatches / 2 : microbatches;
}

int model_positions(PipelineSchedule schedule, int stages, int chunks) {
  return is_dualpipe(schedule) ? stages : stages * chunks;
}

int model_position(PipelineSchedule schedule, int stages, int chunks, int vs) {
  (void)chunks;
  if (is_dualpipe(schedule) && vs >= stages) return stages - 1 - (vs - stages);
  return vs;
}

int upstream_virtual_stage(PipelineSchedule schedule, int stages, int chunks, int vs) {
  if (is_dualpipe(schedule)) {
    if (vs < stages) return vs > 0 ? vs - 1 : -1;          // chunk 0: 0 -> p-1
    return vs < 2 * stages - 1 ? vs + 1 : -1;              // chunk 1: p-1 -> 0
  }
  (void)chunks;
  return vs > 0 ? vs - 1 : -1;
}

int downstream_virtual_stage(PipelineSchedule schedule, int stages, int chunks, int vs) {
  if (is_dualpipe(schedule)) {
    if (vs < stages) return vs < stages - 1 ? vs + 1 : -1;
    return vs > stages ? vs - 1 : -1;
  }
  return vs < stages * chunks - 1 ? vs + 1 : -1;
}

std::string pipeline_shape_problem(PipelineSchedule schedule, int stages, int chunks, int microbatches) {
  const std::string p = std::to_string(stages);
  const std::string m = std::to_string(microbatches);
  if (stages < 1 || microbatches < 1) return "a pipeline needs at least one stage and one micro-batch";
  if (schedule == PipelineSchedule::dualpipe) {
    if (stages < 2 || stages % 2 != 0) return "DualPipe needs an even number of pipeline stages (pp = " + p + ")";
    if (microbatches % 2 != 0 || microbatches < 2 * stages) {
      return "DualPipe needs an even number of micro-batches, at least 2*pp = " + std::to_string(2 * stages) +
             " (it has " + m + ")";
    }
    return "";
  }
  if (chunks > 1) {
    if (schedule != PipelineSchedule::one_f_one_b) return "model chunks (vpp > 1) interleave only the 1f1b schedule";
    if (stages < 2) return "interleaving (vpp > 1) needs pp > 1";
    if (microbatches % stages != 0) {
      return "interleaved 1F1B needs the micro-batches (" + m + ") to be a multiple of pp (" + p + ")";
    }
  }
  return "";
}

int one_f_one_b_warmup(PipelineSchedule schedule, int stages, int chunks, int microbatches, int stage, int extra) {
  const int p = stages;
  const int s = stage;
  const int v = std::max(chunks, 1);
  const int total = v * microbatches;
  if (schedule == PipelineSchedule::gpipe) return total;
  return std::min((v == 1 ? p - s - 1 : (p - s - 1) * 2 + (v - 1) * p) + extra, total);
}

int combined_unpaired_passes(PipelineSchedule schedule, int stages, int chunks, int microbatches, int stage) {
  const int p = stages;
  const int s = stage;
  const int v = std::max(chunks, 1);
  const int total = v * microbatches_per_chunk(schedule, microbatches);
  switch (schedule) {
    case PipelineSchedule::gpipe:
      return total;
    case PipelineSchedule::one_f_one_b:
      // The warm-up of one_f_one_b_orders() with Megatron's extra forward.
      return one_f_one_b_warmup(schedule, p, v, microbatches, s, 1);
    case PipelineSchedule::zb_h1:
    case PipelineSchedule::zb_h2: {
      // The warm-up of zero_bubble_orders() (B_input lags F by k (p - 1 - s)), plus one.
      const int k = schedule == PipelineSchedule::zb_h2 ? 2 : 1;
      return std::min(k * (p - s - 1) + 1, total);
    }
    case PipelineSchedule::dualpipe: {
      // dualpipe_orders(): phase 4 pairs two forwards per round (not the first round's F0 on the
      // two middle ranks), phase 5 one.
      const int half_ranks = p / 2;
      const int h = std::min(s, p - 1 - s);
      const bool middle = s == half_ranks - 1 || s == half_ranks;
      const int rounds = microbatches / 2 - p + h + 1;
      const int paired = 2 * rounds - (middle && rounds > 0 ? 1 : 0) + (half_ranks - h - 1);
      return std::clamp(total - paired, 0, total);
    }
  }
  return total;
}

void combined_unpaired_layer_passes(PipelineSchedule schedule, int stages, int chunks, int microbatches,
                                    const std::vector<int>& layers, const std::vector<int>& moe_layers,
                                    std::vector<double>& forward, std::vector<double>& backward) {
  const int p = stages;
  const int v = std::max(chunks, 1);
  const int mbc = microbatches_per_chunk(schedule, microbatches);
  const int total = v * mbc;
  forward.assign(static_cast<std::size_t>(p * v), 0.0);
  backward.assign(static_cast<std::size_t>(p * v), 0.0);
  if (schedule != PipelineSchedule::one_f_one_b) {
    for (int vs = 0; vs < p * v; ++vs) {
      const double share =
          total > 0 ? static_cast<double>(combined_unpaired_passes(schedule, p, v, microbatches, vs % p)) / total : 1.0;
      forward[static_cast<std::size_t>(vs)] = backward[static_cast<std::size_t>(vs)] =
          share * mbc * moe_layers[static_cast<std::size_t>(vs)];
    }
    return;
  }
  // one_f_one_b_orders(): forward i runs chunk (i mod p v) / p, backward k chunk v - 1 - that.
  const auto forward_chunk = [&](int i) { return (i % (p * v)) / p; };
  const auto backward_chunk = [&](int k) { return v - 1 - (k % (p * v)) / p; };
  for (int s = 0; s < p; ++s) {
    const auto at = [&](int c) { return static_cast<std::size_t>(c * p + s); };
    const int warmup = one_f_one_b_warmup(schedule, p, v, microbatches, s, 1);
    for (int i = 0; i < warmup; ++i) {
      forward[at(forward_chunk(i))] += moe_layers[at(forward_chunk(i))];
      backward[at(backward_chunk(total - 1 - i))] += moe_layers[at(backward_chunk(total - 1 - i))];
    }
    for (int k = 0; k < total - warmup; ++k) {
      const std::size_t f = at(forward_chunk(warmup + k));
      const std::size_t b = at(backward_chunk(k));
      const int paired = std::min(layers[f], layers[b]);
      // The forward's last layers run alone (the dense ones come first in a chunk: the model's
      // first_dense_layers); the backward's first layers, dense ones first.
      forward[f] += std::min(moe_layers[f], layers[f] - paired);
      backward[b] += std::max(0, layers[b] - paired - (layers[b] - moe_layers[b]));
    }
  }
}

void build_stage_orders(PipelineSchedule schedule, int stages, int chunks, int microbatches,
                        std::vector<PipelinePass>& passes, std::vector<int>& begin, int extra_warmup) {
  assert(schedule != PipelineSchedule::dualpipe ||
         pipeline_shape_problem(schedule, stages, chunks, microbatches).empty());
  passes.clear();
  begin.clear();
  switch (schedule) {
    case PipelineSchedule::gpipe:
    case PipelineSchedule::one_f_one_b:
      one_f_one_b_orders(schedule, stages, chunks, microbatches, extra_warmup, passes, begin);
      break;
    case PipelineSchedule::zb_h1:
      zero_bubble_orders(1, stages, microbatches, passes, begin);
      break;
    case PipelineSchedule::zb_h2:
      zero_bubble_orders(2, stages, microbatches, passes, begin);
      break;
    case PipelineSchedule::dualpipe:
      dualpipe_orders(stages, microbatches, passes, begin);
      break;
  }
  begin.push_back(static_cast<int>(passes.size()));
}

}  // namespace stepcast
