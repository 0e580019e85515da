#pragma once
// The measurement suites of stepcast-harness. Each measures its grid (validation/harness_grids.h)
// on the session's GPU, checks every timed run's result, records one measurement per point and
// records unsupported points as skipped with the reason.

#include <string>

#include "kernels/device_buffer.h"
#include "kernels/gemm.h"
#include "validation/harness/mpi_world.h"
#include "validation/harness/session.h"
#include "validation/measurement.h"

namespace stepcast::harness {

// Spin kernels of known duration within 2.5% and a device copy at a plausible share of the
// datasheet bandwidth. Returns whether every selftest passed.
bool run_selftest(Session& session);

// One point at a time, for the grids and for --scenario. `label` prefixes the record's name
// (e.g. "qkv_proj: ").
class GemmRunner {
 public:
  explicit GemmRunner(Session& session);
  void measure(const GemmInputs& point, const std::string& label);

 private:
  Session& m_session;
  kernels::CublasLt m_lt;
  kernels::DeviceBuffer m_workspace;
  kernels::DeviceBuffer m_scales;  // FP8 per-tensor scales, 1.0
};
void measure_attention(Session& session, const AttentionInputs& point, const std::string& label);
void measure_elementwise(Session& session, const ElementwiseInputs& point, const std::string& label);
void measure_memory(Session& session, const MemoryInputs& point, const std::string& label);

void run_memory_suite(Session& session);
void run_gemm_suite(Session& session);
void run_elementwise_suite(Session& session);
void run_attention_suite(Session& session);

// --scenario FILE: the kernels one GPU runs in a training scenario's step (built only with the
// scenario loader, i.e. not in the bare-CUDA harness build).
void run_scenario_suite(Session& session, const std::string& scenario);

// NCCL collectives across all local GPUs (one process), or one GPU per rank under MPI. Records
// skipped points when NCCL is not built in or there are fewer than two ranks.
void run_collectives_suite(Session& session, const MpiWorld& world);

}  // namespace stepcast::harness
