// stepcast-harness: measures kernels and collectives on this machine's GPUs and writes a
// measurement file (validation/SCHEMA.md). The only place that turns errors into exit codes:
//   0   everything measured was checked and correct (and the selftest, if run, passed)
//   1   a result check or the selftest failed (the file is still written), or bad input
//   2   bad command line
//   3   a CUDA, cuBLASLt, cuDNN or NCCL call failed
//   77  nothing to measure here: no GPU visible, or built without CUDA (CTest's skip code)

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "validation/harness_grids.h"
#include "validation/harness_options.h"
#include "validation/measurement_json.h"
#include "validation/measurement_records.h"

#if defined(STEPCAST_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include "kernels/cuda_check.h"
#include "validation/harness/device.h"
#include "validation/harness/mpi_world.h"
#include "validation/harness/nvml.h"
#include "validation/harness/session.h"
#include "validation/harness/suites.h"
#endif

#if defined(STEPCAST_HARNESS_SCENARIOS)
#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"
#include "validation/scenario_points.h"
#endif

namespace {

constexpr int kExitOk = 0;
constexpr int kExitCheckFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitDeviceError = 3;
constexpr int kExitSkipped = 77;

using namespace stepcast;

bool runs(const HarnessOptions& o, const char* suite) { return o.command == suite || o.command == "all"; }

// --list: the points the command would measure, without touching a GPU.
void list_points(const HarnessOptions& o) {
  const auto print = [](const MeasurementInputs& p) { std::printf("%s\n", point_name(p).c_str()); };
  if (o.scenario) {
#if defined(STEPCAST_HARNESS_SCENARIOS)
    for (const ScenarioPoint& p : scenario_points(load_scenario(*o.scenario))) {
      std::printf("%s: %s\n", describe_ops(p.ops).c_str(), point_name(p.inputs).c_str());
    }
    return;
#else
    throw HarnessUsageError("--scenario needs the scenario loader; this is the bare-CUDA harness-only build");
#endif
  }
  if (runs(o, "selftest")) std::printf("selftest spin_kernel 0.5/2/10 ms\nselftest d2d_copy 1 GiB\n");
  if (runs(o, "gemm")) for (const auto& p : gemm_grid(o)) print(p);
  if (runs(o, "attention")) for (const auto& p : attention_grid(o)) print(p);
  if (runs(o, "elementwise")) for (const auto& p : elementwise_grid(o)) print(p);
  if (runs(o, "memory")) for (const auto& p : memory_grid(o)) print(p);
  if (runs(o, "collectives")) {
    for (CollectiveOp op : collective_ops(o)) {
      for (std::int64_t size : collective_sizes(o)) {
        std::printf("%s %lld B\n", std::string(to_string(op)).c_str(), static_cast<long long>(size));
      }
    }
  }
}

#if defined(STEPCAST_HAVE_CUDA)

int measure(const HarnessOptions& o, harness::MpiWorld& world) {
  std::string why;
  const int gpus = harness::visible_gpu_count(why);
  if (gpus == 0) {
    std::printf("stepcast-harness: no CUDA GPU visible (%s); nothing to measure\n", why.c_str());
    return kExitSkipped;
  }
  if (o.device >= gpus) {
    throw HarnessUsageError("--device " + std::to_string(o.device) + ": only " + std::to_string(gpus) + " GPUs visible");
  }
  if (world.size > 1 && o.command != "collectives") {
    throw HarnessUsageError("under mpirun only `collectives` runs; run other suites in a single process");
  }
  harness::Nvml nvml;
  MeasurementFile file;
  file.provenance = host_provenance(o, STEPCAST_VERSION, STEPCAST_GIT_SHA);
  harness::fill_versions(file.provenance, nvml);
  const int device = world.active ? world.local_rank % gpus : o.device;
  file.provenance.devices.push_back(harness::query_device(device, nvml));
  if (runs(o, "collectives") && !world.active) {
    // One process drives every local GPU: describe them all.
    for (int d = 0; d < gpus; ++d) {
      if (d != device) file.provenance.devices.push_back(harness::query_device(d, nvml));
    }
  }
  if (world.active) {
    file.provenance.ranks = world.size;
    file.provenance.nodes = (world.size + world.local_size - 1) / world.local_size;
  }
  if (!nvml.available()) std::printf("note: no clocks from NVML: %s\n", nvml.why_unavailable().c_str());
  const DeviceInfo& d = file.provenance.devices.front();
  std::printf("stepcast-harness %s on %s (sm_%s, %d SMs, %.0f GB/s theoretical), CUDA %s, cuBLASLt %s\n",
              o.command.c_str(), d.name.c_str(), d.compute_capability.c_str(), d.sm_count,
              d.theoretical_memory_bandwidth_bytes_per_s / 1e9, file.provenance.cuda_runtime.c_str(),
              file.provenance.cublas.c_str());

#if !defined(STEPCAST_HARNESS_SCENARIOS)
  if (o.scenario) throw HarnessUsageError("--scenario needs the scenario loader; this is the bare-CUDA harness-only build");
#endif
  bool selftest_ok = true;
  bool device_error = false;
  {
    harness::Session session(o, file, nvml, device);
    // A suite that fails on a CUDA error is recorded as skipped with the error, and the others
    // still run (a sticky error will fail them too), so the file keeps what was measured.
    const auto guarded = [&](const char* suite, const auto& run) {
      try {
        run();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "stepcast-harness: %s suite stopped: %s\n", suite, e.what());
        file.skipped.push_back({suite, std::string(suite) + " suite", std::string("stopped by an error: ") + e.what()});
        file.complete = false;
        device_error = true;
      }
    };
    if (o.scenario) {
#if defined(STEPCAST_HARNESS_SCENARIOS)
      guarded("scenario", [&] { harness::run_scenario_suite(session, *o.scenario); });
#endif
    } else {
      if (runs(o, "selftest")) guarded("selftest", [&] { selftest_ok = harness::run_selftest(session); });
      if (runs(o, "gemm")) guarded("gemm", [&] { harness::run_gemm_suite(session); });
      if (runs(o, "attention")) guarded("attention", [&] { harness::run_attention_suite(session); });
      if (runs(o, "elementwise")) guarded("elementwise", [&] { harness::run_elementwise_suite(session); });
      if (runs(o, "memory")) guarded("memory", [&] { harness::run_memory_suite(session); });
      if (runs(o, "collectives")) guarded("collectives", [&] { harness::run_collectives_suite(session, world); });
    }
    file.provenance.finished_utc = utc_timestamp_now();
    for (DeviceInfo& info : file.provenance.devices) info.clocks_at_end = nvml.clocks(info.pci_bus_id);
    if (world.rank == 0) {
      const std::string out = o.out.value_or(default_output_path(o));
      write_measurement_file(out, file);
      std::printf("wrote %zu measurements (%zu skipped) to %s\n", file.records.size(), file.skipped.size(), out.c_str());
    }
    if (device_error) return kExitDeviceError;
    if (session.failed_checks() > 0) {
      std::printf("%d measurement(s) failed their result check\n", session.failed_checks());
      return kExitCheckFailed;
    }
  }
  return selftest_ok ? kExitOk : kExitCheckFailed;
}

#endif

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
#if defined(STEPCAST_HAVE_CUDA)
  harness::MpiWorld world = harness::init_mpi(&argc, &argv);
  struct Finalize {
    harness::MpiWorld& w;
    ~Finalize() { harness::finalize_mpi(w); }
  } finalize{world};
#endif
  try {
    const HarnessOptions options = parse_harness_options(args);
    if (options.help) {
      std::printf("%s", harness_usage().c_str());
      return kExitOk;
    }
    if (options.version) {
      std::printf("stepcast-harness %s (%s)\n", STEPCAST_VERSION, STEPCAST_GIT_SHA);
      return kExitOk;
    }
    if (options.list) {
      list_points(options);
      return kExitOk;
    }
#if defined(STEPCAST_HAVE_CUDA)
#if !defined(STEPCAST_HAVE_MPI)
    if (harness::launched_by_mpi()) {
      throw HarnessUsageError("started by an MPI launcher, but this stepcast-harness was built without MPI");
    }
#endif
    return measure(options, world);
#else
    std::printf("stepcast-harness: built without CUDA (STEPCAST_WITH_CUDA=OFF or no CUDA compiler); nothing to measure\n");
    return kExitSkipped;
#endif
  } catch (const HarnessUsageError& e) {
    std::fprintf(stderr, "stepcast-harness: %s\n\n%s", e.what(), harness_usage().c_str());
    return kExitUsage;
#if defined(STEPCAST_HARNESS_SCENARIOS)
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitCheckFailed;
#endif
#if defined(STEPCAST_HAVE_CUDA)
  } catch (const kernels::CudaError& e) {
    std::fprintf(stderr, "stepcast-harness: %s\n", e.what());
    return kExitDeviceError;
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stepcast-harness: error: %s\n", e.what());
    return kExitDeviceError;
  }
}
