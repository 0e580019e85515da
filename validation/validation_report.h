#pragma once
// `stepcast validate`: predicted against measured, point by point and per component, with the mean
// absolute error, the maximum and the bias (errors of times: predicted / measured - 1; + means the
// model predicts longer).
//
// Sources: harness files and nccl-tests logs (through validation/calibration.h's reader), and
// published-runs files with the mapping of simulator/published_runs.h: training rows through the
// training predictor (component training.step_time), inference rows through the inference
// predictor (inference.ttft for first-token rows; inference.time_per_output_token_per_gpu, the
// inverse of output tokens/s per GPU, for throughput rows). A model variant (simulator/calibration_profile.h) supplies the
// constants: "datasheet" or a profile's. A published run the profile does not apply to (another
// GPU or system) is predicted with the datasheet constants and says so in its `model` column.
//
// A GEMM point whose harness record names the cuBLASLt kernel that ran (its `algorithm`,
// validation/SCHEMA.md) carries it in ValidationRow::kernel, printed as a last `kernel` column
// ("algo 21 tile 128x256 splitK 1", kernel_points.h's describe_kernel) in every format; the
// column is absent when no row has one, so reports on older files are unchanged.
//
// Holdout (measurement files only; published runs are never fitted):
//   every-other        sizes/shapes of each source in increasing order; even positions fit,
//                      odd positions are reported
//   fraction[:F]       every round(1/F)-th point of each source is held out (F = 0.25 by default)
//   by-group-size[:N]  collectives: fit on group size N (the smallest by default), report the
//                      other group sizes; kernels are not split by it
// The fit starts from the variant's constants and uses calibrate's fitting (kernel_fit.h,
// collective_fit.h); the report lists what it fitted.

#include <optional>
#include <string>
#include <vector>

#include "model/inference_parameters.h"
#include "simulator/calibration_profile.h"
#include "simulator/report.h"
#include "validation/calibration.h"

namespace stepcast {

struct Holdout {
  enum class Kind { none, every_other, fraction, by_group_size } kind = Kind::none;
  double fraction = 0.25;
  int group_size = 0;  // 0: the smallest
};

// "every-other", "fraction", "fraction:0.3", "by-group-size", "by-group-size:8"; UsageError otherwise.
Holdout parse_holdout(const std::string& text);
std::string to_string(const Holdout& h);

struct ValidationRow {
  std::string source;
  std::string component;  // "gemm.bf16", "collective.all_reduce", "training.step_time", ...
  std::string label;
  std::string model;      // the variant that predicted it
  double measured_s = 0.0;
  double predicted_s = 0.0;
  std::optional<double> half_width_90;  // the profile's 90% interval of this prediction, when it has one
  std::string kernel;     // the GEMM kernel the point ran (KernelPoint::kernel); "" when not recorded
  [[nodiscard]] double error() const { return predicted_s / measured_s - 1.0; }
};

struct ValidationSummary {
  std::string component;
  ResidualStats stats;
};

struct ValidationReport {
  std::string variant;
  std::string variant_description;
  std::string holdout = "none";
  int fitted_points = 0;                 // points the holdout fit used
  std::vector<FittedValue> fitted;       // what the holdout fit set
  std::vector<ValidationRow> rows;
  std::vector<ValidationSummary> components;  // per component, then "all"
  std::vector<std::string> notes;
};

// Kernels and collectives of `measurements` under `variant`, with an optional holdout fit.
void validate_measurements(const LoadedMeasurements& measurements, const ModelVariant& variant, const Holdout& holdout,
                           const CalibrationRequest& fit_options, ValidationReport& report);

// The training and inference rows of a published-runs file; inference rows are priced with
// `inference`'s inference-only constants (the defaults, or validate --constant's).
void validate_published_runs(const std::string& path, const ModelVariant& variant, bool force,
                             ValidationReport& report, const InferenceCostParameters& inference = {});

// Fills `components` from `rows` (per component in name order, then "all").
void summarize(ValidationReport& report);

std::string format_validation(const ValidationReport& report, ReportFormat format);

}  // namespace stepcast
