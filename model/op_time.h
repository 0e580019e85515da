#pragma once
// How long one kernel takes on one GPU: a roofline with shape-aware GEMM efficiency.
//
//   t = max(flops / (peak(dtype) * derate * eta * wave_tile * k/(k + k_half + k_epi) * aligned),
//           bytes / (hbm_bandwidth * eta_mem)) + kernel_gap
//
// eta: burst efficiency of the kernel kind on the GPU; derate: sustained over burst clocks
// (model/cost_parameters.h).
//
// Compute and memory time are composed as a max, not a sum: a well-pipelined kernel overlaps its
// loads with its math (cuBLAS/CUTLASS multi-stage mainloops, FlashAttention's tiling), so the
// slower of the two bounds it. What a max leaves out — the exposed prologue/epilogue of small
// GEMMs and the partly filled last wave — is modelled explicitly by wave_tile, the k-depth term
// and kernel_gap, all fitted on measured GEMMs (scripts/fit_gemm_defaults.py,
// tests/fixtures/measured/), rather than by a sum that would double-count the overlap for large
// GEMMs (DESIGN.md, "Per-op time"). For memory-bound kernels the memory term's rate is the
// slower of HBM bandwidth x eta_mem and the SMs' own byte rate (bytes per SM per clock, separate
// for elementwise kernels and reductions) x SMs x clock. A GEMM streams its operands through the
// SMs its CTAs occupy: its memory rate is the slower of HBM x eta_mem and min(CTAs, SMs) x
// gemm_stream_bytes_per_sm_clock x clock, which binds for skinny GEMMs with few output tiles
// (a decode step's projections). Attention kernels stream at HBM x eta_mem; their compute term is
// flops / (peak x derate x flash eta x schedule / reference schedule x head-dim efficiency)
// (flash_schedule_efficiency, flash_head_dim_efficiency below).
//
// wave_tile is the best, over the CTA tiles cuBLAS chooses among, of
//   tile quantization  (m n) / (ceil(m/Tm) Tm ceil(n/Tn) Tn)
//   x wave quantization tiles / (ceil(tiles / SMs) SMs),  tiles = batch ceil(m/Tm) ceil(n/Tn).
// A GEMM op standing for several launches (Op::launches, Transformer Engine's per-expert grouped
// GEMM loop) runs CostParameters::grouped_gemm_streams of them at a time: ceil(launches / streams)
// rounds, each priced as that many concurrent GEMMs with one kernel gap; a memory-bound op with
// several launches pays a kernel gap per launch.
// k_epi is the epilogue's share when it is not hidden behind the mainloop (gemm_epilogue_depth).
// aligned is CostParameters::gemm_misaligned_eta when a leading dimension of the GEMM is not a
// multiple of 16 bytes (gemm_misaligned), CostParameters::gemm_sector_misaligned_eta when they are but
// one is not a multiple of the 32-byte sector (gemm_sector_misaligned), else 1.
// Skinny GEMMs (m < the small tile, as in decode steps) may also use an M = 8 tile with K split
// over floor(SMs / tiles) CTAs (CostParameters::gemm_tile_skinny_m), so a batch-1 GEMM is
// bounded by its weight bytes, as its kernels are.

#include "model/cost_parameters.h"
#include "model/hardware.h"
#include "model/op.h"

namespace stepcast {

// Dense 16-bit tensor FLOPs one SM does per clock (architecture whitepapers; the comment of each
// case in op_time.cpp checks it against a datasheet peak).
double dense_16bit_flops_per_sm_clock(GpuArchitecture arch);

// Exponentials (MUFU.EX2) per SM per clock of `arch`'s special function units: 16 on compute
// capability 8.x through 10.0 (CUDA C++ Programming Guide, "Arithmetic Instructions" throughput
// table); FlashAttention-4 (Zadouri et al. 2026, arXiv:2603.05451) finds B200's SFU count unchanged
// from H100's. 0 for CDNA3 (no rate sourced).
double architecture_sfu_exp_per_sm_clock(GpuArchitecture arch);
// `gpu`'s own rate where its catalog entry states one (Blackwell Ultra: 32), else its architecture's.
double sfu_exp_per_sm_clock(const GpuSpec& gpu);
// How much faster fused attention runs on `gpu` than on its architecture's other parts because its
// SFU retires at least twice the exponentials per clock (Blackwell Ultra against Blackwell):
// CostParameters::flash_{fwd,bwd}_speedup_doubled_sfu there, else 1. Measured at head dim 128 and
// applied at every head dim (model/cost_parameters.h says why it is not derived from
// flash_score_clocks).
double flash_doubled_sfu_speedup(const GpuSpec& gpu, bool backward, const CostParameters& params);
// How much faster fused attention runs with FP8 inputs than with BF16 on `gpu` (Transformer
// Engine's FP8 dot-product attention, cuDNN's FP8 SDPA): CostParameters::flash_fp8_* of its
// generation (Hopper, Blackwell, Blackwell Ultra), 1 elsewhere. Priced against the 16-bit peak.
double flash_fp8_speedup(const GpuSpec& gpu, bool backward, const CostParameters& params);
// The rate a GEMM with `t` inputs runs against on `gpu`, before its efficiency: the datasheet dense
// peak of `t` (or, for a format the GPU has no tensor-core mode for, of the next wider one it has),
// except NVFP4 on a part whose NVFP4 kernels are measured below the datasheet's FP4-over-FP8 ratio
// (GpuSpec::nvfp4_gemm_over_fp8): its FP8 peak times that ratio. FLOP/s.
FlopRate gemm_peak(const GpuSpec& gpu, DataType t);
// The clock at which the GPU's datasheet dense 16-bit peak is quoted: peak / (SMs x FLOPs per SM
// per clock). 0 when the GPU has no 16-bit peak or SM count.
double sm_clock_hz(const GpuSpec& gpu);

// The tiling of a GEMM: the best tile x wave quantization efficiency (0, 1] on `sm_count` SMs,
// and the CTAs that tiling launches.
struct GemmTiling {
  double efficiency = 1.0;
  double ctas = 1.0;
};
GemmTiling gemm_tiling(const GemmShape& shape, int sm_count, const CostParameters& params);

// Tile x wave quantization efficiency (0, 1] of a GEMM on `sm_count` SMs.
double gemm_wave_tile_efficiency(const GemmShape& shape, int sm_count, const CostParameters& params);

// Bytes of one C element a GEMM of `dtype` inputs writes: 4 for fp32/tf32 and int8 (int32 C),
// 2 for 16-bit and narrower inputs (a 16-bit C).
double gemm_output_bytes(DataType dtype);

// The k-depth its epilogue adds to a GEMM's k_half where the epilogue is not hidden
// (CostParameters::gemm_epilogue_rate > 0): C bytes x the precision's dense FLOPs per SM per clock
// / (2 x the rate), in elements of k; 0 when the rate is 0 (hidden). Clock-free: the peak and the
// clock scale together.
double gemm_epilogue_depth(DataType dtype, const GpuSpec& gpu, const CostParameters& params);

// The k-depth efficiency (0, 1] of a GEMM of reduction depth k > 0: k / (k + k_half + k_epi), each
// output tile's pipeline fill (k_half) and unhidden epilogue (k_epi = gemm_epilogue_depth) priced
// as that much more reduction depth.
double gemm_depth_efficiency(double k, DataType dtype, const GpuSpec& gpu, const CostParameters& params);

// Whether a GEMM of `dtype` inputs has a leading dimension (GemmShape::leading) that is not a
// multiple of 16 bytes: its compute efficiency then scales by CostParameters::gemm_misaligned_eta.
// Only the dimensions named leading count, so a forward GEMM over any token count is aligned as
// long as its feature dimensions are.
bool gemm_misaligned(const GemmShape& shape, DataType dtype);

// Whether a tensor-core GEMM's leading dimensions are all multiples of 16 bytes (not
// gemm_misaligned) but one is not a multiple of 32 bytes, the L2/DRAM sector: its efficiency then
// scales by CostParameters::gemm_sector_misaligned_eta. SIMT fp32 GEMMs never are.
bool gemm_sector_misaligned(const GemmShape& shape, DataType dtype);

// Efficiency (0, 1] of a fused attention kernel's split into CTAs on `sm_count` SMs (the
// CostParameters::flash_shape_* terms): the counted work (causal: half the score matrix; a sliding
// window W: each query's min(i + 1, W) keys) over SMs x the makespan, in key-block units, of
// ceil(seq_q / tile) CTAs per (sequence, head), each visiting the key blocks it needs (a windowed
// tile: those its window overlaps, about W / tile + 1, partial ones computed and masked) plus its
// overhead; non-causal CTAs are equal and run in whole waves, causal ones finish tail_fraction of
// the longest CTA after the average. A shape with a windowed share of layers adds the full and the
// windowed layers' work and makespans. 1 when the shape is unknown or flash_shape_tile is 0.
double flash_schedule_efficiency(const AttentionShape& shape, int sm_count, const CostParameters& params);

// The three terms of that split: query/key tile (0: off), per-CTA overhead in key blocks, and the
// tail (the share of the longest causal CTA the last SM runs past the average).
struct FlashScheduleTerms {
  double tile = 0.0;
  double cta_overhead_blocks = 0.0;
  double tail_fraction = 0.0;
};
// CostParameters::flash_shape_* (cuDNN's fused attention on Hopper and Blackwell; tile 0 turns it off).
FlashScheduleTerms flash_schedule_terms(const CostParameters& params);
double flash_schedule_efficiency(const AttentionShape& shape, int sm_count, const FlashScheduleTerms& terms);

// FlashAttention-2's split on Hopper (training.attention_kernel: flash2), always on: FA2 launches
// one CTA per 128-query tile of each (sequence, head) (grid = query tiles x batch x heads, Dao 2023,
// arXiv:2307.08691, Sec. 3.2 "Parallelism") and has no persistent scheduler, so its speed rises with
// the number and length of its CTAs. Fitted (scripts/fit_flash2_schedule.py; least squares in log
// time, each pass free in scale, the tail held at or below 1, the list-scheduling bound) to
// FlashAttention-3's FlashAttention-2 bars on an H100 SXM5 (Shah et al. 2024, arXiv:2407.08608,
// Fig. 5(d) forward causal and Fig. 6(b) backward non-causal, head dim 128, seq 512-16K at 16K
// tokens: tests/fixtures/reference/flash2_hopper.yaml): overhead 1.5 blocks, tail 1.0, rms log
// error 0.035 (0.17 with no schedule). The Hopper flash2 ratios (model/cost_parameters.h) were
// measured at the reference shapes below, so op_time prices flash2 at ratio x this schedule over
// the reference's: at those shapes it predicts the harness's own relative FA2 speeds 0.92, 1.09,
// 0.99 (measured forward 0.94, 1.10, 0.96; backward 0.95, 1.14, 0.92), and Llama 3 8B's 32 heads at
// 32K run 1.45x the reference's rate. Ampere's etas were read at the FlashAttention-2 paper's own
// 2K-4K shapes, where FA2 is within 8% of its 16K speed (the same figures), so no schedule is
// applied there (flash2 on Ampere is `best`).
inline constexpr FlashScheduleTerms kFlash2HopperSchedule{128.0, 1.5, 1.0};

// The split op_time applies to a flash op: FlashAttention-2's on Hopper for flash2 and for triton
// (llm-foundry's Triton kernel launches FA2's grid; model/triton_attention.h), the CostParameters
// one for cuDNN's fused attention (best) on Hopper and Blackwell, and none (tile 0: the flat etas)
// for any other kernel and GPU.
FlashScheduleTerms flash_schedule_terms(const AttentionShape& shape, GpuArchitecture arch, const CostParameters& params);

// flash_schedule_efficiency at the shapes the flash etas were measured at (the H200 torch SDPA
// rows: (b x h, seq) = (16, 4096), (32, 4096), (64, 2048), causal, 132 SMs), their mean.
double flash_reference_schedule_efficiency(const CostParameters& params);
double flash_reference_schedule_efficiency(const FlashScheduleTerms& terms);
// The reference op_time divides a known attention shape's schedule efficiency by: for cuDNN's
// fused attention (training.attention_kernel best) on Hopper and Blackwell, the mean at the
// attention shapes of the whole training steps measured on an H200 where the flat etas match the
// steps ((b x h, seq) = (32, 8192), (64, 4096); tests/fidelity/h200_training_step_test.cpp), so
// the etas keep their whole-step level there and the fitted split moves them elsewhere; for any
// other kernel, the kernel-measured shapes above.
double flash_reference_schedule_efficiency(const AttentionShape& shape, GpuArchitecture arch,
                                           const FlashScheduleTerms& terms);

// SM clocks one score of fused attention at `head_dim` takes on `arch`: the tensor-core work
// (4 x d FLOPs forward, 10 x d backward, at dense_16bit_flops_per_sm_clock) or the shared-memory
// traffic of 128 x 128 tiles (128 bytes per SM per clock), whichever is longer, against one
// exponential on the SFU (16 per SM per clock): max(data, exp) + (1 - hidden) min(data, exp), hidden
// = CostParameters::flash_softmax_hidden(arch) forward, 0 backward.
double flash_score_clocks(double head_dim, GpuArchitecture arch, bool backward, const CostParameters& params);

// Efficiency of fused attention at `head_dim` relative to head dim 128, where the flash etas hold:
// FLOPs per clock, (d / flash_score_clocks(d)) / (128 / flash_score_clocks(128)). Where the
// exponential is the longer (Blackwell forward at d < 128, with all of it hidden) attention runs at
// d / 128 of its head-dim-128 FLOP rate. 1 for an unknown head dim or CDNA3 (no SFU rate sourced).
double flash_head_dim_efficiency(double head_dim, GpuArchitecture arch, bool backward, const CostParameters& params);

// The terms of one op's GPU time: total = max(compute, memory) + gap for a single launch. An op
// of several launches (Op::launches) sums its rounds: compute and memory are each round's terms
// times the rounds (a grouped GEMM), and gap every kernel gap it pays, so total may be less than
// max(compute, memory) + gap summed the other way; total is always what op_time returns.
struct OpTiming {
  Seconds compute;  // flops over the efficiency-scaled peak (0 for memory-bound kinds)
  Seconds memory;   // bytes over the op's memory rate
  Seconds gap;      // kernel gaps (CostParameters::kernel_gap_s per kernel, or per round)
  Seconds total;    // op_time
};
// What bounds an op: the largest of its three terms (ties go to compute, then memory).
enum class OpBound : std::uint8_t { compute, memory, kernel_gap };
OpBound op_bound(const OpTiming& timing);

// The GPU time of `op` (no host overhead), with its terms.
OpTiming op_timing(const Op& op, const GpuSpec& gpu, const CostParameters& params);
// op_timing(op, gpu, params).total.
Seconds op_time(const Op& op, const GpuSpec& gpu, const CostParameters& params);

// Sum of op_time over a list, bounded below by the host's dispatch time for its launches (an op
// counts Op::launches kernels), CostParameters::host_dispatch_s each.
Seconds ops_time(const OpList& ops, const GpuSpec& gpu, const CostParameters& params);
// The same over the ops [first, last): a stretch the host dispatches from a standing start (after
// a host-device synchronization), so its own dispatch time bounds it.
Seconds ops_time(const Op* first, const Op* last, const GpuSpec& gpu, const CostParameters& params);
// The same with the host time of one launch given: a training layer's kernels go through
// Transformer Engine modules (CostParameters::training_host_dispatch_s).
Seconds ops_time(const Op* first, const Op* last, const GpuSpec& gpu, const CostParameters& params,
                 Seconds host_per_launch);

}  // namespace stepcast
