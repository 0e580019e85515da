#pragma once
// Fits the NCCL model's constants (model/nccl_parameters.h) to measured collectives.
//
// The model prices each collective as the fastest of NCCL's algorithm/protocol candidates, each
// latency + bytes / bandwidth + pipeline fill, from per-hop latencies per link level (NVLink, PCI,
// network; per algorithm and protocol), per-link bandwidth figures (NCCL's NVLink rate, NVLS
// efficiency, the transport's network efficiency) and per-channel caps. The fit frees exactly the
// constants the measured points are sensitive to:
//
//   1. every scalar of NcclParameters::for_each_parameter is a candidate, except wire-format
//      facts (LL's 8 of 16 bytes, LL128's 120 of 128), datasheet link rates, NCCL's tree
//      correction table, thread thresholds and structural ratios, and entries that are 0 (an
//      algorithm/link pair NCCL does not run);
//   2. a candidate is freed when a 3% change either way moves some point's time by at least
//      kSensitivity x 3% (its elasticity): at small sizes that selects the latencies of the
//      algorithm/protocol NCCL picks, at large sizes the bandwidth of the bounding link (and of
//      a link within 3% of binding: the data cannot tell two nearly equal limits apart);
//   3. the freed constants are fitted in log space (they stay positive) by regularised
//      Levenberg-Marquardt with central differences (the time is a min over candidates: its
//      kinks get a slope on both sides) (validation/least_squares.h): residuals log(predicted / measured) /
//      measurement_sd under Huber's loss (quadratic within 2 sd, linear beyond: a size the
//      model's form cannot follow does not drag every other size), and a prior centred on NCCL's own value with a log-sd per unit (latencies
//      and chunk sizes 0.7, bandwidths and efficiencies 0.15; the per-channel ring rate across
//      nodes, a property of the cluster, 0.7). Constants the data cannot tell apart
//      (a base latency against a per-hop latency at one rank count) share the change the prior
//      finds least surprising instead of drifting apart.
//
// Residuals are of times (predicted / measured - 1). Held-out residuals come from k-fold
// cross-validation over each dataset's sizes.

#include <string>
#include <vector>

#include "model/nccl_parameters.h"
#include "simulator/calibration_profile.h"
#include "validation/collective_points.h"

namespace stepcast {

inline constexpr double kSensitivity = 0.1;

struct CollectiveFitOptions {
  int folds = 5;
  double measurement_sd = 0.05;  // log-sd of one measured time against the model (noise + model error)
};

struct CollectiveResidual {
  std::string component;   // "collective.all_reduce"
  std::string source;
  std::string label;
  double bytes = 0.0;
  int ranks = 0;
  int nodes = 0;
  double measured_s = 0.0;
  double predicted_s = 0.0;
  double held_out_predicted_s = 0.0;  // 0 when not cross-validated
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  CollectiveProtocol protocol = CollectiveProtocol::simple;
};

struct CollectiveFit {
  NcclParameters params;
  std::vector<FittedValue> fitted;          // constants that moved, with NCCL's values
  std::vector<CollectiveResidual> points;   // dataset by dataset, in point order
  std::vector<std::string> notes;
};

// Fits on every point of `datasets` and cross-validates.
CollectiveFit fit_collectives(const std::vector<CollectiveDataset>& datasets, const NcclParameters& start,
                              const CollectiveFitOptions& options = {});

// The fitted constants only (no cross-validation): for holdout splits.
NcclParameters fit_collective_parameters(const std::vector<CollectiveDataset>& datasets, const NcclParameters& start,
                                         const CollectiveFitOptions& options = {},
                                         std::vector<FittedValue>* fitted = nullptr);

// Residuals of `params` on every point (held_out_predicted_s left 0).
std::vector<CollectiveResidual> collective_residuals(const std::vector<CollectiveDataset>& datasets,
                                                     const NcclParameters& params);

}  // namespace stepcast
