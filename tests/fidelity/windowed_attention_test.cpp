// Sliding-window, head-dim-64 attention (GPT-OSS) against cuDNN's own measurements,
// tests/fixtures/reference/blackwell_compute.yaml (attention_windowed, attention_window128 and the
// GB200 Llama 3.1 attention rows):
//   - the rows' TFLOP/s count the windowed causal work (query i sees min(i + 1, W) keys), to 1%
//     (the posted times carry 3 decimals of a millisecond);
//   - fidelity: the model's time RATIO of the GPT-OSS shape (head dim 64, causal, window W) to the
//     Llama 3.1 shape (head dim 128, full causal) at the same sequence length on the same GPU and
//     cuDNN, forward and backward, seq 2048-32768. A ratio cancels the absolute flash etas, which
//     are set from training runs rather than from this isolated harness. Tolerance: 25% on every
//     shape but one (below).
//
// What the ratio tests (issue 8, GPT-OSS fidelity): the exponential-bound forward at head dim 64
// on Blackwell (model/op_time.h flash_score_clocks: the SFU's 1/16 clock per score is twice the
// tensor time, so the forward runs at half its head-dim-128 FLOP rate), the backward's shared-memory
// and unhidden exponential time, the key blocks a windowed query tile visits (W / 128 + 1 for W
// keys counted: 9 for 8 at W = 1024, 2 for 1 at W = 128) with each CTA's overhead, and the full
// causal layer's rise in efficiency with seq (flash_schedule_efficiency, fitted on other rows).
// Before them (the additive SFU term, windowed CTAs unpriced, W keys counted per query) the model
// missed by -7..-44% (window 1024) and -65..-85% (window 128); with them, when written, -16..+2%
// and -10..-23%.
// The one exception: the window-128 forward at seq 32768 (row cudnn922_gb200_gptoss_bf16_swa128_s32768)
// runs at 104 TFLOP/s where the same run's seq 2048-16384 forwards run at 153-167 and its own
// backward holds 186 (188 at seq 16384), as does the Llama row it is divided by (1622 against
// 1708). A windowed CTA's work does not depend on the sequence length, and nothing the model knows
// of makes it: the model predicts -44% there. That row is held to kOutlierTolerance (50%) instead,
// and a check below keeps it flagged only while the fixture still shows the drop.

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "model/layer_ops.h"
#include "model/op_builders.h"
#include "model/op_time.h"
#include "simulator/catalog.h"

using namespace stepcast;

namespace {

const YAML::Node& fixture() {
  static const YAML::Node root = YAML::LoadFile("tests/fixtures/reference/blackwell_compute.yaml");
  return root;
}

struct Shape {
  double batch = 1.0, heads = 0.0, kv_heads = 0.0, head_dim = 0.0, window = 0.0, seq = 0.0;
};

struct Row {
  Shape shape;
  double fwd_ms = 0.0, bwd_ms = 0.0, fwd_tflops = 0.0, bwd_tflops = 0.0;
};

Row read_row(const YAML::Node& n, double default_batch) {
  Row r;
  r.shape.batch = n["batch"] ? n["batch"].as<double>() : default_batch;
  r.shape.heads = n["heads"] ? n["heads"].as<double>() : 64.0;
  r.shape.kv_heads = n["kv_heads"] ? n["kv_heads"].as<double>() : 8.0;
  r.shape.head_dim = n["head_dim"] ? n["head_dim"].as<double>() : 128.0;
  r.shape.window = n["window"] ? n["window"].as<double>() : 0.0;
  r.shape.seq = n["seqlen"].as<double>();
  r.fwd_ms = n["fwd_time_ms"].as<double>();
  r.bwd_ms = n["bwd_time_ms"].as<double>();
  r.fwd_tflops = n["fwd_tflops"].as<double>();
  r.bwd_tflops = n["bwd_tflops"].as<double>();
  return r;
}

// Rows of a fixture section, filtered by a field (empty key: all rows).
std::vector<Row> rows(const std::string& section, const std::string& key, const std::string& value,
                      double default_batch = 1.0) {
  std::vector<Row> out;
  for (const auto& n : fixture()[section]) {
    if (!key.empty() && n[key].as<std::string>() != value) continue;
    out.push_back(read_row(n, default_batch));
  }
  return out;
}

// The harness's forward FLOPs: 4 b h d per (query, key) pair; causal, and with a window W query i
// (0-based) sees min(i + 1, W) keys: W s - W (W - 1) / 2 pairs per (sequence, head).
double harness_forward_flops(const Shape& s) {
  const double pairs = s.window > 0.0 && s.window < s.seq ? s.window * s.seq - s.window * (s.window - 1.0) / 2.0
                                                          : s.seq * (s.seq + 1.0) / 2.0;
  return 4.0 * s.batch * s.heads * s.head_dim * pairs;
}

// The flash op stepcast builds for one layer of this shape (model/layer_ops.cpp flash_shape,
// attention_shape, flash_op): work from ops::flash_forward_flops (2.5x backward), bytes from
// ops::flash_io_elements in BF16, and the CTA shape with its window.
Op stepcast_flash_op(const Shape& s, bool backward) {
  ops::FlashShape f;
  f.sequences = s.batch;
  f.heads = s.heads;
  f.queries = s.seq;
  f.keys = s.seq;
  f.kv_heads = s.kv_heads;
  f.qk_dim = s.head_dim;
  f.v_dim = s.head_dim;
  f.causal = true;
  f.window = s.window;
  f.windowed = s.window > 0.0 ? 1.0 : 0.0;
  Op op;
  op.kind = backward ? OpKind::flash_backward : OpKind::flash_forward;
  op.dtype = DataType::bf16;
  const double forward = ops::flash_forward_flops(f);
  op.flops = Flops(backward ? kFlashBackwardWorkRatio * forward : forward);
  op.bytes = Bytes(ops::flash_io_elements(f) * 2.0 * (backward ? 2.0 : 1.0));
  op.attention = {s.batch * s.heads, s.seq, s.seq, s.head_dim, true, s.window, f.windowed};
  return op;
}

// Predicted over measured (windowed / full-causal) time ratio minus one for one seq and pass.
struct RatioError {
  double seq = 0.0;
  bool backward = false;
  double error = 0.0;
};

// The ratio errors of each seq and pass; prints each shape's figures.
std::vector<RatioError> ratio_errors(std::vector<Row> windowed, std::vector<Row> full, const char* label) {
  const auto by_seq = [](const Row& a, const Row& b) { return a.shape.seq < b.shape.seq; };
  std::sort(windowed.begin(), windowed.end(), by_seq);
  std::sort(full.begin(), full.end(), by_seq);
  // The harness's 10 iterations run at burst speed. Isolated kernels follow the fitted CTA schedule
  // (cost_parameters.h flash_shape_*, off by default for training steps): applied here, as a
  // calibration profile applies it, so the window and exponent terms are checked where cuDNN ran.
  CostParameters burst = CostParameters().burst();
  burst.flash_shape_tile = 128.0;
  const GpuSpec* gb200 = Catalog::builtin().find_gpu("gb200");
  REQUIRE(gb200 != nullptr);
  REQUIRE(windowed.size() == full.size());
  std::vector<RatioError> errors;
  for (std::size_t i = 0; i < windowed.size(); ++i) {
    REQUIRE(windowed[i].shape.seq == full[i].shape.seq);
    for (bool backward : {false, true}) {
      const double measured = backward ? windowed[i].bwd_ms / full[i].bwd_ms : windowed[i].fwd_ms / full[i].fwd_ms;
      const double predicted = op_time(stepcast_flash_op(windowed[i].shape, backward), *gb200, burst).value() /
                               op_time(stepcast_flash_op(full[i].shape, backward), *gb200, burst).value();
      const double error = predicted / measured - 1.0;
      std::printf("%s seq %6.0f %s: windowed/full time measured %.4f predicted %.4f error %+6.1f%%\n", label,
                  windowed[i].shape.seq, backward ? "bwd" : "fwd", measured, predicted, 100.0 * error);
      errors.push_back({windowed[i].shape.seq, backward, error});
    }
  }
  return errors;
}

constexpr double kRatioTolerance = 0.25;
constexpr double kOutlierTolerance = 0.50;  // the window-128 seq-32768 forward row (header)

}  // namespace

TEST_CASE("cuDNN's windowed attention TFLOP/s count each query's min(i + 1, window) keys") {
  std::vector<Row> all = rows("attention_windowed", "", "");
  for (const Row& r : rows("attention_window128", "model", "gpt_oss")) all.push_back(r);
  REQUIRE(all.size() == 15);
  for (const Row& r : all) {
    CAPTURE(r.shape.seq);
    CAPTURE(r.shape.window);
    const double forward = harness_forward_flops(r.shape);
    // TFLOP/s = FLOPs / (ms * 1e-3) / 1e12; the backward pass counts 2.5x the forward work.
    CHECK(forward / (r.fwd_ms * 1e9) == doctest::Approx(r.fwd_tflops).epsilon(0.01));
    CHECK(2.5 * forward / (r.bwd_ms * 1e9) == doctest::Approx(r.bwd_tflops).epsilon(0.01));
  }
  // The count is discriminating: at seq 2048 with window 1024 the full causal half is 4/3 of it.
  const Row& s2048 = all[8];  // file order: seq 32768 down to 2048, bf16 then fp8
  REQUIRE(s2048.shape.seq == 2048.0);
  Shape full = s2048.shape;
  full.window = 0.0;
  CHECK(harness_forward_flops(full) / harness_forward_flops(s2048.shape) == doctest::Approx(4.0 / 3.0).epsilon(0.001));
}

TEST_CASE("the Llama 3.1 rows of the same cuDNN runs count the causal half and pair with each windowed row") {
  // Guards the denominators of the ratios below: cuDNN 9.19 (batch 1) and 9.22 (batch 2).
  std::vector<Row> all = rows("attention", "gpu", "NVIDIA GB200");
  for (const Row& r : rows("attention_window128", "model", "llama3.1", 2.0)) all.push_back(r);
  REQUIRE(all.size() == 10);
  for (const Row& r : all) {
    CAPTURE(r.shape.seq);
    const double forward = 4.0 * r.shape.batch * r.shape.heads * r.shape.head_dim * r.shape.seq * r.shape.seq / 2.0;
    CHECK(forward / (r.fwd_ms * 1e9) == doctest::Approx(r.fwd_tflops).epsilon(0.01));
  }
  // Each windowed row has its full-causal partner at the same seq (the pairing the ratio cases
  // below rely on).
  for (const auto& [windowed, full] :
       {std::pair{rows("attention_windowed", "data_type", "bfloat16"), rows("attention", "gpu", "NVIDIA GB200")},
        std::pair{rows("attention_window128", "model", "gpt_oss"), rows("attention_window128", "model", "llama3.1", 2.0)}}) {
    REQUIRE(windowed.size() == 5);
    REQUIRE(full.size() == 5);
    for (const Row& w : windowed) {
      CHECK(std::count_if(full.begin(), full.end(), [&](const Row& f) { return f.shape.seq == w.shape.seq; }) == 1);
    }
  }
}

TEST_CASE("the model's window-1024 head-dim-64 over full-causal head-dim-128 attention time ratio is within 25% of cuDNN's") {
  // cuDNN backend 91901 on a GB200: gpt_oss (batch 2, 64 heads, head dim 64, window 1024) against
  // llama3.1 (batch 1, 64 heads, head dim 128, full causal), bf16.
  const std::vector<Row> windowed = rows("attention_windowed", "data_type", "bfloat16");
  const std::vector<Row> full = rows("attention", "gpu", "NVIDIA GB200");
  REQUIRE(windowed.size() == 5);
  const std::vector<RatioError> errors = ratio_errors(windowed, full, "cudnn 9.19 swa1024");
  for (const RatioError& e : errors) {
    CAPTURE(e.seq);
    CAPTURE(e.backward);
    CHECK(std::fabs(e.error) <= kRatioTolerance);
  }
}

TEST_CASE("the model's window-128 head-dim-64 over full-causal head-dim-128 attention time ratio is within 25% of cuDNN's") {
  // cuDNN backend 92200 on a GB200, one run: gpt_oss (batch 2, 128 heads, head dim 64, window 128,
  // GPT-OSS's own window) against llama3.1 (batch 2, 64 heads, head dim 128, full causal), bf16.
  const std::vector<Row> windowed = rows("attention_window128", "model", "gpt_oss");
  const std::vector<Row> full = rows("attention_window128", "model", "llama3.1", 2.0);
  REQUIRE(windowed.size() == 5);
  const std::vector<RatioError> errors = ratio_errors(windowed, full, "cudnn 9.22 swa128 ");
  for (const RatioError& e : errors) {
    CAPTURE(e.seq);
    CAPTURE(e.backward);
    const bool outlier = e.seq == 32768.0 && !e.backward;
    CHECK(std::fabs(e.error) <= (outlier ? kOutlierTolerance : kRatioTolerance));
  }
  // The outlier stays one only while the fixture shows it: its forward TFLOP/s below 0.7x the seq
  // 16384 row's while its backward stays within 5% of that row's.
  const auto at = [&](double seq) {
    return *std::find_if(windowed.begin(), windowed.end(), [&](const Row& r) { return r.shape.seq == seq; });
  };
  CHECK(at(32768.0).fwd_tflops < 0.7 * at(16384.0).fwd_tflops);
  CHECK(at(32768.0).bwd_tflops == doctest::Approx(at(16384.0).bwd_tflops).epsilon(0.05));
}
