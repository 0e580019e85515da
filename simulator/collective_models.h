#pragma once
// Collective cost models by name. "alpha-beta" (model/alpha_beta_collective.h) is built in;
// the NCCL-faithful model (issue 3) registers here as "nccl" and becomes the default.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/collective.h"
#include "model/cost_parameters.h"
#include "model/hardware.h"

namespace stepcast {

// The name predictions use when none is asked for.
std::string_view default_collective_model();
std::vector<std::string> collective_model_names();

// A model for `system`; throws InputError for an unknown name (listing the known ones).
std::unique_ptr<CollectiveModel> make_collective_model(std::string_view name, const SystemSpec& system,
                                                       const CostParameters& params);

}  // namespace stepcast
