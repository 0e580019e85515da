#include "model/op_time.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace stepcast {
namespace {

double tile_wave(double m, double n, double batch, double tm, double tn, double sms) {
  const double tiles_m = std::ceil(m / tm);
  const double tiles_n = std::ceil(n / tn);
  const double tile_eff = (m * n) / (tiles_m * tm * tiles_n * tn);
  const double tiles = batch * tiles_m * tiles_n;
  const double waves = std::ceil(tiles / sms);
  return tile_eff * tiles / (waves * sms);
}

// The peak a kernel of input type `t` runs against; FP32 without tensor cores uses the FP32 peak.
FlopRate peak_for(const GpuSpec& gpu, DataType t) {
  if (gpu.supports(t)) return gpu.peak(t);
  // Formats the GPU has no tensor-core mode for run at the next wider one it has.
  for (DataType wider : {DataType::bf16, DataType::fp16, DataType::tf32, DataType::fp32}) {
    if (gpu.supports(wider)) return gpu.peak(wider);
  }
  return FlopRate(1.0);
}

}  // namespace

FlopRate gemm_peak(const GpuSpec& gpu, DataType t) {
  if (t == DataType::nvfp4 && gpu.nvfp4_gemm_over_fp8 > 0.0 && gpu.supports(DataType::nvfp4) &&
      gpu.supports(DataType::fp8)) {
    return gpu.peak(DataType::fp8) * gpu.nvfp4_gemm_over_fp8;
  }
  return peak_for(gpu, t);
}

// Exponentials (MUFU.EX2) per SM per clock on compute capability 8.x-10.0: CUDA C++ Programming
// Guide, "Arithmetic Instructions" throughput table.
constexpr double kSfuExpPerSmClock = 16.0;

double dense_16bit_flops_per_sm_clock(GpuArchitecture arch) {
  switch (arch) {
    case GpuArchitecture::ampere: return 2048.0;    // A100: 312 TFLOP/s = 108 SMs x 1.41 GHz x 2048
    case GpuArchitecture::ada: return 1024.0;       // L40S: 362 TFLOP/s = 142 SMs x 2.52 GHz x 1024
    case GpuArchitecture::hopper: return 4096.0;    // H100: 989.4 TFLOP/s = 132 SMs x 1.83 GHz x 4096
    case GpuArchitecture::blackwell: return 8192.0; // B200: 2250 TFLOP/s = 148 SMs x 1.86 GHz x 8192
    case GpuArchitecture::cdna3: return 2048.0;     // MI300X: 1307 TFLOP/s = 304 CUs x 2.1 GHz x 2048
  }
  return 4096.0;
}

double architecture_sfu_exp_per_sm_clock(GpuArchitecture arch) {
  return arch == GpuArchitecture::cdna3 ? 0.0 : kSfuExpPerSmClock;
}

double sfu_exp_per_sm_clock(const GpuSpec& gpu) {
  return gpu.sfu_exp_per_sm_clock > 0.0 ? gpu.sfu_exp_per_sm_clock : architecture_sfu_exp_per_sm_clock(gpu.architecture);
}

double flash_doubled_sfu_speedup(const GpuSpec& gpu, bool backward, const CostParameters& params) {
  const double own = architecture_sfu_exp_per_sm_clock(gpu.architecture);
  if (own <= 0.0 || sfu_exp_per_sm_clock(gpu) < 2.0 * own) return 1.0;
  return backward ? params.flash_bwd_speedup_doubled_sfu : params.flash_fwd_speedup_doubled_sfu;
}

double flash_fp8_speedup(const GpuSpec& gpu, bool backward, const CostParameters& params) {
  switch (gpu.architecture) {
    case GpuArchitecture::hopper:
      return backward ? params.flash_fp8_bwd_speedup_hopper : params.flash_fp8_fwd_speedup_hopper;
    case GpuArchitecture::blackwell:
      if (flash_doubled_sfu_speedup(gpu, backward, params) > 1.0) {
        return backward ? params.flash_fp8_bwd_speedup_blackwell_ultra : params.flash_fp8_fwd_speedup_blackwell_ultra;
      }
      return backward ? params.flash_fp8_bwd_speedup_blackwell : params.flash_fp8_fwd_speedup_blackwell;
    default:
      return 1.0;  // no FP8 attention measurement (the scenario checks reject it there)
  }
}

double sm_clock_hz(const GpuSpec& gpu) {
  const double peak = std::max(gpu.peak(DataType::bf16).value(), gpu.peak(DataType::fp16).value());
  if (peak <= 0.0 || gpu.sm_count <= 0) return 0.0;
  return peak / (gpu.sm_count * dense_16bit_flops_per_sm_clock(gpu.architecture));
}

GemmTiling gemm_tiling(const GemmShape& shape, int sm_count, const CostParameters& params) {
  if (shape.m <= 0.0 || shape.n <= 0.0) return {};
  const double sms = std::max(sm_count, 1);
  GemmTiling best;
  best.efficiency = 0.0;
  const auto consider = [&](double batch, double tm, double tn) {
    const double e = tile_wave(shape.m, shape.n, batch, tm, tn, sms);
    if (e > best.efficiency) best = {e, batch * std::ceil(shape.m / tm) * std::ceil(shape.n / tn)};
  };
  const double large_m = params.gemm_tile_large_m;
  const double large_n = params.gemm_tile_large_n;
  const double small = params.gemm_tile_small;
  consider(shape.batch, large_m, large_n);
  consider(shape.batch, large_n, large_m);
  consider(shape.batch, small, small);
  if (shape.m < small) {
    // Skinny: small-M tiles, with K split over CTAs until the SMs are full.
    const double tm = params.gemm_tile_skinny_m;
    const double tn = params.gemm_tile_skinny_n;
    const double tiles = shape.batch * std::ceil(shape.m / tm) * std::ceil(shape.n / tn);
    const double max_split = std::max(1.0, std::floor(shape.k / params.gemm_split_k_min_depth));
    const double split = std::clamp(std::floor(sms / tiles), 1.0, max_split);
    consider(shape.batch * split, tm, tn);
  }
  return best;
}

double gemm_wave_tile_efficiency(const GemmShape& shape, int sm_count, const CostParameters& params) {
  return gemm_tiling(shape, sm_count, params).efficiency;
}

double gemm_output_bytes(DataType dtype) {
  switch (dtype) {
    case DataType::fp32:
    case DataType::tf32: return 4.0;  // fp32 C
    case DataType::int8: return 4.0;  // int32 C (cuBLASLt CUBLAS_COMPUTE_32I; the harness's int8 GEMMs)
    case DataType::fp16:
    case DataType::bf16:
    case DataType::fp8:  // 8- and 4-bit inputs write a 16-bit C (Transformer Engine, the harness's FP8 GEMMs)
    case DataType::int4:
    case DataType::mxfp8:
    case DataType::nvfp4: return 2.0;
  }
  return 2.0;
}

double gemm_epilogue_depth(DataType dtype, const GpuSpec& gpu, const CostParameters& params) {
  const double clock = sm_clock_hz(gpu);
  if (params.gemm_epilogue_rate <= 0.0 || clock <= 0.0) return 0.0;
  const double flops_per_sm_clock = gemm_peak(gpu, dtype).value() / (gpu.sm_count * clock);
  return gemm_output_bytes(dtype) * flops_per_sm_clock / (2.0 * params.gemm_epilogue_rate);
}

namespace {
bool stride_not_multiple(const GemmShape& shape, DataType dtype, double alignment_bytes) {
  const double bytes = value_bytes_per_element(dtype);
  for (const auto& [bit, dim] : {std::pair{gemm_dim_m, shape.m}, {gemm_dim_n, shape.n}, {gemm_dim_k, shape.k}}) {
    if ((shape.leading & bit) != 0 && std::fmod(dim * bytes, alignment_bytes) != 0.0) return true;
  }
  return false;
}
}  // namespace

bool gemm_sector_misaligned(const GemmShape& shape, DataType dtype) {
  constexpr double kSectorBytes = 32.0;  // L2 and DRAM access granularity
  // SIMT fp32 kernels feed their FMAs at 1/16 of the tensor cores' rate and do not load with TMA:
  // a few more sectors per row cannot bound them.
  return dtype != DataType::fp32 && !gemm_misaligned(shape, dtype) && stride_not_multiple(shape, dtype, kSectorBytes);
}

double gemm_depth_efficiency(double k, DataType dtype, const GpuSpec& gpu, const CostParameters& params) {
  return k / (k + params.gemm_k_half + gemm_epilogue_depth(dtype, gpu, params));
}

bool gemm_misaligned(const GemmShape& shape, DataType dtype) {
  constexpr double kStrideAlignmentBytes = 16.0;  // TMA global strides (cuTensorMapEncodeTiled)
  // The data tensor's stride: block scales live in their own tensor (datatype.h).
  return stride_not_multiple(shape, dtype, kStrideAlignmentBytes);
}

namespace {

// The key blocks the causal CTAs of one (sequence, head) visit: query tile i (0-based) holds rows
// offset + [iT, iT + T) of a bottom-right aligned mask (the queries are the last seq_q of seq_kv
// positions) and sees keys [row - W + 1, row] (no window: [0, row]), so it visits key blocks
// max(i + lo, 0) .. min(i + hi, last) with hi = floor((offset + T - 1) / T) and
// lo = floor((offset - W + 1) / T): floor((i T + a) / T) = i + floor(a / T) for whole i.
struct CausalVisits {
  double total = 0.0;    // over the query tiles
  double longest = 0.0;  // the longest tile's
};

CausalVisits causal_visits(double q_tiles, double kv_blocks, double offset, double window, double tile) {
  const double n = q_tiles;
  const double last = kv_blocks - 1.0;
  const double hi = std::floor((offset + tile - 1.0) / tile);
  const bool windowed = window > 0.0;
  const double lo = windowed ? std::floor((offset - window + 1.0) / tile) : -n;  // -n: never above 0
  const auto visits = [&](double i) { return std::min(i + hi, last) - std::max(i + lo, 0.0) + 1.0; };
  // sum of min(i + hi, last): i + hi up to tile m - 1, then last.
  const double m = std::clamp(last + 1.0 - hi, 0.0, n);
  const double upper = m * (m - 1.0) / 2.0 + m * hi + (n - m) * last;
  // sum of max(i + lo, 0): 0 below tile j, then i + lo.
  const double j = std::clamp(-lo, 0.0, n);
  const double lower = (n * (n - 1.0) - j * (j - 1.0)) / 2.0 + (n - j) * lo;
  CausalVisits out;
  out.total = upper - lower + n;
  // visits(i) rises, stays flat, then falls: its maximum is at a tile next to a clamp's corner.
  for (double i : {0.0, n - 1.0, m - 1.0, m, j - 1.0, j}) {
    out.longest = std::max(out.longest, visits(std::clamp(i, 0.0, n - 1.0)));
  }
  return out;
}

// The reference shapes of flash_reference_schedule_efficiency: the H200 torch SDPA rows the Hopper
// flash etas come from (model/cost_parameters.h), (b x h, seq) on the H200's 132 SMs.
constexpr int kFlashReferenceSms = 132;
constexpr std::array<std::pair<double, double>, 3> kFlashReferenceShapes{
    {{16.0, 4096.0}, {32.0, 4096.0}, {64.0, 2048.0}}};
// The attention of the whole training steps measured on an H200 where the flat Hopper etas match
// the steps (tests/fixtures/measured/h200_torch_training_steps_2026-12-01.json, Llama 3 8B's 32 query
// heads, cuDNN and FlashAttention-2; tests/fidelity/h200_training_step_test.cpp): (b x h, seq) =
// (32, 8192) and (64, 4096), causal, on the same 132 SMs.
constexpr std::array<std::pair<double, double>, 2> kWholeStepReferenceShapes{{{32.0, 8192.0}, {64.0, 4096.0}}};

template <std::size_t N>
double mean_schedule_efficiency(const std::array<std::pair<double, double>, N>& shapes, const FlashScheduleTerms& terms) {
  double sum = 0.0;
  for (const auto& [batch_heads, seq] : shapes) {
    sum += flash_schedule_efficiency({batch_heads, seq, seq, 128.0, true}, kFlashReferenceSms, terms);
  }
  return sum / static_cast<double>(N);
}

bool step_anchored(const AttentionShape& shape, GpuArchitecture arch) {
  return shape.kernel == AttentionKernel::best &&
         (arch == GpuArchitecture::hopper || arch == GpuArchitecture::blackwell);
}

}  // namespace

FlashScheduleTerms flash_schedule_terms(const CostParameters& params) {
  return {params.flash_shape_tile, params.flash_shape_cta_overhead_blocks, params.flash_shape_tail_fraction};
}

FlashScheduleTerms flash_schedule_terms(const AttentionShape& shape, GpuArchitecture arch, const CostParameters& params) {
  // llm-foundry's Triton kernel launches the same grid (forward: one CTA per 128-query tile of each
  // (sequence, head), no persistent scheduler; backward: 128 x 128 tiles, autotuned with or without
  // splitting over the key blocks; model/triton_attention.h) and is priced relative to
  // FlashAttention-2, so it takes FlashAttention-2's split too.
  const bool fa2_grid = shape.kernel == AttentionKernel::flash2 || shape.kernel == AttentionKernel::triton;
  if (fa2_grid && arch == GpuArchitecture::hopper) return kFlash2HopperSchedule;
  // The fitted split describes cuDNN's fused attention on Hopper and Blackwell (the rows it was
  // fitted on); other kernels and GPUs keep their flat etas.
  if (!step_anchored(shape, arch)) return {};
  return flash_schedule_terms(params);
}

double flash_reference_schedule_efficiency(const AttentionShape& shape, GpuArchitecture arch,
                                           const FlashScheduleTerms& terms) {
  return step_anchored(shape, arch) ? mean_schedule_efficiency(kWholeStepReferenceShapes, terms)
                                    : flash_reference_schedule_efficiency(terms);
}

double flash_schedule_efficiency(const AttentionShape& shape, int sm_count, const CostParameters& params) {
  return flash_schedule_efficiency(shape, sm_count, flash_schedule_terms(params));
}

double flash_schedule_efficiency(const AttentionShape& shape, int sm_count, const FlashScheduleTerms& terms) {
  const double tile = terms.tile;
  if (tile <= 0.0 || shape.batch_heads <= 0.0 || shape.seq_q <= 0.0 || shape.seq_kv <= 0.0) return 1.0;
  const double sms = std::max(sm_count, 1);
  const double overhead = terms.cta_overhead_blocks;
  const double q_tiles = std::ceil(shape.seq_q / tile);
  const double kv_blocks = std::ceil(shape.seq_kv / tile);
  if (!shape.causal) {
    // Work in (tile x tile) blocks as the flop count states it; CTAs of equal length in whole waves.
    const double counted = shape.batch_heads * shape.seq_q * shape.seq_kv / (tile * tile);
    const double makespan = std::ceil(shape.batch_heads * q_tiles / sms) * (kv_blocks + overhead);
    return makespan > 0.0 ? std::min(1.0, counted / (sms * makespan)) : 1.0;
  }
  // Causal: counted work is half the score matrix, or with a window W each query's min(i + 1, W)
  // keys (ops::flash_forward_flops); CTAs finish tail_fraction of the longest after the average.
  const double offset = std::max(shape.seq_kv - shape.seq_q, 0.0);
  const auto layer = [&](double window, double& counted, double& makespan) {
    const CausalVisits v = causal_visits(q_tiles, kv_blocks, offset, window, tile);
    const double pairs = window > 0.0 ? shape.seq_q * (window - window * (window - 1.0) / (2.0 * shape.seq_kv))
                                      : shape.seq_q * shape.seq_kv / 2.0;
    counted = shape.batch_heads * pairs / (tile * tile);
    const double longest = v.longest + overhead;
    makespan = std::max(shape.batch_heads * (v.total + q_tiles * overhead) / sms +
                            terms.tail_fraction * longest,
                        longest);
  };
  double counted = 0.0, makespan = 0.0;
  layer(0.0, counted, makespan);
  const bool windowed = shape.window > 0.0 && shape.window < shape.seq_kv && shape.windowed > 0.0;
  if (windowed) {
    // The op stands for full and windowed layers, run one after the other: their work and makespans add.
    const double share = std::min(shape.windowed, 1.0);
    double w_counted = 0.0, w_makespan = 0.0;
    layer(shape.window, w_counted, w_makespan);
    counted = (1.0 - share) * counted + share * w_counted;
    makespan = (1.0 - share) * makespan + share * w_makespan;
  }
  return makespan > 0.0 ? std::min(1.0, counted / (sms * makespan)) : 1.0;
}

double flash_reference_schedule_efficiency(const CostParameters& params) {
  return flash_reference_schedule_efficiency(flash_schedule_terms(params));
}

double flash_reference_schedule_efficiency(const FlashScheduleTerms& terms) {
  return mean_schedule_efficiency(kFlashReferenceShapes, terms);
}

double flash_score_clocks(double head_dim, GpuArchitecture arch, bool backward, const CostParameters& params) {
  constexpr double kSharedBytesPerSmClock = 128.0;  // 32 banks x 4 bytes; FlashAttention-4: B200 as H100
  constexpr double kTile = 128.0;                   // M = N: the Q tile and K/V block of the count below
  constexpr double kForwardFlopsPerColumn = 4.0;    // per head-dim column of a score: Q K^T and P V
  constexpr double kBackwardFlopsPerColumn = 10.0;  // Q K^T again, dP, dV, dK, dQ
  const double d = head_dim;
  const double tensor = (backward ? kBackwardFlopsPerColumn : kForwardFlopsPerColumn) * d /
                        dense_16bit_flops_per_sm_clock(arch);
  // Shared-memory bytes per score of one (T x T) tile step, 16-bit operands: the tensor cores read
  // both operands from shared memory, except a P or dS already in tensor memory or registers.
  // Forward: Q and K for S, V for P V: (T d + 2 T d) x 2 / T^2 = 6 d / T. Backward: K, Q (S); V, dO
  // (dP); dO (dV); Q (dK); K (dQ): 7 T d x 2; dS written and read back for dQ: 2 T^2 x 2; dQ's
  // FP32 partial staged for its reduce-add: 2 T d x 4: 22 d / T + 4. At d = 128 that is 1.3x the
  // backward's MMA time on B200, within FlashAttention-4's finding that its backward is bound by
  // shared memory, 25-60% above the MMAs.
  const double shared_bytes = backward ? 22.0 * d / kTile + 4.0 : 6.0 * d / kTile;
  const double data = std::max(tensor, shared_bytes / kSharedBytesPerSmClock);
  const double exp = 1.0 / kSfuExpPerSmClock;
  const double hidden = backward ? 0.0 : std::clamp(params.flash_softmax_hidden(arch), 0.0, 1.0);
  return std::max(data, exp) + (1.0 - hidden) * std::min(data, exp);
}

double flash_head_dim_efficiency(double head_dim, GpuArchitecture arch, bool backward, const CostParameters& params) {
  if (head_dim <= 0.0 || arch == GpuArchitecture::cdna3) return 1.0;  // no SFU rate sourced for CDNA3
  constexpr double kReferenceHeadDim = 128.0;  // the head dim the flash etas were measured at
  // FLOPs per clock at head_dim over FLOPs per clock at the reference (FLOPs per score scale with d).
  return (head_dim / flash_score_clocks(head_dim, arch, backward, params)) /
         (kReferenceHeadDim / flash_score_clocks(kReferenceHeadDim, arch, backward, params));
}

OpBound op_bound(const OpTiming& t) {
  if (t.gap > t.compute && t.gap > t.memory) return OpBound::kernel_gap;
  return t.memory > t.compute ? OpBound::memory : OpBound::compute;
}

Seconds op_time(const Op& op, const GpuSpec& gpu, const CostParameters& params) {
  return op_timing(op, gpu, params).total;
}

OpTiming op_timing(const Op& op, const GpuSpec& gpu, const CostParameters& params) {
  if (op.launches > 1.0) {
    if (op.kind == OpKind::gemm) {
      // One GEMM per expert, `streams` at a time: ceil(launches / streams) rounds, each priced as
      // a batch of `streams` concurrent GEMMs (its own tiles, waves and kernel gap).
      const double concurrent = std::clamp(std::floor(params.grouped_gemm_streams), 1.0, op.launches);
      const double rounds = std::ceil(op.launches / concurrent);
      Op round = op;
      round.launches = 1.0;
      round.gemm.batch = op.gemm.batch * concurrent / op.launches;
      round.flops = op.flops * (concurrent / op.launches);
      round.bytes = op.bytes * (concurrent / op.launches);
      const OpTiming r = op_timing(round, gpu, params);
      return {r.compute * rounds, r.memory * rounds, r.gap * rounds, r.total * rounds};
    }
    // Memory-bound kernels launched per expert: the same bytes, a kernel gap per launch.
    Op one = op;
    one.launches = 1.0;
    OpTiming t = op_timing(one, gpu, params);
    const Seconds extra(params.kernel_gap_s * (op.launches - 1.0));
    t.gap += extra;
    t.total += extra;
    return t;
  }
  Seconds memory(0.0);
  if (op.bytes.value() > 0.0) {
    double rate = gpu.memory_bandwidth.value() * params.memory_bandwidth_eta;
    double sm_rate = 0.0;
    if (op.kind == OpKind::memory_bound || op.kind == OpKind::reduction) {
      const double per_clock = op.kind == OpKind::reduction ? params.reduction_bytes_per_sm_clock
                                                            : params.elementwise_bytes_per_sm_clock;
      sm_rate = per_clock * gpu.sm_count * sm_clock_hz(gpu);
    } else if (op.kind == OpKind::gemm) {
      const double active = std::min(gemm_tiling(op.gemm, gpu.sm_count, params).ctas, static_cast<double>(gpu.sm_count));
      sm_rate = params.gemm_stream_bytes_per_sm_clock * active * sm_clock_hz(gpu);
    }
    if (sm_rate > 0.0) rate = std::min(rate, sm_rate);
    if (rate > 0.0) memory = Seconds(op.bytes.value() / rate);
  }
  Seconds compute(0.0);
  const FlopRate sustained =
      (op.kind == OpKind::gemm ? gemm_peak(gpu, op.dtype) : peak_for(gpu, op.dtype)) * params.sustained_fraction(gpu);
  switch (op.kind) {
    case OpKind::gemm: {
      const double k = op.gemm.k;
      const double depth = k > 0.0 ? gemm_depth_efficiency(k, op.dtype, gpu, params) : 1.0;
      const double eta = params.gemm_eta(gpu.architecture, op.dtype) *
                         gemm_wave_tile_efficiency(op.gemm, gpu.sm_count, params) * depth *
                         (gemm_misaligned(op.gemm, op.dtype) ? params.gemm_misaligned_eta : 1.0) *
                         (gemm_sector_misaligned(op.gemm, op.dtype) ? params.gemm_sector_misaligned_eta : 1.0);
      compute = op.flops / (sustained * eta);
      break;
    }
    case OpKind::flash_forward:
    case OpKind::flash_backward: {
      const bool backward = op.kind == OpKind::flash_backward;
      const double eta = backward ? params.flash_backward_eta(gpu.architecture, op.attention.kernel)
                                  : params.flash_forward_eta(gpu.architecture, op.attention.kernel);
      // The etas hold at their measured shapes: a known shape scales by its schedule over theirs.
      const FlashScheduleTerms terms = flash_schedule_terms(op.attention, gpu.architecture, params);
      const double schedule = op.attention.batch_heads > 0.0
                                  ? flash_schedule_efficiency(op.attention, gpu.sm_count, terms) /
                                        flash_reference_schedule_efficiency(op.attention, gpu.architecture, terms)
                                  : 1.0;
      const double fp8 = op.attention.fp8 ? flash_fp8_speedup(gpu, backward, params) : 1.0;
      compute = op.flops / (sustained * eta * schedule * flash_doubled_sfu_speedup(gpu, backward, params) * fp8 *
                            flash_head_dim_efficiency(op.attention.head_dim, gpu.architecture, backward, params));
      break;
    }
    case OpKind::memory_bound:
    case OpKind::data_movement:
    case OpKind::reduction:
      break;
  }
  const Seconds gap(params.kernel_gap_s);
  return {compute, memory, gap, max(compute, memory) + gap};
}

Seconds ops_time(const OpList& ops, const GpuSpec& gpu, const CostParameters& params) {
  return ops_time(ops.begin(), ops.end(), gpu, params, Seconds(params.host_dispatch_s));
}

Seconds ops_time(const Op* first, const Op* last, const GpuSpec& gpu, const CostParameters& params) {
  return ops_time(first, last, gpu, params, Seconds(params.host_dispatch_s));
}

Seconds ops_time(const Op* first, const Op* last, const GpuSpec& gpu, const CostParameters& params,
                 Seconds host_per_launch) {
  Seconds total(0.0);
  double launches = 0.0;
  for (const Op* op = first; op != last; ++op) {
    total += op_time(*op, gpu, params);
    launches += op->launches;
  }
  return max(total, host_per_launch * launches);
}

}  // namespace stepcast
