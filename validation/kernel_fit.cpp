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
// Another tile set replaces the default only when its rms log error is this much lower.
constexpr double kTileImprovement = 0.98;

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

// How a point takes part: its efficiency column (compute side) and whether it is fitted.
struct Role {
  std::string compute;  // efficiency constant of the compute side; empty for memory-bound kinds
  bool fitted = true;
};

struct Problem {
  const std::vector<KernelPoint>* points = nullptr;
  std::vector<Role> roles;
  const GpuSpec* gpu = nullptr;
  bool fit_memory = false;  // memory.bandwidth_eta is a column
};

// op_time's compute part at eta = 1 (with `tiles`) and memory part at eta_mem = 1, gap 0.
struct Parts {
  double compute = 0.0;
  double memory = 0.0;
};

Parts parts_of(const KernelPoint& p, const GpuSpec& gpu, const CostParameters& params) {
  CostParameters probe = params;
  probe.for_each_constant([](std::string_view name, double& value, std::string_view) {
    if (is_efficiency(name)) value = 1.0;
  });
  probe.sustained_derate = 1.0;
  probe.kernel_gap_s = 0.0;
  probe.memory_bandwidth_eta = kHuge;
  // The memory part is HBM bandwidth alone: lift the SMs' byte-rate limit of memory-bound kernels.
  probe.elementwise_bytes_per_sm_clock = kHuge;
  probe.reduction_bytes_per_sm_clock = kHuge;
  probe.gemm_stream_bytes_per_sm_clock = kHuge;
  Parts out;
  const bool memory_bound = p.op.kind == OpKind::memory_bound || p.op.kind == OpKind::reduction;
  out.compute = memory_bound ? 0.0 : op_time(p.op, gpu, probe).value();
  probe.memory_bandwidth_eta = 1.0;
  probe.for_each_constant([](std::string_view name, double& value, std::string_view) {
    if (is_efficiency(name)) value = kHuge;
  });
  out.memory = op_time(p.op, gpu, probe).value();
  return out;
}

double log_error_sq(const std::vector<KernelPoint>& points, const std::vector<std::size_t>& subset,
                    const GpuSpec& gpu, const CostParameters& params) {
  double sum = 0.0;
  for (std::size_t i : subset) {
    const double e = std::log(predict_kernel(points[i], gpu, params) / points[i].measured_s);
    sum += e * e;
  }
  return sum;
}

// NNLS fit of the efficiencies and the gap on `subset` (indices of fitted points) with the tiles
// already set in `params`. Returns the fitted parameters.
CostParameters solve(const Problem& pb, const std::vector<std::size_t>& subset, CostParameters params) {
  const auto& points = *pb.points;
  // Columns: efficiency constants touched by the subset, memory eta, gap.
  std::map<std::string, int> column;
  for (std::size_t i : subset) {
    if (!pb.roles[i].compute.empty()) column.try_emplace(pb.roles[i].compute, 0);
  }
  if (pb.fit_memory) column.try_emplace(kMemoryEta, 0);
  int next = 0;
  for (auto& [name, index] : column) index = next++;
  // The gap: fitted when at least 3 points span more than a factor of 2 in time.
  double t_min = kHuge;
  double t_max = 0.0;
  for (std::size_t i : subset) {
    t_min = std::min(t_min, points[i].measured_s);
    t_max = std::max(t_max, points[i].measured_s);
  }
  const bool fit_gap = subset.size() >= 3 && t_max > 2.0 * t_min;
  const int gap_column = fit_gap ? next++ : -1;
  if (next == 0) return params;

  std::vector<Parts> parts;
  parts.reserve(subset.size());
  for (std::size_t i : subset) parts.push_back(parts_of(points[i], *pb.gpu, params));

  std::vector<bool> compute_bound(subset.size(), true);
  for (int round = 0; round < 10; ++round) {
    // Classify with the current parameters.
    std::vector<bool> now(subset.size());
    for (std::size_t r = 0; r < subset.size(); ++r) {
      const std::size_t i = subset[r];
      const double eta_c = pb.roles[i].compute.empty() ? 0.0 : constant_value(params, pb.roles[i].compute);
      const double compute = eta_c > 0.0 ? parts[r].compute / eta_c : 0.0;
      const double memory = parts[r].memory / params.memory_bandwidth_eta;
      now[r] = !pb.roles[i].compute.empty() && compute >= memory;
    }
    if (round > 0 && now == compute_bound) break;
    compute_bound = now;

    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(subset.size()), next);
    Eigen::VectorXd b(static_cast<Eigen::Index>(subset.size()));
    for (std::size_t r = 0; r < subset.size(); ++r) {
      const std::size_t i = subset[r];
      const auto row = static_cast<Eigen::Index>(r);
      const double t = points[i].measured_s;
      double rhs = t;
      if (compute_bound[r]) {
        a(row, column.at(pb.roles[i].compute)) = parts[r].compute;
      } else if (pb.fit_memory) {
        a(row, column.at(kMemoryEta)) = parts[r].memory;
      } else {
        rhs -= parts[r].memory / params.memory_bandwidth_eta;
      }
      if (fit_gap) {
        a(row, gap_column) = 1.0;
      } else {
        rhs -= params.kernel_gap_s;
      }
      a.row(row) /= t;
      b[row] = rhs / t;
    }
    const NnlsResult s = nnls(a, b);
    for (const auto& [name, index] : column) {
      const double u = s.x[index];
      // A column without an effective row (every point on the other side) keeps its value.
      if (u > 0.0) *constant(params, name) = 1.0 / u;
    }
    if (fit_gap) params.kernel_gap_s = s.x[gap_column];
  }
  return params;
}

// solve() after choosing the tiles (when allowed and there are enough GEMM points).
CostParameters fit_subset(const Problem& pb, const std::vector<std::size_t>& subset, const CostParameters& start,
                          bool search_tiles, bool* tiles_changed) {
  CostParameters best = solve(pb, subset, start);
  if (tiles_changed) *tiles_changed = false;
  const auto gemms = std::count_if(subset.begin(), subset.end(),
                                   [&](std::size_t i) { return (*pb.points)[i].op.kind == OpKind::gemm; });
  if (!search_tiles || gemms < kMinPointsForTileSearch) return best;
  const double default_error = log_error_sq(*pb.points, subset, *pb.gpu, best);
  double best_error = default_error;
  for (const Tiles& t : kTileCandidates) {
    CostParameters trial = start;
    trial.gemm_tile_large_m = t.large_m;
    trial.gemm_tile_large_n = t.large_n;
    trial.gemm_tile_small = t.small;
    trial = solve(pb, subset, trial);
    const double e = log_error_sq(*pb.points, subset, *pb.gpu, trial);
    if (e < best_error && std::sqrt(e) < kTileImprovement * std::sqrt(default_error)) {
      best_error = e;
      best = trial;
    }
  }
  if (tiles_changed) {
    *tiles_changed = best.gemm_tile_large_m != start.gemm_tile_large_m ||
                     best.gemm_tile_large_n != start.gemm_tile_large_n || best.gemm_tile_small != start.gemm_tile_small;
  }
  return best;
}

std::string unit_of(std::string_view name) {
  if (name == kGap) return "s";
  if (name.rfind("gemm.tile.", 0) == 0) return "elements";
  return "1";
}

}  // namespace

double predict_kernel(const KernelPoint& point, const GpuSpec& gpu, const CostParameters& params) {
  CostParameters burst = params;
  burst.sustained_derate = 1.0;
  return op_time(point.op, gpu, burst).value();
}

std::string efficiency_constant(const Op& op, GpuArchitecture arch) {
  if (op.kind == OpKind::memory_bound || op.kind == OpKind::reduction) return kMemoryEta;
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
  pb.gpu = &gpu;
  const bool has_elementwise =
      std::any_of(points.begin(), points.end(), [](const KernelPoint& p) { return p.component == "elementwise"; });
  pb.roles.resize(points.size());
  std::vector<std::size_t> fitted;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const KernelPoint& p = points[i];
    Role& role = pb.roles[i];
    if (p.op.kind != OpKind::memory_bound) role.compute = efficiency_constant(p.op, gpu.architecture);
    role.fitted = p.component != "attention.decode" && !(p.component == "memory" && has_elementwise);
    if (role.fitted) fitted.push_back(i);
    if (role.fitted && p.op.kind == OpKind::memory_bound) pb.fit_memory = true;
  }
  if (has_elementwise && std::any_of(points.begin(), points.end(), [](const KernelPoint& p) { return p.component == "memory"; })) {
    fit.notes.push_back("memory.bandwidth_eta fitted on the elementwise kernels (what the model uses it for); "
                        "copy/triad kernels are validated against it, not fitted");
  } else if (pb.fit_memory && !has_elementwise) {
    fit.notes.push_back("no elementwise kernels measured: memory.bandwidth_eta fitted on copy/triad (STREAM) "
                        "kernels, which run faster than fused training kernels");
  }

  bool tiles_changed = false;
  fit.params = fit_subset(pb, fitted, start, options.search_tiles, &tiles_changed);

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
        if (fold_of[i] == f) held_out[i] = predict_kernel(points[i], gpu, p);
      }
    }
  }

  for (std::size_t i = 0; i < points.size(); ++i) {
    KernelResidual r;
    r.component = points[i].component;
    r.label = points[i].label;
    r.measured_s = points[i].measured_s;
    r.predicted_s = predict_kernel(points[i], gpu, fit.params);
    r.held_out_predicted_s = held_out[i];
    r.fitted = pb.roles[i].fitted;
    fit.points.push_back(std::move(r));
  }

  // What was fitted, with the components and point counts that set it.
  std::map<std::string, std::map<std::string, int>> sources;
  for (std::size_t i : fitted) {
    const auto& role = pb.roles[i];
    if (!role.compute.empty()) ++sources[role.compute][points[i].component];
    if (points[i].op.kind == OpKind::memory_bound) ++sources[kMemoryEta][points[i].component];
    ++sources[kGap][points[i].component];
  }
  if (tiles_changed) {
    for (const char* t : {"gemm.tile.large_m", "gemm.tile.large_n", "gemm.tile.small"}) {
      for (std::size_t i : fitted) {
        if (points[i].op.kind == OpKind::gemm) ++sources[t][points[i].component];
      }
    }
  }
  const CostParameters defaults;
  for (const auto& [name, by_component] : sources) {
    const double value = constant_value(fit.params, name);
    // Unchanged values were not determined by the data (no effective row, or the gap held fixed).
    if (value == constant_value(start, name) && name.rfind("gemm.tile.", 0) != 0) continue;
    std::string from;
    for (const auto& [component, count] : by_component) {
      if (!from.empty()) from += ", ";
      from += fmt::format("{} ({} points)", component, count);
    }
    if (name.rfind("gemm.tile.", 0) == 0) from = "CTA tile search over " + from;
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
