#include "validation/least_squares.h"

#include <cmath>
#include <limits>
#include <vector>

namespace stepcast {

NnlsResult nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, int max_iterations) {
  const Eigen::Index n = a.cols();
  NnlsResult result;
  result.x = Eigen::VectorXd::Zero(n);
  if (max_iterations <= 0) max_iterations = static_cast<int>(3 * n + 30);
  std::vector<bool> passive(static_cast<std::size_t>(n), false);
  const double scale = std::max(a.cwiseAbs().maxCoeff(), 1e-300);
  const double tolerance = 1e-12 * scale * std::max<double>(static_cast<double>(a.rows()), 1.0) *
                           std::max(b.cwiseAbs().maxCoeff(), 1e-300);

  // Least squares restricted to the passive set; other entries zero.
  auto solve_passive = [&]() {
    std::vector<Eigen::Index> idx;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (passive[static_cast<std::size_t>(j)]) idx.push_back(j);
    }
    Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
    if (idx.empty()) return z;
    Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(idx.size()));
    for (std::size_t k = 0; k < idx.size(); ++k) sub.col(static_cast<Eigen::Index>(k)) = a.col(idx[k]);
    const Eigen::VectorXd s = sub.colPivHouseholderQr().solve(b);
    for (std::size_t k = 0; k < idx.size(); ++k) z[idx[k]] = s[static_cast<Eigen::Index>(k)];
    return z;
  };

  Eigen::VectorXd& x = result.x;
  for (int outer = 0; outer < max_iterations; ++outer) {
    result.iterations = outer + 1;
    const Eigen::VectorXd w = a.transpose() * (b - a * x);
    Eigen::Index best = -1;
    double best_w = tolerance;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (!passive[static_cast<std::size_t>(j)] && w[j] > best_w) {
        best_w = w[j];
        best = j;
      }
    }
    if (best < 0) {
      result.converged = true;
      break;
    }
    passive[static_cast<std::size_t>(best)] = true;
    // Inner loop: step towards the unconstrained solution on the passive set, dropping variables
    // that would turn negative.
    for (int inner = 0; inner < max_iterations; ++inner) {
      const Eigen::VectorXd z = solve_passive();
      bool feasible = true;
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<std::size_t>(j)] && z[j] <= 0.0) feasible = false;
      }
      if (feasible) {
        x = z;
        break;
      }
      double alpha = std::numeric_limits<double>::infinity();
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<std::size_t>(j)] && z[j] <= 0.0) alpha = std::min(alpha, x[j] / (x[j] - z[j]));
      }
      x += alpha * (z - x);
      for (Eigen::Index j = 0; j < n; ++j) {
        if (passive[static_cast<std::size_t>(j)] && std::fabs(x[j]) <= 1e-15 * std::max(1.0, std::fabs(z[j]))) {
          passive[static_cast<std::size_t>(j)] = false;
          x[j] = 0.0;
        }
      }
    }
  }
  result.residual_norm = (a * x - b).norm();
  return result;
}

namespace {

// Data residuals followed by the prior's (x - prior) / sd.
Eigen::VectorXd augmented(const LmProblem& p, const Eigen::VectorXd& x, const Eigen::VectorXd& data) {
  Eigen::VectorXd out(data.size() + x.size());
  out.head(data.size()) = data;
  for (Eigen::Index j = 0; j < x.size(); ++j) {
    const double sd = p.prior_sd[j];
    out[data.size() + j] = std::isfinite(sd) ? (x[j] - p.prior[j]) / sd : 0.0;
  }
  return out;
}

}  // namespace

LmResult levenberg_marquardt(const LmProblem& p) {
  LmResult result;
  Eigen::VectorXd x = p.start;
  Eigen::VectorXd data = p.residuals(x);
  Eigen::VectorXd r = augmented(p, x, data);
  double cost = r.squaredNorm();
  double lambda = 1e-3;
  double nu = 2.0;
  const Eigen::Index n = x.size();
  for (int it = 0; it < p.max_iterations; ++it) {
    result.iterations = it + 1;
    // Finite-difference Jacobian of the augmented residuals.
    Eigen::MatrixXd jac(r.size(), n);
    for (Eigen::Index j = 0; j < n; ++j) {
      Eigen::VectorXd xs = x;
      xs[j] += p.step;
      if (p.central) {
        Eigen::VectorXd xm = x;
        xm[j] -= p.step;
        jac.col(j) = (augmented(p, xs, p.residuals(xs)) - augmented(p, xm, p.residuals(xm))) / (2.0 * p.step);
      } else {
        jac.col(j) = (augmented(p, xs, p.residuals(xs)) - r) / p.step;
      }
    }
    const Eigen::MatrixXd jtj = jac.transpose() * jac;
    const Eigen::VectorXd g = jac.transpose() * r;
    if (g.cwiseAbs().maxCoeff() < 1e-12) {
      result.converged = true;
      break;
    }
    bool improved = false;
    for (int tries = 0; tries < 30 && !improved; ++tries) {
      Eigen::MatrixXd damped = jtj;
      for (Eigen::Index j = 0; j < n; ++j) damped(j, j) += lambda * std::max(jtj(j, j), 1e-12);
      const Eigen::VectorXd delta = damped.ldlt().solve(-g);
      const Eigen::VectorXd candidate = x + delta;
      const Eigen::VectorXd candidate_data = p.residuals(candidate);
      const Eigen::VectorXd candidate_r = augmented(p, candidate, candidate_data);
      const double candidate_cost = candidate_r.squaredNorm();
      if (std::isfinite(candidate_cost) && candidate_cost < cost) {
        const double gain = cost - candidate_cost;
        x = candidate;
        data = candidate_data;
        r = candidate_r;
        const bool small_step = delta.norm() < 1e-8 * (x.norm() + 1e-8);
        const bool small_gain = gain < 1e-10 * std::max(cost, 1e-30);
        cost = candidate_cost;
        lambda = std::max(lambda / 3.0, 1e-12);
        nu = 2.0;
        improved = true;
        if (small_step || small_gain) {
          result.converged = true;
        }
      } else {
        lambda *= nu;
        nu *= 2.0;
      }
    }
    if (!improved) {
      result.converged = true;  // no descent direction left at any damping: a (local) minimum
      break;
    }
    if (result.converged) break;
  }
  result.x = x;
  result.cost = cost;
  result.data_cost = data.squaredNorm();
  return result;
}

}  // namespace stepcast
