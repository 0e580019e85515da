#include "simulator/userbuffers_overlap.h"

#include <algorithm>
#include <cmath>

#include "model/op_time.h"

namespace stepcast {
namespace {

constexpr UbGemmConfig bulk(int sms) { return {UbMethod::bulk, sms, 0, false, false}; }
// RingExchangeOverlapCfg's defaults: num_sm 1, no margin (comm_overlap.py).
constexpr UbGemmConfig ring() { return {UbMethod::ring_exchange, 1, 0, false, false}; }
constexpr UbGemmConfig ring_with_margin() { return {UbMethod::ring_exchange, 1, 0, true, false}; }
constexpr UbGemmConfig pipeline_with_margin(int sms) { return {UbMethod::pipeline, sms, 4, true, false}; }

// The bulk overlaps of a table: qkv_dgrad, qkv_wgrad, fc1_dgrad, fc1_wgrad SMs; the ring exchanges
// of qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad (aggregate False in every table used here).
UbLayerConfig table(int qkv_dgrad, int qkv_wgrad, int fc1_dgrad, int fc1_wgrad, UbGemmConfig proj_fprop,
                    UbGemmConfig fc2_fprop) {
  UbLayerConfig c;
  c.qkv_fprop = c.fc1_fprop = c.proj_dgrad = c.fc2_dgrad = ring();
  c.proj_fprop = proj_fprop;
  c.fc2_fprop = fc2_fprop;
  c.qkv_dgrad = bulk(qkv_dgrad);
  c.qkv_wgrad = bulk(qkv_wgrad);
  c.fc1_dgrad = bulk(fc1_dgrad);
  c.fc1_wgrad = bulk(fc1_wgrad);
  return c;
}

}  // namespace

UbLayerConfig userbuffers_te_default() {
  UbLayerConfig c;
  const UbGemmConfig ring_default{UbMethod::ring_exchange, 16, 0, false, false};  // copy engines: no SMs
  c.qkv_fprop = c.fc1_fprop = c.proj_dgrad = c.fc2_dgrad = ring_default;
  c.proj_fprop = c.fc2_fprop = UbGemmConfig{UbMethod::pipeline, 16, 4, false, false};
  c.qkv_dgrad = c.qkv_wgrad = c.fc1_dgrad = c.fc1_wgrad = bulk(16);
  return c;
}

UbLayerConfig userbuffers_config(GpuArchitecture arch, double hidden, bool fp8) {
  const int h = static_cast<int>(std::lround(hidden));
  if (arch == GpuArchitecture::hopper) {
    switch (h) {
      case 6144:  // userbuffers_{bf16,fp8}_h100_h6144_tp2_mbs2_seqlen2048 (GPT-3 20B)
        return table(8, 16, 4, 16, pipeline_with_margin(16), pipeline_with_margin(24));
      case 8192:  // userbuffers_{bf16,fp8}_h100_h8192_tp4_mbs1_seqlen8192 (Llama 3 70B)
        return fp8 ? table(4, 24, 2, 4, ring_with_margin(), ring_with_margin())
                   : table(4, 24, 2, 4, pipeline_with_margin(24), pipeline_with_margin(16));
      case 12288:  // userbuffers_{bf16,fp8}_h100_h12288_tp4_mbs1_seqlen2048 (GPT-3 175B)
        return fp8 ? table(4, 4, 2, 4, ring_with_margin(), ring_with_margin())
                   : table(4, 4, 2, 4, pipeline_with_margin(24), ring_with_margin());
      case 16384:  // userbuffers_{bf16,fp8}_h100_h16384_tp8_cp2_mbs1_seqlen8192 (Llama 3.1 405B)
        return fp8 ? table(2, 24, 2, 2, ring_with_margin(), ring_with_margin())
                   : table(2, 24, 2, 2, pipeline_with_margin(24), pipeline_with_margin(8));
      default: break;
    }
  } else if (arch == GpuArchitecture::blackwell) {
    switch (h) {
      case 8192:  // userbuffers_{bf16,fp8}_b200_h8192_tp2_mbs1_seqlen8192
        return fp8 ? table(4, 24, 2, 4, ring_with_margin(), ring_with_margin())
                   : table(16, 24, 2, 4, pipeline_with_margin(32), pipeline_with_margin(16));
      case 12288:  // userbuffers_{bf16,fp8}_b200_h12288_tp4_mbs1_seqlen2048
        return table(4, 16, 2, 8, ring_with_margin(), ring_with_margin());
      case 16384:  // userbuffers_{bf16,fp8}_b200_h16384_tp4_cp2_mbs1_seqlen8192
        return fp8 ? table(8, 32, 2, 8, ring_with_margin(), ring_with_margin())
                   : table(8, 24, 2, 2, pipeline_with_margin(32), pipeline_with_margin(8));
      default: break;
    }
  }
  return userbuffers_te_default();
}

int userbuffers_gemm_chunks(const UbGemmConfig& cfg, int tp) {
  switch (cfg.method) {
    case UbMethod::ring_exchange: return std::max(cfg.aggregate ? tp / 2 : tp, 1);
    case UbMethod::pipeline: return std::max(cfg.num_splits, 1);
    case UbMethod::bulk: return 1;
  }
  return 1;
}

Seconds userbuffers_overlap_gemm_time(const Op& gemm, Seconds comm, const UbGemmConfig& cfg, int tp,
                                      const GpuSpec& gpu, const CostParameters& params) {
  const int sms = gpu.sm_count;
  const int comm_sms = cfg.method == UbMethod::ring_exchange ? 0 : std::clamp(cfg.num_sm, 0, sms - 1);
  const int margin = cfg.set_sm_margin ? std::clamp(cfg.num_sm, 0, sms - 1) : 0;
  if (gemm.kind != OpKind::gemm || sms <= 1 || gemm.gemm.m <= 0.0) return op_time(gemm, gpu, params);

  // The GEMM's SMs: the peak scales with them, the clock (peak / SMs / FLOPs per SM clock) does not.
  GpuSpec math = gpu;
  if (margin > 0) {
    const double share = static_cast<double>(sms - margin) / sms;
    for (FlopRate& peak : math.dense_peak) peak = FlopRate(peak.value() * share);
    math.sm_count = sms - margin;
  }
  // One chunk: 1/chunks of the tokens (the GEMM's m), its own inputs and output rows, the whole
  // weight. The chunks go round-robin to kUbComputeStreams streams, so up to that many run at once:
  // each round is priced as one batch of concurrent chunks (its tiles share the waves).
  const int chunks = userbuffers_gemm_chunks(cfg, tp);
  Op chunk = gemm;
  const GemmShape& g = gemm.gemm;
  const double m = g.m / chunks;
  chunk.gemm.m = m;
  chunk.flops = gemm.flops / chunks;
  const double whole = g.m * g.k + g.k * g.n + g.m * g.n;
  chunk.bytes = gemm.bytes * ((m * g.k + g.k * g.n + m * g.n) / whole);
  Seconds time(0.0);
  for (int done = 0; done < chunks;) {
    const int concurrent = std::min(kUbComputeStreams, chunks - done);
    Op round = chunk;
    round.gemm.batch = chunk.gemm.batch * concurrent;
    round.flops = chunk.flops * static_cast<double>(concurrent);
    round.bytes = chunk.bytes * static_cast<double>(concurrent);
    time += op_time(round, math, params);
    done += concurrent;
  }

  // A comm kernel beside the GEMM on SMs the GEMM was not told to leave.
  if (margin == 0 && comm_sms > 0) {
    const double n = comm_sms;
    time += min(comm * (n / sms), time * (n / (sms - n)));
  }
  return time;
}

}  // namespace stepcast
