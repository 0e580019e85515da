#pragma once
// Predicted against measured, row by row, for an nccl-tests log, and the error by size band.
//
// The measured bus bandwidth is recomputed from size/time (nccl-tests prints it with two
// decimals, 0.00 at small sizes) with nccl-tests' factor (model/collective.h); errors are
// predicted/measured - 1 of bus bandwidth, so +10% means the model is 10% optimistic. The
// measured time is the faster of the out-of-place and in-place runs: the two do the same work and
// differ by noise (aws_p5_2x8_allreduce.txt: 111.7 against 89.8 us at 32 KiB), and the faster one
// is the better estimate of what the fabric does.
//
// nccl-tests' own launch pattern matters at small sizes: with `-g N` one thread launches all N
// GPUs' kernels in turn, which a training job (one process per GPU) does not pay. The harness
// term below adds that host time to the prediction for such logs.

#include <string>
#include <vector>

#include "model/nccl_model.h"
#include "validation/nccl_tests_log.h"

namespace stepcast {

struct NcclTestsHarness {
  // Host time per extra GPU launched by one thread (-g N): 2.4 us, from the same 8x A100 measured
  // both ways (tests/fixtures/nccl_logs_extra/thanos_a100_1x8_allreduce_{g8,mpirun}.txt): the
  // -g 8 run is 16.8 us slower on average from 8 B to 4 KiB, over 7 extra GPUs.
  double launch_us_per_extra_gpu = 2.4;
};

struct CollectiveComparison {
  Bytes size;
  Seconds measured_time;
  Seconds predicted_time;
  double measured_busbw_gbps = 0.0;
  double predicted_busbw_gbps = 0.0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  CollectiveProtocol protocol = CollectiveProtocol::simple;
  [[nodiscard]] double busbw_error() const { return predicted_busbw_gbps / measured_busbw_gbps - 1.0; }
};

// Compares every row of `log` with the model's prediction for `op` on `group`. `gpus_per_thread`
// is nccl-tests' -g (the log's nGpus when printed).
std::vector<CollectiveComparison> compare_with_log(const NcclTestsLog& log, CollectiveOp op, const GroupLayout& group,
                                                   const NcclCollectiveModel& model, int gpus_per_thread = 1,
                                                   const NcclTestsHarness& harness = {});

struct ErrorBand {
  std::string name;     // "8 KiB-1 MiB"
  double min_bytes = 0.0;
  double max_bytes = 0.0;
  int points = 0;
  double max_abs_error = 0.0;
  double mean_abs_error = 0.0;
  double bias = 0.0;    // mean signed error
};

// The bands of issue #3's bars: < 8 KiB, 8 KiB-1 MiB, 1-256 MiB, >= 256 MiB.
std::vector<ErrorBand> error_bands(const std::vector<CollectiveComparison>& points);

// A fixed-width table: size, measured/predicted time and busbw, error, algorithm/protocol.
std::string format_comparison(const std::vector<CollectiveComparison>& points);

}  // namespace stepcast
