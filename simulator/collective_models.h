#pragma once
// Collective cost models by name: "nccl" (model/nccl_model.h), the default, prices collectives the
// way NCCL chooses them; "alpha-beta" (model/alpha_beta_collective.h) is the plain per-level
// latency + bytes/bandwidth model, kept to measure what the detailed one buys.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/collective.h"
#include "model/cost_parameters.h"
#include "model/hardware.h"
#include "model/nccl_parameters.h"

namespace stepcast {

// The name predictions use when none is asked for.
std::string_view default_collective_model();
std::vector<std::string> collective_model_names();

// A model for `system`; throws InputError for an unknown name (listing the known ones). `nccl`
// holds the "nccl" model's constants (a calibration profile's, or NCCL's own by default).
std::unique_ptr<CollectiveModel> make_collective_model(std::string_view name, const SystemSpec& system,
                                                       const CostParameters& params, const NcclParameters& nccl = {});

}  // namespace stepcast
