#include <doctest/doctest.h>

#include <algorithm>

#include "model/op_builders.h"
#include "model/op_time.h"

using namespace stepcast;

namespace {
GpuSpec h100() {
  GpuSpec g;
  g.architecture = GpuArchitecture::hopper;
  g.dense_peak[index_of(DataType::bf16)] = units::teraflops(989.4);
  g.dense_peak[index_of(DataType::fp8)] = units::teraflops(1978.9);
  g.memory_bandwidth = units::gigabytes_per_second(3350);
  g.sm_count = 132;
  return g;
}
// B200 datasheet figures (scenarios/catalog/gpus.yaml b200).
GpuSpec b200() {
  GpuSpec g;
  g.architecture = GpuArchitecture::blackwell;
  g.dense_peak[index_of(DataType::bf16)] = units::teraflops(2250);
  g.memory_bandwidth = units::gigabytes_per_second(7700);
  g.sm_count = 148;
  return g;
}
Op gemm(double m, double n, double k, double batch = 1.0) {
  Op op;
  op.kind = OpKind::gemm;
  op.dtype = DataType::bf16;
  op.gemm = {m, n, k, batch};
  op.flops = Flops(2 * m * n * k * batch);
  op.bytes = Bytes(2 * batch * (m * k + k * n + m * n));
  return op;
}
}  // namespace

TEST_CASE("tile and wave quantization: full waves are efficient, a partial last wave is not") {
  const CostParameters params;
  // 132 SMs. 8192 x 8192 with 128x256 tiles = 64 x 32 = 2048 tiles: 16 waves (15.5 full) -> 0.97.
  CHECK(gemm_wave_tile_efficiency({8192, 8192, 8192, 1}, 132, params) == doctest::Approx(2048.0 / (16 * 132)));
  // 1024 x 1024: 32 tiles of 128x256 or 64 of 128x128 on 132 SMs: at most 64/132 busy.
  CHECK(gemm_wave_tile_efficiency({1024, 1024, 1024, 1}, 132, params) == doctest::Approx(64.0 / 132));
  // A ragged edge wastes part of the last tile: m = 130 needs two 128-row tiles.
  CHECK(gemm_wave_tile_efficiency({130, 256 * 132, 4096, 1}, 132, params) < 0.6);
}

TEST_CASE("a large GEMM runs at the derated burst efficiency of the architecture's tensor cores") {
  const CostParameters params;
  const Op op = gemm(16384, 16384, 16384);
  const double wave = gemm_wave_tile_efficiency(op.gemm, 132, params);
  const double depth = 16384.0 / (16384.0 + params.gemm_k_half);
  const double expected =
      op.flops.value() / (989.4e12 * params.sustained_derate * params.gemm_eta_hopper_16bit * wave * depth) +
      params.kernel_gap_s;
  CHECK(op_time(op, h100(), params).value() == doctest::Approx(expected));
}

TEST_CASE("a GEMM with a tiny reduction depth pays its tiles' prologue and epilogue; elementwise ops are bound by memory") {
  const CostParameters params;
  // Attention scores of an unfused kernel: k = 64, so each tile's fixed costs (k_half of depth)
  // dominate: eta scales by 64 / (64 + k_half), and the time is never below the memory time.
  const Op scores = gemm(4096, 4096, 64, 64);
  const double wave = gemm_wave_tile_efficiency(scores.gemm, 132, params);
  const double compute = scores.flops.value() / (989.4e12 * params.sustained_derate * params.gemm_eta_hopper_16bit * wave *
                                                 (64.0 / (64.0 + params.gemm_k_half)));
  const double memory = scores.bytes.value() / (3350e9 * params.memory_bandwidth_eta);
  CHECK(op_time(scores, h100(), params).value() == doctest::Approx(std::max(compute, memory) + params.kernel_gap_s));
  // A kernel that only moves bytes (an add, a copy) is bound by HBM (3.35 TB/s x eta) alone.
  Op add;
  add.kind = OpKind::data_movement;
  add.bytes = units::gigabytes(1.0);
  CHECK(op_time(add, h100(), params).value() == doctest::Approx(1e9 / (3350e9 * params.memory_bandwidth_eta) + params.kernel_gap_s));
  // One with arithmetic per byte (dropout, GELU) runs at the slower of HBM and its SMs' byte rate:
  // on an H100, 11.7 B/clock x 132 SMs x 1.83 GHz = 2.83 TB/s < 3.35 TB/s x 0.86 = 2.88 TB/s.
  Op gelu = add;
  gelu.kind = OpKind::memory_bound;
  const double elementwise_rate = params.elementwise_bytes_per_sm_clock * 132 * (989.4e12 / (132 * 4096.0));
  CHECK(elementwise_rate < 3350e9 * params.memory_bandwidth_eta);
  CHECK(op_time(gelu, h100(), params).value() == doctest::Approx(1e9 / elementwise_rate + params.kernel_gap_s));
  // On a B200 the SM rate (148 SMs x 1.86 GHz) binds far below HBM (7.7 TB/s x 0.86); data
  // movement does not pay it.
  CHECK(op_time(gelu, b200(), params).value() > 1.5 * op_time(add, b200(), params).value());
  // A reduction (norm, softmax) is bound by its SMs: 6.8 B/clock x 132 SMs x 1.83 GHz.
  Op norm = add;
  norm.kind = OpKind::reduction;
  const double sm_rate = params.reduction_bytes_per_sm_clock * 132 * (989.4e12 / (132 * 4096.0));
  CHECK(op_time(norm, h100(), params).value() == doctest::Approx(1e9 / sm_rate + params.kernel_gap_s));
  CHECK(sm_clock_hz(h100()) == doctest::Approx(1.83e9).epsilon(0.001));
}

TEST_CASE("FP8 GEMMs run against the FP8 peak") {
  const CostParameters params;
  Op op = gemm(16384, 16384, 16384);
  const Seconds bf16 = op_time(op, h100(), params);
  op.dtype = DataType::fp8;
  op.bytes = op.bytes / 2.0;
  const Seconds fp8 = op_time(op, h100(), params);
  CHECK(fp8.value() == doctest::Approx(bf16.value() * params.gemm_eta_hopper_16bit / (2.0 * params.gemm_eta_fp8)).epsilon(0.01));
}

TEST_CASE("a list of tiny ops costs at least the host's dispatch time per op") {
  const CostParameters params;
  OpList ops;
  Op tiny;
  tiny.kind = OpKind::memory_bound;
  tiny.bytes = Bytes(1024);
  for (int i = 0; i < 10; ++i) ops.push(tiny);
  CHECK(ops_time(ops, h100(), params).value() == doctest::Approx(10 * params.host_dispatch_s));
}

TEST_CASE("a training layer's host time per launch is a Transformer Engine module's, 2.69x a PyTorch op's") {
  // TransformerEngine issue #2053: te.Linear forward CPU time over torch.nn.Linear's on the same
  // CPU, 99.66 / 37.08 us (GB200) = 2.69 and 90.53 / 33.17 us (GH200) = 2.73.
  const CostParameters params;
  CHECK(params.te_host_dispatch_factor == doctest::Approx(99.66 / 37.08).epsilon(0.001));
  CHECK(params.te_host_dispatch_factor == doctest::Approx(90.53 / 33.17).epsilon(0.02));
  CHECK(params.training_host_dispatch_s() == doctest::Approx(2.69 * params.host_dispatch_s));
  // Ten tiny ops dispatched at that rate: 10 x 12 us x 2.69 = 323 us, the host bound of the list.
  OpList ops;
  Op tiny;
  tiny.kind = OpKind::memory_bound;
  tiny.bytes = Bytes(1024);
  for (int i = 0; i < 10; ++i) ops.push(tiny);
  const Seconds host(params.training_host_dispatch_s());
  CHECK(ops_time(ops.begin(), ops.end(), h100(), params, host).value() == doctest::Approx(10 * 2.69 * 12.0e-6));
  // A list whose GPU time exceeds its dispatch time is GPU-bound whatever the host rate.
  Op big = tiny;
  big.bytes = Bytes(4.0e9);
  OpList heavy;
  heavy.push(big);
  CHECK(ops_time(heavy.begin(), heavy.end(), h100(), params, host).value() ==
        doctest::Approx(op_time(big, h100(), params).value()));
}

TEST_CASE("every cost constant is visible to the visitor with a source") {
  CostParameters params;
  int count = 0;
  bool all_sourced = true;
  params.for_each_constant([&](std::string_view name, double& value, std::string_view source) {
    ++count;
    all_sourced = all_sourced && !name.empty() && !source.empty() && value >= 0.0;
  });
  CHECK(count >= 25);
  CHECK(all_sourced);
  // Perturbing through the visitor changes the struct (sensitivity analysis relies on it).
  params.for_each_constant([](std::string_view name, double& value, std::string_view) {
    if (name == "memory.bandwidth_eta") value = 0.5;
  });
  CHECK(params.memory_bandwidth_eta == 0.5);
}

TEST_CASE("a per-expert GEMM loop runs its launches four at a time, each round with its own waves and gap") {
  // 16 experts' 2048 x 1536 x 2048 GEMMs as Transformer Engine's GroupedLinear issues them: one
  // cuBLAS call per expert, round-robin on 4 streams -> 16 / 4 = 4 rounds of 4 concurrent GEMMs.
  const CostParameters params;
  REQUIRE(params.grouped_gemm_streams == 4.0);
  Op looped = gemm(2048, 1536, 2048, 16);
  looped.launches = 16;
  const Seconds round = op_time(gemm(2048, 1536, 2048, 4), h100(), params);
  CHECK(op_time(looped, h100(), params).value() == doctest::Approx(4.0 * round.value()));
  // Slower than one launch scheduling all 16 groups' tiles together (4 gaps, 4 partial last waves).
  CHECK(op_time(looped, h100(), params).value() > op_time(gemm(2048, 1536, 2048, 16), h100(), params).value());
  // Fewer experts than streams: one round of them all.
  Op two = gemm(2048, 1536, 2048, 2);
  two.launches = 2;
  CHECK(op_time(two, h100(), params).value() == doctest::Approx(op_time(gemm(2048, 1536, 2048, 2), h100(), params).value()));
}

TEST_CASE("a memory-bound op launched per expert pays a kernel gap per launch and the host a dispatch per launch") {
  const CostParameters params;
  Op one;
  one.kind = OpKind::memory_bound;
  one.bytes = Bytes(64.0 * 1024 * 1024);
  Op per_expert = one;
  per_expert.launches = 32;
  CHECK(op_time(per_expert, h100(), params).value() ==
        doctest::Approx(op_time(one, h100(), params).value() + 31 * params.kernel_gap_s));
  // 32 tiny launches: the host's dispatch bounds the list.
  OpList ops;
  Op tiny = one;
  tiny.bytes = Bytes(1024);
  tiny.launches = 32;
  ops.push(tiny);
  CHECK(ops_time(ops, h100(), params).value() == doctest::Approx(32 * params.host_dispatch_s));
  // A stretch dispatched from a standing start is bounded by its own launches.
  CHECK(ops_time(ops.begin(), ops.end(), h100(), params).value() == doctest::Approx(32 * params.host_dispatch_s));
}

// flash_schedule_efficiency (model/op_time.h): counted work over SMs x makespan in 128 x 128 blocks.
namespace {
CostParameters flash_shape(double overhead, double tail) {
  CostParameters p;
  p.flash_shape_tile = 128.0;
  p.flash_shape_cta_overhead_blocks = overhead;
  p.flash_shape_tail_fraction = tail;
  return p;
}
}  // namespace

TEST_CASE("flash attention split into CTAs: whole waves of equal non-causal CTAs, each paying its overhead") {
  // 132 (sequence, head) pairs x 8 query tiles of 1024 tokens = 1056 CTAs = 8 full waves on 132 SMs,
  // each visiting 8 key blocks: 64 blocks per SM, all of them counted work.
  const AttentionShape shape{132.0, 1024.0, 1024.0, 128.0, false};
  CHECK(flash_schedule_efficiency(shape, 132, flash_shape(0.0, 0.0)) == doctest::Approx(1.0));
  // One block of overhead per CTA: 8 waves x 9 blocks for the same 64 counted.
  CHECK(flash_schedule_efficiency(shape, 132, flash_shape(1.0, 0.0)) == doctest::Approx(64.0 / 72.0));
  // 133 SMs' worth of CTAs needs a ninth wave: 1056 / 131 SMs -> ceil = 9 waves.
  CHECK(flash_schedule_efficiency(shape, 131, flash_shape(0.0, 0.0)) ==
        doctest::Approx(132.0 * 64.0 / (131.0 * 9.0 * 8.0)));
}

TEST_CASE("flash attention split into CTAs: a small causal problem is bound by its longest CTA") {
  // One head of 4096 causal tokens: 32 query tiles visiting 1..32 key blocks (528 in all, 4 per SM),
  // but the last tile alone takes 32 blocks; counted work is 4096^2 / 2 / 128^2 = 512 blocks.
  const AttentionShape shape{1.0, 4096.0, 4096.0, 128.0, true};
  CHECK(flash_schedule_efficiency(shape, 132, flash_shape(0.0, 0.0)) == doctest::Approx(512.0 / (132.0 * 32.0)));
}

TEST_CASE("flash attention split into CTAs: a large causal problem pays the diagonal, its overheads and a tail") {
  // 528 pairs x 16 tiles of 2048 tokens: visits 16 * 17 / 2 = 136 blocks + 16 overheads per pair,
  // 528 * 152 / 132 = 608 blocks per SM, plus half the longest CTA (16 + 1 blocks): 616.5.
  // Counted: 528 * 2048^2 / 2 / 128^2 = 67584 blocks.
  const AttentionShape shape{528.0, 2048.0, 2048.0, 128.0, true};
  CHECK(flash_schedule_efficiency(shape, 132, flash_shape(1.0, 0.5)) == doctest::Approx(67584.0 / (132.0 * 616.5)));
}

TEST_CASE("flash attention split into CTAs: queries at the end of a longer context see every earlier key block") {
  // 128 queries after 896 cached keys (1024 in all), causal: the one query tile visits all 8 key
  // blocks; counted work is half of 128 x 1024 (the flop count's causal convention) = 4 blocks.
  const AttentionShape shape{132.0, 128.0, 1024.0, 128.0, true};
  CHECK(flash_schedule_efficiency(shape, 132, flash_shape(0.0, 0.0)) == doctest::Approx(4.0 / 8.0));
}

TEST_CASE("flash attention head dimension: the SFU's exponentials cost more, relative to the matrix work, at small head dims") {
  const CostParameters params;  // nothing hidden
  // Hopper: 4096 flops/SM/clock / 16 exp/SM/clock = 256 flops per score = 64 forward columns (4 flops each).
  CHECK(flash_head_dim_efficiency(64.0, GpuArchitecture::hopper, false, params) ==
        doctest::Approx((64.0 / 128.0) / (128.0 / 192.0)));
  CHECK(flash_head_dim_efficiency(128.0, GpuArchitecture::hopper, false, params) == doctest::Approx(1.0));
  // Backward does 10 flops per column: 25.6 columns.
  CHECK(flash_head_dim_efficiency(64.0, GpuArchitecture::hopper, true, params) ==
        doctest::Approx((64.0 / 89.6) / (128.0 / 153.6)));
  // Ampere: 2048 / 16 / 4 = 32 columns; head dim 256 runs faster per flop than 128.
  CHECK(flash_head_dim_efficiency(256.0, GpuArchitecture::ampere, false, params) ==
        doctest::Approx((256.0 / 288.0) / (128.0 / 160.0)));
  // Half of it hidden under the matrix work: 32 columns on Hopper.
  CostParameters half;
  half.flash_softmax_hidden_fraction = 0.5;
  CHECK(flash_head_dim_efficiency(64.0, GpuArchitecture::hopper, false, half) == doctest::Approx((64.0 / 96.0) / (128.0 / 160.0)));
  CHECK(flash_head_dim_efficiency(0.0, GpuArchitecture::hopper, false, params) == 1.0);
}

TEST_CASE("flash attention head dimension on Blackwell: the forward costs the longer of its tensor and exponential time") {
  const CostParameters params;  // Blackwell hides the exponentials under the MMAs (all of them)
  // Forward: 4 x 128 / 8192 = 1/16 clock of tensor work per score at d = 128, equal to one
  // exponential (1/16); at d = 64 the tensor half of that, so the exponential bounds the tile:
  // 64 / (1/16) over 128 / (1/16) = 0.5.
  CHECK(flash_score_clocks(128.0, GpuArchitecture::blackwell, false, params) == doctest::Approx(1.0 / 16.0));
  CHECK(flash_head_dim_efficiency(64.0, GpuArchitecture::blackwell, false, params) == doctest::Approx(0.5));
  // Above 128 the tensor work is the longer: the rate is the tensor rate, as at 128.
  CHECK(flash_head_dim_efficiency(256.0, GpuArchitecture::blackwell, false, params) == doctest::Approx(1.0));
  // Backward: shared memory (22 d / 128 + 4 bytes per score at 128 bytes per clock) is longer than
  // the tensor work (10 d / 8192), and the exponential (1/16) adds on top, nothing hidden:
  // d = 128: 26 / 128 + 1/16; d = 64: 15 / 128 + 1/16.
  const double b128 = 26.0 / 128.0 + 1.0 / 16.0;
  const double b64 = 15.0 / 128.0 + 1.0 / 16.0;
  CHECK(flash_score_clocks(128.0, GpuArchitecture::blackwell, true, params) == doctest::Approx(b128));
  CHECK(flash_head_dim_efficiency(64.0, GpuArchitecture::blackwell, true, params) ==
        doctest::Approx((64.0 / b64) / (128.0 / b128)));
  // None hidden (the other GPUs' default) gives the sum forward: (64 / (1/32 + 1/16)) / (128 / (1/8)).
  CostParameters none = params;
  none.flash_softmax_hidden_fraction_blackwell = 0.0;
  CHECK(flash_head_dim_efficiency(64.0, GpuArchitecture::blackwell, false, none) ==
        doctest::Approx((64.0 / (3.0 / 32.0)) / (128.0 / (1.0 / 8.0))));
}

TEST_CASE("flash attention split into CTAs: off without a tile or a known shape") {
  CostParameters off;
  off.flash_shape_tile = 0.0;
  CHECK(flash_schedule_efficiency({1.0, 4096.0, 4096.0, 128.0, true}, 132, off) == 1.0);
  CHECK(flash_reference_schedule_efficiency(off) == 1.0);
  CHECK(flash_schedule_efficiency({}, 132, flash_shape(1.0, 0.5)) == 1.0);
}

TEST_CASE("flash attention split into CTAs: a windowed query tile visits the key blocks its window overlaps") {
  // One head of 4096 tokens, window 1024 keys, 128-token tiles: query tile i (rows 128 i ..
  // 128 i + 127) sees keys 128 i - 1023 .. 128 i + 127, key blocks i - 8 .. i: 9 blocks from
  // tile 8 on, i + 1 before (tiles 0-7: 36 in all); 36 + 24 x 9 = 252 visits, the longest 9.
  // Counted: each query's min(i + 1, 1024) keys, 1024 x 4096 - 1024 x 1023 / 2 pairs = 232.03 blocks.
  const AttentionShape shape{1.0, 4096.0, 4096.0, 64.0, true, 1024.0, 1.0};
  const double counted = (1024.0 * 4096.0 - 1024.0 * 1023.0 / 2.0) / (128.0 * 128.0);
  // One SM: the makespan is every visit plus the overheads; with a tail, half the longest more.
  CHECK(flash_schedule_efficiency(shape, 1, flash_shape(0.0, 0.0)) == doctest::Approx(counted / 252.0));
  CHECK(flash_schedule_efficiency(shape, 1, flash_shape(2.0, 0.5)) ==
        doctest::Approx(counted / (252.0 + 32.0 * 2.0 + 0.5 * (9.0 + 2.0))));
  // Window 128: each tile visits its own block and the one before (1 for tile 0): 63 visits for
  // 4096 x 128 - 128 x 127 / 2 pairs = 31.5 blocks counted, half the work wasted on masked blocks.
  const AttentionShape narrow{1.0, 4096.0, 4096.0, 64.0, true, 128.0, 1.0};
  CHECK(flash_schedule_efficiency(narrow, 1, flash_shape(0.0, 0.0)) ==
        doctest::Approx((4096.0 * 128.0 - 128.0 * 127.0 / 2.0) / (128.0 * 128.0) / 63.0));
  // A window as long as the keys is no window: the causal split.
  const AttentionShape full{1.0, 4096.0, 4096.0, 64.0, true, 0.0, 0.0};
  const AttentionShape wide{1.0, 4096.0, 4096.0, 64.0, true, 4096.0, 1.0};
  CHECK(flash_schedule_efficiency(wide, 1, flash_shape(1.0, 0.5)) ==
        doctest::Approx(flash_schedule_efficiency(full, 1, flash_shape(1.0, 0.5))));
}

TEST_CASE("flash attention split into CTAs: a shape standing for full and windowed layers adds their work and makespans") {
  // Half the layers windowed (GPT-OSS alternates): counted and makespans are the mean of the two
  // layers', so the efficiency is their work-weighted harmonic mean.
  const CostParameters p = flash_shape(2.0, 0.5);
  const AttentionShape full{1.0, 4096.0, 4096.0, 64.0, true};
  const AttentionShape window{1.0, 4096.0, 4096.0, 64.0, true, 128.0, 1.0};
  const AttentionShape half{1.0, 4096.0, 4096.0, 64.0, true, 128.0, 0.5};
  const double c_full = 4096.0 * 4096.0 / 2.0 / (128.0 * 128.0);
  const double c_window = (4096.0 * 128.0 - 128.0 * 127.0 / 2.0) / (128.0 * 128.0);
  const double m_full = c_full / flash_schedule_efficiency(full, 1, p);
  const double m_window = c_window / flash_schedule_efficiency(window, 1, p);
  CHECK(flash_schedule_efficiency(half, 1, p) == doctest::Approx((c_full + c_window) / (m_full + m_window)));
}

TEST_CASE("flash attention's etas hold at their reference shapes: op_time scales a known shape by its schedule over theirs") {
  const CostParameters p;
  // The kernel-measured reference: the H200 torch SDPA shapes (b x h, seq) = (16, 4096), (32, 4096),
  // (64, 2048) on 132 SMs, their mean.
  const double kernel_mean = (flash_schedule_efficiency({16.0, 4096.0, 4096.0, 128.0, true}, 132, p) +
                              flash_schedule_efficiency({32.0, 4096.0, 4096.0, 128.0, true}, 132, p) +
                              flash_schedule_efficiency({64.0, 2048.0, 2048.0, 128.0, true}, 132, p)) / 3.0;
  CHECK(flash_reference_schedule_efficiency(p) == doctest::Approx(kernel_mean));
  // cuDNN's fused attention (best) on Hopper is anchored at the whole-step shapes (32, 8192) and
  // (64, 4096) instead, where the flat etas match measured steps.
  const double step_mean = (flash_schedule_efficiency({32.0, 8192.0, 8192.0, 128.0, true}, 132, p) +
                            flash_schedule_efficiency({64.0, 4096.0, 4096.0, 128.0, true}, 132, p)) / 2.0;
  const FlashScheduleTerms terms = flash_schedule_terms(p);
  const AttentionShape best_shape{64.0, 16384.0, 16384.0, 128.0, true};
  CHECK(flash_reference_schedule_efficiency(best_shape, GpuArchitecture::hopper, terms) == doctest::Approx(step_mean));
  CHECK(step_mean > kernel_mean);  // the steps' shapes split better than the small torch calls
  Op op;
  op.kind = OpKind::flash_forward;
  op.dtype = DataType::bf16;
  op.attention = best_shape;
  op.flops = Flops(4.0 * 64.0 * 16384.0 * 16384.0 * 128.0 / 2.0);
  const double schedule = flash_schedule_efficiency(op.attention, 132, p) / step_mean;
  const double compute = op.flops.value() / (989.4e12 * p.sustained_derate * p.flash_fwd_eta_hopper * schedule);
  CHECK(op_time(op, h100(), p).value() == doctest::Approx(compute + p.kernel_gap_s));
  // At one of the anchor shapes the op runs at the eta itself...
  op.attention = {32.0, 8192.0, 8192.0, 128.0, true};
  op.flops = Flops(4.0 * 32.0 * 8192.0 * 8192.0 * 128.0 / 2.0);
  const double at_anchor = op.flops.value() / (989.4e12 * p.sustained_derate * p.flash_fwd_eta_hopper) *
                           step_mean / flash_schedule_efficiency(op.attention, 132, p);
  CHECK(op_time(op, h100(), p).value() == doctest::Approx(at_anchor + p.kernel_gap_s));
  // ... and an unknown shape runs at the eta itself.
  op.attention = {0.0, 0.0, 0.0, 128.0, true};
  CHECK(op_time(op, h100(), p).value() ==
        doctest::Approx(op.flops.value() / (989.4e12 * p.sustained_derate * p.flash_fwd_eta_hopper) + p.kernel_gap_s));
  // Tile 0 turns the split off: a known shape then runs at the flat eta.
  CostParameters off = p;
  off.flash_shape_tile = 0.0;
  op.attention = best_shape;
  op.flops = Flops(4.0 * 64.0 * 16384.0 * 16384.0 * 128.0 / 2.0);
  CHECK(op_time(op, h100(), off).value() ==
        doctest::Approx(op.flops.value() / (989.4e12 * off.sustained_derate * off.flash_fwd_eta_hopper) + off.kernel_gap_s));
}

TEST_CASE("a GEMM whose strides are not multiples of 16 bytes runs at gemm_misaligned_eta; a token count is not a stride") {
  const CostParameters params;
  // Strides in bytes: 2500 x 2 = 5000 = 16 x 312.5 (misaligned), 2500 x 4 = 10000 = 16 x 625
  // (aligned), 1000 x 1 = 1000 = 16 x 62.5 (misaligned), 1000 x 2 = 2000 = 16 x 125 (aligned).
  CHECK(gemm_misaligned({2500, 2500, 2500, 1}, DataType::bf16));
  CHECK_FALSE(gemm_misaligned({2500, 2500, 2500, 1}, DataType::tf32));
  CHECK(gemm_misaligned({1000, 1000, 1000, 1}, DataType::int8));
  CHECK_FALSE(gemm_misaligned({1000, 1000, 1000, 1}, DataType::bf16));
  // A prefill of 1001 tokens through a 4096 -> 4096 projection: the forward GEMM's strides are k
  // (x and W) and n (y), never m = tokens; its weight gradient's are m and n (16-bit formats), but
  // an FP8 weight gradient runs TN on transposed copies, strided by k = tokens.
  CHECK_FALSE(gemm_misaligned({1001, 4096, 4096, 1}, DataType::bf16));
  CHECK(gemm_misaligned({1001, 4096, 4096, 1, gemm_dim_m}, DataType::bf16));
  CHECK_FALSE(gemm_misaligned({4096, 4096, 1001, 1, ops::weight_gradient_leading(DataType::bf16)}, DataType::bf16));
  CHECK(gemm_misaligned({4096, 4096, 1001, 1, ops::weight_gradient_leading(DataType::fp8)}, DataType::fp8));
  // Block-scaled formats keep their scales in a separate tensor, so the data stride is the
  // element's own size: GPT-OSS's hidden 2880 is 2880 bytes in MXFP8 (16 x 180, aligned) and
  // 1440 in NVFP4 (16 x 90), not 2880 x (1 + 1/32) = 2970 bytes (16 x 185.6), which the stored
  // size with its scales would give; Qwen3-30B-A3B's expert width 768 likewise (768 bytes).
  CHECK_FALSE(gemm_misaligned({8192, 5760, 2880, 1}, DataType::mxfp8));
  CHECK_FALSE(gemm_misaligned({8192, 768, 2048, 1}, DataType::mxfp8));
  CHECK_FALSE(gemm_misaligned({8192, 5760, 2880, 1}, DataType::nvfp4));
  // Odd widths still miss: 1000 elements are 1000 bytes in MXFP8 (16 x 62.5), 500 in NVFP4.
  CHECK(gemm_misaligned({1000, 1000, 1000, 1}, DataType::mxfp8));
  CHECK(gemm_misaligned({1000, 1000, 1000, 1}, DataType::nvfp4));
  // The time: the aligned formula with eta scaled by the ratio.
  Op op = gemm(2500, 2500, 2500);
  const double wave = gemm_wave_tile_efficiency(op.gemm, 132, params);
  const double depth = 2500.0 / (2500.0 + params.gemm_k_half);
  const double compute = op.flops.value() / (989.4e12 * params.sustained_derate * params.gemm_eta_hopper_16bit * wave *
                                             depth * params.gemm_misaligned_eta);
  CHECK(op_time(op, h100(), params).value() == doctest::Approx(compute + params.kernel_gap_s));
  Op aligned = gemm(2560, 2560, 2560);
  CHECK(op_time(op, h100(), params) > op_time(aligned, h100(), params));
}

TEST_CASE("an unhidden epilogue adds C bytes x the precision's FLOPs per SM per clock / (2 x rate) to k_half") {
  CostParameters params;
  GpuSpec gpu = h100();  // with the H100 SXM datasheet's int8 and tf32 dense peaks
  gpu.dense_peak[index_of(DataType::int8)] = units::teraflops(1978.9);
  gpu.dense_peak[index_of(DataType::tf32)] = units::teraflops(494.7);
  // Off by default: the datasheet model is unchanged.
  CHECK(gemm_epilogue_depth(DataType::int8, gpu, params) == 0.0);
  params.gemm_epilogue_rate = 16.0;
  // H100: 16-bit 4096 FLOPs per SM per clock and a 16-bit C -> 2 x 4096 / 32 = 256; int8 runs twice
  // the rate and writes int32 C -> 4x that; tf32 half the rate with fp32 C -> the same as bf16; FP8
  // twice the rate with a bf16 C -> 2x.
  CHECK(gemm_output_bytes(DataType::int8) == 4.0);
  CHECK(gemm_output_bytes(DataType::fp8) == 2.0);
  CHECK(gemm_epilogue_depth(DataType::bf16, gpu, params) == doctest::Approx(256.0));
  CHECK(gemm_epilogue_depth(DataType::int8, gpu, params) == doctest::Approx(1024.0).epsilon(1e-4));  // 1978.9 ~ 2 x 989.4
  CHECK(gemm_epilogue_depth(DataType::tf32, gpu, params) == doctest::Approx(256.0));
  CHECK(gemm_epilogue_depth(DataType::fp8, gpu, params) == doctest::Approx(512.0).epsilon(1e-4));
  // The time: k / (k + k_half + k_epi) in place of k / (k + k_half).
  Op op = gemm(8192, 8192, 1024);
  op.dtype = DataType::int8;
  const double wave = gemm_wave_tile_efficiency(op.gemm, 132, params);
  const double depth = 1024.0 / (1024.0 + params.gemm_k_half + 1024.0);
  CHECK(gemm_depth_efficiency(1024.0, DataType::int8, gpu, params) == doctest::Approx(depth));
  const double compute = op.flops.value() /
                         (gpu.peak(DataType::int8).value() * params.sustained_derate * params.gemm_eta_int8 * wave * depth);
  CHECK(op_time(op, gpu, params).value() ==
        doctest::Approx(std::max(compute, op_timing(op, gpu, params).memory.value()) + params.kernel_gap_s));
}

TEST_CASE("a tensor-core GEMM whose strides are multiples of 16 bytes but not of 32 runs at gemm_sector_misaligned_eta") {
  CostParameters params;
  // 10000 x 1 byte (int8, fp8) and 2500 x 4 (tf32) = 10000 = 32 x 312.5; 1000 x 2 = 2000 = 32 x 62.5.
  CHECK(gemm_sector_misaligned({10000, 10000, 10000, 1}, DataType::int8));
  CHECK(gemm_sector_misaligned({2500, 2500, 2500, 1}, DataType::tf32));
  CHECK(gemm_sector_misaligned({1000, 1000, 1000, 1}, DataType::bf16));
  // 20000 bytes (bf16 10000) and 4000 (tf32 1000) are whole sectors; a 16-byte misaligned stride
  // is gemm_misaligned's, not this; SIMT fp32 never is (no TMA, 1/16 the operand feed).
  CHECK_FALSE(gemm_sector_misaligned({10000, 10000, 10000, 1}, DataType::bf16));
  CHECK_FALSE(gemm_sector_misaligned({1000, 1000, 1000, 1}, DataType::tf32));
  CHECK_FALSE(gemm_sector_misaligned({2500, 2500, 2500, 1}, DataType::bf16));
  CHECK_FALSE(gemm_sector_misaligned({2500, 2500, 2500, 1}, DataType::fp32));
  // A token count is not a stride.
  CHECK_FALSE(gemm_sector_misaligned({1000, 4096, 4096, 1}, DataType::bf16));
  // Default 1: no effect; a fitted ratio scales the time's compute part.
  Op op = gemm(1000, 1000, 1000);
  const Seconds base = op_timing(op, h100(), params).compute;
  params.gemm_sector_misaligned_eta = 0.8;
  CHECK(op_timing(op, h100(), params).compute.value() == doctest::Approx(base.value() / 0.8));
}
