#pragma once
// `stepcast diff A B`: why two training scenarios differ in step time and memory.
//
// Two views:
//   Component deltas   B's time and memory breakdown minus A's, component by component (they sum
//                      to the total deltas, as each breakdown sums to its total).
//   Path attribution   A is turned into B one group of keys at a time, in a fixed order (model,
//                      system, precision, sequence length, global batch, the parallel layout
//                      tp/pp/dp/cp/ep/vpp, micro-batch, recompute, ZeRO, sequence parallelism,
//                      schedule, overlap flags, anything else), each intermediate scenario predicted;
//                      each step's change in step time is attributed to its group, so the steps sum
//                      exactly to B - A. A step whose intermediate is inconsistent (say pp changed
//                      while the layers no longer split) is merged with the next one. The order
//                      matters when changes interact; the attribution says which order it used.

#include <string>
#include <vector>

#include "model/cost_parameters.h"
#include "model/prediction.h"
#include "model/scenario.h"
#include "simulator/collective_factory.h"

namespace stepcast {

struct DiffStep {
  std::string what;             // "parallel layout: tp 8 -> 4, dp 16 -> 32"
  Seconds step_delta;           // change of the step time this step made
  Bytes peak_delta;             // change of the peak memory per GPU
  Seconds step_after;
};

struct ScenarioDiff {
  TrainingPrediction a;
  TrainingPrediction b;
  std::vector<DiffStep> path;   // from A to B; empty when A and B differ in nothing predicted
};

ScenarioDiff diff_training(const Scenario& a, const Scenario& b, const CostParameters& parameters = {},
                           const CollectiveMaker& collectives = {});

std::string diff_text(const Scenario& a, const Scenario& b, const ScenarioDiff& diff);

}  // namespace stepcast
