#pragma once
// How sweeps, searches, explain and diff get a collective model for each system they predict on:
// the default model by name, or one a caller built (a calibrated NCCL model, say).
//
// A CollectiveMaker builds a model from a system and the cost constants (explain's sensitivity
// analysis varies both); a CollectiveFactory has the constants bound already.

#include <functional>
#include <memory>
#include <string>

#include "model/collective.h"
#include "model/cost_parameters.h"
#include "model/hardware.h"
#include "simulator/collective_models.h"

namespace stepcast {

using CollectiveMaker = std::function<std::unique_ptr<CollectiveModel>(const SystemSpec& system, const CostParameters& params)>;
using CollectiveFactory = std::function<std::unique_ptr<CollectiveModel>(const SystemSpec& system)>;

// make_collective_model(name, system, params).
inline CollectiveMaker named_collective_maker(std::string name) {
  return [name = std::move(name)](const SystemSpec& system, const CostParameters& params) {
    return make_collective_model(name, system, params);
  };
}

inline CollectiveFactory bind_parameters(CollectiveMaker maker, CostParameters params) {
  return [maker = std::move(maker), params](const SystemSpec& system) { return maker(system, params); };
}

// The default collective model with `params` for every system.
inline CollectiveFactory default_collective_factory(const CostParameters& params) {
  return bind_parameters(named_collective_maker(std::string(default_collective_model())), params);
}

}  // namespace stepcast
