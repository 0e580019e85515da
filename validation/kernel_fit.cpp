#include "validation/kernel_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "model/op_time.h"
#include "validation/least_squares.h"

namespace stepcast {

namespace {

constexpr const char* kMemoryEta = "memory.bandwidth_eta";
constexpr const char* kGap = "kernel.gap_s";
constexpr const char* kColdStart = "kernel.cold_start_s";
constexpr const char* kKHalf = "gemm.k_half";
constexpr const char* kEpilogueRate = "gemm.epilogue_rate";
constexpr const char* kMisalignedEta = "gemm.misaligned_eta";
constexpr const char* kSectorMisalignedEta = "gemm.sector_misaligned_eta";
constexpr double kHuge = 1e30;

// CTA tile candidates (large_m, large_n, small); the first is the documented default
// (model/cost_parameters.h: CUTLASS' SM80 default 128x256 and the common 128x128).
struct Tiles {
  double large_m;
  double large_n;
  double small;
};
constexpr std::array<Tiles, 8> kTileCandidates{{{128, 256, 128},
                                                {128, 256, 64},
                                                {128, 128, 128},
                                                {128, 128, 64},
                                                {64, 128, 64},
                                                {256, 256, 128},
                                                {64, 256, 128},
                                                {256, 128, 64}}};
// Reduction depths at which a GEMM reaches half speed (model/op_time.h: eta x k / (k + k_half)).
constexpr std::array<double, 7> kKHalfCandidates{0.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0};
// Epilogue store rates, bytes of C per SM per clock, where the epilogue is not hidden behind the
// mainloop (model/op_time.h gemm_epilogue_depth; 0: hidden). HBM's write rate per SM is ~19 on
// an H200 (4.8 TB/s x 0.89 / 132 SMs / 1.7 GHz), so the candidates span a quarter to 8x that.
constexpr std::array<double, 8> kEpilogueRateCandidates{0.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0};
// Attention CTA-schedule settings tried when enough fused-attention points were measured
// (model/op_time.h flash_schedule_efficiency): query/key tile, per-CTA overhead in key blocks,
// causal tail fraction, share of the softmax's exponential time hidden under matrix work.
constexpr double kFlashTile = 128.0;  // FlashAttention-2/3 and cuDNN's Hopper kernels: 128-row Q tiles at d = 128
constexpr std::array<double, 5> kFlashOverheadCandidates{0.0, 0.5, 1.0, 2.0, 4.0};
constexpr std::array<double, 4> kFlashTailCandidates{0.0, 0.25, 0.5, 1.0};
constexpr std::array<double, 4> kFlashHiddenCandidates{0.0, 0.25, 0.5, 0.75};
constexpr int kMinPointsForFlashSearch = 8;
// Relative error beyond which a point's pull on the kernel fit grows linearly (Huber 1964).
constexpr double kHuberRelative = 0.25;
// Another shape setting replaces the starting one only when its rms log error is this much lower.
constexpr double kShapeImprovement = 0.98;

double* constant(CostParameters& p, std::string_view wanted) {
  double* out = nullptr;
  p.for_each_constant([&](std::string_view name, double& value, std::string_view) {
    if (name == wanted) out = &value;
  });
  return out;
}

double constant_value(const CostParameters& p, std::string_view wanted) {
  double out = 0.0;
  p.for_each_constant([&](std::string_view name, const double& value, std::string_view) {
    if (name == wanted) out = value;
  });
  return out;
}

bool is_efficiency(std::string_view name) {
  return name.rfind("gemm.eta.", 0) == 0 || name.rfind("flash.", 0) == 0;
}

// The SMs' byte-rate limits of memory-bound kernels (model/op_time.h).
bool is_sm_rate(std::string_view name) {
  return name.ends_with("bytes_per_sm_clock");
}

// A copy of `params` with every limit of op_time lifted (efficiencies and rates huge, no gap,
// burst clocks), to be lowered one at a time.
CostParameters unlimited(const CostParameters& params) {
  CostParameters probe = params.burst();
  probe.for_each_constant([](std::string_view name, double& value, std::string_view) {
    if (is_efficiency(name) || is_sm_rate(name)) value = kHuge;
  });
  probe.memory_bandwidth_eta = kHuge;
  probe.kernel_gap_s = 0.0;
  probe.kernel_cold_start_s = 0.0;
  return probe;
}

// How a point takes part: the constant of each of op_time's limits that applies to it.
struct Role {
  std::string compute;  // efficiency constant of the compute side; empty for memory-bound kinds
  std::string sm_rate;  // SM byte-rate constant of its kind; empty for GEMMs
  bool fitted = true;
  bool misaligned = false;  // a GEMM with a stride that is not a multiple of 16 bytes: sets gemm.misaligned_eta only
  bool sector_misaligned = false;  // strides multiples of 16 bytes, not all of 32: sets gemm.sector_misaligned_eta only
};

struct Problem {
  const std::vector<KernelPoint>* points = nullptr;
  std::vector<Role> roles;
  std::vector<GpuSpec> clocked;  // per point: the GPU at the clock it ran at (at_measured_clock)
};

// op_time's three limits of a point at unit constants: flops / (peak x tile/wave x depth),
// bytes / HBM bandwidth, and bytes / (SMs x clock); all without the kernel gap.
struct Parts {
  double compute = 0.0;
  double hbm = 0.0;
  double sm = 0.0;
  double gaps = 1.0;  // kernel gaps op_time charges it: one per launch round (Op::launches)
};

// The GPU as it ran a point: its SM-clocked rates (every dense peak, and with them the SMs' byte
// rates, model/op_time.h sm_clock_hz) at the point's measured SM clock instead of the clock the
// datasheet peaks are quoted at (H200: 989.4 TFLOP/s = 132 SMs x 4096 x 1.83 GHz). HBM is on its
// own clock and keeps its bandwidth.
GpuSpec at_measured_clock(const GpuSpec& gpu, const KernelPoint& p) {
  const double datasheet_clock = sm_clock_hz(gpu);
  if (p.sm_clock_hz <= 0.0 || datasheet_clock <= 0.0) return gpu;
  GpuSpec at = gpu;
  const double ratio = p.sm_clock_hz / datasheet_clock;
  for (FlopRate& peak : at.dense_peak) peak = FlopRate(peak.value() * ratio);
  return at;
}

// op_time of a measured point, on the streams it was issued on, on `clocked`: the GPU at the clock
// the point ran at (at_measured_clock, made once per point: the fit prices each point many times).
Seconds point_time(const KernelPoint& p, const GpuSpec& clocked, CostParameters params) {
  if (p.streams > 0.0) params.grouped_gemm_streams = p.streams;
  return op_time(p.op, clocked, params);
}

// predict_kernel on the point's already clocked GPU.
double predict_clocked(const KernelPoint& point, const GpuSpec& clocked, const CostParameters& params) {
  const CostParameters burst = params.burst();
  return point_time(point, clocked, burst).value() + (point.cold ? params.kernel_cold_start_s : 0.0);
}

Parts parts_of(const KernelPoint& p, const Role& role, const GpuSpec& gpu, const CostParameters& params) {
  Parts out;
  const CostParameters base = unlimited(params);
  if (!role.compute.empty()) {
    CostParameters probe = base;
    *constant(probe, role.compute) = 1.0;
    out.compute = point_time(p, gpu, probe).value();
  }
  CostParameters one_second_gap = base;
  one_second_gap.kernel_gap_s = 1.0;
  out.gaps = point_time(p, gpu, one_second_gap).value() - point_time(p, gpu, base).value();
  CostParameters hbm = base;
  hbm.memory_bandwidth_eta = 1.0;
  out.hbm = point_time(p, gpu, hbm).value();
  if (!role.sm_rate.empty()) {
    CostParameters sm = base;
    *constant(sm, role.sm_rate) = 1.0;
    out.sm = point_time(p, gpu, sm).value();
  }
  return out;
}

// The SM byte-rate constant op_time applies to `op`, found by lowering each in turn.
std::string sm_rate_constant(const Op& op, const GpuSpec& gpu) {
  if (op.bytes.value() <= 0.0) return {};
  const CostParameters base = unlimited(CostParameters{});
  const double free_time = op_time(op, gpu, base).value();
  std::string found;
  base.for_each_constant([&](std::string_view name, const double&, std::string_view) {
    if (!is_sm_rate(name) || !found.empty()) return;
    CostParameters probe = base;
    *constant(probe, name) = 1.0;
    if (op_time(op, gpu, probe).value() > 2.0 * free_time + 1e-30) found = std::string(name);
  });
  return found;
}

double log_error_sq(const Problem& pb, const std::vector<std::size_t>& subset, const CostParameters& params) {
  double sum = 0.0;
  for (std::size_t i : subset) {
    const double e = std::log(predict_clocked((*pb.points)[i], pb.clocked[i], params) / (*pb.points)[i].measured_s);
    sum += e * e;
  }
  return sum;
}

enum class Limit { compute, hbm, sm };

// Limits imposed on whole components (memory-bound kinds), to escape an assignment the
// alternation cannot leave: a limit no point is assigned to gets no row, so it never moves.
using ForcedLimits = std::map<std::string, Limit>;

// NNLS fit of the efficiencies, HBM efficiency, SM byte rates and the gap on `subset` (indices
// of fitted points) with the GEMM shape terms already set in `params`.
CostParameters solve(const Problem& pb, const std::vector<std::size_t>& subset, CostParameters params,
                     const ForcedLimits& forced = {}) {
  const auto& points = *pb.points;
  std::vector<Parts> parts;
  parts.reserve(subset.size());
  for (std::size_t i : subset) parts.push_back(parts_of(points[i], pb.roles[i], pb.clocked[i], params));
  // The gap: fitted when at least 3 points span more than a factor of 2 in time.
  double t_min = kHuge;
  double t_max = 0.0;
  for (std::size_t i : subset) {
    t_min = std::min(t_min, points[i].measured_s);
    t_max = std::max(t_max, points[i].measured_s);
  }
  const bool fit_gap = subset.size() >= 3 && t_max > 2.0 * t_min;
  // The cold start: fitted with the gap when both cold and hot points are present.
  const bool any_cold = std::any_of(subset.begin(), subset.end(), [&](std::size_t i) { return points[i].cold; });
  const bool any_hot = std::any_of(subset.begin(), subset.end(), [&](std::size_t i) { return !points[i].cold; });
  const bool fit_cold_start = fit_gap && any_cold && any_hot;

  std::vector<Limit> limit(subset.size(), Limit::compute);
  std::vector<double> weight(subset.size(), 1.0);
  bool weights_settled = false;
  for (int round = 0; round < 12; ++round) {
    // Which limit binds each point under the current constants.
    std::vector<Limit> now(subset.size());
    for (std::size_t r = 0; r < subset.size(); ++r) {
      const Role& role = pb.roles[subset[r]];
      if (const auto f = forced.find(points[subset[r]].component); f != forced.end()) {
        now[r] = f->second;
        continue;
      }
      const double eta_c = role.compute.empty() ? 0.0 : constant_value(params, role.compute);
      const double compute = eta_c > 0.0 ? parts[r].compute / eta_c : 0.0;
      const double hbm = parts[r].hbm / params.memory_bandwidth_eta;
      const double rate = role.sm_rate.empty() ? 0.0 : constant_value(params, role.sm_rate);
      const double sm = rate > 0.0 ? parts[r].sm / rate : 0.0;
      now[r] = compute >= hbm && compute >= sm ? Limit::compute : (sm > hbm ? Limit::sm : Limit::hbm);
    }
    if (round > 0 && now == limit && weights_settled) break;
    limit = now;

    // Columns: the constants of the limits that bind somewhere, then the gap. A GEMM or attention
    // kernel bound by memory does not set the memory constants (a slow small GEMM says nothing
    // about HBM): its memory time enters as known.
    auto column_of = [&](std::size_t r) -> std::string {
      const Role& role = pb.roles[subset[r]];
      if (limit[r] == Limit::compute) return role.compute;
      if (!role.compute.empty()) return {};
      return limit[r] == Limit::sm ? role.sm_rate : kMemoryEta;
    };
    std::map<std::string, int> column;
    for (std::size_t r = 0; r < subset.size(); ++r) {
      const std::string c = column_of(r);
      if (!c.empty()) column.try_emplace(c, 0);
    }
    int next = 0;
    for (auto& [name, index] : column) index = next++;
    const int gap_column = fit_gap ? next++ : -1;
    const int cold_column = fit_cold_start ? next++ : -1;
    if (next == 0) break;

    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(subset.size()), next);
    Eigen::VectorXd b(static_cast<Eigen::Index>(subset.size()));
    for (std::size_t r = 0; r < subset.size(); ++r) {
      const Role& role = pb.roles[subset[r]];
      const auto row = static_cast<Eigen::Index>(r);
      const double t = points[subset[r]].measured_s;
      double rhs = t;
      const std::string c = column_of(r);
      const double part = limit[r] == Limit::compute ? parts[r].compute : limit[r] == Limit::sm ? parts[r].sm : parts[r].hbm;
      if (!c.empty()) {
        a(row, column.at(c)) = part;
      } else {
        rhs -= limit[r] == Limit::sm ? part / constant_value(params, role.sm_rate) : part / params.memory_bandwidth_eta;
      }
      if (fit_gap) {
        a(row, gap_column) = parts[r].gaps;
      } else {
        rhs -= params.kernel_gap_s * parts[r].gaps;
      }
      if (points[subset[r]].cold) {
        if (fit_cold_start) {
          a(row, cold_column) = 1.0;
        } else {
          rhs -= params.kernel_cold_start_s;
        }
      }
      a.row(row) *= weight[r] / t;
      b[row] = weight[r] * rhs / t;
    }
    const NnlsResult s = nnls(a, b);
    for (const auto& [name, index] : column) {
      const double u = s.x[index];
      // A column without an effective row keeps its value.
      if (u > 0.0) *constant(params, name) = 1.0 / u;
    }
    if (fit_gap) params.kernel_gap_s = s.x[gap_column];
    if (fit_cold_start) params.kernel_cold_start_s = s.x[cold_column];
    // Huber weights (iteratively reweighted least squares): a point the model's form cannot
    // follow (a misaligned shape cuBLAS runs with a slow kernel) pulls linearly, not
    // quadratically, beyond kHuberRelative.
    const Eigen::VectorXd residual = (a * s.x - b);
    weights_settled = true;
    for (std::size_t r = 0; r < subset.size(); ++r) {
      const double e = std::fabs(residual[static_cast<Eigen::Index>(r)] / std::max(weight[r], 1e-12));
      const double w = e <= kHuberRelative ? 1.0 : std::sqrt(kHuberRelative / e);
      if (std::fabs(w - weight[r]) > 0.01) weights_settled = false;
      weight[r] = w;
    }
  }
  return params;
}

// solve(), then for each memory-bound component (elementwise, reduction) the limit, HBM or SM
// byte rate, that fits its points best when imposed on all of them.
CostParameters solve_with_limits(const Problem& pb, const std::vector<std::size_t>& subset,
                                 const CostParameters& start, ForcedLimits& forced) {
  CostParameters best = solve(pb, subset, start);
  double best_error = log_error_sq(pb, subset, best);
  std::set<std::string> components;
  for (std::size_t i : subset) {
    const Role& role = pb.roles[i];
    if (role.compute.empty() && !role.sm_rate.empty()) components.insert((*pb.points)[i].component);
  }
  forced.clear();
  for (int pass = 0; pass < 3; ++pass) {
    bool improved = false;
    for (const auto& c : components) {
      for (Limit limit : {Limit::hbm, Limit::sm}) {
        ForcedLimits trial_limits = forced;
        trial_limits[c] = limit;
        const CostParameters trial = solve(pb, subset, start, trial_limits);
        const double e = log_error_sq(pb, subset, trial);
        if (e < best_error * (1.0 - 1e-9)) {
          best_error = e;
          best = trial;
          forced = trial_limits;
          improved = true;
        }
      }
    }
    if (!improved) break;
  }
  return best;
}

// A stride ratio (`ratio`: gemm.misaligned_eta, gemm.sector_misaligned_eta) from the GEMMs of `subset`
// whose Role flag `member` is set, every other constant as in `params`:
// each point is t = fixed + c / r, c its compute time at r = 1 (no memory limit, burst clocks) and
// fixed the kernel gap (and cold start), so 1/r is a one-column least squares on relative errors with Huber
// weights beyond kHuberRelative. Returns `params` unchanged when `subset` holds none.
CostParameters fit_stride_ratio(const Problem& pb, const std::vector<std::size_t>& subset, CostParameters params,
                                bool Role::*member, double CostParameters::*ratio) {
  std::vector<double> c;
  std::vector<double> t;
  std::vector<double> fixed;
  for (std::size_t i : subset) {
    if (!(pb.roles[i].*member)) continue;
    CostParameters compute_only = params;
    compute_only.*ratio = 1.0;
    compute_only.memory_bandwidth_eta = kHuge;
    compute_only.gemm_stream_bytes_per_sm_clock = kHuge;
    compute_only.kernel_gap_s = 0.0;
    compute_only.kernel_cold_start_s = 0.0;
    c.push_back(predict_clocked((*pb.points)[i], pb.clocked[i], compute_only));
    fixed.push_back(params.kernel_gap_s * parts_of((*pb.points)[i], pb.roles[i], pb.clocked[i], params).gaps +
                    ((*pb.points)[i].cold ? params.kernel_cold_start_s : 0.0));
    t.push_back((*pb.points)[i].measured_s - fixed.back());
  }
  if (c.empty()) return params;
  std::vector<double> weight(c.size(), 1.0);
  double u = 1.0 / (params.*ratio);
  for (int round = 0; round < 20; ++round) {
    double num = 0.0;
    double den = 0.0;
    for (std::size_t r = 0; r < c.size(); ++r) {
      const double measured = t[r] + fixed[r];
      const double a = c[r] / measured;
      num += weight[r] * weight[r] * a * t[r] / measured;
      den += weight[r] * weight[r] * a * a;
    }
    if (den <= 0.0) return params;
    u = num / den;
    bool settled = true;
    for (std::size_t r = 0; r < c.size(); ++r) {
      const double e = std::fabs(c[r] * u - t[r]) / (t[r] + fixed[r]);
      const double w = e <= kHuberRelative ? 1.0 : std::sqrt(kHuberRelative / e);
      if (std::fabs(w - weight[r]) > 0.01) settled = false;
      weight[r] = w;
    }
    if (settled) break;
  }
  // A misaligned GEMM is never faster than the aligned one.
  params.*ratio = u > 1.0 ? 1.0 / u : 1.0;
  return params;
}

CostParameters fit_misaligned(const Problem& pb, const std::vector<std::size_t>& subset, CostParameters params) {
  params = fit_stride_ratio(pb, subset, params, &Role::misaligned, &CostParameters::gemm_misaligned_eta);
  return fit_stride_ratio(pb, subset, params, &Role::sector_misaligned, &CostParameters::gemm_sector_misaligned_eta);
}

// solve() after choosing the GEMM shape terms (CTA tiles, k-depth) when allowed and there are
// enough GEMM points; then gemm.misaligned_eta from the misaligned GEMMs, which take no part in
// the rest (their slow fallback kernels say nothing about the constants of the fast ones).
CostParameters fit_aligned(const Problem& pb, const std::vector<std::size_t>& subset, const CostParameters& start,
                           bool search_shapes, bool* shapes_changed);

CostParameters fit_subset(const Problem& pb, const std::vector<std::size_t>& subset, const CostParameters& start,
                          bool search_shapes, bool* shapes_changed) {
  std::vector<std::size_t> aligned;
  for (std::size_t i : subset) {
    if (!pb.roles[i].misaligned && !pb.roles[i].sector_misaligned) aligned.push_back(i);
  }
  return fit_misaligned(pb, subset, fit_aligned(pb, aligned, start, search_shapes, shapes_changed));
}

CostParameters fit_aligned(const Problem& pb, const std::vector<std::size_t>& subset, const CostParameters& start,
                           bool search_shapes, bool* shapes_changed) {
  ForcedLimits forced;
  CostParameters best = solve_with_limits(pb, subset, start, forced);
  if (shapes_changed) *shapes_changed = false;
  const auto gemms = std::count_if(subset.begin(), subset.end(),
                                   [&](std::size_t i) { return (*pb.points)[i].op.kind == OpKind::gemm; });
  if (!search_shapes) return best;
  const double start_error = log_error_sq(pb, subset, best);
  double best_error = start_error;
  if (gemms >= kMinPointsForTileSearch) {
    for (const Tiles& t : kTileCandidates) {
      for (double k_half : kKHalfCandidates) {
        for (double epilogue : kEpilogueRateCandidates) {
          CostParameters trial = start;
          trial.gemm_tile_large_m = t.large_m;
          trial.gemm_tile_large_n = t.large_n;
          trial.gemm_tile_small = t.small;
          trial.gemm_k_half = k_half;
          trial.gemm_epilogue_rate = epilogue;
          trial = solve(pb, subset, trial, forced);  // the memory-bound limits do not depend on GEMM shapes
          const double e = log_error_sq(pb, subset, trial);
          if (e < best_error && std::sqrt(e) < kShapeImprovement * std::sqrt(start_error)) {
            best_error = e;
            best = trial;
          }
        }
      }
    }
  }
  const auto flash = std::count_if(subset.begin(), subset.end(), [&](std::size_t i) {
    const Op& op = (*pb.points)[i].op;
    return (op.kind == OpKind::flash_forward || op.kind == OpKind::flash_backward) && op.attention.batch_heads > 0.0;
  });
  if (flash >= kMinPointsForFlashSearch) {
    const CostParameters gemm_best = best;
    const double flash_start_error = best_error;
    // Turning the split on must pay its way (kShapeImprovement); with the split already on by
    // default (CostParameters::flash_shape_tile), another setting is a refinement of the same term
    // and needs only a lower error.
    const double flash_gate = start.flash_shape_tile > 0.0 ? 1.0 : kShapeImprovement;
    for (double overhead : kFlashOverheadCandidates) {
      for (double tail : kFlashTailCandidates) {
        for (double hidden : kFlashHiddenCandidates) {
          CostParameters trial = gemm_best;
          trial.flash_shape_tile = kFlashTile;
          trial.flash_shape_cta_overhead_blocks = overhead;
          trial.flash_shape_tail_fraction = tail;
          trial.flash_softmax_hidden_fraction = hidden;
          trial = solve(pb, subset, trial, forced);
          const double e = log_error_sq(pb, subset, trial);
          if (e < best_error && std::sqrt(e) < flash_gate * std::sqrt(flash_start_error)) {
            best_error = e;
            best = trial;
          }
        }
      }
    }
  }
  if (shapes_changed) {
    *shapes_changed = best.gemm_tile_large_m != start.gemm_tile_large_m ||
                      best.gemm_tile_large_n != start.gemm_tile_large_n ||
                      best.gemm_tile_small != start.gemm_tile_small || best.gemm_k_half != start.gemm_k_half ||
                      best.gemm_epilogue_rate != start.gemm_epilogue_rate ||
                      best.flash_shape_tile != start.flash_shape_tile ||
                      best.flash_shape_cta_overhead_blocks != start.flash_shape_cta_overhead_blocks ||
                      best.flash_shape_tail_fraction != start.flash_shape_tail_fraction ||
                      best.flash_softmax_hidden_fraction != start.flash_softmax_hidden_fraction;
  }
  return best;
}

// The components whose kernels are what a training step runs (the rest are validated only).
bool is_fitted_component(const std::string& c) {
  return c.rfind("gemm.", 0) == 0 || c == "attention.forward" || c == "attention.backward" || c == "elementwise" ||
         c == "reduction" || c == "memory";
}

std::string unit_of(std::string_view name) {
  if (name == kGap || name == kColdStart) return "s";
  if (name.rfind("gemm.tile.", 0) == 0 || name == kKHalf || name == "flash_shape.tile") {
    return "elements";
  }
  if (name == "flash_shape.cta_overhead_blocks") return "blocks";
  if (name == kEpilogueRate) return "B/SM/clock";
  if (is_sm_rate(name)) return "B/SM/clock";
  return "1";
}

}  // namespace

double predict_kernel(const KernelPoint& point, const GpuSpec& gpu, const CostParameters& params) {
  return predict_clocked(point, at_measured_clock(gpu, point), params);
}

std::string efficiency_constant(const Op& op, GpuArchitecture arch) {
  if (op.kind == OpKind::memory_bound || op.kind == OpKind::data_movement || op.kind == OpKind::reduction) return {};
  // Give every efficiency constant a distinct marker and see which one the model reads.
  CostParameters probe;
  std::map<double, std::string> marker_to_name;
  double marker = 1000.0;
  probe.for_each_constant([&](std::string_view name, double& value, std::string_view) {
    if (!is_efficiency(name)) return;
    value = marker;
    marker_to_name[marker] = std::string(name);
    marker += 1.0;
  });
  double read = 0.0;
  switch (op.kind) {
    case OpKind::gemm: read = probe.gemm_eta(arch, op.dtype); break;
    case OpKind::flash_forward: read = probe.flash_forward_eta(arch); break;
    case OpKind::flash_backward: read = probe.flash_backward_eta(arch); break;
    case OpKind::memory_bound:
    case OpKind::data_movement:
    case OpKind::reduction: break;
  }
  const auto it = marker_to_name.find(read);
  return it == marker_to_name.end() ? std::string() : it->second;
}

KernelFit fit_kernels(const std::vector<KernelPoint>& points, const GpuSpec& gpu, const CostParameters& start,
                      const KernelFitOptions& options) {
  KernelFit fit;
  fit.params = start;
  Problem pb;
  pb.points = &points;
  pb.clocked.reserve(points.size());
  for (const KernelPoint& p : points) pb.clocked.push_back(at_measured_clock(gpu, p));
  pb.roles.resize(points.size());
  std::vector<std::size_t> fitted;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const KernelPoint& p = points[i];
    Role& role = pb.roles[i];
    if (p.op.kind != OpKind::memory_bound && p.op.kind != OpKind::data_movement && p.op.kind != OpKind::reduction) {
      role.compute = efficiency_constant(p.op, gpu.architecture);
    }
    role.sm_rate = sm_rate_constant(p.op, gpu);
    role.fitted = is_fitted_component(p.component);
    role.misaligned = p.op.kind == OpKind::gemm && gemm_misaligned(p.op.gemm, p.op.dtype);
    role.sector_misaligned = p.op.kind == OpKind::gemm && gemm_sector_misaligned(p.op.gemm, p.op.dtype);
    if (role.fitted) fitted.push_back(i);
  }
  for (const auto& p : points) {
    if (!is_fitted_component(p.component)) {
      fit.notes.push_back("'" + p.component + "' points are validated against the model, not fitted: the kernels "
                          "a training step runs are cuDNN's fused attention and cuBLAS GEMMs");
      break;
    }
  }
  bool shapes_changed = false;
  fit.params = fit_subset(pb, fitted, start, options.search_tiles, &shapes_changed);

  // Cross-validation: folds by rank of measured time, so each fold spans the sizes.
  std::vector<double> held_out(points.size(), 0.0);
  const int folds = std::min<int>(options.folds, static_cast<int>(fitted.size()));
  if (folds >= 2) {
    std::vector<std::size_t> order(points.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return points[a].measured_s < points[b].measured_s; });
    std::vector<int> fold_of(points.size());
    for (std::size_t r = 0; r < order.size(); ++r) fold_of[order[r]] = static_cast<int>(r % static_cast<std::size_t>(folds));
    for (int f = 0; f < folds; ++f) {
      std::vector<std::size_t> train;
      for (std::size_t i : fitted) {
        if (fold_of[i] != f) train.push_back(i);
      }
      const CostParameters p = fit_subset(pb, train, start, options.search_tiles, nullptr);
      for (std::size_t i = 0; i < points.size(); ++i) {
        if (fold_of[i] == f) held_out[i] = predict_clocked(points[i], pb.clocked[i], p);
      }
    }
  }

  for (std::size_t i = 0; i < points.size(); ++i) {
    KernelResidual r;
    r.component = points[i].component;
    r.label = points[i].label;
    r.measured_s = points[i].measured_s;
    r.predicted_s = predict_clocked(points[i], pb.clocked[i], fit.params);
    r.held_out_predicted_s = held_out[i];
    r.fitted = pb.roles[i].fitted;
    fit.points.push_back(std::move(r));
  }

  // What was fitted, with the components and point counts that set it.
  std::map<std::string, std::map<std::string, int>> sources;
  for (std::size_t i : fitted) {
    const auto& role = pb.roles[i];
    const std::string& c = points[i].component;
    if (role.misaligned) {
      ++sources[kMisalignedEta][c];
      continue;
    }
    if (role.sector_misaligned) {
      ++sources[kSectorMisalignedEta][c];
      continue;
    }
    if (!role.compute.empty()) ++sources[role.compute][c];
    if (!role.sm_rate.empty()) ++sources[role.sm_rate][c];
    if (role.compute.empty() || points[i].op.kind == OpKind::gemm) ++sources[kMemoryEta][c];
    ++sources[kGap][c];
    if (points[i].cold) ++sources[kColdStart][c];
    if (shapes_changed && points[i].op.kind == OpKind::gemm) {
      for (const char* t : {"gemm.tile.large_m", "gemm.tile.large_n", "gemm.tile.small", kKHalf, kEpilogueRate}) {
        ++sources[t][c];
      }
    }
    if (shapes_changed && (points[i].op.kind == OpKind::flash_forward || points[i].op.kind == OpKind::flash_backward)) {
      for (const char* t : {"flash_shape.tile", "flash_shape.cta_overhead_blocks", "flash_shape.tail_fraction",
                            "flash_shape.softmax_hidden_fraction"}) {
        ++sources[t][c];
      }
    }
  }
  const CostParameters defaults;
  for (const auto& [name, by_component] : sources) {
    const double value = constant_value(fit.params, name);
    // Unchanged values were not determined by the data (no effective row, or the gap held fixed).
    if (value == constant_value(start, name)) continue;
    std::string from;
    for (const auto& [component, count] : by_component) {
      if (!from.empty()) from += ", ";
      from += fmt::format("{} ({} points)", component, count);
    }
    if (name.rfind("gemm.tile.", 0) == 0 || name == kKHalf || name == kEpilogueRate || name.rfind("flash_shape.", 0) == 0) {
      from = "shape search over " + from;
    }
    fit.fitted.push_back(FittedValue{name, value, constant_value(defaults, name), unit_of(name), from});
    if (is_efficiency(name) && value > 1.0) {
      fit.notes.push_back(fmt::format("{} = {:.3f} exceeds 1: the GPU ran faster than its datasheet peak "
                                      "(boost clocks above the rated ones?)",
                                      name, value));
    }
  }
  return fit;
}

}  // namespace stepcast
