#include "model/op_time.h"

#include <algorithm>
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

bool gemm_misaligned(const GemmShape& shape, DataType dtype) {
  constexpr double kStrideAlignmentBytes = 16.0;  // TMA global strides (cuTensorMapEncodeTiled)
  // The data tensor's stride: block scales live in their own tensor (datatype.h).
  const double bytes = value_bytes_per_element(dtype);
  for (const auto& [bit, dim] : {std::pair{gemm_dim_m, shape.m}, {gemm_dim_n, shape.n}, {gemm_dim_k, shape.k}}) {
    if ((shape.leading & bit) != 0 && std::fmod(dim * bytes, kStrideAlignmentBytes) != 0.0) return true;
  }
  return false;
}

double flash_schedule_efficiency(const AttentionShape& shape, int sm_count, const CostParameters& params) {
  const double tile = params.flash_shape_tile;
  if (tile <= 0.0 || shape.batch_heads <= 0.0 || shape.seq_q <= 0.0 || shape.seq_kv <= 0.0) return 1.0;
  const double sms = std::max(sm_count, 1);
  const double overhead = params.flash_shape_cta_overhead_blocks;
  const double q_tiles = std::ceil(shape.seq_q / tile);
  const double kv_blocks = std::ceil(shape.seq_kv / tile);
  // Work in (tile x tile) blocks as the flop count states it: causal counts half the scores.
  const double counted = shape.batch_heads * shape.seq_q * shape.seq_kv / (tile * tile) * (shape.causal ? 0.5 : 1.0);
  double makespan = 0.0;
  if (!shape.causal) {
    const double ctas = shape.batch_heads * q_tiles;
    makespan = std::ceil(ctas / sms) * (kv_blocks + overhead);
  } else {
    // Bottom-right aligned mask (queries are the last seq_q positions of the keys): query tile i
    // (0-based) sees min(kv_blocks, i + 1 + offset) key blocks.
    const double offset = std::floor(std::max(shape.seq_kv - shape.seq_q, 0.0) / tile);
    const double rising = std::clamp(kv_blocks - offset, 0.0, q_tiles);  // tiles before saturation
    const double visits = rising * (rising + 1.0) / 2.0 + rising * offset + (q_tiles - rising) * kv_blocks;
    const double longest = std::min(kv_blocks, q_tiles + offset) + overhead;
    const double total = shape.batch_heads * (visits + q_tiles * overhead);
    makespan = std::max(total / sms + params.flash_shape_tail_fraction * longest, longest);
  }
  return makespan > 0.0 ? std::min(1.0, counted / (sms * makespan)) : 1.0;
}

double flash_head_dim_efficiency(double head_dim, GpuArchitecture arch, bool backward, const CostParameters& params) {
  if (head_dim <= 0.0 || arch == GpuArchitecture::cdna3) return 1.0;  // no SFU rate sourced for CDNA3
  constexpr double kSfuExpPerSmClock = 16.0;   // CUDA C++ Programming Guide, arithmetic throughput
  constexpr double kForwardFlopsPerScore = 4.0;   // per head-dim column: Q K^T and P V
  constexpr double kBackwardFlopsPerScore = 10.0; // Q K^T again, dP, dV, dQ, dK
  constexpr double kReferenceHeadDim = 128.0;     // the head dim the flash etas were measured at
  // Exponential time in head-dim columns of tensor-core work: (flops/SM/clock / SFU rate) / flops per column.
  const double per_column = backward ? kBackwardFlopsPerScore : kForwardFlopsPerScore;
  const double exp_columns = dense_16bit_flops_per_sm_clock(arch) / kSfuExpPerSmClock / per_column *
                             (1.0 - std::clamp(params.flash_softmax_hidden_fraction, 0.0, 1.0));
  return (head_dim / (head_dim + exp_columns)) / (kReferenceHeadDim / (kReferenceHeadDim + exp_columns));
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
  const FlopRate sustained = peak_for(gpu, op.dtype) * params.sustained_fraction(gpu.architecture);
  switch (op.kind) {
    case OpKind::gemm: {
      const double k = op.gemm.k;
      const double depth = k > 0.0 ? k / (k + params.gemm_k_half) : 1.0;
      const double eta = params.gemm_eta(gpu.architecture, op.dtype) *
                         gemm_wave_tile_efficiency(op.gemm, gpu.sm_count, params) * depth *
                         (gemm_misaligned(op.gemm, op.dtype) ? params.gemm_misaligned_eta : 1.0);
      compute = op.flops / (sustained * eta);
      break;
    }
    case OpKind::flash_forward:
    case OpKind::flash_backward: {
      const bool backward = op.kind == OpKind::flash_backward;
      const double eta = backward ? params.flash_backward_eta(gpu.architecture) : params.flash_forward_eta(gpu.architecture);
      compute = op.flops / (sustained * eta * flash_schedule_efficiency(op.attention, gpu.sm_count, params) *
                            flash_head_dim_efficiency(op.attention.head_dim, gpu.architecture, backward, params));
      break;
    }
    case OpKind::memory_bound:
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
