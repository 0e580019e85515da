// The kernel fit (validation/kernel_fit.h) recovers known constants from synthetic measurements
// made with model/op_time.h itself plus multiplicative noise, and the solvers it rests on
// (validation/least_squares.h) solve problems with known answers.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "model/op_time.h"
#include "validation/kernel_fit.h"
#include "validation/least_squares.h"

using namespace stepcast;

namespace {

// H100 SXM datasheet figures (published_runs.yaml `hardware` row h100_sxm5_80gb).
GpuSpec h100() {
  GpuSpec g;
  g.name = "h100-sxm-80gb";
  g.architecture = GpuArchitecture::hopper;
  g.dense_peak[index_of(DataType::bf16)] = units::teraflops(989.4);
  g.dense_peak[index_of(DataType::fp16)] = units::teraflops(989.4);
  g.dense_peak[index_of(DataType::tf32)] = units::teraflops(494.7);
  g.dense_peak[index_of(DataType::fp8)] = units::teraflops(1978.9);
  g.memory_bandwidth = units::gigabytes_per_second(3350);
  g.sm_count = 132;
  return g;
}

KernelPoint memory_point(double bytes, const char* component) {
  KernelPoint p;
  p.component = component;
  p.label = std::string(component) + " " + std::to_string(bytes);
  // As the harness reader types them (validation/kernel_points.cpp): copy/triad move bytes only.
  p.op.kind = std::string(component) == "memory" ? OpKind::data_movement : OpKind::memory_bound;
  p.op.bytes = Bytes(bytes);
  p.shape = {{"bytes", bytes}};
  return p;
}

KernelPoint flash_point(bool forward, double seq) {
  KernelPoint p;
  p.component = forward ? "attention.forward" : "attention.backward";
  p.label = p.component + " s=" + std::to_string(seq);
  p.op.kind = forward ? OpKind::flash_forward : OpKind::flash_backward;
  p.op.dtype = DataType::bf16;
  // batch 4, 32 heads, d = 128, causal: 4 d pairs FLOPs per pair forward, 2.5x backward.
  const double pairs = seq * (seq + 1) / 2.0 * 4 * 32;
  p.op.flops = Flops(4.0 * 128 * pairs * (forward ? 1.0 : 2.5));
  p.op.bytes = Bytes(4.0 * 4 * seq * 32 * 128 * 2.0);
  return p;
}

// Times the model predicts under `truth`, times exp(noise).
std::vector<KernelPoint> measured(std::vector<KernelPoint> points, const GpuSpec& gpu, const CostParameters& truth,
                                  double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, noise);
  for (auto& p : points) p.measured_s = predict_kernel(p, gpu, truth) * std::exp(normal(rng));
  return points;
}

std::vector<KernelPoint> transformer_gemms(DataType precision, double element_bytes) {
  std::vector<KernelPoint> out;
  for (double tokens : {512.0, 1024.0, 2048.0, 4096.0, 8192.0}) {
    for (auto [n, k] : {std::pair{4096.0, 4096.0}, {12288.0, 4096.0}, {4096.0, 16384.0}, {1536.0, 8192.0}}) {
      out.push_back(gemm_kernel_point(precision, tokens, n, k, 1.0, 0.0, element_bytes, "gemm"));
    }
  }
  return out;
}

double relative(double got, double want) { return std::fabs(got / want - 1.0); }

}  // namespace

TEST_CASE("nnls solves a problem whose unconstrained optimum is negative in one coordinate") {
  // min ||A x - b|| with A = I (3x3) and b = (1, -2, 3): the non-negative optimum is (1, 0, 3).
  const Eigen::MatrixXd a = Eigen::MatrixXd::Identity(3, 3);
  Eigen::VectorXd b(3);
  b << 1.0, -2.0, 3.0;
  const NnlsResult r = nnls(a, b);
  CHECK(r.converged);
  CHECK(r.x[0] == doctest::Approx(1.0));
  CHECK(r.x[1] == doctest::Approx(0.0));
  CHECK(r.x[2] == doctest::Approx(3.0));
}

TEST_CASE("nnls matches ordinary least squares when the optimum is positive") {
  // y = 2 x + 0.5 sampled exactly at x = 1..5.
  Eigen::MatrixXd a(5, 2);
  Eigen::VectorXd b(5);
  for (int i = 0; i < 5; ++i) {
    a(i, 0) = i + 1.0;
    a(i, 1) = 1.0;
    b[i] = 2.0 * (i + 1.0) + 0.5;
  }
  const NnlsResult r = nnls(a, b);
  CHECK(r.x[0] == doctest::Approx(2.0));
  CHECK(r.x[1] == doctest::Approx(0.5));
  CHECK(r.residual_norm == doctest::Approx(0.0).epsilon(1e-9));
}

TEST_CASE("levenberg_marquardt fits an exponential decay and the prior holds an unidentified parameter") {
  // y = a exp(-k t) with a = 3, k = 0.7, exact samples; c has no effect on y: the prior keeps it at 5.
  LmProblem p;
  p.residuals = [](const Eigen::VectorXd& x) {
    Eigen::VectorXd r(8);
    for (int i = 0; i < 8; ++i) {
      const double t = 0.5 * i;
      r[i] = x[0] * std::exp(-x[1] * t) - 3.0 * std::exp(-0.7 * t);
    }
    return r;
  };
  p.start = Eigen::Vector3d(1.0, 0.2, 5.0);
  p.prior = p.start;
  p.prior_sd = Eigen::Vector3d(1e6, 1e6, 1.0);
  p.step = 1e-6;
  const LmResult r = levenberg_marquardt(p);
  CHECK(r.x[0] == doctest::Approx(3.0).epsilon(1e-4));
  CHECK(r.x[1] == doctest::Approx(0.7).epsilon(1e-4));
  CHECK(r.x[2] == doctest::Approx(5.0));
}

TEST_CASE("efficiency_constant names the constant op_time reads for each kind, precision and architecture") {
  Op gemm;
  gemm.kind = OpKind::gemm;
  gemm.dtype = DataType::bf16;
  CHECK(efficiency_constant(gemm, GpuArchitecture::hopper) == "gemm.eta.hopper_16bit");
  CHECK(efficiency_constant(gemm, GpuArchitecture::ampere) == "gemm.eta.ampere_16bit");
  gemm.dtype = DataType::fp16;
  CHECK(efficiency_constant(gemm, GpuArchitecture::blackwell) == "gemm.eta.blackwell_16bit");
  gemm.dtype = DataType::fp8;
  CHECK(efficiency_constant(gemm, GpuArchitecture::hopper) == "gemm.eta.fp8");
  gemm.dtype = DataType::int8;  // its own kernels (int32 accumulation and C): a fit on int8 leaves FP8 alone
  CHECK(efficiency_constant(gemm, GpuArchitecture::hopper) == "gemm.eta.int8");
  gemm.dtype = DataType::tf32;
  CHECK(efficiency_constant(gemm, GpuArchitecture::hopper) == "gemm.eta.tf32");
  Op flash;
  flash.kind = OpKind::flash_backward;
  CHECK(efficiency_constant(flash, GpuArchitecture::ampere) == "flash.bwd_eta.ampere");
  flash.kind = OpKind::flash_forward;
  CHECK(efficiency_constant(flash, GpuArchitecture::hopper) == "flash.fwd_eta.hopper");
  Op mem;  // memory-bound kinds have no compute efficiency
  CHECK(efficiency_constant(mem, GpuArchitecture::hopper).empty());
}

TEST_CASE("the kernel fit recovers GEMM, attention and memory efficiencies and the kernel gap from 2% noisy data") {
  const GpuSpec gpu = h100();
  CostParameters truth;
  truth.gemm_eta_hopper_16bit = 0.72;
  truth.gemm_eta_fp8 = 0.63;
  truth.flash_fwd_eta_hopper = 0.52;
  truth.flash_bwd_eta_hopper = 0.39;
  truth.memory_bandwidth_eta = 0.81;
  truth.kernel_gap_s = 5.5e-6;
  std::vector<KernelPoint> points = transformer_gemms(DataType::bf16, 2.0);
  for (auto& p : transformer_gemms(DataType::fp8, 1.0)) points.push_back(p);
  for (double seq : {1024.0, 2048.0, 4096.0, 8192.0}) {
    points.push_back(flash_point(true, seq));
    points.push_back(flash_point(false, seq));
  }
  // Copies measure the HBM efficiency (an elementwise kernel's SM byte rate sits near it on an H100).
  for (double mb : {1.0, 4.0, 16.0, 64.0, 256.0, 1024.0}) points.push_back(memory_point(mb * 1e6, "memory"));
  points = measured(points, gpu, truth, 0.02, 7);

  const KernelFit fit = fit_kernels(points, gpu, CostParameters{});
  std::printf("synthetic kernel recovery: eta bf16 %.4f (truth 0.72), fp8 %.4f (0.63), flash fwd %.4f (0.52), "
              "bwd %.4f (0.39), memory %.4f (0.81), gap %.2f us (5.5), k_half %g (288), epilogue rate %g (0)\n",
              fit.params.gemm_eta_hopper_16bit, fit.params.gemm_eta_fp8, fit.params.flash_fwd_eta_hopper,
              fit.params.flash_bwd_eta_hopper, fit.params.memory_bandwidth_eta, fit.params.kernel_gap_s * 1e6,
              fit.params.gemm_k_half, fit.params.gemm_epilogue_rate);
  // 40 GEMMs per class, 4 attention points per direction, 6 memory points at 2% noise: each
  // efficiency is the mean of many ratios and lands within 2%; the gap (~5 us beside kernels of
  // 10 us - 10 ms) within 25%.
  // FP8's efficiency is checked as the speed at a middle depth (k = 8192) of the data: with every
  // k >= 4096, eta and the depth terms (k_half, and the epilogue rate whose share is twice bf16's
  // for FP8) trade off within the noise, and the search may split a depth the truth puts in k_half
  // between the two (op_time.h gemm_depth_efficiency).
  CHECK(relative(fit.params.gemm_eta_hopper_16bit, 0.72) < 0.02);
  const auto fp8_speed = [&](const CostParameters& p) {
    return p.gemm_eta_fp8 * gemm_depth_efficiency(8192.0, DataType::fp8, gpu, p);
  };
  CHECK(relative(fp8_speed(fit.params), fp8_speed(truth)) < 0.02);
  CHECK(relative(fit.params.flash_fwd_eta_hopper, 0.52) < 0.02);
  CHECK(relative(fit.params.flash_bwd_eta_hopper, 0.39) < 0.02);
  CHECK(relative(fit.params.memory_bandwidth_eta, 0.81) < 0.02);
  CHECK(relative(fit.params.kernel_gap_s, 5.5e-6) < 0.25);
  CHECK(fit.params.gemm_tile_large_m == 128.0);  // the truth's tiles are the defaults
  CHECK(fit.params.gemm_tile_large_n == 256.0);
  // Held-out errors are the noise (rms 2%), not a model misfit.
  double sum_sq = 0.0;
  for (const auto& r : fit.points) {
    const double e = std::log(r.held_out_predicted_s / r.measured_s);
    sum_sq += e * e;
  }
  CHECK(std::sqrt(sum_sq / fit.points.size()) < 0.03);
  // Every fitted constant is listed with its default.
  bool listed = false;
  for (const auto& v : fit.fitted) {
    if (v.name == "gemm.eta.hopper_16bit") {
      listed = true;
      CHECK(v.datasheet == doctest::Approx(CostParameters{}.gemm_eta_hopper_16bit));
      CHECK(v.fitted_from.find("gemm.bf16 (20 points)") != std::string::npos);
    }
  }
  CHECK(listed);
}

TEST_CASE("the kernel fit finds the CTA tiles from wave-quantization steps") {
  // Square GEMMs every 128 from 640 to 4096, made with 64x64 square tiles: on 132 SMs the wave
  // count of the model's best tile steps where the default 128x128 one does not (768: 144 tiles
  // of 64 -> 2 waves, W 0.545; with 128 tiles 36 tiles -> W 0.273). 1% noise.
  const GpuSpec gpu = h100();
  CostParameters truth;
  truth.gemm_tile_large_m = 128;
  truth.gemm_tile_large_n = 128;
  truth.gemm_tile_small = 64;
  truth.gemm_eta_hopper_16bit = 0.75;
  truth.kernel_gap_s = 3e-6;
  std::vector<KernelPoint> points;
  for (double s = 640; s <= 4096; s += 128) points.push_back(gemm_kernel_point(DataType::bf16, s, s, s, 1.0, 0.0, 2.0, "sq"));
  points = measured(points, gpu, truth, 0.01, 11);
  const KernelFit fit = fit_kernels(points, gpu, CostParameters{});
  // The square tile is identified. The large tiles are not: for squares the best of the three
  // tiles is always the square one, so any large tile predicts the same; the fit must then give
  // the truth's tile x wave efficiency for every point.
  CHECK(fit.params.gemm_tile_small == 64.0);
  for (const auto& p : points) {
    CAPTURE(p.op.gemm.m);
    CHECK(gemm_wave_tile_efficiency(p.op.gemm, gpu.sm_count, fit.params) ==
          doctest::Approx(gemm_wave_tile_efficiency(p.op.gemm, gpu.sm_count, truth)));
  }
  CHECK(relative(fit.params.gemm_eta_hopper_16bit, 0.75) < 0.02);
  // The fit without tile search keeps the default tiles and misfits the steps.
  KernelFitOptions no_search;
  no_search.search_tiles = false;
  const KernelFit fixed = fit_kernels(points, gpu, CostParameters{}, no_search);
  CHECK(fixed.params.gemm_tile_small == 128.0);
  auto rms = [](const KernelFit& f) {
    double s = 0.0;
    for (const auto& r : f.points) s += std::pow(std::log(r.predicted_s / r.measured_s), 2);
    return std::sqrt(s / f.points.size());
  };
  CHECK(rms(fit) < 0.015);
  CHECK(rms(fixed) > 2.0 * rms(fit));
}

TEST_CASE("copy kernels set the HBM efficiency and elementwise kernels the SMs' byte rate where it binds") {
  // H100: 3350 GB/s. Truth: copies at 0.88 of it (2.95 TB/s); elementwise kernels limited by
  // 11 bytes per SM per clock = 11 x 132 x 1.83 GHz = 2.66 TB/s, below the HBM limit.
  const GpuSpec gpu = h100();
  CostParameters truth;
  truth.memory_bandwidth_eta = 0.88;
  truth.elementwise_bytes_per_sm_clock = 11.0;
  std::vector<KernelPoint> points;
  for (double mb : {8.0, 64.0, 512.0}) points.push_back(memory_point(mb * 1e6, "elementwise"));
  for (double mb : {8.0, 64.0, 512.0}) points.push_back(memory_point(mb * 1e6, "memory"));
  points = measured(points, gpu, truth, 0.0, 1);
  // The model has copies SM-bound too (both are memory_bound kernels): their measured time here
  // is the HBM limit's, as a STREAM copy reaches it (timed cold: one launch after an L2 flush).
  for (std::size_t i = 3; i < 6; ++i) {
    points[i].measured_s = points[i].op.bytes.value() / (gpu.memory_bandwidth.value() * 0.88) + truth.kernel_gap_s +
                           truth.kernel_cold_start_s;
  }
  const KernelFit fit = fit_kernels(points, gpu, CostParameters{});
  CHECK(relative(fit.params.memory_bandwidth_eta, 0.88) < 0.005);
  CHECK(relative(fit.params.elementwise_bytes_per_sm_clock, 11.0) < 0.005);
  CHECK(fit.points.back().fitted);
}

TEST_CASE("the kernel fit recovers gemm.misaligned_eta from misaligned GEMMs without letting them move the aligned efficiency") {
  // 20 aligned bf16 GEMMs and 6 whose n is not a multiple of 8 elements (16 bytes), made with
  // truth 0.72 and a misaligned ratio of 0.3 at 2% noise: the ratio is fitted from the 6 alone
  // (a one-column least squares with eta fixed by the others), so both land within 3%.
  const GpuSpec gpu = h100();
  CostParameters truth;
  truth.gemm_eta_hopper_16bit = 0.72;
  truth.gemm_misaligned_eta = 0.3;
  std::vector<KernelPoint> points = transformer_gemms(DataType::bf16, 2.0);
  for (double n : {2500.0, 4100.0, 6002.0}) {
    for (double tokens : {2048.0, 8192.0}) points.push_back(gemm_kernel_point(DataType::bf16, tokens, n, 4096.0, 1.0, 0.0, 2.0, "odd"));
  }
  points = measured(points, gpu, truth, 0.02, 13);
  const KernelFit fit = fit_kernels(points, gpu, CostParameters{});
  CHECK(relative(fit.params.gemm_eta_hopper_16bit, 0.72) < 0.03);
  CHECK(relative(fit.params.gemm_misaligned_eta, 0.3) < 0.03);
  bool listed = false;
  for (const auto& v : fit.fitted) {
    if (v.name != "gemm.misaligned_eta") continue;
    listed = true;
    CHECK(v.fitted_from.find("gemm.bf16 (6 points)") != std::string::npos);
  }
  CHECK(listed);
  // Cross-validation refits the ratio on each fold's training points: the held-out misaligned
  // points are predicted within the noise (the default ratio, 0.25, would be 20% off).
  for (const auto& r : fit.points) {
    CAPTURE(r.label);
    CHECK(std::fabs(std::log(r.held_out_predicted_s / r.measured_s)) < 0.08);
  }
  // Without misaligned points the ratio keeps its starting value.
  const KernelFit aligned_only = fit_kernels(measured(transformer_gemms(DataType::bf16, 2.0), gpu, truth, 0.02, 13), gpu,
                                             CostParameters{});
  CHECK(aligned_only.params.gemm_misaligned_eta == CostParameters{}.gemm_misaligned_eta);
}

TEST_CASE("harness GEMM layouts name their strides as cuBLASLt's column-major calls set them") {
  // kernels/gemm.cpp: ldc = m; lda = k (A transposed) or m; ldb = n (B transposed) or k.
  CHECK(harness_leading_dims("TN") == (gemm_dim_m | gemm_dim_k));
  CHECK(harness_leading_dims("NN") == (gemm_dim_m | gemm_dim_k));
  CHECK(harness_leading_dims("NT") == (gemm_dim_m | gemm_dim_n));
  CHECK(harness_leading_dims("TT") == (gemm_dim_m | gemm_dim_n | gemm_dim_k));
}

TEST_CASE("cold and hot points: the fit separates the cold start of a lone launch from the gap every kernel pays") {
  // The same 12 small-to-large GEMMs timed cold (one launch after an L2 flush) and hot (back to
  // back), made with a 2.5 us gap and a 3 us cold start at 1% noise: cold - hot = 3 us on every
  // pair, so both constants are identified (within 15%: they sit beside kernels of 8 us - 1 ms).
  const GpuSpec gpu = h100();
  CostParameters truth;
  truth.kernel_gap_s = 2.5e-6;
  truth.kernel_cold_start_s = 3.0e-6;
  std::vector<KernelPoint> points;
  for (double s : {256.0, 384.0, 512.0, 768.0, 1024.0, 1536.0, 2048.0, 3072.0, 4096.0, 6144.0, 8192.0, 12288.0}) {
    for (bool cold : {true, false}) {
      KernelPoint p = gemm_kernel_point(DataType::bf16, s, s, s, 1.0, 0.0, 2.0, cold ? "cold" : "hot");
      p.cold = cold;
      points.push_back(p);
    }
  }
  points = measured(points, gpu, truth, 0.01, 17);
  const KernelFit fit = fit_kernels(points, gpu, CostParameters{});
  CHECK(relative(fit.params.kernel_gap_s, 2.5e-6) < 0.15);
  CHECK(relative(fit.params.kernel_cold_start_s, 3.0e-6) < 0.15);
  // What a training step sees (op_time) has no cold start; a cold point's prediction adds it.
  CHECK(predict_kernel(points[0], gpu, fit.params) - predict_kernel(points[1], gpu, fit.params) ==
        doctest::Approx(fit.params.kernel_cold_start_s));
  // Cold points alone cannot tell the two apart: the cold start keeps its starting value.
  std::vector<KernelPoint> cold_only;
  for (const auto& p : points) {
    if (p.cold) cold_only.push_back(p);
  }
  CHECK(fit_kernels(cold_only, gpu, CostParameters{}).params.kernel_cold_start_s == CostParameters{}.kernel_cold_start_s);
}

TEST_CASE("a harness MoE group is predicted as its loop of launches on one stream, each with its own waves and gap") {
  // The harness times groups = 32 expert GEMMs (4096 x 256 x 7168) as a loop of cuBLASLt calls
  // on one stream (KernelPoint::streams = 1): 32 times one GEMM, gaps included, plus one cold
  // start for the sample; the model's own 4 streams (Transformer Engine) would overlap them.
  const GpuSpec gpu = h100();
  const CostParameters params;
  KernelPoint one = gemm_kernel_point(DataType::bf16, 4096, 256, 7168, 1.0, 0.0, 2.0, "one");
  one.cold = false;
  KernelPoint group = gemm_kernel_point(DataType::bf16, 4096, 256, 7168, 32.0, 0.0, 2.0, "group");
  group.op.launches = 32.0;
  group.streams = 1.0;
  CHECK(predict_kernel(group, gpu, params) ==
        doctest::Approx(32.0 * predict_kernel(one, gpu, params) + params.kernel_cold_start_s));
  KernelPoint four_streams = group;
  four_streams.streams = 0.0;  // the model's grouped_gemm_streams
  CHECK(predict_kernel(four_streams, gpu, params) < predict_kernel(group, gpu, params));
}

TEST_CASE("a point is priced at the SM clock it was measured at: compute and SM byte rates scale with it, HBM does not") {
  // H100 datasheet peaks hold at sm_clock_hz = 989.4e12 / (132 x 4096) = 1.83 GHz; a GEMM timed at
  // half that clock runs its tensor cores at half the rate, a copy keeps its HBM bandwidth.
  const GpuSpec gpu = h100();
  const CostParameters params;
  const double datasheet_clock = sm_clock_hz(gpu);
  REQUIRE(datasheet_clock == doctest::Approx(1.83e9).epsilon(0.001));
  KernelPoint gemm = gemm_kernel_point(DataType::bf16, 8192, 8192, 8192, 1.0, 0.0, 2.0, "gemm");
  gemm.cold = false;
  const double at_datasheet = predict_kernel(gemm, gpu, params);
  KernelPoint slow = gemm;
  slow.sm_clock_hz = datasheet_clock / 2.0;
  const double gap = params.kernel_gap_s;
  CHECK(predict_kernel(slow, gpu, params) - gap == doctest::Approx(2.0 * (at_datasheet - gap)).epsilon(1e-9));
  KernelPoint unknown = gemm;
  unknown.sm_clock_hz = 0.0;  // not measured: the datasheet clock
  CHECK(predict_kernel(unknown, gpu, params) == doctest::Approx(at_datasheet));

  KernelPoint copy = memory_point(4.0 * 1024 * 1024 * 1024, "memory");
  copy.cold = false;
  const double copy_time = predict_kernel(copy, gpu, params);
  copy.sm_clock_hz = datasheet_clock / 2.0;
  CHECK(predict_kernel(copy, gpu, params) == doctest::Approx(copy_time));

  // An elementwise kernel bound by the SMs' byte rate (bytes per SM per clock) slows with the clock.
  KernelPoint elementwise = memory_point(1.0 * 1024 * 1024 * 1024, "elementwise");
  elementwise.cold = false;
  CostParameters sm_bound = params;
  sm_bound.elementwise_bytes_per_sm_clock = 1.0;  // far below HBM: the SMs bind
  const double fast = predict_kernel(elementwise, gpu, sm_bound) - gap;
  elementwise.sm_clock_hz = datasheet_clock / 2.0;
  CHECK(predict_kernel(elementwise, gpu, sm_bound) - gap == doctest::Approx(2.0 * fast).epsilon(1e-9));
}
