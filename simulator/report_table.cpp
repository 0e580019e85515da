#include <fmt/format.h>

#include "simulator/report.h"

namespace stepcast {
namespace {

std::string duration(Seconds t) {
  const double s = t.value();
  if (s >= 1.0) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}
std::string gib(Bytes b) { return fmt::format("{:.2f} GiB", b.value() / (1024.0 * 1024.0 * 1024.0)); }
std::string percent(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }

}  // namespace

std::string training_report_table(const Scenario& scenario, const TrainingPrediction& p) {
  const ParallelConfig& par = scenario.parallel;
  const TrainingWorkload& w = scenario.training();
  std::string out;
  out += fmt::format("{} — training step on {} x {}\n", scenario.name.empty() ? "scenario" : scenario.name,
                     par.world_size(), scenario.system.gpu.display_name.empty() ? scenario.system.gpu.name
                                                                                : scenario.system.gpu.display_name);
  out += fmt::format("  layout   TP {}  PP {}{}  DP {}  CP {}  micro-batch {}  global batch {}  ({} micro-batches)\n",
                     par.tp, par.pp, par.vpp > 1 ? fmt::format(" x {} chunks", par.vpp) : std::string(), par.dp, par.cp,
                     w.micro_batch, w.global_batch, par.dp * w.micro_batch > 0 ? w.global_batch / (par.dp * w.micro_batch) : 0);
  out += "\n";
  out += fmt::format("  step time        {:>14}\n", duration(p.step_time));
  out += fmt::format("  throughput       {:>14}\n", fmt::format("{:.0f} tokens/s", p.tokens_per_s));
  out += fmt::format("  MFU / HFU        {:>14}\n", fmt::format("{} / {}", percent(p.mfu), percent(p.hfu)));
  out += "\n  time per step (critical stage)\n";
  const TimeBreakdown& t = p.time;
  const double step = p.step_time.value() > 0.0 ? p.step_time.value() : 1.0;
  auto time_row = [&](const char* name, Seconds v) {
    if (v.value() <= 0.0 && std::string_view(name) != "compute") return;
    out += fmt::format("    {:<22}{:>12}  {:>6}\n", name, duration(v), percent(v.value() / step));
  };
  time_row("compute", t.compute);
  time_row("recompute", t.recompute);
  time_row("tp comm (exposed)", t.tp_comm_exposed);
  time_row("cp comm (exposed)", t.cp_comm_exposed);
  time_row("ep comm (exposed)", t.ep_comm_exposed);
  time_row("pipeline bubble", t.pp_bubble);
  time_row("pp comm (exposed)", t.pp_comm_exposed);
  time_row("dp comm (exposed)", t.dp_comm_exposed);
  time_row("optimizer", t.optimizer);
  time_row("offload (exposed)", t.offload_exposed);
  time_row("MTP module", t.mtp);
  time_row("other", t.other);
  out += fmt::format("\n  memory per GPU (stage {} of {}, the peak)\n", p.peak_stage, p.per_stage.size());
  const MemoryBreakdown& m = p.memory;
  auto memory_row = [&](const char* name, Bytes v) { out += fmt::format("    {:<22}{:>12}\n", name, gib(v)); };
  memory_row("weights", m.weights);
  memory_row("gradients", m.gradients);
  memory_row("optimizer states", m.optimizer_states);
  memory_row("activations", m.activations);
  memory_row("buffers", m.buffers);
  memory_row("fragmentation", m.fragmentation);
  memory_row("peak", m.peak);
  out += fmt::format("    {:<22}{:>12}  {}\n", "GPU memory", gib(scenario.system.gpu.memory),
                     p.fits ? "fits" : "DOES NOT FIT");
  if (p.host_memory.value() > 0.0) out += fmt::format("    {:<22}{:>12}\n", "host memory (offload)", gib(p.host_memory));
  if (w.goodput != TrainingWorkload::Goodput{}) {
    const GoodputEstimate& g = p.goodput;
    out += "\n  goodput (per day)\n";
    out += fmt::format("    {:<22}{:>12}\n", "ideal", fmt::format("{:.3g} tokens", g.ideal_tokens_per_day));
    out += fmt::format("    {:<22}{:>12}  {:>6}\n", "expected", fmt::format("{:.3g} tokens", g.effective_tokens_per_day),
                       percent(g.goodput_fraction));
    if (g.data_wait.value() > 0.0) out += fmt::format("    {:<22}{:>12}\n", "data-loader wait/step", duration(g.data_wait));
    if (g.straggler_delay.value() > 0.0) out += fmt::format("    {:<22}{:>12}\n", "straggler delay/step", duration(g.straggler_delay));
    if (g.checkpoint_save.value() > 0.0) {
      out += fmt::format("    {:<22}{:>12}  {:>6}\n", "checkpoint save", duration(g.checkpoint_save), percent(g.checkpoint_waste));
    }
    if (g.failures_per_day > 0.0) {
      out += fmt::format("    {:<22}{:>12}  {:>6}\n", "failures", fmt::format("{:.2f}/day", g.failures_per_day), percent(g.failure_waste));
    }
    if (g.optimal_checkpoint_interval.value() > 0.0) {
      out += fmt::format("    {:<22}{:>12}\n", "best ckpt interval", duration(g.optimal_checkpoint_interval));
    }
  }
  if (!p.placement.empty()) {
    out += "\n  placement\n";
    for (const auto& g : p.placement) out += fmt::format("    {:<4}{:>5}  {}\n", g.group, g.size, g.description);
  }
  if (!p.notes.empty()) {
    out += "\n  notes\n";
    for (const auto& n : p.notes) out += fmt::format("    - {}\n", n);
  }
  return out;
}

}  // namespace stepcast
