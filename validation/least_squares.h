#pragma once
// The two solvers calibration needs, on Eigen.
//
// nnls: min ||A x - b||_2 subject to x >= 0, by Lawson & Hanson's active-set algorithm ("Solving
// Least Squares Problems", 1974, ch. 23, algorithm NNLS). Used where the model is linear in its
// unknowns: GEMM, attention and memory-bound kernel times are (work / peak) * (1 / efficiency) +
// kernel gap, linear in 1/efficiency and the gap, all of which must be non-negative.
//
// levenberg_marquardt: min sum_i r_i(x)^2 + sum_j ((x_j - prior_j) / prior_sd_j)^2, a regularised
// (maximum a posteriori) nonlinear least squares (Levenberg 1944; Marquardt 1963; the damping
// update of Nielsen 1999). Used for the collective model, whose time is a min over algorithms
// and protocols of nonlinear terms. The prior keeps parameters the data cannot identify at their
// documented values instead of letting them drift; the Jacobian is taken by forward or central differences.

#include <Eigen/Dense>
#include <functional>

namespace stepcast {

struct NnlsResult {
  Eigen::VectorXd x;
  double residual_norm = 0.0;  // ||A x - b||
  int iterations = 0;
  bool converged = false;
};

NnlsResult nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, int max_iterations = 0);

struct LmProblem {
  // r(x): the residual vector (its size is fixed across calls).
  std::function<Eigen::VectorXd(const Eigen::VectorXd&)> residuals;
  Eigen::VectorXd start;
  Eigen::VectorXd prior;     // prior mean of each parameter (often equal to start)
  Eigen::VectorXd prior_sd;  // > 0; +infinity for an unregularised parameter
  double step = 1e-3;        // finite-difference step in parameter units
  bool central = false;      // central differences (2 evaluations per parameter): a kink of a min()
                             // within `step` shows a slope on both of its sides
  int max_iterations = 100;
};

struct LmResult {
  Eigen::VectorXd x;
  double cost = 0.0;        // the objective at x (data + prior terms)
  double data_cost = 0.0;   // sum r_i^2 alone
  int iterations = 0;
  bool converged = false;
};

LmResult levenberg_marquardt(const LmProblem& problem);

}  // namespace stepcast
