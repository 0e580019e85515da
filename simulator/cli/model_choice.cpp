#include "simulator/cli/model_choice.h"

#include <memory>

#include "model/nccl_model.h"
#include "simulator/calibration_profile.h"
#include "simulator/collective_models.h"

namespace stepcast::cli {

void add_model_options(CLI::App& cmd, ModelChoice& choice) {
  cmd.add_option("--collectives", choice.collectives,
                 "Collective cost model (default: " + std::string(default_collective_model()) + ")");
  cmd.add_option("--calibration", choice.calibration, "Calibration profile (JSON from `stepcast calibrate`)");
  cmd.add_flag("--force-calibration", choice.force, "Use the profile even when measured on another GPU or system");
}

ChosenModel choose_model(const ModelChoice& choice, const SystemSpec& system) {
  const std::string name = choice.collectives.empty() ? std::string(default_collective_model()) : choice.collectives;
  ChosenModel out;
  if (choice.calibration.empty()) {
    out.cost = CostParameters{};
    out.variant = name + ", " + std::string(kDatasheetVariantName);
    const CostParameters cost = out.cost;
    (void)make_collective_model(name, system, cost);  // an unknown name fails here, once
    out.collectives = [name, cost](const SystemSpec& s) { return make_collective_model(name, s, cost); };
    return out;
  }
  auto profile = std::make_shared<const CalibrationProfile>(load_profile(choice.calibration));
  out.warnings = check_profile_applies(*profile, system, choice.force);
  const ModelVariant variant = calibrated_variant(profile);
  out.cost = variant.cost;
  out.variant = name + ", calibrated '" + variant.name + "'";
  const CostParameters cost = variant.cost;
  const NcclParameters nccl = variant.nccl;
  (void)make_collective_model(name, system, cost);
  if (name == "nccl") {
    out.collectives = [nccl](const SystemSpec& s) { return std::make_unique<NcclCollectiveModel>(s, nccl); };
  } else {
    out.collectives = [name, cost](const SystemSpec& s) { return make_collective_model(name, s, cost); };
  }
  return out;
}

}  // namespace stepcast::cli
