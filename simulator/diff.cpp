#include "simulator/diff.h"

#include <fmt/format.h>

#include <functional>

#include "simulator/enum_names.h"
#include "simulator/scenario_checks.h"
#include "simulator/training_predictor.h"

namespace stepcast {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string seconds_text(Seconds t) {
  const double s = t.value();
  if (std::abs(s) >= 1.0) return fmt::format("{:+.3f} s", s);
  if (std::abs(s) >= 1e-3) return fmt::format("{:+.1f} ms", s * 1e3);
  return fmt::format("{:+.1f} us", s * 1e6);
}

template <class T>
void change(std::vector<std::string>& parts, const char* name, const T& from, const T& to) {
  if (from != to) parts.push_back(fmt::format("{} {} -> {}", name, from, to));
}

// One group of keys turned from A's values to B's.
struct Group {
  const char* name;
  std::function<void(Scenario& dst, const Scenario& b)> copy;
  std::function<std::vector<std::string>(const Scenario& from, const Scenario& to)> describe;
};

std::vector<Group> groups() {
  std::vector<Group> g;
  g.push_back({"model", [](Scenario& d, const Scenario& b) { d.model = b.model; },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 if (x.model == y.model) return p;
                 if (x.model.name != y.model.name) p.push_back(x.model.name + " -> " + y.model.name);
                 change(p, "layers", x.model.layers, y.model.layers);
                 change(p, "hidden", x.model.hidden, y.model.hidden);
                 change(p, "heads", x.model.heads, y.model.heads);
                 change(p, "kv_heads", x.model.kv_heads, y.model.kv_heads);
                 change(p, "ffn_hidden", x.model.ffn_hidden, y.model.ffn_hidden);
                 change(p, "vocab", x.model.vocab, y.model.vocab);
                 if (p.empty()) p.emplace_back("other model fields");
                 return p;
               }});
  g.push_back({"system", [](Scenario& d, const Scenario& b) { d.system = b.system; },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 if (x.system == y.system) return p;
                 if (x.system.gpu.name != y.system.gpu.name) p.push_back("GPU " + x.system.gpu.name + " -> " + y.system.gpu.name);
                 if (x.system.name != y.system.name) p.push_back("system " + x.system.name + " -> " + y.system.name);
                 change(p, "gpus", x.system.gpus, y.system.gpus);
                 if (!(x.system.network == y.system.network)) p.emplace_back("network");
                 if (p.empty()) p.emplace_back("other system figures");
                 return p;
               }});
  g.push_back({"precision", [](Scenario& d, const Scenario& b) { d.precision = b.precision; },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 if (x.precision == y.precision) return p;
                 p.push_back(fmt::format("compute {} -> {}", to_string(x.precision.compute), to_string(y.precision.compute)));
                 return p;
               }});
  g.push_back({"sequence length",
               [](Scenario& d, const Scenario& b) { std::get<TrainingWorkload>(d.workload).seq_len = b.training().seq_len; },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 change(p, "seq_len", x.training().seq_len, y.training().seq_len);
                 return p;
               }});
  g.push_back({"global batch",
               [](Scenario& d, const Scenario& b) {
                 std::get<TrainingWorkload>(d.workload).global_batch = b.training().global_batch;
               },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 change(p, "global_batch", x.training().global_batch, y.training().global_batch);
                 return p;
               }});
  g.push_back({"parallel layout",
               [](Scenario& d, const Scenario& b) {
                 ParallelConfig& p = d.parallel;
                 const ParallelConfig& q = b.parallel;
                 p.tp = q.tp;
                 p.pp = q.pp;
                 p.dp = q.dp;
                 p.cp = q.cp;
                 p.ep = q.ep;
                 p.expert_tp = q.expert_tp;
                 p.vpp = q.vpp;
                 p.first_stage_layers = q.first_stage_layers;
                 p.last_stage_layers = q.last_stage_layers;
                 p.order = q.order;
               },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 const ParallelConfig& a = x.parallel;
                 const ParallelConfig& b = y.parallel;
                 change(p, "tp", a.tp, b.tp);
                 change(p, "pp", a.pp, b.pp);
                 change(p, "dp", a.dp, b.dp);
                 change(p, "cp", a.cp, b.cp);
                 change(p, "ep", a.ep, b.ep);
                 change(p, "expert_tp", a.expert_tp, b.expert_tp);
                 change(p, "vpp", a.vpp, b.vpp);
                 change(p, "first_stage_layers", a.first_stage_layers, b.first_stage_layers);
                 change(p, "last_stage_layers", a.last_stage_layers, b.last_stage_layers);
                 change(p, "order", a.order, b.order);
                 return p;
               }});
  g.push_back({"micro-batch",
               [](Scenario& d, const Scenario& b) {
                 std::get<TrainingWorkload>(d.workload).micro_batch = b.training().micro_batch;
               },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 change(p, "micro_batch", x.training().micro_batch, y.training().micro_batch);
                 return p;
               }});
  g.push_back({"recompute",
               [](Scenario& d, const Scenario& b) {
                 d.parallel.recompute = b.parallel.recompute;
                 d.parallel.recompute_modules = b.parallel.recompute_modules;
                 d.parallel.checkpoint = b.parallel.checkpoint;
               },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 change(p, "recompute", enum_name(x.parallel.recompute), enum_name(y.parallel.recompute));
                 change(p, "checkpoint", enum_name(x.parallel.checkpoint), enum_name(y.parallel.checkpoint));
                 change(p, "recompute_modules", recompute_modules_text(x.parallel.recompute_modules),
                        recompute_modules_text(y.parallel.recompute_modules));
                 return p;
               }});
  g.push_back({"ZeRO", [](Scenario& d, const Scenario& b) {
                 d.parallel.zero = b.parallel.zero;
                 d.parallel.fsdp = b.parallel.fsdp;
               },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 change(p, "zero", x.parallel.zero, y.parallel.zero);
                 change(p, "fsdp", enum_name(x.parallel.fsdp), enum_name(y.parallel.fsdp));
                 return p;
               }});
  g.push_back({"sequence parallelism",
               [](Scenario& d, const Scenario& b) { d.parallel.sequence_parallel = b.parallel.sequence_parallel; },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 change(p, "sequence_parallel", x.parallel.sequence_parallel, y.parallel.sequence_parallel);
                 return p;
               }});
  g.push_back({"schedule", [](Scenario& d, const Scenario& b) { d.parallel.schedule = b.parallel.schedule; },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 change(p, "schedule", enum_name(x.parallel.schedule), enum_name(y.parallel.schedule));
                 return p;
               }});
  g.push_back({"overlap flags",
               [](Scenario& d, const Scenario& b) {
                 d.parallel.tp_comm_overlap = b.parallel.tp_comm_overlap;
                 d.parallel.overlap_grad_reduce = b.parallel.overlap_grad_reduce;
                 d.parallel.overlap_param_gather = b.parallel.overlap_param_gather;
               },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 change(p, "tp_comm_overlap", x.parallel.tp_comm_overlap, y.parallel.tp_comm_overlap);
                 change(p, "overlap_grad_reduce", x.parallel.overlap_grad_reduce, y.parallel.overlap_grad_reduce);
                 change(p, "overlap_param_gather", x.parallel.overlap_param_gather, y.parallel.overlap_param_gather);
                 return p;
               }});
  g.push_back({"expert GEMMs",
               [](Scenario& d, const Scenario& b) { d.parallel.moe_grouped_gemm = b.parallel.moe_grouped_gemm; },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 change(p, "moe_grouped_gemm", enum_name(x.parallel.moe_grouped_gemm),
                        enum_name(y.parallel.moe_grouped_gemm));
                 return p;
               }});
  g.push_back({"attention kernel",
               [](Scenario& d, const Scenario& b) {
                 std::get<TrainingWorkload>(d.workload).attention_kernel = b.training().attention_kernel;
               },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 change(p, "attention_kernel", enum_name(x.training().attention_kernel),
                        enum_name(y.training().attention_kernel));
                 return p;
               }});
  g.push_back({"packed documents",
               [](Scenario& d, const Scenario& b) {
                 std::get<TrainingWorkload>(d.workload).document_tokens = b.training().document_tokens;
               },
               [](const Scenario& x, const Scenario& y) {
                 std::vector<std::string> p;
                 change(p, "document_tokens", x.training().document_tokens, y.training().document_tokens);
                 return p;
               }});
  g.push_back({"everything else",
               [](Scenario& d, const Scenario& b) {
                 const std::string name = d.name;
                 const std::string source = d.source;
                 d = b;
                 d.name = name;
                 d.source = source;
               },
               [](const Scenario& x, const Scenario& y) {
                 Scenario a = x;
                 a.name = y.name;
                 a.source = y.source;
                 std::vector<std::string> p;
                 if (!(a == y)) p.emplace_back("other keys");
                 return p;
               }});
  return g;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

ScenarioDiff diff_training(const Scenario& a, const Scenario& b, const CostParameters& parameters,
                           const CollectiveMaker& collectives) {
  const CollectiveMaker maker = collectives ? collectives : named_collective_maker(std::string(default_collective_model()));
  TrainingPredictor predictor(parameters);
  const auto predict = [&](const Scenario& s) {
    const auto net = maker(s.system, parameters);
    return predictor.predict(s, *net);
  };
  ScenarioDiff out;
  out.a = predict(a);
  out.b = predict(b);

  Scenario current = a;
  TrainingPrediction before = out.a;
  std::vector<std::string> pending;  // groups changed but not yet predictable (inconsistent)
  for (const Group& g : groups()) {
    const std::vector<std::string> parts = g.describe(current, b);
    if (parts.empty()) continue;
    g.copy(current, b);
    pending.push_back(std::string(g.name) + ": " + join(parts));
    Scenario checked = current;
    if (!recheck_scenario(checked, true).empty()) continue;  // merge with the next group
    const TrainingPrediction after = predict(current);
    std::string what;
    for (const auto& p : pending) what += (what.empty() ? "" : "; ") + p;
    out.path.push_back({what, after.step_time - before.step_time, after.memory.peak - before.memory.peak, after.step_time});
    pending.clear();
    before = after;
  }
  return out;
}

std::string diff_text(const Scenario& a, const Scenario& b, const ScenarioDiff& d) {
  std::string out;
  const double sa = d.a.step_time.value();
  const double sb = d.b.step_time.value();
  out += fmt::format("A: {} ({})\nB: {} ({})\n\n", a.name, a.source, b.name, b.source);
  out += fmt::format("  {:<40}{:>14}{:>14}{:>14}\n", "", "A", "B", "B - A");
  out += fmt::format("  {:<40}{:>12.3f} s{:>12.3f} s{:>14}  ({:+.1f}%)\n", "step time", sa, sb,
                     seconds_text(d.b.step_time - d.a.step_time), 100.0 * (sb - sa) / sa);
  out += fmt::format("  {:<40}{:>14.0f}{:>14.0f}{:>+14.0f}\n", "tokens/s", d.a.tokens_per_s, d.b.tokens_per_s,
                     d.b.tokens_per_s - d.a.tokens_per_s);
  out += fmt::format("  {:<40}{:>13.1f}%{:>13.1f}%{:>+13.1f}%\n", "MFU", 100.0 * d.a.mfu, 100.0 * d.b.mfu,
                     100.0 * (d.b.mfu - d.a.mfu));
  out += "\nTime per step by component (critical stage):\n";
  const std::pair<const char*, Seconds TimeBreakdown::*> time[] = {
      {"compute", &TimeBreakdown::compute},
      {"recompute", &TimeBreakdown::recompute},
      {"tensor-parallel comm (exposed)", &TimeBreakdown::tp_comm_exposed},
      {"context-parallel comm (exposed)", &TimeBreakdown::cp_comm_exposed},
      {"expert-parallel comm (exposed)", &TimeBreakdown::ep_comm_exposed},
      {"pipeline bubble", &TimeBreakdown::pp_bubble},
      {"pipeline transfers (exposed)", &TimeBreakdown::pp_comm_exposed},
      {"data-parallel comm (exposed)", &TimeBreakdown::dp_comm_exposed},
      {"optimizer", &TimeBreakdown::optimizer},
      {"offload (exposed)", &TimeBreakdown::offload_exposed},
      {"multi-token prediction", &TimeBreakdown::mtp},
      {"other", &TimeBreakdown::other}};
  for (const auto& [name, member] : time) {
    const Seconds x = d.a.time.*member;
    const Seconds y = d.b.time.*member;
    if (x.value() == 0.0 && y.value() == 0.0) continue;
    out += fmt::format("  {:<40}{:>12.3f} s{:>12.3f} s{:>14}\n", name, x.value(), y.value(), seconds_text(y - x));
  }
  out += "\nMemory per GPU by component (peak stage):\n";
  const std::pair<const char*, Bytes MemoryBreakdown::*> memory[] = {
      {"weights", &MemoryBreakdown::weights},         {"gradients", &MemoryBreakdown::gradients},
      {"optimizer states", &MemoryBreakdown::optimizer_states}, {"activations", &MemoryBreakdown::activations},
      {"buffers", &MemoryBreakdown::buffers},         {"fragmentation", &MemoryBreakdown::fragmentation},
      {"peak", &MemoryBreakdown::peak}};
  for (const auto& [name, member] : memory) {
    const double x = (d.a.memory.*member).value() / kGiB;
    const double y = (d.b.memory.*member).value() / kGiB;
    out += fmt::format("  {:<40}{:>10.2f} GiB{:>10.2f} GiB{:>+10.2f} GiB\n", name, x, y, y - x);
  }
  out += "\nFrom A to B one change at a time (in this order; the steps add up to B - A):\n";
  if (d.path.empty()) out += "  A and B differ in nothing the prediction uses\n";
  for (const DiffStep& s : d.path) {
    out += fmt::format("  {:>12}  {:>+9.2f} GiB  {}\n", seconds_text(s.step_delta), s.peak_delta.value() / kGiB, s.what);
  }
  return out;
}

}  // namespace stepcast
