#include "simulator/inference_report.h"

#include <algorithm>

#include <fmt/format.h>

namespace stepcast {
namespace {

std::string latency(const LatencyStats& s) {
  return csv_number(s.mean.value()) + "," + csv_number(s.p50.value()) + "," + csv_number(s.p90.value()) + "," +
         csv_number(s.p99.value());
}

}  // namespace

std::string inference_csv_header() {
  return "scenario,mode,gpus,tp,pp,ep,compute,params,kv_cache,"
         "ttft_mean_s,ttft_p50_s,ttft_p90_s,ttft_p99_s,tpot_mean_s,tpot_p50_s,tpot_p90_s,tpot_p99_s,"
         "e2e_mean_s,e2e_p50_s,e2e_p90_s,e2e_p99_s,output_tokens_per_s,requests_per_s,"
         "goodput_requests_per_s,slo_attainment,capacity_requests_per_s,saturated,"
         "weights_bytes,kv_cache_bytes,activations_bytes,buffers_bytes,fragmentation_bytes,peak_bytes,"
         "max_concurrent_sequences,fits";
}

std::string inference_csv_row(const Scenario& scenario, const InferencePrediction& p) {
  const ParallelConfig& par = scenario.parallel;
  const PrecisionConfig& prec = scenario.precision;
  const MemoryBreakdown& m = p.memory;
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                     csv_field(scenario.name), p.serving ? "serving" : "static", scenario.system.gpus, par.tp, par.pp,
                     par.ep, to_string(prec.compute), to_string(prec.params), to_string(prec.kv_cache),
                     latency(p.ttft), latency(p.tpot), latency(p.e2e), csv_number(p.output_tokens_per_s),
                     csv_number(p.requests_per_s), csv_number(p.goodput_requests_per_s), csv_number(p.slo_attainment),
                     csv_number(p.capacity_requests_per_s), p.saturated ? "true" : "false", csv_bytes(m.weights),
                     csv_bytes(m.kv_cache), csv_bytes(m.activations), csv_bytes(m.buffers), csv_bytes(m.fragmentation),
                     csv_bytes(m.peak), p.max_concurrent_sequences, p.fits ? "true" : "false");
}

std::string inference_report(const Scenario& scenario, const InferencePrediction& prediction, ReportFormat format) {
  switch (format) {
    case ReportFormat::table: return inference_report_table(scenario, prediction);
    case ReportFormat::json: return inference_report_json(scenario, prediction) + "\n";
    case ReportFormat::csv: return inference_csv_header() + "\n" + inference_csv_row(scenario, prediction) + "\n";
  }
  return {};
}

}  // namespace stepcast
