#pragma once
// The layer-cost inputs of one scenario's dense layer kind, for tests that price one layer with
// layer_costs() directly: its shape (written to `shape`, which must outlive the inputs), GPU and
// system, with the given collective model and constants. Groups, ZeRO and the rest stay at their
// defaults for the test to set.

#include "model/cost_parameters.h"
#include "model/scenario.h"
#include "simulator/layer_costs.h"

namespace stepcast::test {

inline LayerCostInputs scenario_layer_inputs(const Scenario& sc, LayerShape& shape, const CollectiveModel& net,
                                             const CostParameters& params) {
  shape = make_layer_shape(sc.model, sc.training(), sc.parallel, sc.precision);
  LayerCostInputs in;
  in.shape = &shape;
  in.gpu = &sc.system.gpu;
  in.params = &params;
  in.collectives = &net;
  in.system = &sc.system;
  return in;
}

}  // namespace stepcast::test
