#pragma once
// Calibration profiles: what `stepcast calibrate` fitted on one GPU / system, read back by every
// command that predicts (predict, validate, sweep, search, explain, the GUI).
//
// A profile holds the fitted values of the cost model's own constants (model/cost_parameters.h,
// by CostParameters::for_each_constant name; model/nccl_parameters.h, by
// NcclParameters::for_each_parameter name), so the simulator uses exactly what was fitted; the
// residual statistics of each component (for prediction intervals); the range of shapes, sizes
// and group sizes it was fitted on (to say when a prediction extrapolates); and the provenance of
// every input file. A profile applies only to the GPU (and, when it fitted collectives, the
// system) it was measured on.
//
// File format (JSON, schema "stepcast.calibration.profile", schema_version 1). Every key is
// required unless marked optional; unknown keys are errors.
//   schema            "stepcast.calibration.profile"
//   schema_version    1
//   name              the profile's name: the calibrated model variant is called this
//                     ("datasheet" is reserved for the uncalibrated variant)
//   created_utc       ISO 8601 time of the fit
//   tool              {name, version, git_sha} of the stepcast that fitted it
//   applies_to        {gpu: catalog GPU key ("h200-sxm-141gb"), gpu_device_name (as CUDA reports
//                     it, "" when only logs were read), sm_count (0 when unknown), system: catalog
//                     system key ("" when no collective was fitted)}
//   inputs[]          {path, sha256 (hex of the file's bytes), kind ("harness" | "nccl-tests"),
//                     points (measurements used), provenance: {string: string} — the file's own
//                     provenance: tool, versions, driver, CUDA/cuBLAS/cuDNN/NCCL, devices, host}
//   cost_parameters[] {name, value, datasheet (the default it replaces), unit, fitted_from}
//   nccl_parameters[] same shape; NCCL's own units (us, GB/s) as in model/nccl_parameters.h
//   components[]      {name, points, in_sample: stats, held_out: stats, coverage}
//                     name: gemm.<precision>, attention.forward | attention.backward |
//                     attention.decode, elementwise, memory, collective.<op>
//                     stats: {n, mean_abs, max_abs, bias, rms, abs_quantiles: {"0.5", "0.8",
//                     "0.9", "0.95": number | null}} of relative time errors (residual_stats.h);
//                     held_out errors are cross-validated (each point predicted by a fit that did
//                     not see it): intervals use those.
//                     coverage: {ranges: {quantity: [min, max]}, values: {quantity: [strings]}}
//   notes[]           strings: what the fit could not determine, warnings accepted with --force
// Numbers are SI except nccl_parameters (NCCL's units, named in `unit`).

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/cost_parameters.h"
#include "model/hardware.h"
#include "model/nccl_parameters.h"
#include "simulator/residual_stats.h"

namespace stepcast {

inline constexpr std::string_view kProfileSchemaName = "stepcast.calibration.profile";
inline constexpr int kProfileSchemaVersion = 1;
inline constexpr std::string_view kDatasheetVariantName = "datasheet";

// The range a component was measured over, so that a prediction outside it can say so.
struct Coverage {
  std::map<std::string, std::pair<double, double>> ranges;      // "m" -> [min, max]
  std::map<std::string, std::vector<std::string>> values;       // "op" -> {"all_reduce", ...}

  void include(const std::string& quantity, double value);
  void include_value(const std::string& quantity, const std::string& value);
  // For each quantity that falls outside its measured range: "k = 65536 above the measured
  // 512..16384". Quantities the coverage does not track are not reported.
  [[nodiscard]] std::vector<std::string> outside(const std::map<std::string, double>& quantities) const;
  bool operator==(const Coverage&) const = default;
};

struct ComponentCalibration {
  std::string name;         // "gemm.bf16", "collective.all_reduce", ...
  int points = 0;
  ResidualStats in_sample;  // errors of the final fit on the points it saw
  ResidualStats held_out;   // cross-validated errors: what intervals use
  Coverage coverage;
  bool operator==(const ComponentCalibration&) const = default;
};

struct FittedValue {
  std::string name;         // for_each_constant / for_each_parameter name
  double value = 0.0;
  double datasheet = 0.0;   // the uncalibrated default it replaces
  std::string unit;
  std::string fitted_from;  // which components and how many points set it
  bool operator==(const FittedValue&) const = default;
};

struct InputProvenance {
  std::string path;
  std::string sha256;
  std::string kind;         // "harness" or "nccl-tests"
  int points = 0;
  std::map<std::string, std::string> provenance;
  bool operator==(const InputProvenance&) const = default;
};

struct CalibrationProfile {
  int schema_version = kProfileSchemaVersion;
  std::string name;
  std::string created_utc;
  std::string tool_version;
  std::string git_sha;
  std::string gpu;              // catalog GPU key
  std::string gpu_device_name;  // as the device reported it
  int sm_count = 0;
  std::string system;           // catalog system key; empty when no collective was fitted
  std::vector<InputProvenance> inputs;
  std::vector<FittedValue> cost_parameters;
  std::vector<FittedValue> nccl_parameters;
  std::vector<ComponentCalibration> components;
  std::vector<std::string> notes;

  [[nodiscard]] const ComponentCalibration* component(const std::string& name) const;
  bool operator==(const CalibrationProfile&) const = default;
};

// JSON text (pretty-printed, stable key order) and back. `source` names the text in errors.
// Parsing errors are InputErrors naming the source and the key path.
std::string profile_to_json_text(const CalibrationProfile& profile);
CalibrationProfile parse_profile_text(const std::string& text, const std::string& source);

// The profile file API for predict/sweep/search/explain/GUI. A missing, unreadable or malformed
// file, an unknown schema version or a parameter name the model does not have is an InputError.
CalibrationProfile load_profile(const std::filesystem::path& path);
// Writes atomically (temporary file, then rename); throws InputError when it cannot.
void save_profile(const std::filesystem::path& path, const CalibrationProfile& profile);

// The constants with the profile's fitted values in place of `base`'s.
CostParameters apply_profile(const CalibrationProfile& profile, CostParameters base = {});
NcclParameters apply_profile(const CalibrationProfile& profile, NcclParameters base);

// Whether the profile was measured on `system`'s GPU (catalog key and SM count) and, when it
// fitted collectives, on `system` itself. A mismatch is an InputError naming both sides, unless
// `force`: then each mismatch is returned as a warning line and the profile is used anyway.
std::vector<std::string> check_profile_applies(const CalibrationProfile& profile, const SystemSpec& system,
                                               bool force);

// A named model variant (SimGrid keeps raw and calibrated models side by side the same way): the
// uncalibrated "datasheet" variant is always available; a calibrated one is named after its
// profile and keeps the profile for intervals and coverage.
struct ModelVariant {
  std::string name;
  std::string description;
  CostParameters cost;
  NcclParameters nccl;
  std::shared_ptr<const CalibrationProfile> profile;  // null for "datasheet"
};

ModelVariant datasheet_variant();
ModelVariant calibrated_variant(std::shared_ptr<const CalibrationProfile> profile);
// What `--calibration NAME` selects: "" or "datasheet" -> the datasheet variant (so scripts can
// name it as they name profiles); anything else is a profile file, loaded (InputError when
// unreadable or corrupt).
ModelVariant model_variant_named(const std::string& calibration);

}  // namespace stepcast
