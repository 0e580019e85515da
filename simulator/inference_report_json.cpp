#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "simulator/enum_names.h"
#include "simulator/inference_report.h"

namespace stepcast {
namespace {

using nlohmann::ordered_json;

double r6(double v) { return round_significant(v, 6); }

ordered_json latency_json(const LatencyStats& s) {
  return ordered_json{{"mean", r6(s.mean.value())}, {"p50", r6(s.p50.value())}, {"p90", r6(s.p90.value())},
                      {"p99", r6(s.p99.value())}};
}

ordered_json step_json(const StepBreakdown& b) {
  return ordered_json{{"total", r6(b.total().value())},     {"linear", r6(b.linear.value())},
                      {"attention", r6(b.attention.value())}, {"tp_comm", r6(b.tp_comm.value())},
                      {"pp_comm", r6(b.pp_comm.value())},     {"output", r6(b.output.value())},
                      {"overhead", r6(b.overhead.value())}};
}

// Mean, max and last value of one series.
template <class Get>
ordered_json series_summary(const std::vector<ServingSample>& samples, Get get) {
  double sum = 0.0, peak = 0.0;
  for (const auto& s : samples) {
    sum += get(s);
    peak = std::max(peak, get(s));
  }
  const double n = static_cast<double>(samples.size());
  return ordered_json{{"mean", r6(n > 0 ? sum / n : 0.0)}, {"max", r6(peak)},
                      {"last", r6(samples.empty() ? 0.0 : get(samples.back()))}};
}

}  // namespace

std::string inference_report_json(const Scenario& scenario, const InferencePrediction& p) {
  const InferenceWorkload& w = scenario.inference();
  ordered_json j;
  j["schema_version"] = 1;
  j["mode"] = "inference";
  j["ttft_s"] = latency_json(p.ttft);
  j["tpot_s"] = latency_json(p.tpot);
  j["e2e_latency_s"] = latency_json(p.e2e);
  j["output_tokens_per_s"] = r6(p.output_tokens_per_s);
  j["requests_per_s"] = r6(p.requests_per_s);
  const MemoryBreakdown& m = p.memory;
  j["memory_per_gpu_bytes"] = {{"weights", json_bytes(m.weights)},         {"kv_cache", json_bytes(m.kv_cache)},
                               {"activations", json_bytes(m.activations)}, {"buffers", json_bytes(m.buffers)},
                               {"fragmentation", json_bytes(m.fragmentation)}, {"peak", json_bytes(m.peak)}};
  j["max_concurrent_sequences"] = p.max_concurrent_sequences;
  j["fits"] = p.fits;

  // Extras beyond the contract.
  j["inference_mode"] = p.serving ? "serving" : "static";
  j["scenario"] = scenario.name;
  j["gpus"] = scenario.system.gpus;
  j["gpu"] = scenario.system.gpu.name;
  j["gpu_memory_bytes"] = json_bytes(scenario.system.gpu.memory);
  const ParallelConfig& par = scenario.parallel;
  j["parallel"] = {{"tp", par.tp}, {"pp", par.pp}, {"instances", par.tp * par.pp > 0 ? scenario.system.gpus / (par.tp * par.pp) : 0},
                   {"ep", par.ep}};
  j["precision"] = {{"compute", std::string(to_string(scenario.precision.compute))},
                    {"params", std::string(to_string(scenario.precision.params))},
                    {"kv_cache", std::string(to_string(scenario.precision.kv_cache))}};
  j["output_tokens_per_s_per_gpu"] = r6(scenario.system.gpus > 0 ? p.output_tokens_per_s / scenario.system.gpus : 0.0);
  j["prefill_time_s"] = r6(p.prefill_time.value());
  j["step_breakdown_s"] = {{"prefill", step_json(p.prefill_step)}, {"decode", step_json(p.decode_step)}};
  if (!p.serving) {
    j["static"] = {{"batch", w.batch},
                   {"input_len", w.input_len},
                   {"output_len", w.output_len},
                   {"decode_tokens_per_s_peak", r6(p.decode_tokens_per_s_peak)}};
  } else {
    const ServingWorkload& s = w.serving;
    ordered_json sv;
    sv["requests"] = p.requests;
    sv["dropped"] = p.dropped;
    sv["warmup_requests"] = p.warmup_requests;
    sv["scheduler"] = std::string(enum_name(s.scheduler));
    sv["arrival_rate_per_s"] = r6(p.arrival_rate_per_s);
    sv["makespan_s"] = r6(p.makespan.value());
    sv["goodput_requests_per_s"] = r6(p.goodput_requests_per_s);
    sv["slo_attainment"] = r6(p.slo_attainment);
    sv["slo_s"] = {{"ttft", r6(s.slo.ttft.value())}, {"tpot", r6(s.slo.tpot.value())}};
    sv["capacity_requests_per_s"] = r6(p.capacity_requests_per_s);
    sv["saturated"] = p.saturated;
    sv["saturation"] = p.saturation;
    sv["preemptions"] = p.preemptions;
    sv["mean_batch"] = r6(p.mean_batch);
    sv["mean_requests_in_system"] = r6(p.mean_requests_in_system);
    sv["mean_kv_occupancy"] = r6(p.mean_kv_occupancy);
    sv["peak_kv_occupancy"] = r6(p.peak_kv_occupancy);
    sv["prefix_cache_hit_tokens"] = r6(p.prefix_cache_hit_tokens);
    ordered_json ts;
    ts["interval_s"] = r6(p.time_series_interval.value());
    ts["summary"] = {{"queued", series_summary(p.time_series, [](const ServingSample& x) { return x.queued; })},
                     {"running", series_summary(p.time_series, [](const ServingSample& x) { return x.running; })},
                     {"kv_occupancy", series_summary(p.time_series, [](const ServingSample& x) { return x.kv_occupancy; })}};
    ts["columns"] = {"time_s", "queued", "running", "kv_occupancy"};
    ordered_json rows = ordered_json::array();
    for (const ServingSample& x : p.time_series) {
      rows.push_back({r6(x.time.value()), r6(x.queued), r6(x.running), r6(x.kv_occupancy)});
    }
    ts["samples"] = rows;
    sv["time_series"] = ts;
    j["serving"] = sv;
  }
  j["notes"] = p.notes;
  return j.dump(2);
}

}  // namespace stepcast
