#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "simulator/enum_names.h"
#include "simulator/inference_report.h"

namespace stepcast {
namespace {

std::string duration(Seconds t) {
  const double s = t.value();
  if (s >= 10.0) return fmt::format("{:.1f} s", s);
  if (s >= 1.0) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}
std::string gib(Bytes b) { return fmt::format("{:.2f} GiB", b.value() / (1024.0 * 1024.0 * 1024.0)); }
std::string percent(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }

// A one-line chart of `values` with eight block heights, at most `width` characters (values
// averaged in groups), scaled to the largest value.
std::string sparkline(const std::vector<double>& values, std::size_t width) {
  static const char* const kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty()) return {};
  const std::size_t groups = std::min(width, values.size());
  std::vector<double> means(groups, 0.0);
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t begin = g * values.size() / groups;
    const std::size_t end = std::max(begin + 1, (g + 1) * values.size() / groups);
    for (std::size_t i = begin; i < end; ++i) means[g] += values[i];
    means[g] /= static_cast<double>(end - begin);
  }
  const double top = *std::max_element(means.begin(), means.end());
  std::string out;
  for (const double v : means) {
    const int level = top > 0.0 ? std::clamp(static_cast<int>(std::lround(7.0 * v / top)), 0, 7) : 0;
    out += kBlocks[level];
  }
  return out;
}

void latency_row(std::string& out, const char* name, const LatencyStats& s) {
  out += fmt::format("    {:<22}{:>11}{:>11}{:>11}{:>11}\n", name, duration(s.mean), duration(s.p50), duration(s.p90),
                     duration(s.p99));
}

void step_rows(std::string& out, const char* title, const StepBreakdown& b) {
  const double total = b.total().value() > 0.0 ? b.total().value() : 1.0;
  out += fmt::format("\n  {} iteration: {}\n", title, duration(b.total()));
  auto row = [&](const char* name, Seconds v) {
    if (v.value() <= 0.0) return;
    out += fmt::format("    {:<22}{:>12}  {:>6}\n", name, duration(v), percent(v.value() / total));
  };
  row("weights and layer ops", b.linear);
  row("attention", b.attention);
  row("tp comm", b.tp_comm);
  row("pp comm", b.pp_comm);
  row("logits and sampling", b.output);
  row("launch and runtime", b.overhead);
}

}  // namespace

std::string inference_report_table(const Scenario& scenario, const InferencePrediction& p) {
  const ParallelConfig& par = scenario.parallel;
  const InferenceWorkload& w = scenario.inference();
  const PrecisionConfig& prec = scenario.precision;
  const int gpus = scenario.system.gpus;
  std::string out;
  out += fmt::format("{} — {} inference on {} x {}\n", scenario.name.empty() ? "scenario" : scenario.name,
                     p.serving ? "serving" : "static-batch", gpus,
                     scenario.system.gpu.display_name.empty() ? scenario.system.gpu.name : scenario.system.gpu.display_name);
  const int instance = std::max(par.tp * par.pp, 1);
  const auto& split = w.serving.disaggregation;
  const std::string instances =
      p.serving && split.enabled
          ? fmt::format("{} prefill + {} decode instances", split.prefill_gpus / instance, split.decode_gpus / instance)
          : fmt::format("{} instance{}", gpus / instance, gpus / instance == 1 ? "" : "s");
  out += fmt::format("  layout   {} of TP {} x PP {}{}   precision: GEMMs {}, weights {}, KV {}\n", instances,
                     par.tp, par.pp,
                     par.ep > 1 ? fmt::format(" (EP {})", par.ep) : std::string(), to_string(prec.compute),
                     to_string(prec.params), to_string(prec.kv_cache));
  if (p.serving) {
    const ServingWorkload& s = w.serving;
    out += fmt::format("  workload {} requests, {} arrivals{}; {} batching, max batch {}, {} tokens per iteration{}\n",
                       p.requests,
                       s.arrivals == ArrivalProcess::closed_loop
                           ? fmt::format("closed-loop ({} clients)", s.concurrency)
                           : std::string(enum_name(s.arrivals)),
                       p.arrival_rate_per_s > 0.0 ? fmt::format(" at {:.3g}/s", p.arrival_rate_per_s) : std::string(),
                       enum_name(s.scheduler), s.max_batch, s.max_batch_tokens,
                       s.chunked_prefill ? ", chunked prefill" : s.prefill_first ? ", prefill-only iterations" : "");
    // Said up front: the figures below describe only the requests that were served.
    if (p.dropped > 0) {
      out += fmt::format("  ! {} of {} requests dropped: input + output never fits one instance's KV pool{}\n",
                         p.dropped, p.requests, p.dropped == p.requests ? " (none served: every figure below is 0)" : "");
    }
  } else {
    out += fmt::format("  workload batch {}, {} prompt + {} generated tokens per sequence\n", w.batch, w.input_len,
                       w.output_len);
  }

  out += fmt::format("\n  latency {:>26}{:>11}{:>11}{:>11}\n", "mean", "p50", "p90", "p99");
  latency_row(out, "time to first token", p.ttft);
  latency_row(out, "time per output token", p.tpot);
  latency_row(out, "end to end", p.e2e);
  out += "\n";
  out += fmt::format("  output tokens/s  {:>14}   ({:.0f} per GPU)\n", fmt::format("{:.0f}", p.output_tokens_per_s),
                     gpus > 0 ? p.output_tokens_per_s / gpus : 0.0);
  out += fmt::format("  requests/s       {:>14}\n", fmt::format("{:.3g}", p.requests_per_s));
  if (p.serving) {
    const ServingWorkload& s = w.serving;
    if (s.slo.ttft.value() > 0.0 || s.slo.tpot.value() > 0.0) {
      std::string slo;
      if (s.slo.ttft.value() > 0.0) slo += "TTFT <= " + duration(s.slo.ttft);
      if (s.slo.tpot.value() > 0.0) slo += std::string(slo.empty() ? "" : ", ") + "TPOT <= " + duration(s.slo.tpot);
      out += fmt::format("  goodput          {:>14}   ({} of requests meet {})\n",
                         fmt::format("{:.3g} req/s", p.goodput_requests_per_s), percent(p.slo_attainment), slo);
    }
    out += fmt::format("  capacity         {:>14}\n", p.capacity_requests_per_s > 0.0
                                                       ? fmt::format("{:.3g} req/s", p.capacity_requests_per_s)
                                                       : std::string("not reached"));
    out += fmt::format("  batch            {:>14}   (mean sequences per iteration; {:.1f} requests in the system)\n",
                       fmt::format("{:.1f}", p.mean_batch), p.mean_requests_in_system);
    out += fmt::format("  KV occupancy     {:>14}   (peak {}){}\n", percent(p.mean_kv_occupancy),
                       percent(p.peak_kv_occupancy),
                       p.preemptions > 0 ? fmt::format(", {} preemptions", p.preemptions) : std::string());
    if (p.saturated) out += fmt::format("\n  ! {}\n", p.saturation);
    if (!p.time_series.empty()) {
      std::vector<double> queued, kv;
      for (const auto& x : p.time_series) {
        queued.push_back(x.queued);
        kv.push_back(x.kv_occupancy);
      }
      const double top_queue = *std::max_element(queued.begin(), queued.end());
      out += fmt::format("\n  over {} ({} samples)\n", duration(p.makespan), p.time_series.size());
      out += fmt::format("    queued       {}  max {:.0f}\n", sparkline(queued, 48), top_queue);
      out += fmt::format("    KV occupancy {}  max {}\n", sparkline(kv, 48), percent(p.peak_kv_occupancy));
    }
  }

  const MemoryBreakdown& m = p.memory;
  out += "\n  memory per GPU\n";
  auto memory_row = [&](const char* name, Bytes v) { out += fmt::format("    {:<22}{:>12}\n", name, gib(v)); };
  memory_row("weights", m.weights);
  memory_row(p.serving ? "KV cache (pool)" : "KV cache", m.kv_cache);
  memory_row("activations", m.activations);
  memory_row("buffers", m.buffers);
  memory_row("fragmentation", m.fragmentation);
  memory_row("peak", m.peak);
  out += fmt::format("    {:<22}{:>12}  {}\n", "GPU memory", gib(scenario.system.gpu.memory), p.fits ? "fits" : "DOES NOT FIT");
  out += fmt::format("    {:<22}{:>12}\n", "concurrent sequences", p.max_concurrent_sequences);

  step_rows(out, p.serving ? "a mean prompt's prefill" : "prefill", p.prefill_step);
  step_rows(out, "decode", p.decode_step);

  if (!p.notes.empty()) {
    out += "\n  notes\n";
    for (const auto& n : p.notes) out += fmt::format("    - {}\n", n);
  }
  return out;
}

}  // namespace stepcast
