#pragma once
// Reports of an inference prediction, in the three formats of simulator/report.h:
//   table  for people: latency percentiles in ms, throughput, memory per GPU, where a prefill
//          and a decode iteration spend their time, and for serving runs the SLOs, capacity, the
//          saturation statement and a text sparkline of the queue and KV occupancy over time;
//   json   the public contract of `stepcast predict --format json` for inference (DESIGN.md):
//          schema_version, mode ("inference"), ttft_s, tpot_s, e2e_latency_s (each with mean,
//          p50, p90, p99), output_tokens_per_s, requests_per_s, memory_per_gpu_bytes (weights,
//          kv_cache, activations, buffers, fragmentation, peak), max_concurrent_sequences, fits —
//          plus extras that may grow but never rename: inference_mode, layout and precision,
//          per-GPU throughput, step_breakdown_s, and `serving` (goodput, SLO attainment,
//          capacity, saturated + statement, preemptions, occupancy, and the time series with a
//          summary);
//   csv    one header line and one flat row per prediction, for sweeps and notebooks.
// Numbers in JSON and CSV are SI, rounded to 6 significant digits; bytes are integers.

#include <string>

#include "model/prediction.h"
#include "model/scenario.h"
#include "simulator/report.h"

namespace stepcast {

std::string inference_report_table(const Scenario& scenario, const InferencePrediction& prediction);
std::string inference_report_json(const Scenario& scenario, const InferencePrediction& prediction);
std::string inference_csv_header();
std::string inference_csv_row(const Scenario& scenario, const InferencePrediction& prediction);

// The report in `format`, ending with a newline.
std::string inference_report(const Scenario& scenario, const InferencePrediction& prediction, ReportFormat format);

}  // namespace stepcast
