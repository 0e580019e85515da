#include "model/op_time.h"

#include <algorithm>
#include <cmath>

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

double gemm_wave_tile_efficiency(const GemmShape& shape, int sm_count, const CostParameters& params) {
  if (shape.m <= 0.0 || shape.n <= 0.0) return 1.0;
  const double sms = std::max(sm_count, 1);
  const double large_m = params.gemm_tile_large_m;
  const double large_n = params.gemm_tile_large_n;
  const double small = params.gemm_tile_small;
  double best = tile_wave(shape.m, shape.n, shape.batch, large_m, large_n, sms);
  best = std::max(best, tile_wave(shape.m, shape.n, shape.batch, large_n, large_m, sms));
  best = std::max(best, tile_wave(shape.m, shape.n, shape.batch, small, small, sms));
  if (shape.m < small) {
    // Skinny: small-M tiles, with K split over CTAs until the SMs are full.
    const double tm = params.gemm_tile_skinny_m;
    const double tn = params.gemm_tile_skinny_n;
    const double tiles = shape.batch * std::ceil(shape.m / tm) * std::ceil(shape.n / tn);
    const double max_split = std::max(1.0, std::floor(shape.k / params.gemm_split_k_min_depth));
    const double split = std::clamp(std::floor(sms / tiles), 1.0, max_split);
    best = std::max(best, tile_wave(shape.m, shape.n, shape.batch * split, tm, tn, sms));
  }
  return best;
}

Seconds op_time(const Op& op, const GpuSpec& gpu, const CostParameters& params) {
  const Bandwidth hbm = gpu.memory_bandwidth * params.memory_bandwidth_eta;
  const Seconds memory = hbm.value() > 0.0 ? op.bytes / hbm : Seconds(0.0);
  Seconds compute(0.0);
  const FlopRate sustained = peak_for(gpu, op.dtype) * params.sustained_derate;
  switch (op.kind) {
    case OpKind::gemm: {
      const double eta = params.gemm_eta(gpu.architecture, op.dtype) *
                         gemm_wave_tile_efficiency(op.gemm, gpu.sm_count, params);
      compute = op.flops / (sustained * eta);
      break;
    }
    case OpKind::flash_forward:
      compute = op.flops / (sustained * params.flash_forward_eta(gpu.architecture));
      break;
    case OpKind::flash_backward:
      compute = op.flops / (sustained * params.flash_backward_eta(gpu.architecture));
      break;
    case OpKind::memory_bound:
      break;
  }
  return max(compute, memory) + Seconds(params.kernel_gap_s);
}

Seconds ops_time(const OpList& ops, const GpuSpec& gpu, const CostParameters& params) {
  Seconds total(0.0);
  for (const Op& op : ops) total += op_time(op, gpu, params);
  return max(total, Seconds(params.host_dispatch_s * ops.size()));
}

}  // namespace stepcast
