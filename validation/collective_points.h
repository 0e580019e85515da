#pragma once
// Measured collectives as the NCCL model sees them: one point per size of an nccl-tests log or per
// collective record of a harness file, with the group laid out on the system it ran on.
//
// Conventions: sizes as nccl-tests counts them (model/collective.h). The measured time of a log
// row is the faster of its out-of-place and in-place runs (validation/collective_comparison.h
// says why). A row whose check failed (#wrong > 0) or a harness record whose check did not pass
// is an error: a failed measurement must not be fitted. The group is the first `ranks_per_node`
// GPUs of each node (all of them by default), placed with model/placement.h.
//
// The prediction adds nccl-tests' own launch cost when one thread drove several GPUs (-g N;
// NcclTestsHarness in validation/collective_comparison.h), which a training job does not pay.

#include <map>
#include <string>
#include <vector>

#include "model/nccl_model.h"
#include "validation/collective_comparison.h"
#include "validation/measurement.h"
#include "validation/nccl_tests_log.h"

namespace stepcast {

struct CollectivePoint {
  CollectiveOp op = CollectiveOp::all_reduce;
  double bytes = 0.0;
  GroupLayout group;
  double measured_s = 0.0;
  int gpus_per_thread = 1;  // nccl-tests -g
  std::string label;        // "all_reduce 1048576 B, 16 ranks"
};

struct CollectiveDataset {
  std::string source;        // the file it came from
  SystemSpec system;         // gpus = the ranks that took part
  FabricFigures fabric;      // derived once from `system`
  AlgorithmFilter filter;    // NCCL_ALGO / NCCL_PROTO the run forced, if any
  std::vector<CollectivePoint> points;
};

// The group of `ranks` ranks, `ranks_per_node` per node (0: every GPU of each node), on `system`;
// returns the system sized to the group. InputError when the system cannot hold it.
GroupLayout collective_group(SystemSpec& system, int ranks, int ranks_per_node, const std::string& source);

// The NCCL settings of a run that change what NCCL runs: NCCL_ALGO and NCCL_PROTO (lists, '^'
// to exclude, as NCCL parses them), NCCL_MIN_CTAS / NCCL_MAX_CTAS and NCCL_MIN_NCHANNELS /
// NCCL_MAX_NCHANNELS. InputError (naming `source`) for a name NCCL does not know.
AlgorithmFilter nccl_settings_filter(const std::map<std::string, std::string>& env, const std::string& source);

// Every row of an nccl-tests log. The rank count is the log's device list, else the one its
// busbw/algbw ratio implies, else `ranks` (0: an InputError asking for --ranks). A log that
// records NCCL_NVLS_ENABLE=0 (NcclTestsLog::nccl_env) runs on the system without NVLS; one that
// records NCCL_ALGO / NCCL_PROTO / channel bounds is priced under them (the dataset's filter).
CollectiveDataset collective_dataset(const NcclTestsLog& log, const SystemSpec& system, int ranks_per_node = 0,
                                     int ranks = 0);

// Every collective record of a harness file.
CollectiveDataset collective_dataset(const MeasurementFile& file, const std::string& source,
                                     const SystemSpec& system);

// The model's time for a point (with nccl-tests' launch term), and the candidate it picked.
CollectiveEstimate predict_collective(const CollectivePoint& point, const NcclCollectiveModel& model,
                                      const AlgorithmFilter& filter, const NcclTestsHarness& harness = {});

}  // namespace stepcast
