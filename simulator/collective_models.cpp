#include "simulator/collective_models.h"

#include "model/alpha_beta_collective.h"
#include "simulator/diagnostics.h"

namespace stepcast {

std::string_view default_collective_model() { return "alpha-beta"; }

std::vector<std::string> collective_model_names() { return {"alpha-beta"}; }

std::unique_ptr<CollectiveModel> make_collective_model(std::string_view name, const SystemSpec& system,
                                                       const CostParameters& params) {
  if (name == "alpha-beta") return std::make_unique<AlphaBetaCollectiveModel>(system, params);
  std::string known;
  for (const auto& n : collective_model_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("unknown collective model '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace stepcast
