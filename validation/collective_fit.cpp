#include "validation/collective_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "validation/least_squares.h"

namespace stepcast {

namespace {

// Log-space step of the sensitivity probe and of the Jacobian's central differences.
constexpr double kProbe = 0.03;

// Constants that are facts of NCCL's wire formats or of datasheets, structural ratios of its
// formulas, or tables too fine to fit from a size sweep.
bool excluded(std::string_view name) {
  for (std::string_view prefix : {"nvlink_datasheet_link_gbps", "tree_correction", "thread_threshold_bytes",
                                  "tree_algbw_ratio", "pat_log_divisor", "ring_ll_factor", "ring_ll128_factor",
                                  "net_overhead_simple_factor", "ring_plateau_factor"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

struct Candidate {
  std::string name;
  std::string unit;
  double start = 0.0;
};

std::vector<Candidate> candidates(NcclParameters p) {
  std::vector<Candidate> out;
  p.for_each_parameter([&](std::string_view name, double& value, std::string_view unit, std::string_view) {
    if (excluded(name) || !(value > 0.0)) return;
    out.push_back(Candidate{std::string(name), std::string(unit), value});
  });
  return out;
}

// Writes values[i] into the parameter named names[i].
void assign(NcclParameters& p, const std::vector<std::string>& names, const std::vector<double>& values) {
  std::map<std::string_view, double> by_name;
  for (std::size_t i = 0; i < names.size(); ++i) by_name[names[i]] = values[i];
  p.for_each_parameter([&](std::string_view name, double& value, std::string_view, std::string_view) {
    const auto it = by_name.find(name);
    if (it != by_name.end()) value = it->second;
  });
}

// Log-sd of the prior around NCCL's value. The per-channel ring rate across nodes is a property
// of the cluster more than of NCCL (20 and 22.9 GB/s on two H100 IB clusters of
// NVIDIA/nccl-tests#309, model/nccl_parameters.h): it gets a latency's freedom, so that a cluster
// whose rings stop short of its NICs moves it rather than the link rates every algorithm shares.
double prior_log_sd(const std::string& name, const std::string& unit) {
  if (unit == "us" || unit == "B") return 0.7;
  if (name.rfind("ring_net_channel_gbps", 0) == 0) return 0.7;
  return 0.15;  // GB/s and efficiencies
}

// log(predicted / measured) for every point of every dataset under `p`.
std::vector<double> log_errors(const std::vector<CollectiveDataset>& datasets, const NcclParameters& p) {
  std::vector<double> out;
  for (const auto& d : datasets) {
    const NcclCollectiveModel model(d.system, d.fabric, p);
    for (const auto& pt : d.points) {
      const double t = predict_collective(pt, model, d.filter).time.value();
      out.push_back(std::isfinite(t) && t > 0.0 ? std::log(t / pt.measured_s) : 50.0);
    }
  }
  return out;
}

// Huber's loss (Huber 1964) through the least-squares residual: r^2 below kHuberThreshold, and
// 2 c |r| - c^2 above, so that a size the model's form cannot follow (a protocol switch NCCL
// makes elsewhere, a noisy row) pulls on the fit linearly, not quadratically.
constexpr double kHuberThreshold = 2.0;
double huber_residual(double r) {
  const double a = std::fabs(r);
  if (a <= kHuberThreshold) return r;
  return std::copysign(std::sqrt(2.0 * kHuberThreshold * a - kHuberThreshold * kHuberThreshold), r);
}

std::string component_of(CollectiveOp op) { return "collective." + std::string(to_string(op)); }

}  // namespace

std::vector<CollectiveResidual> collective_residuals(const std::vector<CollectiveDataset>& datasets,
                                                     const NcclParameters& params) {
  std::vector<CollectiveResidual> out;
  for (const auto& d : datasets) {
    const NcclCollectiveModel model(d.system, d.fabric, params);
    for (const auto& pt : d.points) {
      const CollectiveEstimate e = predict_collective(pt, model, d.filter);
      CollectiveResidual r;
      r.component = component_of(pt.op);
      r.source = d.source;
      r.label = pt.label;
      r.bytes = pt.bytes;
      r.ranks = pt.group.size;
      r.nodes = pt.group.nodes;
      r.measured_s = pt.measured_s;
      r.predicted_s = e.time.value();
      r.algorithm = e.algorithm;
      r.protocol = e.protocol;
      out.push_back(std::move(r));
    }
  }
  return out;
}

NcclParameters fit_collective_parameters(const std::vector<CollectiveDataset>& datasets, const NcclParameters& start,
                                         const CollectiveFitOptions& options, std::vector<FittedValue>* fitted) {
  std::size_t points = 0;
  for (const auto& d : datasets) points += d.points.size();
  if (points == 0) return start;

  // Sensitivity: elasticity of each point's time to each candidate, by steps of kProbe either
  // way (a bandwidth within kProbe of the one that binds is freed too: the data cannot tell which
  // of two nearly equal limits is the real one).
  const std::vector<double> base = log_errors(datasets, start);
  std::vector<Candidate> freed;
  for (const Candidate& c : candidates(start)) {
    double elasticity = 0.0;
    for (double step : {kProbe, -kProbe}) {
      NcclParameters probe = start;
      assign(probe, {c.name}, {c.start * std::exp(step)});
      const std::vector<double> moved = log_errors(datasets, probe);
      for (std::size_t i = 0; i < base.size(); ++i) {
        elasticity = std::max(elasticity, std::fabs(moved[i] - base[i]) / kProbe);
      }
    }
    if (elasticity >= kSensitivity) freed.push_back(c);
  }
  if (freed.empty()) return start;

  std::vector<std::string> names;
  for (const auto& c : freed) names.push_back(c.name);
  const auto n = static_cast<Eigen::Index>(freed.size());
  LmProblem problem;
  problem.start = Eigen::VectorXd(n);
  problem.prior_sd = Eigen::VectorXd(n);
  for (Eigen::Index j = 0; j < n; ++j) {
    problem.start[j] = std::log(freed[static_cast<std::size_t>(j)].start);
    problem.prior_sd[j] = prior_log_sd(freed[static_cast<std::size_t>(j)].name, freed[static_cast<std::size_t>(j)].unit);
  }
  problem.prior = problem.start;
  problem.step = kProbe;
  problem.central = true;
  problem.max_iterations = 60;
  const double sd = options.measurement_sd;
  problem.residuals = [&](const Eigen::VectorXd& x) {
    NcclParameters p = start;
    std::vector<double> values(static_cast<std::size_t>(x.size()));
    for (Eigen::Index j = 0; j < x.size(); ++j) values[static_cast<std::size_t>(j)] = std::exp(x[j]);
    assign(p, names, values);
    const std::vector<double> e = log_errors(datasets, p);
    Eigen::VectorXd r(static_cast<Eigen::Index>(e.size()));
    for (std::size_t i = 0; i < e.size(); ++i) r[static_cast<Eigen::Index>(i)] = huber_residual(e[i] / sd);
    return r;
  };
  const LmResult result = levenberg_marquardt(problem);
  NcclParameters out = start;
  std::vector<double> values;
  for (Eigen::Index j = 0; j < n; ++j) values.push_back(std::exp(result.x[j]));
  assign(out, names, values);

  if (fitted) {
    fitted->clear();
    const NcclParameters defaults;
    std::map<std::string, int> by_op;
    for (const auto& d : datasets) {
      for (const auto& pt : d.points) ++by_op[component_of(pt.op)];
    }
    std::string from;
    for (const auto& [component, count] : by_op) {
      if (!from.empty()) from += ", ";
      from += fmt::format("{} ({} points)", component, count);
    }
    std::map<std::string, double> default_values;
    NcclParameters d = defaults;
    d.for_each_parameter([&](std::string_view name, double& value, std::string_view, std::string_view) {
      default_values[std::string(name)] = value;
    });
    for (std::size_t j = 0; j < freed.size(); ++j) {
      // Constants the data left where the prior holds them are not reported as fitted.
      if (std::fabs(std::log(values[j] / freed[j].start)) < 0.005) continue;
      fitted->push_back(FittedValue{freed[j].name, values[j], default_values[freed[j].name], freed[j].unit, from});
    }
  }
  return out;
}

CollectiveFit fit_collectives(const std::vector<CollectiveDataset>& datasets, const NcclParameters& start,
                              const CollectiveFitOptions& options) {
  CollectiveFit fit;
  fit.params = fit_collective_parameters(datasets, start, options, &fit.fitted);
  fit.points = collective_residuals(datasets, fit.params);

  // Cross-validation: within each dataset, sizes in order go to folds round-robin.
  std::size_t total = 0;
  for (const auto& d : datasets) total += d.points.size();
  const int folds = std::min<int>(options.folds, static_cast<int>(total));
  if (folds < 2) return fit;
  std::vector<std::vector<int>> fold_of(datasets.size());
  for (std::size_t di = 0; di < datasets.size(); ++di) {
    const auto& pts = datasets[di].points;
    std::vector<std::size_t> order(pts.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return pts[a].bytes < pts[b].bytes; });
    fold_of[di].resize(pts.size());
    for (std::size_t r = 0; r < order.size(); ++r) fold_of[di][order[r]] = static_cast<int>((r + di) % static_cast<std::size_t>(folds));
  }
  std::vector<double> held_out(total, 0.0);
  for (int f = 0; f < folds; ++f) {
    std::vector<CollectiveDataset> train = datasets;
    for (std::size_t di = 0; di < train.size(); ++di) {
      train[di].points.clear();
      for (std::size_t i = 0; i < datasets[di].points.size(); ++i) {
        if (fold_of[di][i] != f) train[di].points.push_back(datasets[di].points[i]);
      }
    }
    const NcclParameters p = fit_collective_parameters(train, start, options);
    std::size_t at = 0;
    for (std::size_t di = 0; di < datasets.size(); ++di) {
      const NcclCollectiveModel model(datasets[di].system, datasets[di].fabric, p);
      for (std::size_t i = 0; i < datasets[di].points.size(); ++i, ++at) {
        if (fold_of[di][i] == f) {
          held_out[at] = predict_collective(datasets[di].points[i], model, datasets[di].filter).time.value();
        }
      }
    }
  }
  for (std::size_t i = 0; i < total; ++i) fit.points[i].held_out_predicted_s = held_out[i];
  return fit;
}

}  // namespace stepcast
