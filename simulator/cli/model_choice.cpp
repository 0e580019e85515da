#include "simulator/cli/model_choice.h"

#include <memory>

#include "model/fabric.h"
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
  (void)make_collective_model(name, system, CostParameters{});  // an unknown name fails here, once
  if (choice.calibration.empty()) {
    out.cost = CostParameters{};
    out.variant = name + ", " + std::string(kDatasheetVariantName);
    out.maker = named_collective_maker(name);
  } else {
    auto profile = std::make_shared<const CalibrationProfile>(load_profile(choice.calibration));
    out.warnings = check_profile_applies(*profile, system, choice.force);
    const ModelVariant variant = calibrated_variant(profile);
    out.cost = variant.cost;
    out.variant = name + ", calibrated '" + variant.name + "'";
    if (name == "nccl") {
      const NcclParameters nccl = variant.nccl;
      out.maker = [nccl](const SystemSpec& s, const CostParameters&) -> std::unique_ptr<CollectiveModel> {
        return std::make_unique<NcclCollectiveModel>(s, fabric_figures(s), nccl);
      };
    } else {
      out.maker = named_collective_maker(name);
    }
  }
  out.collectives = bind_parameters(out.maker, out.cost);
  return out;
}

}  // namespace stepcast::cli
