// Attention suite: fused attention forward and backward (each point names its implementation:
// cuDNN's flash SDPA where cuDNN is built in and accepts the shape, or stepcast's own kernel), and
// decode over a paged KV cache, over the grid of validation/harness_grids.h.
//
// Checks, against validation/reference_ops.h (the same for both implementations):
//   forward   8 query rows of two (batch, head) pairs: O and the log-sum-exp statistics;
//   backward  the same rows of dQ in the timed run, and 8 rows of dK and dV of a companion
//             192-token run of the same kernel configuration (checking dK/dV rows of the timed run
//             would need every query's statistics on the CPU: O(s^2 d) per head);
//   decode    two (sequence, head) outputs, K/V gathered through the block table on the host.

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <numeric>
#include <vector>

#include "kernels/attention.h"
#include "kernels/counter_hash.h"
#include "kernels/cuda_check.h"
#include "kernels/device_buffer.h"
#include "kernels/memory_ops.h"
#include "validation/harness/check_helpers.h"
#include "validation/harness/device_data.h"
#include "validation/harness/suites.h"
#include "validation/harness_grids.h"
#include "validation/measurement_records.h"

#if defined(STEPCAST_HAVE_CUDNN)
#include "kernels/cudnn_attention.h"
#endif

namespace stepcast::harness {

namespace {

constexpr int kCheckedRows = 8;
constexpr std::int64_t kCompanionSeq = 192;  // not a multiple of the 64-row tiles: exercises the tails
constexpr std::int64_t kCudnnCompanionSeq = 256;
// bf16 rounding of P and of the output: relative 2^-8 per element, a few percent in the worst row.
constexpr double kOutputTolerance = 3e-2;
constexpr double kGradientTolerance = 6e-2;
constexpr double kLseTolerance = 2e-3;

using kernels::ElementFormat;

double rms(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x * x;
  return v.empty() ? 0.0 : std::sqrt(s / static_cast<double>(v.size()));
}

kernels::AttentionShape shape_of(const AttentionInputs& a) {
  kernels::AttentionShape s;
  s.batch = static_cast<int>(a.batch);
  s.heads = static_cast<int>(a.heads);
  s.kv_heads = static_cast<int>(a.kv_heads);
  s.seq_q = static_cast<int>(a.seq_q);
  s.seq_kv = static_cast<int>(a.seq_kv);
  s.head_dim = static_cast<int>(a.head_dim);
  s.causal = a.causal;
  s.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(a.head_dim)));
  return s;
}

std::size_t q_elements(const kernels::AttentionShape& s) {
  return static_cast<std::size_t>(s.batch) * s.seq_q * s.heads * s.head_dim;
}
std::size_t kv_elements(const kernels::AttentionShape& s) {
  return static_cast<std::size_t>(s.batch) * s.seq_kv * s.kv_heads * s.head_dim;
}

// The device tensors of one attention problem in BSHD layout.
struct AttentionBuffers {
  kernels::DeviceBuffer q, k, v, o, lse, d_o, dq, dk, dv, workspace;
  AttentionBuffers(const kernels::AttentionShape& s, ElementFormat f, bool backward) {
    const std::size_t es = kernels::element_size(f);
    q = kernels::DeviceBuffer(q_elements(s) * es);
    k = kernels::DeviceBuffer(kv_elements(s) * es);
    v = kernels::DeviceBuffer(kv_elements(s) * es);
    o = kernels::DeviceBuffer(q_elements(s) * es);
    lse = kernels::DeviceBuffer(static_cast<std::size_t>(s.batch) * s.heads * s.seq_q * sizeof(float));
    if (backward) {
      d_o = kernels::DeviceBuffer(q_elements(s) * es);
      dq = kernels::DeviceBuffer(q_elements(s) * es);
      dk = kernels::DeviceBuffer(kv_elements(s) * es);
      dv = kernels::DeviceBuffer(kv_elements(s) * es);
      workspace = kernels::DeviceBuffer(kernels::flash_backward_workspace_bytes(s));
    }
  }
  void fill(cudaStream_t stream, const kernels::AttentionShape& s, ElementFormat f) {
    kernels::fill_uniform(stream, q.get(), f, q_elements(s), 31, 1.0f);
    kernels::fill_uniform(stream, k.get(), f, kv_elements(s), 32, 1.0f);
    kernels::fill_uniform(stream, v.get(), f, kv_elements(s), 33, 1.0f);
    if (d_o.bytes() > 0) kernels::fill_uniform(stream, d_o.get(), f, q_elements(s), 34, 1.0f);
  }
};

// Rows [0, seq) of one head of a BSHD tensor, decoded: seq x head_dim floats.
std::vector<float> head_rows(const void* base, ElementFormat f, int batch_index, int head, int seq, int heads, int d) {
  const std::size_t first = (static_cast<std::size_t>(batch_index) * seq * heads + head) * d;
  return fetch_rows(base, f, first, static_cast<std::size_t>(seq), static_cast<std::size_t>(d),
                    static_cast<std::size_t>(heads) * d);
}

// Compares the forward outputs (O, statistics) of sampled rows with the reference.
void check_forward(const kernels::AttentionShape& s, ElementFormat f, const void* q, const void* k, const void* v,
                   const void* o, const void* lse, Comparison& cmp) {
  const int group = s.heads / s.kv_heads;
  const int d = s.head_dim;
  for (const auto& [bi, hi] : {std::pair{0, 0}, std::pair{s.batch - 1, s.heads - 1}}) {
    const auto keys = head_rows(k, f, bi, hi / group, s.seq_kv, s.kv_heads, d);
    const auto values = head_rows(v, f, bi, hi / group, s.seq_kv, s.kv_heads, d);
    for (std::int64_t i : sample_indices(s.seq_q, kCheckedRows)) {
      const std::size_t row = (static_cast<std::size_t>(bi) * s.seq_q + static_cast<std::size_t>(i)) * s.heads + hi;
      const auto q_row = fetch(q, f, row * d, static_cast<std::size_t>(d));
      const auto o_row = fetch(o, f, row * d, static_cast<std::size_t>(d));
      const AttentionRow expected = attention_row_reference(q_row, keys, values, d,
                                                            visible_keys(i, s.seq_q, s.seq_kv, s.causal), s.scale);
      const double atol = kOutputTolerance * rms(expected.o);
      for (int c = 0; c < d; ++c) cmp.add(o_row[c], expected.o[c], atol, kOutputTolerance);
      const std::size_t stat = (static_cast<std::size_t>(bi) * s.heads + hi) * s.seq_q + static_cast<std::size_t>(i);
      const float got_lse = fetch(lse, ElementFormat::fp32, stat, 1)[0];
      if (std::isfinite(expected.lse)) cmp.add(got_lse, expected.lse, kLseTolerance, kLseTolerance);
    }
  }
}

// dQ rows of two heads of a backward run (dq_only) or dQ, dK and dV rows (all heads of KV head 0).
void check_backward(const kernels::AttentionShape& s, ElementFormat f, const AttentionBuffers& buf, bool dq_only,
                    Comparison& cmp) {
  const int group = s.heads / s.kv_heads;
  const int d = s.head_dim;
  const auto kv_rows = sample_indices(s.seq_kv, kCheckedRows);
  const auto q_rows = sample_indices(s.seq_q, kCheckedRows);
  std::vector<std::vector<double>> dk_sum(kv_rows.size(), std::vector<double>(d, 0.0));
  std::vector<std::vector<double>> dv_sum(kv_rows.size(), std::vector<double>(d, 0.0));
  const std::vector<std::pair<int, int>> heads =
      dq_only ? std::vector<std::pair<int, int>>{{0, 0}, {s.batch - 1, s.heads - 1}} : [&] {
        std::vector<std::pair<int, int>> all;
        for (int h = 0; h < group; ++h) all.emplace_back(0, h);  // every query head of KV head 0
        return all;
      }();
  for (const auto& [bi, hi] : heads) {
    const auto q = head_rows(buf.q.get(), f, bi, hi, s.seq_q, s.heads, d);
    const auto k = head_rows(buf.k.get(), f, bi, hi / group, s.seq_kv, s.kv_heads, d);
    const auto v = head_rows(buf.v.get(), f, bi, hi / group, s.seq_kv, s.kv_heads, d);
    const auto o = head_rows(buf.o.get(), f, bi, hi, s.seq_q, s.heads, d);
    const auto d_o = head_rows(buf.d_o.get(), f, bi, hi, s.seq_q, s.heads, d);
    const auto dq = head_rows(buf.dq.get(), f, bi, hi, s.seq_q, s.heads, d);
    const std::vector<std::int64_t> no_rows;
    const AttentionGradRows expected = attention_backward_reference(q, k, v, o, d_o, s.seq_q, s.seq_kv, d, s.causal,
                                                                    s.scale, q_rows, dq_only ? no_rows : kv_rows);
    // The absolute tolerance scales with the head's gradients as a whole: a row whose exact
    // gradient is zero (query 0 of a causal head sees only key 0, so dS = P (dP - D) = 0) must
    // not demand an exact zero from fp32 arithmetic.
    std::vector<double> all_rows;
    for (const auto& row : expected.dq) all_rows.insert(all_rows.end(), row.begin(), row.end());
    const double atol = kGradientTolerance * rms(all_rows);
    for (std::size_t r = 0; r < q_rows.size(); ++r) {
      for (int c = 0; c < d; ++c) {
        cmp.add(dq[static_cast<std::size_t>(q_rows[r]) * d + c], expected.dq[r][c], atol, kGradientTolerance);
      }
    }
    if (!dq_only) {
      for (std::size_t r = 0; r < kv_rows.size(); ++r) {
        for (int c = 0; c < d; ++c) {
          dk_sum[r][c] += expected.dk[r][c];
          dv_sum[r][c] += expected.dv[r][c];
        }
      }
    }
  }
  if (dq_only) return;
  // Query heads sharing a KV head add their gradients into it.
  const auto dk = head_rows(buf.dk.get(), f, 0, 0, s.seq_kv, s.kv_heads, d);
  const auto dv = head_rows(buf.dv.get(), f, 0, 0, s.seq_kv, s.kv_heads, d);
  std::vector<double> all_k;
  std::vector<double> all_v;
  for (std::size_t r = 0; r < kv_rows.size(); ++r) {
    all_k.insert(all_k.end(), dk_sum[r].begin(), dk_sum[r].end());
    all_v.insert(all_v.end(), dv_sum[r].begin(), dv_sum[r].end());
  }
  const double atol_k = kGradientTolerance * rms(all_k);
  const double atol_v = kGradientTolerance * rms(all_v);
  for (std::size_t r = 0; r < kv_rows.size(); ++r) {
    for (int c = 0; c < d; ++c) {
      const std::size_t at = static_cast<std::size_t>(kv_rows[r]) * d + c;
      cmp.add(dk[at], dk_sum[r][c], atol_k, kGradientTolerance);
      cmp.add(dv[at], dv_sum[r][c], atol_v, kGradientTolerance);
    }
  }
}

void run_own_forward(Session& session, const AttentionInputs& point, ElementFormat f, const std::string& label) {
  const cudaStream_t stream = session.stream();
  const kernels::AttentionShape s = shape_of(point);
  AttentionBuffers buf(s, f, false);
  buf.fill(stream, s, f);
  STEPCAST_CUDA(cudaStreamSynchronize(stream));
  const auto forward = [&] {
    kernels::launch_flash_forward(stream, f, s, buf.q.get(), buf.k.get(), buf.v.get(), buf.o.get(), buf.lse.as<float>());
  };
  const TimingResult t = session.timer().cold(forward);
  Comparison cmp;
  check_forward(s, f, buf.q.get(), buf.k.get(), buf.v.get(), buf.o.get(), buf.lse.get(), cmp);
  Measurement m = make_measurement(
      point, t, to_check(cmp, "O and statistics of 16 query rows against the CPU reference", kOutputTolerance));
  m.notes.push_back("stepcast's own WMMA flash-attention kernel: a reference implementation, not FlashAttention-2's speed");
  m.device = session.device();
  m.name = label + m.name;
  session.record(std::move(m));
}

void run_cudnn_forward(Session& session, const AttentionInputs& point, ElementFormat f, const std::string& label) {
#if defined(STEPCAST_HAVE_CUDNN)
  const cudaStream_t stream = session.stream();
  const kernels::AttentionShape s = shape_of(point);
  std::unique_ptr<kernels::CudnnSdpaForward> sdpa;
  try {
    sdpa = std::make_unique<kernels::CudnnSdpaForward>(f, s);
  } catch (const kernels::CudnnUnsupported& e) {
    session.skip("attention", label + point_name(point), e.what());
    return;
  }
  AttentionBuffers buf(s, f, false);
  buf.fill(stream, s, f);
  kernels::DeviceBuffer workspace(sdpa->workspace_bytes());
  STEPCAST_CUDA(cudaMemsetAsync(buf.o.get(), 0, buf.o.bytes(), stream));
  STEPCAST_CUDA(cudaStreamSynchronize(stream));
  const TimingResult t = session.timer().cold([&] {
    sdpa->run(stream, buf.q.get(), buf.k.get(), buf.v.get(), buf.o.get(), buf.lse.as<float>(), workspace.get());
  });
  Comparison cmp;
  check_forward(s, f, buf.q.get(), buf.k.get(), buf.v.get(), buf.o.get(), buf.lse.get(), cmp);
  Measurement m = make_measurement(
      point, t, to_check(cmp, "O and statistics of 16 query rows against the CPU reference", kOutputTolerance));
  m.notes.push_back(sdpa->engine_description());
  m.device = session.device();
  m.name = label + m.name;
  session.record(std::move(m));
#else
  session.skip("attention", label + point_name(point), "built without cuDNN");
#endif
}

void run_forward(Session& session, const AttentionInputs& point, ElementFormat f, const std::string& label) {
  if (point.impl == "cudnn_sdpa") {
    run_cudnn_forward(session, point, f, label);
  } else {
    run_own_forward(session, point, f, label);
  }
}

void run_own_backward(Session& session, const AttentionInputs& point, ElementFormat f, const std::string& label) {
  const cudaStream_t stream = session.stream();
  const kernels::AttentionShape s = shape_of(point);
  const auto forward = [&](const kernels::AttentionShape& shape, AttentionBuffers& b) {
    kernels::launch_flash_forward(stream, f, shape, b.q.get(), b.k.get(), b.v.get(), b.o.get(), b.lse.as<float>());
  };
  const auto backward = [&](const kernels::AttentionShape& shape, AttentionBuffers& b) {
    kernels::launch_flash_backward(stream, f, shape, b.q.get(), b.k.get(), b.v.get(), b.o.get(), b.d_o.get(),
                                   b.lse.as<float>(), b.workspace.get(), b.dq.get(), b.dk.get(), b.dv.get());
  };
  // The companion run that checks dK and dV rows.
  kernels::AttentionShape small = s;
  small.batch = 1;
  small.seq_q = small.seq_kv = static_cast<int>(kCompanionSeq);
  AttentionBuffers companion(small, f, true);
  companion.fill(stream, small, f);
  forward(small, companion);
  backward(small, companion);
  STEPCAST_CUDA(cudaStreamSynchronize(stream));
  Comparison cmp;
  check_backward(small, f, companion, false, cmp);

  AttentionBuffers buf(s, f, true);
  buf.fill(stream, s, f);
  forward(s, buf);
  STEPCAST_CUDA(cudaStreamSynchronize(stream));
  const TimingResult t = session.timer().cold([&] { backward(s, buf); });
  check_backward(s, f, buf, true, cmp);
  Measurement m = make_measurement(
      point, t,
      to_check(cmp, "dQ of 16 rows of the timed run; dK, dV of 8 rows of a 192-token run, against the CPU reference",
               kGradientTolerance));
  m.notes.push_back("stepcast's own WMMA flash-attention backward with fp32 atomics for dQ (and dK, dV under GQA)");
  m.device = session.device();
  m.name = label + m.name;
  session.record(std::move(m));
}

#if defined(STEPCAST_HAVE_CUDNN)
// cuDNN's forward then backward on `buf` (the forward writes O and Stats for the backward).
struct CudnnAttention {
  kernels::CudnnSdpaForward forward;
  kernels::CudnnSdpaBackward backward;
  kernels::DeviceBuffer forward_workspace;
  kernels::DeviceBuffer backward_workspace;
  CudnnAttention(ElementFormat f, const kernels::AttentionShape& s, int first_form)
      : forward(f, s),
        backward(f, s, first_form),
        forward_workspace(forward.workspace_bytes()),
        backward_workspace(backward.workspace_bytes()) {}
  void run_forward(cudaStream_t stream, AttentionBuffers& b) {
    forward.run(stream, b.q.get(), b.k.get(), b.v.get(), b.o.get(), b.lse.as<float>(), forward_workspace.get());
  }
  // Timed runs zero the dQ accumulator only where cuDNN needs it (before 9.6, as cudnn-frontend
  // does); checked runs always zero it, so a wrong belief about cuDNN shows as a wrong timing
  // note, never as a failed check.
  void run_backward(cudaStream_t stream, AttentionBuffers& b, bool checked_run) {
    backward.run(stream, b.q.get(), b.k.get(), b.v.get(), b.o.get(), b.d_o.get(), b.lse.as<float>(), b.dq.get(),
                 b.dk.get(), b.dv.get(), backward_workspace.get(), checked_run);
  }
};
#endif

// cuDNN's fused SDPA backward, timed alone (the forward runs once before). Checked like
// stepcast's: dQ rows of the timed run, and dK, dV rows of a companion run on a short sequence.
void run_cudnn_backward(Session& session, const AttentionInputs& point, ElementFormat f, const std::string& label) {
#if defined(STEPCAST_HAVE_CUDNN)
  const cudaStream_t stream = session.stream();
  const kernels::AttentionShape s = shape_of(point);
  // The companion: batch 1, a 256-token sequence (a multiple of cuDNN's 64-row tiles), same heads.
  // cuDNN may accept a graph form (kernels/cudnn_attention.cpp) and still compute something else;
  // a form whose companion gradients fail the check is dropped and the next one tried.
  kernels::AttentionShape small = s;
  small.batch = 1;
  small.seq_q = small.seq_kv = static_cast<int>(kCudnnCompanionSeq);
  std::unique_ptr<CudnnAttention> sdpa;
  std::string rejected;
  Comparison cmp;
  std::string checked;
  for (int first_form = 0;;) {
    try {
      sdpa = std::make_unique<CudnnAttention>(f, s, first_form);
    } catch (const kernels::CudnnUnsupported& e) {
      session.skip("attention", label + point_name(point), rejected + e.what());
      return;
    }
    const int form = sdpa->backward.form();
    cmp = Comparison{};
    checked = "dQ of 16 rows at the timed shape (a run after the timed ones, accumulator zeroed)";
    try {
      CudnnAttention companion_sdpa(f, small, form);
      if (companion_sdpa.backward.form() != form) throw kernels::CudnnUnsupported("cuDNN refused the same graph form");
      AttentionBuffers companion(small, f, true);
      companion.fill(stream, small, f);
      companion_sdpa.run_forward(stream, companion);
      companion_sdpa.run_backward(stream, companion, true);
      STEPCAST_CUDA(cudaStreamSynchronize(stream));
      check_backward(small, f, companion, false, cmp);
      if (!cmp.passed()) {
        rejected += "graph form " + std::to_string(form) + " (" + sdpa->backward.engine_description() +
                    ") gave wrong gradients on the 256-token check (max rel. error " +
                    std::to_string(cmp.max_rel_error) + "); ";
        first_form = form + 1;
        continue;
      }
      checked += "; dK, dV of 8 rows of a 256-token run";
    } catch (const std::runtime_error& e) {  // CudnnUnsupported, or an execution failure
      checked += " only (the 256-token companion run that checks dK and dV failed: " + std::string(e.what()) + ")";
    }
    break;
  }
  if (!rejected.empty()) checked += "; rejected before: " + rejected;

  AttentionBuffers buf(s, f, true);
  buf.fill(stream, s, f);
  sdpa->run_forward(stream, buf);
  STEPCAST_CUDA(cudaStreamSynchronize(stream));
  TimingResult t;
  try {
    t = session.timer().cold([&] { sdpa->run_backward(stream, buf, false); });
    sdpa->run_backward(stream, buf, true);
    STEPCAST_CUDA(cudaStreamSynchronize(stream));
  } catch (const std::runtime_error& e) {
    // An engine that plans but fails to execute: record why and go on, unless the device is now
    // in a sticky error state (then the synchronize throws and the suite's guard stops it).
    session.skip("attention", label + point_name(point), std::string("cuDNN's backward failed at run time: ") + e.what());
    STEPCAST_CUDA(cudaStreamSynchronize(stream));
    return;
  }
  check_backward(s, f, buf, true, cmp);
  Measurement m = make_measurement(point, t, to_check(cmp, checked + ", against the CPU reference", kGradientTolerance));
  m.notes.push_back(sdpa->backward.engine_description());
  m.device = session.device();
  m.name = label + m.name;
  session.record(std::move(m));
#else
  (void)f;
  session.skip("attention", label + point_name(point), "built without cuDNN");
#endif
}

void run_backward(Session& session, const AttentionInputs& point, ElementFormat f, const std::string& label) {
  if (point.impl == "cudnn_sdpa") {
    run_cudnn_backward(session, point, f, label);
  } else {
    run_own_backward(session, point, f, label);
  }
}

void run_decode(Session& session, const AttentionInputs& point, ElementFormat f, const std::string& label) {
  const cudaStream_t stream = session.stream();
  kernels::PagedDecodeShape s;
  s.batch = static_cast<int>(point.batch);
  s.heads = static_cast<int>(point.heads);
  s.kv_heads = static_cast<int>(point.kv_heads);
  s.head_dim = static_cast<int>(point.head_dim);
  s.block_size = static_cast<int>(point.kv_block);
  s.max_context = static_cast<int>(point.seq_kv);
  s.max_blocks_per_seq = (s.max_context + s.block_size - 1) / s.block_size;
  s.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  const std::size_t blocks = static_cast<std::size_t>(s.batch) * s.max_blocks_per_seq;
  const std::size_t es = kernels::element_size(f);
  const std::size_t block_elems = static_cast<std::size_t>(s.block_size) * s.kv_heads * s.head_dim;
  // A shuffled block table: consecutive tokens of a sequence live in scattered cache blocks.
  std::vector<int> table(blocks);
  std::iota(table.begin(), table.end(), 0);
  for (std::size_t i = blocks; i > 1; --i) {
    std::swap(table[i - 1], table[kernels::mix64(i) % i]);
  }
  const std::vector<int> lens(static_cast<std::size_t>(s.batch), s.max_context);
  kernels::DeviceBuffer q(static_cast<std::size_t>(s.batch) * s.heads * s.head_dim * es);
  kernels::DeviceBuffer o(q.bytes());
  kernels::DeviceBuffer k_cache(blocks * block_elems * es);
  kernels::DeviceBuffer v_cache(blocks * block_elems * es);
  kernels::DeviceBuffer d_table(blocks * sizeof(int));
  kernels::DeviceBuffer d_lens(lens.size() * sizeof(int));
  kernels::DeviceBuffer workspace(kernels::paged_decode_workspace_bytes(s));
  kernels::fill_uniform(stream, q.get(), f, static_cast<std::size_t>(s.batch) * s.heads * s.head_dim, 41, 1.0f);
  kernels::fill_uniform(stream, k_cache.get(), f, blocks * block_elems, 42, 1.0f);
  kernels::fill_uniform(stream, v_cache.get(), f, blocks * block_elems, 43, 1.0f);
  STEPCAST_CUDA(cudaMemcpyAsync(d_table.get(), table.data(), d_table.bytes(), cudaMemcpyHostToDevice, stream));
  STEPCAST_CUDA(cudaMemcpyAsync(d_lens.get(), lens.data(), d_lens.bytes(), cudaMemcpyHostToDevice, stream));
  STEPCAST_CUDA(cudaStreamSynchronize(stream));
  const TimingResult t = session.timer().cold([&] {
    kernels::launch_paged_decode(stream, f, s, q.get(), k_cache.get(), v_cache.get(), d_table.as<int>(), d_lens.as<int>(),
                                 workspace.get(), o.get());
  });
  Comparison cmp;
  const int group = s.heads / s.kv_heads;
  const auto d = static_cast<std::size_t>(s.head_dim);
  for (const auto& [bi, hi] : {std::pair{0, 0}, std::pair{s.batch - 1, s.heads - 1}}) {
    std::vector<float> keys;
    std::vector<float> values;
    const int hk = hi / group;
    for (int j = 0; j < s.max_blocks_per_seq; ++j) {
      const std::size_t block = static_cast<std::size_t>(table[static_cast<std::size_t>(bi) * s.max_blocks_per_seq + j]);
      const std::size_t tokens = std::min<std::size_t>(s.block_size, s.max_context - j * s.block_size);
      const std::size_t first = block * block_elems + static_cast<std::size_t>(hk) * d;
      const auto kr = fetch_rows(k_cache.get(), f, first, tokens, d, static_cast<std::size_t>(s.kv_heads) * d);
      const auto vr = fetch_rows(v_cache.get(), f, first, tokens, d, static_cast<std::size_t>(s.kv_heads) * d);
      keys.insert(keys.end(), kr.begin(), kr.end());
      values.insert(values.end(), vr.begin(), vr.end());
    }
    const std::size_t row = (static_cast<std::size_t>(bi) * s.heads + hi) * d;
    const auto q_row = fetch(q.get(), f, row, d);
    const auto o_row = fetch(o.get(), f, row, d);
    const AttentionRow expected = attention_row_reference(q_row, keys, values, s.head_dim, s.max_context, s.scale);
    const double atol = kOutputTolerance * rms(expected.o);
    for (std::size_t c = 0; c < d; ++c) cmp.add(o_row[c], expected.o[c], atol, kOutputTolerance);
  }
  Measurement m = make_measurement(
      point, t, to_check(cmp, "2 (sequence, head) outputs against the CPU reference over the block table", kOutputTolerance));
  m.notes.push_back("stepcast's own paged-KV decode kernel (512-token partitions, PagedAttention v2 structure)");
  m.device = session.device();
  m.name = label + m.name;
  session.record(std::move(m));
}

}  // namespace

void measure_attention(Session& session, const AttentionInputs& point, const std::string& label) {
  const ElementFormat f = point.dtype == DataType::fp16 ? ElementFormat::fp16 : ElementFormat::bf16;
  {
    const std::string name = label + point_name(point);
    const kernels::AttentionShape s = shape_of(point);
    const std::size_t es = kernels::element_size(f);
    const std::size_t need = (point.direction == AttentionDirection::backward ? 5 : 3) * (q_elements(s) + kv_elements(s)) * es;
    if (need > session.free_memory() * 8 / 10) {
      session.skip("attention", name, "does not fit in free device memory");
      return;
    }
    if (point.dtype != DataType::bf16 && point.dtype != DataType::fp16) {
      session.skip("attention", name, "the attention kernels take bf16 or fp16");
      return;
    }
    try {
      switch (point.direction) {
        case AttentionDirection::forward: run_forward(session, point, f, label); break;
        case AttentionDirection::backward: run_backward(session, point, f, label); break;
        case AttentionDirection::decode: run_decode(session, point, f, label); break;
      }
    } catch (const std::invalid_argument& e) {
      session.skip("attention", name, e.what());  // a shape the kernels do not handle
    }
  }
}

void run_attention_suite(Session& session) {
  std::printf("attention\n");
  for (const AttentionInputs& point : attention_grid(session.options())) {
    if (session.out_of_time()) return;
    measure_attention(session, point, "");
  }
}

}  // namespace stepcast::harness
