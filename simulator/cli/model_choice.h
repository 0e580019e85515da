#pragma once
// The cost model a predicting command uses: --collectives NAME picks the collective model,
// --calibration PROFILE replaces the datasheet constants (cost and NCCL) with a profile's fitted
// values (simulator/calibration_profile.h), after checking that the profile was measured on the
// scenario's GPU and system (--force-calibration uses it anyway, with a warning). --constant
// NAME=VALUE sets model constants by hand after that (simulator/constant_overrides.h); the
// variant's description names them, so every report that prints it says so.

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "model/cost_parameters.h"
#include "model/hardware.h"
#include "simulator/calibration_profile.h"
#include "simulator/collective_factory.h"
#include "simulator/constant_overrides.h"

namespace stepcast::cli {

struct ModelChoice {
  std::string collectives;   // empty: the default model
  std::string calibration;   // empty: the datasheet variant
  bool force = false;
  std::vector<std::string> constants;  // "NAME=VALUE", as given
};

// Registers --collectives, --calibration, --force-calibration and --constant on `cmd`.
void add_model_options(CLI::App& cmd, ModelChoice& choice);

struct ChosenModel {
  CostParameters cost;
  CollectiveMaker maker;              // the collective model for any system and constants
  CollectiveFactory collectives;      // maker with `cost` bound
  std::string variant;                // "nccl, datasheet", "nccl, calibrated 'h200-lab'", + constants set
  std::vector<std::string> warnings;  // profile mismatches accepted with --force-calibration
  std::shared_ptr<const CalibrationProfile> profile;  // null without --calibration
  std::vector<ConstantSet> constants_set;             // --constant, applied to `cost` (and the NCCL model)
  InferenceCostParameters inference;                  // inference-only constants (defaults, or --constant)
};

// Loads the profile (if any) and checks it against `system`.
ChosenModel choose_model(const ModelChoice& choice, const SystemSpec& system);

}  // namespace stepcast::cli
