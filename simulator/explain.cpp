#include "simulator/explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "model/placement.h"
#include "simulator/enum_names.h"
#include "simulator/explain_edits.h"
#include "simulator/scenario_checks.h"
#include "simulator/training_predictor.h"

namespace stepcast {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Below this share of the step, no single overhead is called the bottleneck: the step is compute-bound.
constexpr double kOverheadWorthNaming = 0.10;

std::string str(long long v) { return std::to_string(v); }

struct Components {
  const char* key;
  const char* name;
  Seconds TimeBreakdown::*member;
};

constexpr Components kComponents[] = {
    {"compute", "compute", &TimeBreakdown::compute},
    {"recompute", "recomputation", &TimeBreakdown::recompute},
    {"tp_comm_exposed", "tensor-parallel communication (exposed)", &TimeBreakdown::tp_comm_exposed},
    {"cp_comm_exposed", "context-parallel K/V exchange (exposed)", &TimeBreakdown::cp_comm_exposed},
    {"ep_comm_exposed", "MoE all-to-all dispatch and combine (exposed)", &TimeBreakdown::ep_comm_exposed},
    {"pp_bubble", "pipeline bubble", &TimeBreakdown::pp_bubble},
    {"pp_comm_exposed", "pipeline transfers (exposed)", &TimeBreakdown::pp_comm_exposed},
    {"dp_comm_exposed", "data-parallel communication (exposed)", &TimeBreakdown::dp_comm_exposed},
    {"optimizer", "optimizer step", &TimeBreakdown::optimizer},
    {"offload_exposed", "offload transfers (exposed)", &TimeBreakdown::offload_exposed},
    {"mtp", "multi-token prediction module (its ops, block and head)", &TimeBreakdown::mtp},
    {"other", "fixed per-step overhead", &TimeBreakdown::other},
};


std::string seconds_text(Seconds t) {
  const double s = t.value();
  if (std::abs(s) >= 1.0) return fmt::format("{:.3f} s", s);
  if (std::abs(s) >= 1e-3) return fmt::format("{:.1f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}

// The busiest stage of a pipelined prediction against its critical stage (the one `time`
// describes), by their forward and backward time; empty without two stages.
struct StageGap {
  std::size_t busiest = 0;
  std::size_t critical = 0;
  Seconds gap;  // busiest's passes beyond critical's
};

std::optional<StageGap> stage_gap(const TrainingPrediction& p) {
  const auto& busy = p.per_stage_busy;
  if (busy.size() < 2) return std::nullopt;
  StageGap g;
  g.busiest = static_cast<std::size_t>(std::max_element(busy.begin(), busy.end()) - busy.begin());
  g.critical = static_cast<std::size_t>(std::clamp(p.critical_stage, 0, static_cast<int>(busy.size()) - 1));
  g.gap = busy[g.busiest] - busy[g.critical];
  return g;
}

// When the stages carry unequal work, the others wait for the busiest one at every micro-batch:
// names it, what it holds, and its work against the critical stage's. Empty when the busiest
// stage's work exceeds the critical stage's by less than kImbalanceWorthNaming of the step.
constexpr double kImbalanceWorthNaming = 0.05;

std::string stage_imbalance_words(const Scenario& sc, const TrainingPrediction& p) {
  const auto g = stage_gap(p);
  if (!g || p.per_stage_layers.size() != p.per_stage_busy.size()) return {};
  if (g->gap.value() < kImbalanceWorthNaming * p.step_time.value()) return {};
  const auto& busy = p.per_stage_busy;
  const std::size_t last = busy.size() - 1;
  const std::string holds =
      g->busiest == last ? fmt::format("{} layers and the output layer ({}-token logits) with the loss{}",
                                       p.per_stage_layers[g->busiest], sc.model.vocab,
                                       sc.model.mtp_depth > 0
                                           ? fmt::format(", and {} multi-token-prediction module(s) (a layer, the "
                                                         "projection and the head each)",
                                                         sc.model.mtp_depth)
                                           : std::string())
      : g->busiest == 0 ? fmt::format("{} layers and the embedding", p.per_stage_layers[g->busiest])
                        : fmt::format("{} layers", p.per_stage_layers[g->busiest]);
  return fmt::format("stage {} ({}) runs {} of forward and backward passes per step, stage {} ({} layers) {}; the others "
                     "wait for it at every micro-batch",
                     g->busiest, holds, seconds_text(busy[g->busiest]), g->critical, p.per_stage_layers[g->critical],
                     seconds_text(busy[g->critical]));
}

// The busiest stage's work beyond the critical stage's, as a share of the critical stage's bubble.
double imbalance_share(const TrainingPrediction& p) {
  const auto g = stage_gap(p);
  if (!g || !(p.time.pp_bubble.value() > 0.0)) return 0.0;
  return g->gap / p.time.pp_bubble;
}

// `host_wait`: the part of the step's compute spent waiting for the host to launch kernels (the
// compute with the host's dispatch time, CostParameters::host_dispatch_s, minus the compute
// without it).
std::string bottleneck_words(const std::string& key, const Scenario& sc, const TrainingPrediction& p,
                             Seconds host_wait) {
  const ParallelConfig& par = sc.parallel;
  const TrainingWorkload& t = sc.training();
  const int m = t.global_batch / std::max(par.dp * t.micro_batch, 1);
  if (key == "memory") {
    return fmt::format("memory: the layout needs {:.1f} GiB per GPU on pipeline stage {}, the GPU has {:.1f} GiB",
                       p.memory.peak.value() / kGiB, p.peak_stage, sc.system.gpu.memory.value() / kGiB);
  }
  if (key == "pp_bubble") {
    const int v = par.pp > 1 ? par.vpp : 1;
    const std::string fill = fmt::format("(p-1)/(v m) = {}/({}*{}) = {:.1f}% of the ideal with {} micro-batches of {} per step",
                                         par.pp - 1, v, m, 100.0 * (par.pp - 1) / (v * static_cast<double>(m)), m,
                                         t.micro_batch);
    const std::string imbalance = stage_imbalance_words(sc, p);
    if (!imbalance.empty()) {
      return fmt::format("the pipeline bubble, {} stage imbalance: {}; filling and draining alone is {}",
                         imbalance_share(p) >= 0.5 ? "mostly" : "partly", imbalance, fill);
    }
    return fmt::format("the pipeline bubble: stages idle while {} stages fill and drain; {}", par.pp, fill);
  }
  if (key == "tp_comm_exposed") {
    return fmt::format("tensor-parallel communication on the critical path: per layer, two {} forward and two backward over TP {}",
                       par.sequence_parallel ? "all-gather/reduce-scatter pairs" : "all-reduces", par.tp);
  }
  if (key == "dp_comm_exposed") {
    return fmt::format("data-parallel communication not hidden by compute: gradient {} over DP {}{}",
                       par.zero >= 1 ? "reduce-scatter" : "all-reduce", par.dp,
                       par.zero >= 1 ? " and parameter all-gathers (ZeRO-" + str(par.zero) + ")" : "");
  }
  if (key == "ep_comm_exposed") {
    return fmt::format("{} on the critical path: per MoE layer a dispatch and a combine over EP {} in the forward "
                       "and again in the backward{}{}",
                       is_flex_dispatcher(par.ep_dispatcher)
                           ? "MoE DeepEP/HybridEP exchanges (each token once per destination NVLink domain, then NVLink)"
                           : "MoE all-to-alls",
                       par.ep, par.expert_tensor_parallel() > 1 ? fmt::format(", with expert-TP {} gathers and scatters",
                                                                              par.expert_tensor_parallel())
                                                                : std::string(),
                       par.ep_comm_overlap ? ", beyond what the paired micro-batch's compute nodes hide (and whole in the "
                                                "warm-up forwards and cool-down backwards, which run alone)"
                                              : ", not overlapped");
  }
  if (key == "cp_comm_exposed") {
    return fmt::format("the context-parallel K/V exchange ({}) over CP {} not hidden by attention", enum_name(par.cp_kind),
                       par.cp);
  }
  if (key == "pp_comm_exposed") return fmt::format("activation transfers between {} pipeline stages not hidden by compute", par.pp);
  if (key == "recompute") {
    return fmt::format("activation recomputation ({}) re-runs forward work before each backward", enum_name(par.recompute));
  }
  if (key == "mtp") {
    return fmt::format("the {} multi-token-prediction module(s) on the last pipeline stage: per micro-batch each runs its "
                       "embedding lookup, norms and 2h -> h projection, one more decoder block and the output head with "
                       "its loss again, forward and backward",
                       sc.model.mtp_depth);
  }
  if (key == "optimizer") return "the optimizer step: memory-bound Adam over each stage's parameter shard";
  if (key == "offload_exposed") {
    std::vector<std::string> parts;
    if (par.activation_offload_layers > 0) {
      parts.push_back(fmt::format("the saved activations of the first {} of {} layers, copied to host memory after each "
                                  "forward and back before each backward (Transformer Engine's CPU offload keeps {} {} worth on "
                                  "the GPU, which bounds how far the copies can run behind)",
                                  par.activation_offload_layers, sc.model.layers,
                                  sc.model.layers - par.activation_offload_layers,
                                  sc.model.layers - par.activation_offload_layers == 1 ? "layer's" : "layers'"));
    }
    if (par.offload == Offload::optimizer_and_params) parts.emplace_back("each layer's parameters fetched before its forward and backward");
    if (par.offload != Offload::none) parts.emplace_back("the CPU optimizer step's gradient and weight traffic");
    std::string what;
    for (std::size_t i = 0; i < parts.size(); ++i) what += (i == 0 ? "" : "; and ") + parts[i];
    return fmt::format("host-link transfers not hidden by compute, over {} ({:.0f} GB/s per direction): {}",
                       host_link_is_c2c(sc.system.gpu.host_bandwidth) ? "NVLink-C2C" : "PCIe",
                       sc.system.gpu.host_bandwidth.value() / 1e9, what);
  }
  if (key == "other") return "the fixed per-step overhead (data loading, logging, the training loop)";
  const double host_share = host_wait.value() / p.step_time.value();
  if (host_share >= kOverheadWorthNaming) {
    return fmt::format("compute bounded by the host: for {:.1f}% of the step the GPU waits while the CPU launches kernels "
                       "through Transformer Engine modules{}; the model's own GEMMs and attention run at {:.1f}% MFU",
                       100.0 * host_share,
                       sc.model.is_moe() && sc.parallel.ep > 1
                           ? " (each MoE forward synchronizes with the host before its all-to-all)"
                           : "",
                       100.0 * p.mfu);
  }
  return fmt::format("compute: the model's own GEMMs and attention, at {:.1f}% MFU; nothing else takes a tenth of the step",
                     100.0 * p.mfu);
}

}  // namespace

Explanation explain_training(const Scenario& scenario, const ExplainOptions& options) {
  const CollectiveMaker maker =
      options.collectives ? options.collectives : named_collective_maker(std::string(default_collective_model()));
  Explanation out;
  TrainingPredictor predictor(options.parameters);
  const auto net = maker(scenario.system, options.parameters);
  if (options.kernels) {
    out.kernels = predictor.step_kernels(scenario, *net);
    out.base = out.kernels->prediction;
  } else {
    out.base = predictor.predict(scenario, *net);
  }
  const TrainingPrediction& base = out.base;
  const double step = base.step_time.value();

  // --- Components and the bottleneck ----------------------------------------------------------
  for (const Components& c : kComponents) {
    const Seconds t = base.time.*(c.member);
    if (t.value() > 0.0) out.components.push_back({c.key, c.name, t, t.value() / step});
  }
  std::stable_sort(out.components.begin(), out.components.end(),
                   [](const ExplainComponent& a, const ExplainComponent& b) { return a.time > b.time; });
  out.bottleneck = "compute";
  if (!base.fits) {
    out.bottleneck = "memory";
  } else {
    for (const ExplainComponent& c : out.components) {
      if (c.key != "compute" && c.share >= kOverheadWorthNaming) {
        out.bottleneck = c.key;
        break;
      }
    }
  }
  Seconds host_wait(0.0);
  if (out.bottleneck == "compute") {
    CostParameters no_host = options.parameters;
    no_host.host_dispatch_s = 0.0;
    TrainingPredictor gpu_only(no_host);
    host_wait = max(base.time.compute - gpu_only.predict(scenario, *net).time.compute, Seconds(0.0));
  }
  out.bottleneck_text = bottleneck_words(out.bottleneck, scenario, base, host_wait);
  for (const GroupPlacement& g : base.placement) {
    out.placement.push_back(fmt::format("{} {}: {}", g.group, g.size, g.description));
  }

  // --- Changes, each predicted ----------------------------------------------------------------
  for (ExplainEdit& e : candidate_edits(scenario)) {
    Scenario changed = scenario;
    bool applied = true;
    for (const Override& o : e.overrides) applied = applied && apply_edit(changed, o);
    if (!applied || !recheck_scenario(changed, true).empty()) continue;
    ExplainChange c;
    c.title = std::move(e.title);
    c.why = std::move(e.why);
    c.overrides = std::move(e.overrides);
    const auto changed_net = changed.system == scenario.system ? nullptr : maker(changed.system, options.parameters);
    c.prediction = predictor.predict(changed, changed_net ? *changed_net : *net);
    c.saved = base.step_time - c.prediction.step_time;
    c.fits = c.prediction.fits;
    if (!c.fits && c.saved.value() > 0.0) {
      out.no_fit.push_back(std::move(c));
    } else {
      out.changes.push_back(std::move(c));
    }
  }
  const auto by_saving = [](const ExplainChange& a, const ExplainChange& b) { return a.saved > b.saved; };
  std::stable_sort(out.changes.begin(), out.changes.end(), by_saving);
  std::stable_sort(out.no_fit.begin(), out.no_fit.end(), by_saving);

  // --- Sensitivity: +-10% on hardware figures and cost constants ----------------------------------
  if (!options.sensitivity) return out;
  const double d = options.perturbation;
  const auto predict_with = [&](const Scenario& sc, const CostParameters& params) {
    TrainingPredictor p(params);
    const auto n = maker(sc.system, params);
    TrainingPredictorOptions quiet;
    quiet.describe_placement = false;
    return p.predict(sc, *n, quiet);
  };
  const auto hardware = [&](const std::string& name, const std::string& source, double value, auto&& set) {
    SensitivityRow row{name, source, value, {}, {}, {}, {}};
    for (int sign : {-1, 1}) {
      Scenario sc = scenario;
      set(sc, 1.0 + sign * d);
      const TrainingPrediction p = predict_with(sc, options.parameters);
      (sign < 0 ? row.step_minus : row.step_plus) = p.step_time;
      (sign < 0 ? row.peak_minus : row.peak_plus) = p.memory.peak;
    }
    out.sensitivity.push_back(std::move(row));
  };
  const GpuSpec& gpu = scenario.system.gpu;
  const DataType compute = scenario.precision.compute;
  hardware("gpu.dense_peak." + std::string(to_string(compute)), "catalog: " + gpu.name, gpu.peak(compute).value(),
           [&](Scenario& sc, double f) { sc.system.gpu.dense_peak[index_of(compute)] *= f; });
  // NVFP4 GEMMs on a part with a measured speed run off its FP8 peak times that ratio
  // (model/op_time.h gemm_peak), not the NVFP4 peak above: the ratio is the figure that moves them.
  if (compute == DataType::nvfp4 && gpu.nvfp4_gemm_over_fp8 > 0.0) {
    hardware("gpu.nvfp4_gemm_over_fp8", "catalog: " + gpu.name, gpu.nvfp4_gemm_over_fp8,
             [](Scenario& sc, double f) { sc.system.gpu.nvfp4_gemm_over_fp8 *= f; });
  }
  hardware("gpu.memory_bandwidth", "catalog: " + gpu.name, gpu.memory_bandwidth.value(),
           [](Scenario& sc, double f) { sc.system.gpu.memory_bandwidth *= f; });
  hardware("system.intra_node_bandwidth (NVLink)", "catalog: " + scenario.system.name,
           scenario.system.intra_node_bandwidth.value(), [](Scenario& sc, double f) {
             sc.system.intra_node_bandwidth *= f;
             sc.system.gpu.nvlink_bandwidth *= f;
           });
  hardware("system.intra_node_latency", "catalog: " + scenario.system.name, scenario.system.intra_node_latency.value(),
           [](Scenario& sc, double f) { sc.system.intra_node_latency *= f; });
  if (scenario.system.nodes() > 1) {
    hardware("system.network.nic_bandwidth", "catalog: " + scenario.system.name,
             scenario.system.network.nic_bandwidth.value(),
             [](Scenario& sc, double f) { sc.system.network.nic_bandwidth *= f; });
    hardware("system.network.nic_latency", "catalog: " + scenario.system.name, scenario.system.network.nic_latency.value(),
             [](Scenario& sc, double f) { sc.system.network.nic_latency *= f; });
  }
  CostParameters names = options.parameters;
  names.for_each_constant([&](std::string_view name, double& value, std::string_view source) {
    SensitivityRow row{std::string(name), std::string(source), value, {}, {}, {}, {}};
    const double original = value;
    for (int sign : {-1, 1}) {
      value = original * (1.0 + sign * d);
      const TrainingPrediction p = predict_with(scenario, names);
      (sign < 0 ? row.step_minus : row.step_plus) = p.step_time;
      (sign < 0 ? row.peak_minus : row.peak_plus) = p.memory.peak;
    }
    value = original;
    out.sensitivity.push_back(std::move(row));
  });
  std::stable_sort(out.sensitivity.begin(), out.sensitivity.end(), [](const SensitivityRow& a, const SensitivityRow& b) {
    if (a.swing() != b.swing()) return a.swing() > b.swing();
    return std::abs(a.peak_plus.value() - a.peak_minus.value()) > std::abs(b.peak_plus.value() - b.peak_minus.value());
  });
  return out;
}

namespace {
// The command-line flags that apply a change: "--set key=value --set ...".
std::string set_flags(const std::vector<Override>& overrides) {
  std::string flags;
  for (const Override& o : overrides) flags += (flags.empty() ? "" : " ") + ("--set " + o.key_path + "=" + o.value);
  return flags;
}
}  // namespace

std::string explanation_text(const Scenario& sc, const Explanation& e, std::size_t max_changes, std::size_t max_sensitivity) {
  const TrainingPrediction& p = e.base;
  const ParallelConfig& par = sc.parallel;
  const TrainingWorkload& t = sc.training();
  const double step = p.step_time.value();
  std::string out;
  out += fmt::format("{}: {} x {}, TP {} PP {}{} DP {}{}, micro-batch {} of global batch {}{}\n", sc.name, sc.system.gpus,
                     sc.system.gpu.name, par.tp, par.pp, par.vpp > 1 ? fmt::format(" (x{} chunks)", par.vpp) : "", par.dp,
                     par.cp > 1 ? fmt::format(" CP {}", par.cp) : "", t.micro_batch, t.global_batch,
                     par.cuda_graphs == CudaGraphs::full_iteration ? ", replayed as a full-iteration CUDA graph" : "");
  out += fmt::format("  step {}  {:.0f} tokens/s  MFU {:.1f}%  peak memory {:.1f} GiB of {:.1f} GiB{}\n", seconds_text(p.step_time),
                     p.tokens_per_s, 100.0 * p.mfu, p.memory.peak.value() / kGiB, sc.system.gpu.memory.value() / kGiB,
                     p.fits ? "" : "  DOES NOT FIT");
  out += fmt::format("\nBottleneck: {}.\n", e.bottleneck_text);

  out += "\nWhere the time goes (critical pipeline stage):\n";
  for (const ExplainComponent& c : e.components) {
    out += fmt::format("  {:<44}{:>11}  {:5.1f}%\n", c.name, seconds_text(c.time), 100.0 * c.share);
  }
  out += fmt::format("\nWhere the memory goes (per GPU, pipeline stage {}):\n", p.peak_stage);
  const MemoryBreakdown& m = p.memory;
  const std::pair<const char*, Bytes> memory[] = {{"weights", m.weights},           {"gradients", m.gradients},
                                                  {"optimizer states", m.optimizer_states}, {"activations", m.activations},
                                                  {"buffers", m.buffers},           {"fragmentation", m.fragmentation}};
  for (const auto& [name, bytes] : memory) {
    out += fmt::format("  {:<44}{:>8.2f} GiB  {:5.1f}%\n", name, bytes.value() / kGiB, 100.0 * (bytes / m.peak));
  }
  if (p.activation_offloaded.value() > 0.0) {
    out += fmt::format("  {:<44}{:>8.2f} GiB  (off the GPU, not in the peak)\n",
                       fmt::format("activations offloaded ({} of {} layers)", sc.parallel.activation_offload_layers,
                                   sc.model.layers),
                       p.activation_offloaded.value() / kGiB);
  }
  if (p.host_memory.value() > 0.0) {
    out += fmt::format("  {:<44}{:>8.2f} GiB\n", "host memory per GPU (offload)", p.host_memory.value() / kGiB);
  }
  if (!e.placement.empty()) {
    out += "\nPlacement:\n";
    for (const auto& line : e.placement) out += "  " + line + "\n";
  }

  out += "\nChanges, each predicted (step time saved; faster first):\n";
  std::size_t shown = 0;
  std::size_t slower = 0;
  for (const ExplainChange& c : e.changes) {
    if (c.saved.value() <= 0.0) {
      ++slower;
      continue;
    }
    if (shown++ == max_changes) break;
    out += fmt::format("  {:>2}. {:<58} {:>10} ({:4.1f}%) -> {}, {:.1f} GiB\n      {}\n      {}\n", shown, c.title,
                       "-" + seconds_text(c.saved), 100.0 * c.saved.value() / step, seconds_text(c.prediction.step_time),
                       c.prediction.memory.peak.value() / kGiB, c.why, set_flags(c.overrides));
  }
  if (shown == 0) out += "  none of the changes tried is faster\n";
  if (slower > 0) out += fmt::format("  ({} other changes tried are slower or no faster)\n", slower);
  if (!p.fits) {
    // The layout cannot run as it is: what would let it run matters more than what is faster.
    std::vector<const ExplainChange*> fitting;
    for (const ExplainChange& c : e.changes) {
      if (c.fits) fitting.push_back(&c);
    }
    out += "Changes that make it fit in memory (least slowdown first):\n";
    if (fitting.empty()) out += "  none of the changes tried fits\n";
    for (std::size_t i = 0; i < fitting.size() && i < 5; ++i) {
      const ExplainChange& c = *fitting[i];
      double slowdown = -100.0 * c.saved.value() / step;
      if (std::abs(slowdown) < 0.05) slowdown = 0.0;  // no "-0.0%"
      out += fmt::format("  - {} -> {} ({:+.1f}%), {:.1f} GiB\n      {}\n", c.title, seconds_text(c.prediction.step_time),
                         slowdown, c.prediction.memory.peak.value() / kGiB, set_flags(c.overrides));
    }
  }
  if (!e.no_fit.empty()) {
    out += "Faster but do not fit in memory:\n";
    for (std::size_t i = 0; i < e.no_fit.size() && i < 3; ++i) {
      const ExplainChange& c = e.no_fit[i];
      out += fmt::format("  - {} ({} faster, needs {:.1f} GiB)\n", c.title, seconds_text(c.saved),
                         c.prediction.memory.peak.value() / kGiB);
    }
  }

  if (!e.sensitivity.empty()) {
    out += "\nSensitivity: step time with each figure at -10% and +10% (largest swing first):\n";
    out += fmt::format("  {:<42} {:>11} {:>11} {:>8}  {}\n", "figure", "-10%", "+10%", "swing", "memory -10%/+10%");
    for (std::size_t i = 0; i < e.sensitivity.size() && i < max_sensitivity; ++i) {
      const SensitivityRow& r = e.sensitivity[i];
      const double dm = (r.step_minus.value() - step) / step;
      const double dp = (r.step_plus.value() - step) / step;
      const bool memory_moves = r.peak_minus != p.memory.peak || r.peak_plus != p.memory.peak;
      out += fmt::format("  {:<42} {:>+10.2f}% {:>+10.2f}% {:>7.2f}%  {}\n", r.name, 100.0 * dm, 100.0 * dp,
                         100.0 * r.swing() / step,
                         memory_moves ? fmt::format("{:+.2f}/{:+.2f} GiB", (r.peak_minus - p.memory.peak).value() / kGiB,
                                                    (r.peak_plus - p.memory.peak).value() / kGiB)
                                      : std::string("-"));
    }
    std::size_t flat = 0;
    for (const SensitivityRow& r : e.sensitivity) flat += r.swing() == 0.0 ? 1 : 0;
    if (flat > 0) out += fmt::format("  ({} figures leave the step time unchanged)\n", flat);
  }
  for (const auto& note : p.notes) out += "note: " + note + "\n";
  return out;
}

}  // namespace stepcast
