#pragma once
// Every empirical constant of the training cost model, in one plain struct.
//
// The defaults below are what stepcast uses without a calibration profile; a profile (issue 9)
// overwrites them. Each constant carries its source. for_each_constant() visits them all by name
// so sensitivity analysis (explain's tornado table) and calibration can enumerate and perturb
// them without knowing the struct. Units are SI and part of the name where they are not ratios
// (`_s` seconds, `_bytes` bytes).
//
// GEMM time (model/op_time.h) is flops / (peak * eta * sustained_derate * wave_tile) plus a
// per-kernel gap. eta is a GPU's burst efficiency: its best measured rows in
// tests/fixtures/reference/gemm_measurements.yaml over the datasheet dense peak. The shape terms
// (tiles, kernel gap, host dispatch) were fitted by scripts/fit_gemm_defaults.py over the
// same file (65 rows; rms log error 0.107). Training runs its GPUs at full power for hours, so
// compute-bound kernels run below their burst speed: sustained_derate (Blackwell: its own,
// sustained_derate_blackwell; sustained_fraction() picks).

#include <string_view>

#include "model/attention_kernel.h"
#include "model/datatype.h"
#include "model/hardware.h"
#include "model/named_constants.h"

namespace stepcast {

struct CostParameters : NamedConstants<CostParameters> {
  // --- GEMMs -------------------------------------------------------------------------------------
  // Fraction of the dense tensor-core peak that a large, well-shaped GEMM sustains.
  double gemm_eta_ampere_16bit = 0.85;   // A100 SXM: best-shape 271.2/312 (mamf_nvidia_a100_sxm_bf16),
                                         // best-of-sizes 264.5 and 258.7 (zzdb_nvidia_a100_sxm4_80gb_*)
  double gemm_eta_hopper_16bit = 0.79;   // mean of two sources with the k-depth term below: H100
                                         // SXM best rows 797.5 bf16 / 760.0 fp16 of 989.4 at 4096-8192^3
                                         // (zz_nvidia_h100_80gb_hbm3_*) -> 0.83; our H200 grid
                                         // (measured/h200_gemm_grid_2026-11-29.json) -> 0.745
  double gemm_eta_blackwell_16bit = 0.75;  // B200 1745/2250, 1696/2250; GB200 1822/2500 (mamf_*, zzdb_*)
  double gemm_eta_ada_16bit = 0.74;      // L40S best-of-sizes 269.2/362 (zzdb_nvidia_l40s_bf16)
  double gemm_eta_cdna3_16bit = 0.75;    // no MI300X row in the file: placeholder equal to Blackwell; calibrate
  double gemm_eta_fp8 = 0.74;            // H100 1402.6/1979, H200 1453.4/1979, GH200 1535/1979,
                                         // B200 3432.5/4500, GB200 3615.6/5000 (mamf_*_fp8_e4m3fn)
  // Speed of an MXFP8 GEMM kernel (1x32 block scales, Blackwell) over the tensor-scaled FP8 kernel
  // of the same shapes, both pre-quantized: Transformer Engine's GEMM profiling tutorial on a B300,
  // the 12 GEMMs of one layer (15872 tokens, hidden 4096, FFN 16384), 6.812 ms FP8 (current
  // scaling) against 7.161 ms MXFP8 = 0.951 (fprop 0.912, dgrad 0.972, wgrad 0.969;
  // tests/fixtures/reference/te_gemm_profiling_b300.yaml). The block scales are read and applied
  // inside the kernel. gemm_eta(mxfp8) is gemm_eta_fp8 times this; taken for B200/GB200 as well
  // (the same MMA instructions; no measurement of theirs found).
  double gemm_mxfp8_over_fp8 = 0.951;
  // INT8 GEMMs are their own kernels (integer MMA, int32 accumulation, an int32 or requantized int8
  // C: cuBLASLt's datatype table for CUBLAS_COMPUTE_32I; the H200 harness's int8 GEMMs write int32
  // C, scenarios/calibration/h200-sxm-141gb/run-5692d753a737/gemm.json), so a profile fitted on
  // int8 measurements must not set the FP8 efficiency above, nor FP8 ones this. Default: equal to
  // gemm_eta_fp8 (the same dense peak on Hopper, 1979 TOPS / TFLOPS on the H100 SXM datasheet; no
  // int8 row in gemm_measurements.yaml): assumption until a measured int8 grid sets it.
  double gemm_eta_int8 = 0.74;
  double gemm_eta_tf32 = 0.81;           // H100 SXM tf32 best 402.2 of 494.7 (zz_nvidia_h100_80gb_hbm3_tf32_4096)
  double gemm_eta_fp32_simt = 0.80;      // H100 51.9/66.9, A100 19.2/19.5 (zz*_fp32; no tensor cores)
  // CTA tiles cuBLAS chooses among (the best tile x wave quantization is used): 128x256 is
  // CUTLASS' SM80 default ThreadblockShape (include/cutlass/gemm/device/default_gemm_configuration.h),
  // also the common Hopper cuBLAS tile; 128x128 the common smaller one.
  double gemm_tile_large_m = 128.0;
  double gemm_tile_large_n = 256.0;
  double gemm_tile_small = 128.0;
  // Skinny GEMMs (m below gemm_tile_small: decode steps, where m is the batch) run with small-M
  // tiles, K split over CTAs to fill the SMs. Skinny kernels swap the operands so the batch maps
  // to the N = 8 side of the smallest tensor-core MMA (PTX ISA mma.sync.m16n8k16, Ampere and
  // later; Marlin, Frantar et al. 2024, Sec. 3, and TensorRT-LLM's weight-only GEMMs do this): the
  // batch is padded to 8. N-tile 128 as the common tile. Each split-K slice keeps at least
  // gemm_split_k_min_depth of K (two 128-deep mainloop stages; assumption). Large GEMMs never
  // take this path, so the training fit above is unaffected.
  double gemm_tile_skinny_m = 8.0;
  double gemm_tile_skinny_n = 128.0;
  double gemm_split_k_min_depth = 256.0;
  // Reduction depth at which a GEMM reaches half its speed: each output tile pays a prologue
  // (filling the load pipeline) and an epilogue (writing C) worth this much k, so eta scales
  // by k / (k + gemm_k_half) (the epilogue's part is priced by gemm_epilogue_rate below instead
  // when that is set). Fitted on the 47 bf16 grid GEMMs of >= 0.3 ms in
  // tests/fixtures/measured/h200_gemm_grid_2026-11-29.json by `scripts/fit_gemm_defaults.py --grid`
  // (eta 0.750, rms log error 0.050; without the term 0.078).
  double gemm_k_half = 288.0;
  // The epilogue's store rate, bytes of C per SM per clock, where it is not hidden behind the
  // mainloop; 0 = hidden (the default: the datasheet model's k_half above covers it). Each output
  // tile's mainloop takes 2 Tm Tn k / F clocks (F the precision's dense FLOPs per SM per clock) and
  // its epilogue Tm Tn c / rate (c the bytes of one C element, gemm_output_bytes), so the epilogue
  // adds c F / (2 rate) to k_half: 4x as much for int8 (F twice the 16-bit rate on Hopper, int32 C)
  // as for bf16, none to speak of for SIMT fp32. Why it need not be hidden: in CUTLASS's Hopper
  // "persistent cooperative" kernels both consumer warp groups work on one tile, so the tile's
  // epilogue follows its mainloop; only the "ping-pong" design overlaps one warp group's epilogue
  // with the other's math (NVIDIA/cutlass media/docs/cpp/efficient_gemm.md, "Hopper Warp
  // Specialization", commit 21779de52f7486ca45c28425a4ad5a35d8d53986). Fitted by `stepcast
  // calibrate`'s shape search (validation/kernel_fit.h): on the H200 run of 2026-12-01 the 8192 x
  // 8192 x 1024 GEMM ran 0% (tf32), 7% (bf16), 33% (fp8, bf16 C) and 57% (int8, int32 C) over its
  // deep-k speed (scenarios/calibration/h200-sxm-141gb/run-084f22936c86/gemm.json).
  double gemm_epilogue_rate = 0.0;
  // Speed of a GEMM with a leading dimension that is not a multiple of 16 bytes, relative to the
  // same GEMM aligned (model/op_time.h, gemm_misaligned). Hopper's fast GEMM kernels load their
  // tiles with TMA, whose global strides must be multiples of 16 bytes (CUDA Driver API,
  // cuTensorMapEncodeTiled: "globalStrides ... must be a multiple of 16"); cuBLAS otherwise
  // falls back to kernels without it (cuBLAS docs, "Tensor Core Usage": best performance when
  // lda, ldb, ldc are multiples of 16 bytes; cuBLASLt's CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES).
  // 0.259 fitted by `stepcast calibrate` (scenarios/calibration/h200-sxm-141gb/profile.json) on
  // the misaligned shapes of scenarios/calibration/h200-sxm-141gb/run-5692d753a737/gemm.json:
  // bf16/fp16 2500^3 and int8 1000^3 (cold and hot), 2500^3, 5000^3, each 3.5-4x the aligned
  // model; tf32/fp32 2500^3, whose 4-byte elements keep the strides aligned, are not slowed so.
  // The ratio depends on the fallback kernel cuBLAS finds: a published H100 fp16 bmm with its
  // reduction dim 10922 (4 x 4096 x 4096) ran at 0.68 of 10944's speed
  // (gemm_measurements.yaml mleng_swiglu_h100_dff10922 / _dff10944), and an RTX 4090, which has
  // no TMA, runs 2055^3 at 0.74 of 2040^3 (pt181718_4090_bf16_*): calibrate on the shapes you run.
  double gemm_misaligned_eta = 0.26;
  // Speed of a tensor-core GEMM whose strides are multiples of 16 bytes (TMA-legal, above) but
  // not of 32 (model/op_time.h gemm_sector_misaligned), relative to the same GEMM with sector-
  // aligned strides: global memory is read in 32-byte sectors, so a 128-byte tile row that starts
  // halfway into a sector touches 5 sectors instead of 4 (CUDA C++ Best Practices Guide, "Coalesced
  // Access to Global Memory", "A Sequential but Misaligned Access Pattern"), and the operand loads
  // of a kernel that streams its tiles from L2 at its limit (H200: 740 TFLOP/s bf16 x 2 B x (1/128 + 1/256)
  // / 2 bytes per FLOP = 8.7 TB/s) grow by up to a quarter. On the H200 run of 2026-12-01 (scenarios/calibration/
  // h200-sxm-141gb/run-084f22936c86/gemm.json) int8 and fp8 10000^3, tf32 2500^3 and bf16/fp16
  // 1000^3 and 5000^3 (10000- and 2000-byte strides) ran 5-30% below the aligned model; bf16 10000^3
  // (20000 bytes) did not. 1 (no effect) by default; fitted by `stepcast calibrate` on the points it
  // applies to.
  double gemm_sector_misaligned_eta = 1.0;
  // Sustained over burst speed of compute-bound kernels: each GPU's longest-running rows
  // (10240^3, ~3 ms per call) over its best row, mean over the 24 (GPU, type) groups of
  // zz_* rows in gemm_measurements.yaml = 0.935 (H100 SXM bf16 0.90, fp16 0.88, tf32 0.94):
  // the power and thermal throttling a step-long load sees. Measured directly on an H200: one
  // GEMM back to back for 10 s ran at 0.932 of its burst rate (h200_torch_kernels_2026-11-29.json).
  double sustained_derate = 0.935;
  // The same for Blackwell (B200, GB200), whose tensor cores draw more power per SM than Hopper's:
  // one tensor-core-bound kernel (FlashAttention-4 forward, BF16, b=4 s=8192 h=16 d=128) run back to
  // back on a B200 reached 1450 TFLOP/s at its peak (iterations 10-19) and 1237 once fully throttled
  // (iterations 70-79): 1237 / 1450 = 0.853, with the SM clock falling from 1965 to ~1580 MHz at
  // ~1000 W (flashinfer-ai/flashinfer PR #2899; rows flashinfer2899_* of
  // tests/fixtures/reference/blackwell_compute.yaml). Hopper's derate is a GEMM's; this one an attention
  // kernel's: both saturate the tensor cores, and the power limit sets the clock for either. GB200
  // (1200 W) and B300 (1100 W) take B200's figure: no long-run measurement of either found
  // (assumption); GB300, at 1400 W, holds its maximum clock and has its own figure, 1 (gpus.yaml
  // gb300 sustained_clock_fraction). Caveat: the same
  // PR finds throttling sets in after ~5 ms of unbroken compute, and gemm_eta_blackwell_16bit's
  // best-shape rows time 100 calls after 50 warm-ups, so they may be partly throttled already; if
  // so, this derate counts that part twice (the published rows cannot separate it).
  double sustained_derate_blackwell = 0.853;
  // Whether compute-bound kernels run at their sustained speed (the two derates above, or the GPU's
  // own sustained_clock_fraction); false in a burst() copy.
  bool sustained_clocks = true;
  // GPU-side cost per kernel (start-up and tail), fitted with the etas above.
  double kernel_gap_s = 4.0e-6;
  // What one kernel launched alone on an idle GPU with a flushed L2 takes beyond the same kernel
  // in a back-to-back stream: the harness's "cold" samples (validation/harness/device_timer.h)
  // against its "hot" ones. op_time never adds it (a training step runs its kernels back to back,
  // as the hot samples do); validation/kernel_fit.h adds it when predicting a cold measurement.
  // 2.28 us fitted by `stepcast calibrate` (scenarios/calibration/h200-sxm-141gb/profile.json) on
  // the kernels of scenarios/calibration/h200-sxm-141gb/run-5692d753a737/ timed both ways (GEMMs
  // of 512^3-1024^3 in five precisions: cold - hot = 1.9-2.8 us; elementwise kernels).
  double kernel_cold_start_s = 2.3e-6;
  // Transformer Engine's grouped GEMM (GroupedLinear, the --moe-grouped-gemm experts of
  // Megatron-Core's TEGroupedMLP) is a host loop of one cuBLAS GEMM per expert, issued round-robin
  // on this many streams (transformer_engine/common/gemm/cublaslt_gemm.cu multi_stream_cublas_gemm;
  // num_streams = 4 in common/include/transformer_engine/gemm.h): at most this many experts' GEMMs
  // share the SMs at a time, each paying its own tile and wave quantization and kernel gap.
  double grouped_gemm_streams = 4.0;
  // Host time to dispatch one op from PyTorch (fitted on back-to-back 1024^3 torch.mm rows); a
  // layer is never faster than its op count times this (the CPU cannot run ahead of the GPU then).
  double host_dispatch_s = 12.0e-6;
  // A training layer's kernels are launched through Transformer Engine modules (Megatron-Core's
  // TE layer spec: LayerNormLinear, DotProductAttention, Linear, GroupedLinear, the fused MoE
  // permutation), whose Python and quantizer bookkeeping costs the host more than a bare PyTorch op:
  // a te.Linear forward took 2.69x the CPU time of a torch.nn.Linear forward on the same CPU
  // (TransformerEngine issue #2053, BF16, hidden 2048, 8192 tokens: GB200 99.66 vs 37.08 us,
  // GH200 90.53 vs 33.17 us = 2.73x). Training layers' host time per launch is host_dispatch_s
  // times this (training_host_dispatch_s); the ratio is taken per launch, not per module call.
  double te_host_dispatch_factor = 2.69;

  // --- Memory-bound kernels ----------------------------------------------------------------------
  // Memory-bound kernels run at the slower of two limits (model/op_time.h): HBM bandwidth times
  // memory_bandwidth_eta, and the SMs' rate of moving bytes through them (bytes per SM per clock x
  // SMs x clock), which binds for kernels that do work per byte (RNG, tanh, reductions). Measured
  // through PyTorch on an H200 (tests/fixtures/measured/h200_torch_kernels_2026-11-29.json,
  // scripts/measure_torch_kernels.py; 132 SMs, 1.83 GHz datasheet tensor clock, 4.8 TB/s):
  //   a 2 GiB copy reached 4.13-4.15 TB/s: 0.86 of datasheet.
  double memory_bandwidth_eta = 0.86;
  //   elementwise kernels with arithmetic per byte (dropout 0.54, GELU forward 0.68 / backward 0.55
  //   of datasheet; mean 0.589 = 2.83 TB/s) -> 11.7 bytes per SM per clock. The residual add of
  //   the same file (0.84) runs at the copy's HBM rate (0.86): kernels that only move bytes
  //   (OpKind::data_movement: copies, permutations, padding, plain adds) are HBM-bound, as the
  //   harness's copy and triad kernels measured (4.0-4.2 TB/s, scenarios/calibration/
  //   h200-sxm-141gb), and are not held to this rate.
  double elementwise_bytes_per_sm_clock = 11.7;
  //   row reductions (layer_norm forward 0.45 / backward 0.26, softmax over 2048-wide rows
  //   forward 0.34 / backward 0.31; mean 0.34 = 1.63 TB/s) -> 6.8 bytes per SM per clock.
  // On an A100 (108 SMs at 1.41 GHz, 2.04 TB/s) these give 0.86 and 0.50 of its bandwidth.
  // PyTorch's native kernels; Megatron's fused (Apex/TE) norms are faster: a conservative default.
  double reduction_bytes_per_sm_clock = 6.8;
  //   a GEMM streaming its weights from the SMs its CTAs occupy: Llama 70B's QKV projection
  //   (8192 x 10240, BF16, 80 CTAs of the skinny tiling on 132 SMs) at batch 1-64 moved 2.4-2.7
  //   TB/s, 18.3 bytes per active SM per clock after the kernel gap (mean of the four points of
  //   measured/h200_inference_kernels_2026-11-29.json, scripts/measure_inference_kernels.py).
  //   GEMMs with a CTA on every SM stay bound by HBM.
  double gemm_stream_bytes_per_sm_clock = 18.3;

  // --- Flash attention (fraction of dense 16-bit peak on the kernel's real, causal-skipped work) -
  // Ampere: FlashAttention-2 (Dao 2023, Fig. 4-6, A100, d=128, causal, seq 2k-4k): forward
  // ~190-200 TFLOP/s, backward ~150-165 TFLOP/s of 312.
  double flash_fwd_eta_ampere = 0.62;
  double flash_bwd_eta_ampere = 0.50;
  // Hopper and later: cuDNN fused attention (Transformer Engine's backend on Hopper), measured
  // through torch SDPA on an H200, bf16, d=128, causal, (b, heads, s) = (1, 16, 4096),
  // (1, 32, 4096), (4, 16, 2048): forward 0.37, 0.49, 0.41; backward 0.31, 0.38, 0.29 of 989
  // (measured/h200_torch_kernels_2026-11-29.json; the flash-attn-2 backend reached only
  // 0.20-0.23 / 0.17-0.21 there). These are small calls: at training shapes (b x h >= 16,
  // seq 2K-32K) cuDNN 9.14's kernel runs at 0.58 / 0.44 (the harness's device-timed points of
  // scenarios/calibration/h200-sxm-141gb/run-084f22936c86, scripts/fit_flash_etas.py), and torch
  // SDPA's cuDNN backend at 0.54-0.66 / 0.39-0.54 (measured/h200_sdpa_backends_2026-12-01.json).
  // These are the whole-step level at the attention shapes of our measured H200 steps; the fitted
  // CTA split below moves them at other shapes (flash_shape_tile).
  // Kept at 0.42 / 0.33 because whole training steps do not follow the kernel: at 0.57 / 0.44 (and
  // Blackwell's ratio on top) the development-set guard goes 19.0% -> 21.7%, torchtitan's rows
  // -8..-23% -> -8..-40%, while long-context Blackwell rows improve; the script records the figures
  // and the sources on which kernel each release ran (cuDNN on Hopper since Transformer Engine 1.2).
  double flash_fwd_eta_hopper = 0.42;
  double flash_bwd_eta_hopper = 0.33;
  // Blackwell: the Hopper etas scaled by how cuDNN's fused attention on a GB200 compares with an
  // H200, each against its datasheet dense peak, in one harness with one cuDNN (backend 91901) on
  // the same shapes (NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training, Llama 3.1 GQA 64/8
  // heads, d=128, batch 1, causal, bf16; rows cudnn919_* of tests/fixtures/reference/blackwell_compute.yaml).
  // (GB200 TFLOP/s / 2500) / (H200 TFLOP/s / 989.5) at seq 4096, 8192, 16384: forward 0.89, 0.98,
  // 0.99 (mean 0.956), backward 0.94, 0.96, 0.96 (mean 0.954): 0.42 x 0.956 = 0.40, 0.33 x 0.954 =
  // 0.315. The ratio, not the absolute figure, carries over: cuDNN's own harness puts H200 at
  // 0.60-0.68 forward, above what we measured through torch SDPA at training's smaller head counts.
  double flash_fwd_eta_blackwell = 0.40;
  double flash_bwd_eta_blackwell = 0.315;
  // FlashAttention-2 (training.attention_kernel: flash2; model/attention_kernel.h) on Hopper, as a
  // fraction of the speed of the kernel the Hopper etas above describe. FlashAttention-2 issues
  // Ampere's mma.sync and none of Hopper's wgmma / TMA (FlashAttention-3, Shah et al. 2024, Sec. 1:
  // "FlashAttention-2 achieving only 35% utilization on the H100"). Taken from the same H200
  // harness and shapes as flash_*_eta_hopper: torch SDPA's flash backend (FlashAttention-2, the
  // path torchtitan runs) over its cuDNN backend, bf16, d=128, causal, (b, heads, s) = (1, 16, 4096),
  // (1, 32, 4096), (4, 16, 2048): forward 0.549, 0.483, 0.502 (mean 0.511), backward 0.549, 0.551,
  // 0.569 (mean 0.556) (measured/h200_torch_kernels_2026-11-29.json, cuDNN 9.19). Published
  // cross-checks (tests/fixtures/reference/flash2_hopper.yaml): FlashAttention-3's Fig. 5-6 put
  // FA2 over cuDNN at 0.62 forward (causal, d=128) and 0.64 backward (non-causal, d=128) on an H100
  // SXM5 with the mid-2024 cuDNN; TritonBench put SDPA's flash path at 0.52 of cuDNN 9.1's forward
  // (pytorch/pytorch issue #142132). Device-timed at training shapes (b, h, s) = (8, 32, 2K) ...
  // (1, 32, 32K), (1, 64, 8K): 0.54 forward, 0.565 backward (0.50-0.59, no trend with length, as
  // the FA3 paper's 0.61-0.63; measured/h200_sdpa_backends_2026-12-01.json,
  // scripts/measure_sdpa_backends.py). op_time prices flash2 with FlashAttention-2's CTA split over
  // these small reference shapes (model/op_time.h kFlash2HopperSchedule) on top of the flat best
  // eta, i.e. 0.511 x 1.2-1.45 = 0.62-0.74 of best at training shapes; that matches whole steps
  // (tests/fidelity/h200_training_step_test.cpp) while best itself is priced below its kernel (see
  // flash_fwd_eta_hopper), so the two move together. On Ampere and Ada the etas above already
  // describe FlashAttention-2 (ratio 1); Blackwell and CDNA3 have no FlashAttention-2 figure
  // (flash2_priced()), so scenarios asking for it there are rejected.
  double flash2_fwd_ratio_hopper = 0.511;
  double flash2_bwd_ratio_hopper = 0.556;
  // How an attention kernel's work splits over the SMs (model/op_time.h, flash_schedule_efficiency;
  // applies to ops whose Op::attention shape is known). Each CTA owns one tile of
  // flash_shape_tile queries of one (sequence, head) and walks the key blocks of the same size it
  // may see (causal: up to the diagonal; sliding window: the blocks the window overlaps, partial
  // ones computed and masked), paying flash_shape_cta_overhead_blocks blocks' worth of prologue and
  // epilogue (loading Q, the pipeline's fill and drain, the final rescale, writing O and the
  // log-sum-exp). Causal CTAs differ in length; the last to finish runs flash_shape_tail_fraction
  // of the longest CTA past the average finish (0: perfectly balanced, 1: the list-scheduling
  // bound). op_time divides by this efficiency at reference shapes where the etas above are known
  // to hold (flash_reference_schedule_efficiency; which ones, below).
  // Tile: 128 x 128, the Q and K/V tiles of cuDNN's and FlashAttention-2/3's d = 128 kernels
  // (validation/kernel_fit.cpp kFlashTile). Overhead and tail: least squares (log time, each
  // GPU, pass and batch free in scale) over the 36 measured cuDNN points of Llama 3.1-shaped causal
  // attention whose only change is the shape: cudnn-frontend's H200 and GB200 rows at batch 1 and
  // the GB200 rows at batch 2, seq 2048-32768, forward and backward
  // (tests/fixtures/reference/blackwell_compute.yaml, attention and attention_window128 llama3.1;
  // their TFLOP/s rise 1.3-1.8x from seq 2048 to 32768), and our H200 torch SDPA cuDNN rows at
  // (b, h, s) = (1, 16, 4096), (1, 32, 4096), (4, 16, 2048) (measured/h200_torch_kernels_2026-11-29.json:
  // 0.37, 0.49, 0.41 forward). Grid 0.25 apart: overhead 2.5 blocks, tail 1.0; rms log error 0.039
  // against 0.142 without the schedule. scripts/fit_flash_shape.py does the fit.
  // On by default for cuDNN's fused attention (best) on Hopper and Blackwell, anchored where whole
  // steps were measured: op_time divides by the efficiency at the attention shapes of our H200
  // training steps ((b x h, seq) = (32, 8192), (64, 4096); tests/fidelity/h200_training_step_test.cpp),
  // where the flat etas above match whole steps, not at the small torch calls the etas equal as
  // isolated kernels (model/op_time.h flash_reference_schedule_efficiency). So a training step
  // keeps the etas' whole-step level at those shapes and the fitted split moves it elsewhere:
  // attention at long sequences runs faster (a 64K-token ring chunk ~1.2x), short ones slower.
  // Evidence that steps follow the split's shape but not its level: between two steps of equal
  // token count only attention's work changes, and the flat etas price that difference 1.32x too
  // steep in our H200 steps (FlashAttention-2, 2 x 4096 against 1 x 8192) and 1.2-2.0x in cuDNN's
  // own Llama 3.2 1B benchmark (scripts/step_attention_differentials.py). Held-out runs
  // (scripts/heldout/eval.py): mean |error| 7.9% -> 7.4%, within 20% 521 -> 532 of 549 (NeMo 25.04
  // B200 Llama 3 8B at 32K-1M +24..+47% -> +10..+20%, Megatron-MoE-ModelZoo H100 Qwen3-235B at
  // 32K-128K +17..+43% -> +3..+24%; NeMo 24.03 H100 Llama 2 7B at 16K-1M -8..+2% -> -11..-17%);
  // development set 11.7% -> 11.7% (the Llama 3 paper's 405B at 128K with CP 16 -18% -> -26%);
  // Megatron-LM's 2024 H100 rows at seq 2048, few heads per rank, 1-6 points slower
  // (tests/fidelity/training_fidelity_test.cpp). Anchored at the small torch calls instead (the
  // first version, then switched off), the 24.03 runs read 20-34 points too fast. FlashAttention-2
  // and Triton keep their own split on Hopper (kFlash2HopperSchedule); other kernels and GPUs stay
  // flat. Tile 0 turns the split off.
  double flash_shape_tile = 128.0;
  double flash_shape_cta_overhead_blocks = 2.5;
  double flash_shape_tail_fraction = 1.0;
  // The softmax's exponentials run on the SFU (MUFU.EX2), 16 per SM per clock (CUDA C++ Programming
  // Guide, "Arithmetic Instructions" throughput table: compute capability 8.x-10.x; FlashAttention-4,
  // Zadouri et al. 2026, arXiv:2603.05451, and its write-up at together.ai/blog/flashattention-4:
  // "both the SFU count and shared memory bandwidth remains unchanged" from H100 to B200), one per score, next
  // to 4 x head_dim tensor-core FLOPs per score forward (10 x head_dim backward) at
  // dense_16bit_flops_per_sm_clock (model/op_time.h, flash_head_dim_efficiency). This is the share
  // of the shorter of the two a forward kernel hides under the longer: time per score is
  // max(tensor, exp) + (1 - hidden) min(tensor, exp).
  //   Ampere, Ada, Hopper: 0. FlashAttention-3 (Shah et al. 2024, arXiv:2407.08608, Fig. 5, H100
  //   SXM5 FP16/BF16 forward, the head-dim-64 and 128 panels of one mask setting) runs head dim 64 at
  //   371, 420, 460, 473 TFLOP/s against 625, 638, 646, 648 at head dim 128 (seq 2k-16k): 0.59-0.73,
  //   and cuDNN in the same panels at 334-388 against 617-595: 0.54-0.65; nothing
  //   hidden already gives (64 / 128) / (128 / 192) = 0.75 on Hopper, hiding any would give more.
  //   Ampere's mma.sync kernels (FlashAttention-2) issue softmax and MMA from the same warps.
  double flash_softmax_hidden_fraction = 0.0;
  //   Blackwell: 1, all. Its MMAs (tcgen05) are issued by one thread and accumulate in tensor
  //   memory, so the softmax warps run beside them: FlashAttention-4's forward pipeline overlaps
  //   "tensor cores, softmax exponential, and memory" (the together.ai write-up) and finds the
  //   forward bound by the exponential, not by the sum; a tile costs the longer of the two. At head
  //   dim 128 the two are equal (512 / 8192 = 1 / 16 clock per score). Checked against cuDNN's GB200
  //   head-dim-64 windowed rows by tests/fidelity/windowed_attention_test.cpp.
  // The backward hides nothing on any GPU: P (the exponential) feeds dV and dS = P (dP - D) feeds
  // dK and dQ within the same tile, and double-buffering S and dP (2 x 128 x 128 FP32 each) next to
  // the dK and dV accumulators does not fit Blackwell's 256 KiB of tensor memory per SM.
  double flash_softmax_hidden_fraction_blackwell = 1.0;
  // Blackwell Ultra (B300, GB300) retires twice Blackwell's exponentials per SM per clock at the same
  // tensor-core rate (scenarios/catalog/gpus.yaml sfu_exp_per_sm_clock). Its attention speed-up is
  // measured, not derived: cuDNN 9.19's training SDPA runner, the Llama 3.1 shape (head dim 128, BF16,
  // batch 1, seq 2048-32768, causal and unmasked), runs GB300 1.06-1.26x faster than GB200 forward
  // (geometric mean 1.171) and 1.04-1.08x backward (1.060) (tests/fixtures/reference/
  // blackwell_compute.yaml attention_blackwell_ultra over the GB200 rows; scripts/fit_doubled_sfu_attention.py).
  // op_time multiplies the flash etas by these on a GPU whose SFU rate is at least twice its
  // architecture's (model/op_time.h flash_doubled_sfu_speedup). Assumes the two parts ran those
  // 10-iteration benchmarks at the same clock (the runner does not report it; the datasheets give
  // both the same dense peak on the same 152 SMs), and takes B300 (the same SM103 chip on HGX
  // baseboards) at GB300's ratio.
  // Why not flash_score_clocks with the doubled rate: its balance at head dim 128 (exponential and
  // tensor time equal on Blackwell) reproduces both ratios only with 0.585 of the shorter hidden
  // in both passes (least squares: 0.586 forward alone, 0.581 backward alone), and that share makes
  // head dim 64 on GB200 15% faster than with all of it hidden, where cuDNN's own GB200 head-dim-64
  // rows (tests/fidelity/windowed_attention_test.cpp) already run slower than the model predicts
  // (window 1024: forward -8..+2%, backward -11..-16%). The
  // two kernel sets disagree under one hidden share; the measured ratio is applied at every head
  // dim (at head dim 64, exponential-bound, the real gain is likely larger: not measured).
  double flash_fwd_speedup_doubled_sfu = 1.171;
  double flash_bwd_speedup_doubled_sfu = 1.060;
  // FP8 fused attention (PrecisionConfig::fp8_attention: Transformer Engine's FP8 dot-product
  // attention, which runs cuDNN's FP8 SDPA) against the same kernel in BF16, by generation: BF16 time
  // over FP8 time of cuDNN 9.19's training SDPA runner, Llama 3.1 shape (batch 1, 64/8 heads, head dim
  // 128, causal), geometric mean over seq 2048-32768 (tests/fixtures/reference/blackwell_compute.yaml
  // attention_fp8 against the BF16 rows of the same runs; scripts/fit_fp8_attention.py). op_time
  // multiplies the flash etas by these (against the 16-bit peak) for an FP8 attention op.
  //   H200: forward 1.44-1.51 (1.480); backward 0.64-1.06 (0.809): cuDNN's FP8 causal backward on
  //   Hopper is slower than its BF16 one from seq 8K (0.80 at 8K, 0.64 at 32K), faster below.
  //   GB200: forward 1.24-1.29 (1.264), backward 1.07-1.16 (1.120).
  //   GB300 (Blackwell Ultra, doubled SFU; taken for B300 too): forward 1.29-1.55 (1.444), backward
  //   1.04-1.20 (1.131), on top of flash_*_speedup_doubled_sfu (its BF16 speed over GB200's).
  double flash_fp8_fwd_speedup_hopper = 1.480;
  double flash_fp8_bwd_speedup_hopper = 0.809;
  double flash_fp8_fwd_speedup_blackwell = 1.264;
  double flash_fp8_bwd_speedup_blackwell = 1.120;
  double flash_fp8_fwd_speedup_blackwell_ultra = 1.444;
  double flash_fp8_bwd_speedup_blackwell_ultra = 1.131;

  // --- Communication (used by the alpha-beta collective model) -----------------------------------
  // NCCL reaches ~80% of NVLink line rate: "450GB/s is the line rate. With the protocol overhead
  // (~20%) NCCL can get an effective NVLink bandwidth of 370GB/s" (sjeaugey, NVIDIA/nccl-tests#212;
  // A100: 232.5 of 300 GB/s, nccl-tests#175).
  double nvlink_eta = 0.80;
  // Ring all-reduce busbw per NIC: HDR 200G "24 GB/s" of 25 (nccl-tests#160), NDR 400G "46-48 GB/s"
  // of 50 (nccl-tests#290).
  double network_eta = 0.94;
  // TP communication with --tp-comm-overlap (userbuffers): each collective is split into tp chunks
  // pipelined with its GEMM, so about one chunk stays exposed (Wang et al. 2022, ASPLOS,
  // "Overlap communication with dependent computation via decomposition", Sec. 3).
  double tp_overlap_exposed_chunks = 1.0;
  // Share of the SMs that collective kernels hold while they overlap compute: overlapped GEMMs run
  // at (1 - this) of their speed for as long as the collective runs. DeepSeek-V3 report (arXiv:
  // 2412.19437) Sec. 3.2.2: 20 of the H800's 132 SMs are what it takes to drive IB and NVLink at
  // full bandwidth (their hand-written all-to-all; NCCL rings use one CTA per channel, comparable
  // counts): 20 / 132 = 0.15. Applied to ZeRO-3/FSDP's per-layer gathers and reduce-scatters.
  double comm_sm_fraction = 20.0 / 132.0;
  // The same for the compute that Megatron-Core's EP all-to-all overlap (combined 1F1B) runs next
  // to its dispatch and combine (model/ep_overlap.h): measured rather than counted. Megatron-Core
  // MoE report (Yan et al. 2026, arXiv:2603.07685, Sec. 4.2.3), as NVIDIA/Megatron-LM docs/
  // user-guide/features/moe_a2a_overlap.md @fc81b209041f99fa126dad855ab4e073a0f3546d reports it:
  // "The report's DeepEP example reserves 20 SMs per GPU and observes about a 20% GEMM-efficiency
  // cost" (20 SMs is moe_deepep_num_sms's default, megatron/core/transformer/transformer_config.py).
  // Applied to the all-to-all dispatcher's NCCL kernels as well (they too run on SMs; no separate
  // measurement of theirs).
  double ep_overlap_compute_slowdown = 0.20;
  // The other side of the same contention: the EP exchanges themselves run longer while the
  // compute runs beside them. Measured, not fitted: NVIDIA-NeMo/Megatron-Bridge skills/
  // nemo-mbridge-perf-moe-comm-overlap/SKILL.md "HybridEP production-shape validation" (code index
  // id 57486340860; tests/fixtures/reference/moe_ep_overlap_ab.yaml), two same-method rank-0 Nsight
  // Systems profiles of one Qwen3-30B-A3B run on 16 H100 with only the overlap switched: the
  // communication kernels total 9.079 ms / 0.11% = 8.254 s with the overlap off (9.079 ms of it
  // concurrent with GEMM or attention, "0.11% of communication time") and 3958.997 ms / 36.55% =
  // 10.832 s with it on. The ratio, 1.312, is what an overlapped exchange takes against the same
  // exchange alone. The 0.11% is printed to two digits, so the off total is known to about +-5%.
  // Applied to the all-to-all dispatcher's NCCL kernels as well (no separate measurement of theirs).
  double ep_overlap_comm_slowdown = (3958.997 / 0.3655) / (9.079 / 0.0011) - 1.0;
  // DeepEP / HybridEP, the flex token dispatcher's backends (model/moe_ops.h moe_deepep_time): the
  // share of the link rate one dispatch or combine reaches through the library's PyTorch API, the
  // call Megatron-Core makes (the kernels, the layout preprocessing, the copy of the received
  // tokens out of the library's buffer). Measured by the libraries' authors with 4096 tokens of
  // hidden 7168 per rank routed uniformly at random to the top 8 experts, BF16 dispatch and
  // combine; rows in tests/fixtures/reference/hybridep_bandwidth.yaml. The tests count each
  // token once per distinct node (IB) or rank (NVLink) it reaches, the own node or rank included,
  // so the bytes on the wire are (N - 1)/N of what they count (the formula moe_deepep_bytes uses).
  //   network       HybridEP on H100, one 400 Gb/s NIC per GPU (50 GB/s), 16 / 32 / 64 ranks on
  //                 2 / 4 / 8 nodes, the best of 4 / 8 / 16 SMs (deepseek-ai/DeepEP
  //                 docs/README_Hybrid-EP.md @41cad94449628adfb1cd1cadd82aeda83d4fbf0f, "Torch API"):
  //                 0.577, 0.570 / 0.710, 0.788 / 0.726, 0.834 of 50 GB/s (dispatch, combine).
  //                 The share rises with the bytes each exchange puts on the wire (58.5 / 159 /
  //                 271 MB per rank at 2 / 4 / 8 nodes): a fixed time per exchange plus the bytes
  //                 at a rate, t = deepep_network_latency + bytes / (deepep_network_eta x NIC),
  //                 least squares over the six API points (scripts/fit_deepep_network.py): 636 us
  //                 and 0.86 of the NIC (43.0 GB/s), every point within 7.5% (one flat share of
  //                 0.70 missed them by -19% to +19%). The "Kernel Only" columns fit the same form
  //                 at 370 us and 0.95 of the NIC (47.5 GB/s), within 7%: the kernels reach line
  //                 rate once started, and part of the fixed time is the kernels' own (the notify
  //                 and layout exchange before any token moves), part the API's preprocessing.
  //                 The fit's lever is the wire bytes; the rows also grow the expert count with
  //                 the node count (8 per rank), which the form does not separate.
  //   NVLink        Blackwell: HybridEP on B200 (8 ranks) and on one GB200 NVL72 rack (8, 16, 24,
  //                 32, 36 ranks), the best of 16 / 32 SMs, 900 GB/s per direction (the same
  //                 README): 0.48-0.55, mean 0.52. Hopper: DeepEP V1's normal kernels on H800
  //                 (docs/legacy.md @0297fc801788b14b338a46554faca28d419e518a: EP 8, 153 GB/s
  //                 dispatch and 158 GB/s combine of NVLink's 200 GB/s per direction) 0.67, 0.69:
  //                 0.68. The NVLink rows show no fixed time (their share falls as the ranks and
  //                 bytes grow), so the NVLink leg keeps a flat share.
  // The kernels alone are 1.3-1.4x faster than the API (the README's "Kernel Only" columns); the
  // GB200 optimization guide puts the copy out of HybridEP's buffer at 10-20% of the
  // communication time (NVIDIA/Megatron-LM docs/discussions/deepseek-v3-gb200-optimization/
  // deepseek-v3-gb200-optimization.md @1d9edcf8c7c16c66ca6acc3801265b21588116a3, Sec. 2.5).
  double deepep_network_eta = 0.86;
  double deepep_network_latency_s = 636.0e-6;
  double deepep_nvlink_eta_hopper = 0.68;
  double deepep_nvlink_eta_blackwell = 0.52;
  // Megatron-Core DDP bucket size in parameters: max(40M, 1M * dp) (megatron/core/distributed/
  // distributed_data_parallel_config.py, bucket_size default); the last bucket cannot overlap.
  double dp_bucket_params = 40.0e6;

  // --- Optimizer step (memory-bound multi-tensor Adam) ------------------------------------------
  // Bytes moved per parameter of the shard besides the optimizer states: read the FP32 main grad
  // (4), write the 16-bit model weight (2) (Megatron's Adam over main params,
  // megatron/core/optimizer/optimizer.py); grad-norm clipping reads the grads once more (4). The
  // states are read and written once each in the format they are stored in
  // (adam_state_traffic_bytes, model/model_states.h: 2 x 12 with FP32 master and moments, 34 in all).
  double adam_grad_and_weight_bytes_per_param = 10.0;
  // FP16 dynamic loss scaling: unscale and inf/nan check read and write every grad (8 bytes)
  // (megatron/core/optimizer/optimizer.py, _unscale_main_grads_and_check_for_nan).
  double loss_scale_bytes_per_param = 8.0;

  // --- Offload (optimizer states to host memory, CPU Adam) ---------------------------------------
  // The CPU optimizer step is bound by host DRAM: it moves the same Adam traffic per parameter at
  // the host memory bandwidth each GPU's share of the CPUs gets. x86 hosts: a DGX H100's two Xeon
  // Platinum 8480C have 8 DDR5-4800 channels each (Intel ARK: 307.2 GB/s per socket), 614 GB/s
  // for 8 GPUs = 76.8 GB/s per GPU. Grace (GH200/GB200): 500 GB/s LPDDR5X per Grace (NVIDIA Grace
  // datasheet "up to 500 GB/s"); on GB200 two GPUs share it: 250 GB/s per GPU. A GPU whose host
  // link is NVLink-C2C (faster than any PCIe x16 link) gets the Grace figure.
  double host_dram_bandwidth_per_gpu_x86 = 76.8e9;
  double host_dram_bandwidth_per_gpu_grace = 250.0e9;
  // Activation offload copies (model/activation_offload.h): pinned cudaMemcpyAsync over the host
  // link. PCIe: ~80% of the link rate each way (CUDA's bandwidthTest sample, PCIe Gen4 x16: ~25
  // of 32 GB/s; the figure inference.host_link_eta uses for KV swaps). NVLink-C2C is not
  // symmetric: on a GH200, Li et al. 2024 ("Harnessing Integrated CPU-GPU System Memory for HPC:
  // a first look into Grace Hopper", ICPP'24; reported by HPCwire) measured 375 GB/s host->device
  // and 297 GB/s device->host of the 450 GB/s per direction; GB200's C2C is taken to behave alike
  // (assumption: no Blackwell measurement found).
  double pcie_copy_eta = 0.80;
  double c2c_host_to_device_eta = 375.0 / 450.0;
  double c2c_device_to_host_eta = 297.0 / 450.0;

  // --- Fixed costs per step ----------------------------------------------------------------------
  // Data loading, logging and the Python loop around the step, not hidden by compute. Megatron's
  // timers put them at tens of milliseconds per iteration with a prefetching loader; assumption.
  double step_overhead_s = 0.02;

  // --- Memory terms -------------------------------------------------------------------------------
  // CUDA context + PyTorch/cuBLAS/cuDNN kernels loaded on one GPU (~0.5-1 GiB observed with
  // `nvidia-smi` on an idle torch process; assumption). 
  double cuda_context_bytes = 0.75 * 1024 * 1024 * 1024;
  // cuBLAS workspace: 32 MiB on Hopper (cuBLAS docs, "cublasSetWorkspace": recommended 32 MiB for
  // Hopper) per handle, a few handles per process.
  double cublas_workspace_bytes = 4 * 32.0 * 1024 * 1024;
  // NCCL buffers: NCCL_BUFFSIZE 4 MiB per channel per peer, up to 32 channels, for each
  // communicator (NCCL docs, environment variables); ~0.25 GiB per communicator kind used.
  double nccl_buffer_bytes_per_communicator = 0.25 * 1024 * 1024 * 1024;
  // PyTorch caching allocator fragmentation, as a fraction of activation and gradient memory
  // (assumption; Megatron memory reports show 5-15%).
  double allocator_fragmentation = 0.10;

  // Host time per kernel launch of a training layer (Transformer Engine modules):
  // host_dispatch_s x te_host_dispatch_factor.
  [[nodiscard]] double training_host_dispatch_s() const { return host_dispatch_s * te_host_dispatch_factor; }

  // Sustained fraction of `gpu`'s dense peak for a large GEMM with inputs of type `compute`.
  [[nodiscard]] double gemm_eta(GpuArchitecture arch, DataType compute) const;
  // Sustained over burst speed of compute-bound kernels on `gpu`: the part's own figure where the
  // catalog gives one (GpuSpec::sustained_clock_fraction), else its architecture's (sustained_derate,
  // or Blackwell's own); 1 for a burst() copy.
  [[nodiscard]] double sustained_fraction(const GpuSpec& gpu) const;
  // A copy that prices kernels at their burst speed (every sustained derate 1): for comparing with
  // short, back-to-back benchmark measurements.
  [[nodiscard]] CostParameters burst() const;
  // Fraction of the dense 16-bit peak a fused attention kernel of generation `kernel` sustains on
  // `arch` (flash2 and triton require flash2_priced(arch); triton is FlashAttention-2's eta times
  // model/triton_attention.h's ratios).
  [[nodiscard]] double flash_forward_eta(GpuArchitecture arch, AttentionKernel kernel = AttentionKernel::best) const;
  [[nodiscard]] double flash_backward_eta(GpuArchitecture arch, AttentionKernel kernel = AttentionKernel::best) const;
  // DeepEP/HybridEP's share of the NVLink rate on `arch` (Blackwell's figure, or Hopper's for the others).
  [[nodiscard]] double deepep_nvlink_eta(GpuArchitecture arch) const;
  // The share of the exponentials a forward flash kernel on `arch` hides (Blackwell's figure, or the others').
  [[nodiscard]] double flash_softmax_hidden(GpuArchitecture arch) const;

 private:
  friend struct NamedConstants<CostParameters>;
  template <class Self, class F>
  static void visit_constants(Self& self, F& f) {
    f("gemm.eta.ampere_16bit", self.gemm_eta_ampere_16bit, "gemm_measurements.yaml A100 SXM best-shape rows");
    f("gemm.eta.hopper_16bit", self.gemm_eta_hopper_16bit, "gemm_measurements.yaml H100 SXM best rows");
    f("gemm.eta.blackwell_16bit", self.gemm_eta_blackwell_16bit, "gemm_measurements.yaml B200/GB200 rows");
    f("gemm.eta.ada_16bit", self.gemm_eta_ada_16bit, "gemm_measurements.yaml L40S row");
    f("gemm.eta.cdna3_16bit", self.gemm_eta_cdna3_16bit, "placeholder (no MI300X measurement)");
    f("gemm.eta.fp8", self.gemm_eta_fp8, "gemm_measurements.yaml FP8 best-shape rows");
    f("gemm.mxfp8_over_fp8", self.gemm_mxfp8_over_fp8, "TransformerEngine gemm_profiling.rst, B300 pre-quantized 6.812 / 7.161 ms");
    f("gemm.eta.int8", self.gemm_eta_int8, "assumption: equal to gemm.eta.fp8 (no int8 row in gemm_measurements.yaml)");
    f("gemm.eta.tf32", self.gemm_eta_tf32, "gemm_measurements.yaml H100 SXM tf32 best row");
    f("gemm.eta.fp32_simt", self.gemm_eta_fp32_simt, "gemm_measurements.yaml fp32 rows");
    f("gemm.tile.large_m", self.gemm_tile_large_m, "CUTLASS SM80 default ThreadblockShape");
    f("gemm.tile.large_n", self.gemm_tile_large_n, "CUTLASS SM80 default ThreadblockShape");
    f("gemm.tile.small", self.gemm_tile_small, "common cuBLAS tile");
    f("gemm.tile.skinny_m", self.gemm_tile_skinny_m, "PTX mma.sync.m16n8k16, operands swapped (N = 8)");
    f("gemm.tile.skinny_n", self.gemm_tile_skinny_n, "common cuBLAS tile");
    f("gemm.split_k_min_depth", self.gemm_split_k_min_depth, "assumption");
    f("gemm.k_half", self.gemm_k_half, "measured/h200_gemm_grid_2026-11-29.json fit");
    f("gemm.epilogue_rate", self.gemm_epilogue_rate, "0: hidden (assumption); fitted by stepcast calibrate");
    f("gemm.sector_misaligned_eta", self.gemm_sector_misaligned_eta, "1: no effect (assumption); fitted by stepcast calibrate");
    f("gemm.misaligned_eta", self.gemm_misaligned_eta,
      "scenarios/calibration/h200-sxm-141gb/run-5692d753a737/gemm.json misaligned shapes");
    f("compute.sustained_derate", self.sustained_derate, "gemm_measurements.yaml largest vs best rows");
    f("compute.sustained_derate.blackwell", self.sustained_derate_blackwell,
      "flashinfer PR #2899 B200 throttled vs peak iterations (blackwell_compute.yaml)");
    f("kernel.gap_s", self.kernel_gap_s, "scripts/fit_gemm_defaults.py");
    f("kernel.cold_start_s", self.kernel_cold_start_s,
      "scenarios/calibration/h200-sxm-141gb/run-5692d753a737/gemm.json cold/hot pairs (harness only)");
    f("kernel.host_dispatch_s", self.host_dispatch_s, "scripts/fit_gemm_defaults.py");
    f("kernel.te_host_dispatch_factor", self.te_host_dispatch_factor,
      "TransformerEngine#2053 te.Linear / torch.nn.Linear forward CPU time (GB200, GH200)");
    f("gemm.grouped_streams", self.grouped_gemm_streams, "TransformerEngine gemm.h num_streams");
    f("memory.bandwidth_eta", self.memory_bandwidth_eta, "measured/h200_torch_kernels_2026-11-29.json copy");
    f("memory.elementwise_bytes_per_sm_clock", self.elementwise_bytes_per_sm_clock, "measured/h200_torch_kernels_2026-11-29.json");
    f("memory.reduction_bytes_per_sm_clock", self.reduction_bytes_per_sm_clock, "measured/h200_torch_kernels_2026-11-29.json");
    f("memory.gemm_stream_bytes_per_sm_clock", self.gemm_stream_bytes_per_sm_clock,
      "measured/h200_inference_kernels_2026-11-29.json");
    f("flash.fwd_eta.ampere", self.flash_fwd_eta_ampere, "FlashAttention-2 paper, A100");
    f("flash.bwd_eta.ampere", self.flash_bwd_eta_ampere, "FlashAttention-2 paper, A100");
    f("flash.fwd_eta.hopper", self.flash_fwd_eta_hopper, "measured/h200_torch_kernels_2026-11-29.json cuDNN SDPA");
    f("flash.bwd_eta.hopper", self.flash_bwd_eta_hopper, "measured/h200_torch_kernels_2026-11-29.json cuDNN SDPA");
    f("flash.fwd_eta.blackwell", self.flash_fwd_eta_blackwell,
      "hopper eta x cudnn-frontend GB200/H200 ratio (blackwell_compute.yaml)");
    f("flash.bwd_eta.blackwell", self.flash_bwd_eta_blackwell,
      "hopper eta x cudnn-frontend GB200/H200 ratio (blackwell_compute.yaml)");
    f("flash.flash2_fwd_ratio.hopper", self.flash2_fwd_ratio_hopper,
      "measured/h200_torch_kernels_2026-11-29.json SDPA flash over cuDNN");
    f("flash.flash2_bwd_ratio.hopper", self.flash2_bwd_ratio_hopper,
      "measured/h200_torch_kernels_2026-11-29.json SDPA flash over cuDNN");
    f("flash_shape.tile", self.flash_shape_tile, "scripts/fit_flash_shape.py (cuDNN 128 x 128 tiles); 0 turns the split off");
    f("flash_shape.cta_overhead_blocks", self.flash_shape_cta_overhead_blocks,
      "scripts/fit_flash_shape.py: cuDNN seq 2K-32K rows (blackwell_compute.yaml) + H200 torch SDPA rows");
    f("flash_shape.tail_fraction", self.flash_shape_tail_fraction,
      "scripts/fit_flash_shape.py: cuDNN seq 2K-32K rows (blackwell_compute.yaml) + H200 torch SDPA rows");
    f("flash_shape.softmax_hidden_fraction", self.flash_softmax_hidden_fraction,
      "FlashAttention-3 paper Fig. 5: H100 head dim 64 at 0.59-0.73 of head dim 128 (none hidden)");
    f("flash_shape.softmax_hidden_fraction.blackwell", self.flash_softmax_hidden_fraction_blackwell,
      "FlashAttention-4 (arXiv:2603.05451): softmax warps beside asynchronous tcgen05 MMAs (all hidden)");
    f("flash.fwd_speedup.doubled_sfu", self.flash_fwd_speedup_doubled_sfu,
      "scripts/fit_doubled_sfu_attention.py: cuDNN 9.19 GB200/GB300 forward time ratios (blackwell_compute.yaml)");
    f("flash.bwd_speedup.doubled_sfu", self.flash_bwd_speedup_doubled_sfu,
      "scripts/fit_doubled_sfu_attention.py: cuDNN 9.19 GB200/GB300 backward time ratios (blackwell_compute.yaml)");
    f("flash.fp8_fwd_speedup.hopper", self.flash_fp8_fwd_speedup_hopper,
      "scripts/fit_fp8_attention.py: cuDNN 9.19 H200 BF16/FP8 forward time ratios (blackwell_compute.yaml)");
    f("flash.fp8_bwd_speedup.hopper", self.flash_fp8_bwd_speedup_hopper,
      "scripts/fit_fp8_attention.py: cuDNN 9.19 H200 BF16/FP8 backward time ratios (blackwell_compute.yaml)");
    f("flash.fp8_fwd_speedup.blackwell", self.flash_fp8_fwd_speedup_blackwell,
      "scripts/fit_fp8_attention.py: cuDNN 9.19 GB200 BF16/FP8 forward time ratios (blackwell_compute.yaml)");
    f("flash.fp8_bwd_speedup.blackwell", self.flash_fp8_bwd_speedup_blackwell,
      "scripts/fit_fp8_attention.py: cuDNN 9.19 GB200 BF16/FP8 backward time ratios (blackwell_compute.yaml)");
    f("flash.fp8_fwd_speedup.blackwell_ultra", self.flash_fp8_fwd_speedup_blackwell_ultra,
      "scripts/fit_fp8_attention.py: cuDNN 9.19 GB300 BF16/FP8 forward time ratios (blackwell_compute.yaml)");
    f("flash.fp8_bwd_speedup.blackwell_ultra", self.flash_fp8_bwd_speedup_blackwell_ultra,
      "scripts/fit_fp8_attention.py: cuDNN 9.19 GB300 BF16/FP8 backward time ratios (blackwell_compute.yaml)");
    f("comm.nvlink_eta", self.nvlink_eta, "NVIDIA/nccl-tests#212");
    f("comm.network_eta", self.network_eta, "NVIDIA/nccl-tests#160, #290");
    f("comm.tp_overlap_exposed_chunks", self.tp_overlap_exposed_chunks, "Wang et al. 2022");
    f("comm.sm_fraction", self.comm_sm_fraction, "DeepSeek-V3 report Sec. 3.2.2 (20 of 132 SMs)");
    f("comm.ep_overlap_compute_slowdown", self.ep_overlap_compute_slowdown,
      "Megatron-Core MoE report Sec. 4.2.3 via Megatron-LM docs moe_a2a_overlap.md (DeepEP 20 SMs, ~20% GEMM cost)");
    f("comm.ep_overlap_comm_slowdown", self.ep_overlap_comm_slowdown,
      "Megatron-Bridge MoE comm-overlap SKILL.md: Nsight communication time overlap on / off, 10.832 / 8.254 s "
      "(moe_ep_overlap_ab.yaml)");
    f("comm.deepep_network_eta", self.deepep_network_eta,
      "DeepEP docs/README_Hybrid-EP.md H100 16-64 ranks, Torch API (hybridep_bandwidth.yaml; scripts/fit_deepep_network.py)");
    f("comm.deepep_network_latency_s", self.deepep_network_latency_s,
      "DeepEP docs/README_Hybrid-EP.md H100 16-64 ranks, Torch API (hybridep_bandwidth.yaml; scripts/fit_deepep_network.py)");
    f("comm.deepep_nvlink_eta.hopper", self.deepep_nvlink_eta_hopper, "DeepEP docs/legacy.md H800 EP 8 intranode");
    f("comm.deepep_nvlink_eta.blackwell", self.deepep_nvlink_eta_blackwell,
      "DeepEP docs/README_Hybrid-EP.md B200, GB200 8-36 ranks, Torch API (hybridep_bandwidth.yaml)");
    f("comm.dp_bucket_params", self.dp_bucket_params, "Megatron-Core DDP bucket_size");
    f("optimizer.adam_grad_and_weight_bytes_per_param", self.adam_grad_and_weight_bytes_per_param,
      "Megatron Adam grad read, clipping read, 16-bit weight write");
    f("optimizer.loss_scale_bytes_per_param", self.loss_scale_bytes_per_param, "Megatron FP16 unscale");
    f("offload.host_dram_bandwidth_per_gpu_x86", self.host_dram_bandwidth_per_gpu_x86, "Intel ARK Xeon 8480C, DGX H100");
    f("offload.host_dram_bandwidth_per_gpu_grace", self.host_dram_bandwidth_per_gpu_grace, "NVIDIA Grace datasheet, GB200");
    f("offload.pcie_copy_eta", self.pcie_copy_eta, "CUDA bandwidthTest, PCIe Gen4 x16");
    f("offload.c2c_host_to_device_eta", self.c2c_host_to_device_eta, "Li et al. 2024 (ICPP), GH200 375 of 450 GB/s");
    f("offload.c2c_device_to_host_eta", self.c2c_device_to_host_eta, "Li et al. 2024 (ICPP), GH200 297 of 450 GB/s");
    f("step.overhead_s", self.step_overhead_s, "assumption");
    f("memory.cuda_context_bytes", self.cuda_context_bytes, "assumption");
    f("memory.cublas_workspace_bytes", self.cublas_workspace_bytes, "cuBLAS docs");
    f("memory.nccl_buffer_bytes_per_communicator", self.nccl_buffer_bytes_per_communicator, "NCCL docs");
    f("memory.allocator_fragmentation", self.allocator_fragmentation, "assumption");
  }
};

// Whether CostParameters has a FlashAttention-2 figure for `arch`: Ampere and Ada (the flash etas
// are FlashAttention-2's) and Hopper (flash2_*_ratio_hopper). Not Blackwell or CDNA3: no published
// or measured FlashAttention-2 training-shape figure (scenario checks reject flash2 there, and
// triton, which is priced relative to FlashAttention-2).
[[nodiscard]] bool flash2_priced(GpuArchitecture arch);

}  // namespace stepcast
