#pragma once
// How sweeps and searches get a collective model for each system they predict on: the default
// model by name, or one a caller built (a calibrated NCCL model, say).

#include <functional>
#include <memory>

#include "model/collective.h"
#include "model/cost_parameters.h"
#include "model/hardware.h"
#include "simulator/collective_models.h"

namespace stepcast {

using CollectiveFactory = std::function<std::unique_ptr<CollectiveModel>(const SystemSpec& system)>;

// make_collective_model(default_collective_model(), system, params) for every system.
inline CollectiveFactory default_collective_factory(const CostParameters& params) {
  return [params](const SystemSpec& system) { return make_collective_model(default_collective_model(), system, params); };
}

}  // namespace stepcast
