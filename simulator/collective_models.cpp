#include "simulator/collective_models.h"

#include "model/alpha_beta_collective.h"
#include "model/fabric.h"
#include "model/nccl_model.h"
#include "simulator/diagnostics.h"

namespace stepcast {

std::string_view default_collective_model() { return "nccl"; }

std::vector<std::string> collective_model_names() { return {"nccl", "alpha-beta"}; }

std::unique_ptr<CollectiveModel> make_collective_model(std::string_view name, const SystemSpec& system,
                                                       const CostParameters& params, const NcclParameters& nccl) {
  if (name == "alpha-beta") return std::make_unique<AlphaBetaCollectiveModel>(system, params);
  // The spec arithmetic equals the topology graph's max-flow figures (tests/unit/topology_test.cpp)
  // and costs nothing: no graph is built per configuration.
  if (name == "nccl") return std::make_unique<NcclCollectiveModel>(system, fabric_figures(system), nccl);
  std::string known;
  for (const auto& n : collective_model_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("unknown collective model '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace stepcast
