#pragma once
// `stepcast calibrate` and `stepcast validate` below the command line: measurement files in, the
// points the model is compared with out, and a calibration profile (simulator/calibration_profile.h).
//
// Inputs, detected by content (not by name):
//   harness     stepcast-harness JSON ("schema": "stepcast.harness.measurements"): kernel and
//               collective records; the GPU is its devices' catalog key;
//   nccl-tests  the text output of nccl-tests' *_perf binaries (validation/nccl_tests_log.h);
//   published   a published-runs YAML file (tests/fixtures/reference/published_runs.yaml format):
//               for `validate` only, it has no measurements to fit.
// A profile applies to one GPU (and one system when it fits collectives), so the inputs must
// agree: harness files of different GPUs, a harness GPU that is not the --system's, a selftest or
// result check that failed, are errors (--force turns GPU/system disagreements and failed
// selftests into notes recorded in the profile; a failed result check is never fitted).
// Collective inputs are placed on --system (a catalog system); without it, on the catalog's
// default system for the harness GPU, and the profile says so.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "simulator/calibration_profile.h"
#include "simulator/catalog.h"
#include "validation/collective_fit.h"
#include "validation/kernel_fit.h"

namespace stepcast {

enum class InputKind { harness, nccl_tests, published_runs };
std::string_view to_string(InputKind kind);

// What a file is, by its first meaningful bytes. Unreadable files are InputErrors.
InputKind detect_input_kind(const std::filesystem::path& path);

struct CalibrationRequest {
  std::vector<std::filesystem::path> inputs;
  std::string name;          // the profile's name (the calibrated variant's)
  std::string system;        // catalog system the collectives ran on; "" = the GPU's default
  int ranks_per_node = 0;    // nccl-tests logs: GPUs of each node in the group (0: all)
  int ranks = 0;             // nccl-tests logs without a device list
  bool force = false;
  KernelFitOptions kernel_options;
  CollectiveFitOptions collective_options;
};

// The measurements of harness files and nccl-tests logs, resolved to one GPU and system.
struct LoadedMeasurements {
  std::vector<InputProvenance> inputs;
  std::vector<KernelPoint> kernels;
  std::vector<CollectiveDataset> collectives;
  GpuSpec gpu;                      // the catalog entry of the measured GPU
  std::string gpu_device_name;      // as CUDA named it ("" when only logs were read)
  int sm_count = 0;
  std::optional<SystemSpec> system;  // when collectives were measured
  std::vector<std::string> notes;
};

// Reads every input (published-runs files are refused: they are validation targets only).
LoadedMeasurements load_measurements(const CalibrationRequest& request, const Catalog& catalog = Catalog::builtin());

// Fits everything `measurements` holds, starting from the documented defaults.
CalibrationProfile calibrate(const LoadedMeasurements& measurements, const CalibrationRequest& request);

// Reads and fits in one go.
CalibrationProfile calibrate(const CalibrationRequest& request, const Catalog& catalog = Catalog::builtin());

}  // namespace stepcast
