#pragma once
// Fits the kernel constants of model/cost_parameters.h to measured kernels, through
// model/op_time.h's own formula, so that the simulator uses exactly what was fitted:
//
//   t = max(flops / (peak * eta_c * wave_tile(shape; tiles, SMs) * k / (k + k_half + k_epi)),
//           bytes / (hbm_bw * eta_mem), bytes / (rate_kind * SMs * clock)) + gap
//
//   eta_c      one per efficiency constant the points touch: gemm.eta.<arch>_16bit, gemm.eta.fp8,
//              gemm.eta.int8, gemm.eta.tf32, gemm.eta.fp32_simt, flash.fwd_eta.<arch>, flash.bwd_eta.<arch>
//              (CostParameters::gemm_eta / flash_*_eta decide which; fp16 and bf16 share one);
//   eta_mem    memory.bandwidth_eta: HBM efficiency, from the copy/triad kernels (which measure
//              nothing else) and from any other kernel HBM bounds;
//   rate_kind  memory.elementwise_bytes_per_sm_clock / memory.reduction_bytes_per_sm_clock: the
//              SMs' byte rate of elementwise and reduction kernels, where it binds;
//   gap        kernel.gap_s, shared by every kernel;
//   cold       kernel.cold_start_s, added to the points timed cold (one launch alone after an L2
//              flush; KernelPoint::cold) and not to those timed hot (back to back, as a training
//              step runs kernels, which is what op_time predicts); fitted with the gap when both
//              kinds are present;
//   misaligned gemm.misaligned_eta, the speed of GEMMs with a stride that is not a multiple of
//              16 bytes (model/op_time.h gemm_misaligned): those points take no part in the rest
//              of the fit and set only this ratio, by a one-column least squares afterwards;
//   sector     gemm.sector_misaligned_eta, the same for tensor-core GEMMs whose strides are
//              multiples of 16 bytes but not of the 32-byte sector (gemm_sector_misaligned): fitted
//              on those points alone, after gemm.misaligned_eta, which they take no part in;
//   shape      gemm.tile.large_m/large_n/small, gemm.k_half and gemm.epilogue_rate: a search over
//              the CTA tiles cuBLAS chooses among (128x256 / 128x128 / 64x128 / 256x256 with 128 or
//              64 square), reduction depths 0..2048 and epilogue store rates (k_epi = C bytes x the
//              precision's FLOPs per SM per clock / (2 x rate), model/op_time.h
//              gemm_epilogue_depth; 0 = hidden), kept at the starting values unless another fits
//              clearly better (rms log error 2% lower). For square GEMMs the square tile always
//              wins the model's best-of-tiles, so only it is identified by them. The epilogue rate
//              is one constant for every precision: what differs between them is the C element
//              size and the FLOP rate its tile's mainloop runs at.
//
// With the shape terms fixed and each point assigned the limit that binds it, t is linear in
// 1/eta_c, 1/eta_mem, 1/rate and the gap: a non-negative least squares
// (validation/least_squares.h) on relative errors (each row divided by its measured time), with
// Huber weights beyond 25% (iteratively reweighted): a shape the model's form cannot follow — a
// misaligned 2500^3 GEMM that cuBLAS runs with a slow kernel, 4x the model — pulls linearly, not
// quadratically. The assignment and weights are repeated until they settle. A GEMM or attention
// kernel bound by memory does not set the memory constants (its memory time enters as known): a
// slow small GEMM says nothing about HBM. The gap is fitted only when at least 3
// points span more than a factor of 2 in time; otherwise it stays at its starting value.
//
// Fitted components are what a training step runs: gemm.<precision>, attention.forward and
// attention.backward (cuDNN's fused attention), elementwise, reduction, memory. Other
// implementations (stepcast's own flash kernels, paged decode) are validated against the same
// constants but do not set them.
//
// Clocks: a point whose record carries its mean SM clock (KernelPoint::sm_clock_hz) is priced at
// that clock: the dense peaks, and the SMs' byte rates that follow them, scale by the measured
// clock over the clock the datasheet peaks are quoted at (model/op_time.h sm_clock_hz), HBM does
// not. The harness keeps samples down to 0.75 of the default clock, and on the H200 run of
// 2026-12-01 (scenarios/calibration/h200-sxm-141gb/run-084f22936c86) the long GEMMs held
// 1550-1750 MHz and the short ones ~1980: without this the fitted efficiencies mix the two. So
// the fitted efficiencies are at the datasheet clock, like the catalog's defaults, and the fit
// and predict_kernel() use sustained_derate = 1 (predict_kernel adds kernel.cold_start_s to cold
// points). Training predictions apply compute.sustained_derate on top for the clock a step-long
// load holds.
//
// Residuals: in-sample errors of the final fit, and held-out errors from k-fold cross-validation
// (each point predicted by a fit, shape search included, that did not see it).

#include <string>
#include <vector>

#include "model/cost_parameters.h"
#include "model/hardware.h"
#include "simulator/calibration_profile.h"
#include "validation/kernel_points.h"

namespace stepcast {

struct KernelFitOptions {
  bool search_tiles = true;  // the GEMM shape search; needs at least kMinPointsForTileSearch GEMM points
  int folds = 5;             // cross-validation folds (fewer when there are fewer points)
};

inline constexpr int kMinPointsForTileSearch = 6;

struct KernelResidual {
  std::string component;
  std::string label;
  double measured_s = 0.0;
  double predicted_s = 0.0;           // by the final fit
  double held_out_predicted_s = 0.0;  // by the fold that did not see it; 0 when not cross-validated
  bool fitted = true;                 // false: validated only (other attention implementations, decode)
};

struct KernelFit {
  CostParameters params;             // `start` with every fitted value in place
  std::vector<FittedValue> fitted;   // what changed, with the defaults it replaces
  std::vector<KernelResidual> points;  // in input order
  std::vector<std::string> notes;
};

KernelFit fit_kernels(const std::vector<KernelPoint>& points, const GpuSpec& gpu, const CostParameters& start,
                      const KernelFitOptions& options = {});

// The burst time the model predicts for one measured kernel (op_time with sustained_derate = 1,
// plus kernel.cold_start_s when it was timed cold).
double predict_kernel(const KernelPoint& point, const GpuSpec& gpu, const CostParameters& params);

// The CostParameters constant that sets `op`'s compute efficiency on `arch` ("gemm.eta.hopper_16bit",
// "flash.fwd_eta.hopper"; empty for memory-bound kinds), found by probing the struct, not by a table.
std::string efficiency_constant(const Op& op, GpuArchitecture arch);

}  // namespace stepcast
