#include <nlohmann/json.hpp>

#include "model/parallel.h"
#include "simulator/enum_names.h"
#include "simulator/report.h"

namespace stepcast {

std::uint64_t json_bytes(Bytes b) { return static_cast<std::uint64_t>(std::llround(std::max(b.value(), 0.0))); }

namespace {

using nlohmann::ordered_json;

double r6(double v) { return round_significant(v, 6); }

ordered_json memory_json(const MemoryBreakdown& m) {
  ordered_json j;
  j["weights"] = json_bytes(m.weights);
  j["gradients"] = json_bytes(m.gradients);
  j["optimizer_states"] = json_bytes(m.optimizer_states);
  j["activations"] = json_bytes(m.activations);
  j["buffers"] = json_bytes(m.buffers);
  j["fragmentation"] = json_bytes(m.fragmentation);
  j["peak"] = json_bytes(m.peak);
  return j;
}

}  // namespace

std::string training_report_json(const Scenario& scenario, const TrainingPrediction& p) {
  ordered_json j;
  j["schema_version"] = 1;
  j["mode"] = "training";
  j["step_time_s"] = r6(p.step_time.value());
  j["tokens_per_s"] = r6(p.tokens_per_s);
  j["mfu"] = r6(p.mfu);
  j["hfu"] = r6(p.hfu);
  const TimeBreakdown& t = p.time;
  ordered_json time;
  time["compute"] = r6(t.compute.value());
  time["recompute"] = r6(t.recompute.value());
  time["tp_comm_exposed"] = r6(t.tp_comm_exposed.value());
  time["cp_comm_exposed"] = r6(t.cp_comm_exposed.value());
  time["ep_comm_exposed"] = r6(t.ep_comm_exposed.value());
  time["pp_bubble"] = r6(t.pp_bubble.value());
  time["pp_comm_exposed"] = r6(t.pp_comm_exposed.value());
  time["dp_comm_exposed"] = r6(t.dp_comm_exposed.value());
  time["optimizer"] = r6(t.optimizer.value());
  time["offload_exposed"] = r6(t.offload_exposed.value());
  // The multi-token-prediction modules' own line, present when the model has them (model.mtp_depth
  // > 0), so that every other report keeps its keys.
  if (scenario.model.mtp_depth > 0) time["mtp"] = r6(t.mtp.value());
  time["other"] = r6(t.other.value());
  j["time_breakdown_s"] = time;
  j["memory_per_gpu_bytes"] = memory_json(p.memory);
  j["fits"] = p.fits;

  // Extras beyond the contract.
  j["scenario"] = scenario.name;
  j["gpus"] = scenario.parallel.world_size();
  j["gpu"] = scenario.system.gpu.name;
  j["gpu_memory_bytes"] = json_bytes(scenario.system.gpu.memory);
  const ParallelConfig& par = scenario.parallel;
  j["parallel"] = {{"tp", par.tp},
                   {"pp", par.pp},
                   {"dp", par.dp},
                   {"cp", par.cp},
                   {"ep", par.ep},
                   {"vpp", par.vpp},
                   {"sequence_parallel", par.sequence_parallel},
                   {"zero", par.zero},
                   {"schedule", std::string(enum_name(par.schedule))},
                   {"recompute", std::string(enum_name(par.recompute))}};
  if (par.recompute == Recompute::selective && !par.recompute_modules.is_default()) {
    ordered_json modules = ordered_json::array();
    for (const auto& [m, name] : EnumTable<RecomputeModule>::values) {
      if (par.recompute_modules.has(m)) modules.push_back(std::string(name));
    }
    j["parallel"]["recompute_modules"] = modules;
  }
  const TrainingWorkload& w = scenario.training();
  j["microbatches"] = par.dp > 0 && w.micro_batch > 0 ? w.global_batch / (par.dp * w.micro_batch) : 0;
  j["bubble_fraction"] = r6(p.bubble_fraction);
  ordered_json bubbles = ordered_json::array();
  for (const Seconds b : p.per_stage_bubble) bubbles.push_back(r6(b.value()));
  j["pipeline_bubble_per_stage_s"] = bubbles;
  j["model_flops_per_step"] = r6(p.model_flops_per_step.value());
  j["hardware_flops_per_step"] = r6(p.hardware_flops_per_step.value());
  j["peak_stage"] = p.peak_stage;
  ordered_json stages = ordered_json::array();
  for (const auto& m : p.per_stage) stages.push_back(memory_json(m));
  j["memory_per_stage_bytes"] = stages;
  ordered_json placement = ordered_json::array();
  for (const auto& g : p.placement) placement.push_back({{"group", g.group}, {"size", g.size}, {"description", g.description}});
  j["placement"] = placement;
  // Goodput and host memory only where the scenario asks for them (goodput terms, offload).
  if (w.goodput != TrainingWorkload::Goodput{}) {
    const GoodputEstimate& g = p.goodput;
    ordered_json gp;
    gp["ideal_tokens_per_day"] = r6(g.ideal_tokens_per_day);
    gp["effective_tokens_per_day"] = r6(g.effective_tokens_per_day);
    gp["goodput_fraction"] = r6(g.goodput_fraction);
    gp["effective_step_s"] = r6(g.effective_step.value());
    gp["data_wait_s"] = r6(g.data_wait.value());
    gp["straggler_delay_s"] = r6(g.straggler_delay.value());
    gp["checkpoint_save_s"] = r6(g.checkpoint_save.value());
    gp["checkpoint_waste"] = r6(g.checkpoint_waste);
    gp["failures_per_day"] = r6(g.failures_per_day);
    gp["failure_waste"] = r6(g.failure_waste);
    gp["optimal_checkpoint_interval_s"] = r6(g.optimal_checkpoint_interval.value());
    j["goodput"] = gp;
  }
  if (p.host_memory.value() > 0.0) j["host_memory_per_gpu_bytes"] = json_bytes(p.host_memory);
  if (p.activation_offloaded.value() > 0.0) j["activation_offload_bytes"] = json_bytes(p.activation_offloaded);
  j["notes"] = p.notes;
  return j.dump(2);
}

}  // namespace stepcast
