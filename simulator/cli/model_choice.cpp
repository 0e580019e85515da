#include "simulator/cli/model_choice.h"

#include <memory>

#include "simulator/calibration_profile.h"
#include "simulator/collective_models.h"

namespace stepcast::cli {

void add_model_options(CLI::App& cmd, ModelChoice& choice) {
  cmd.add_option("--collectives", choice.collectives,
                 "Collective cost model (default: " + std::string(default_collective_model()) + ")");
  cmd.add_option("--calibration", choice.calibration, "Calibration profile (JSON from `stepcast calibrate`), or 'datasheet' (the default: uncalibrated)");
  cmd.add_flag("--force-calibration", choice.force, "Use the profile even when measured on another GPU or system");
  cmd.add_option("--constant", choice.constants,
                 "Set a model constant by hand, NAME=VALUE (repeatable; names as in explain's sensitivity table), "
                 "after any profile");
}

ChosenModel choose_model(const ModelChoice& choice, const SystemSpec& system) {
  const std::string name = choice.collectives.empty() ? std::string(default_collective_model()) : choice.collectives;
  ChosenModel out;
  ModelVariant variant = model_variant_named(choice.calibration);  // "" or "datasheet": uncalibrated
  if (variant.profile) out.warnings = check_profile_applies(*variant.profile, system, choice.force);
  out.constants_set = apply_constant_overrides(choice.constants, variant.cost, variant.nccl, &out.inference);
  (void)make_collective_model(name, system, variant.cost, variant.nccl);  // an unknown name fails here, once
  out.cost = variant.cost;
  out.variant = name + ", " + (variant.profile ? "calibrated '" + variant.name + "'" : variant.name);
  out.variant += constants_set_label(out.constants_set);
  if (!out.constants_set.empty()) {
    out.warnings.push_back("model constants set by hand (--constant): " + describe_constants_set(out.constants_set));
  }
  out.profile = variant.profile;
  const NcclParameters nccl = variant.nccl;
  out.maker = [name, nccl](const SystemSpec& s, const CostParameters& cost) {
    return make_collective_model(name, s, cost, nccl);
  };
  out.collectives = bind_parameters(out.maker, out.cost);
  return out;
}

}  // namespace stepcast::cli
