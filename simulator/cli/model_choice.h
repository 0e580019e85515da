#pragma once
// The cost model a predicting command uses: --collectives NAME picks the collective model,
// --calibration PROFILE replaces the datasheet constants (cost and NCCL) with a profile's fitted
// values (simulator/calibration_profile.h), after checking that the profile was measured on the
// scenario's GPU and system (--force-calibration uses it anyway, with a warning).

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "model/cost_parameters.h"
#include "model/hardware.h"
#include "simulator/calibration_profile.h"
#include "simulator/collective_factory.h"

namespace stepcast::cli {

struct ModelChoice {
  std::string collectives;   // empty: the default model
  std::string calibration;   // empty: the datasheet variant
  bool force = false;
};

// Registers --collectives, --calibration and --force-calibration on `cmd`.
void add_model_options(CLI::App& cmd, ModelChoice& choice);

struct ChosenModel {
  CostParameters cost;
  CollectiveMaker maker;              // the collective model for any system and constants
  CollectiveFactory collectives;      // maker with `cost` bound
  std::string variant;                // "nccl, datasheet" or "nccl, calibrated 'h200-lab'"
  std::vector<std::string> warnings;  // profile mismatches accepted with --force-calibration
  std::shared_ptr<const CalibrationProfile> profile;  // null without --calibration
};

// Loads the profile (if any) and checks it against `system`.
ChosenModel choose_model(const ModelChoice& choice, const SystemSpec& system);

}  // namespace stepcast::cli
