#include "simulator/scenario_checks.h"

#include "simulator/pipeline_schedule_orders.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "model/cost_parameters.h"
#include "model/layer_shape.h"
#include "model/moe_ops.h"
#include "model/op_checkpoint.h"
#include "model/parameter_count.h"
#include "simulator/enum_names.h"

namespace stepcast {
namespace {

std::string str(long long v) { return std::to_string(v); }

// The pipeline schedule is simulated event by event, so its time and memory grow with the
// micro-batches per step (measured here: 100,000 of them on gpt3-175b-selene's 8 stages take 0.7 s
// and 165 MB). Real runs use thousands at most; a count past this bound is a typo in the batch
// sizes, and is refused rather than run for minutes into an out-of-memory failure.
constexpr long long kMaxMicrobatchesPerStep = 1'000'000;

// Splits Megatron's rank order "tp-cp-ep-dp-pp" into its names.
std::vector<std::string> split_order(const std::string& order) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= order.size()) {
    const std::size_t end = std::min(order.find('-', start), order.size());
    out.push_back(order.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void check_order(DiagnosticSink& sink, const ParallelConfig& p) {
  const std::vector<std::string> names = split_order(p.order);
  const std::vector<std::string> required = {"tp", "cp", "dp", "pp"};
  std::string problem;
  for (const auto& n : names) {
    if (n != "tp" && n != "cp" && n != "ep" && n != "dp" && n != "pp") problem = "'" + n + "' is not a parallel dimension";
    if (std::count(names.begin(), names.end(), n) > 1) problem = "'" + n + "' appears twice";
  }
  for (const auto& r : required) {
    if (problem.empty() && std::find(names.begin(), names.end(), r) == names.end()) problem = "'" + r + "' is missing";
  }
  const auto ep = std::find(names.begin(), names.end(), "ep");
  if (problem.empty() && ep != names.end() && (ep + 1 == names.end() || *(ep + 1) != "dp")) {
    problem = "'ep' must come directly before 'dp' (expert parallelism splits the data-parallel ranks)";
  }
  if (problem.empty() && ep == names.end() && p.ep > 1) problem = "'ep' is missing while ep = " + str(p.ep);
  if (!problem.empty()) {
    sink.error_at("parallel.order",
                  "expected the dimensions tp, cp, ep, dp, pp joined by '-', fastest first (e.g. tp-cp-ep-dp-pp); " +
                      problem);
  }
}

// The key path a product error is best reported at: an overridden factor if there is one (so the
// message names the override), else the first factor written in the file.
std::string product_path(const DiagnosticSink& sink, const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    if (sink.is_overridden(p)) return p;
  }
  for (const auto& p : paths) {
    if (sink.was_read(p)) return p;
  }
  return paths.front();
}

// Megatron-Core's checks of recompute_modules (transformer_config.py __post_init__): they act only
// with recompute_granularity "selective", and mla_up_proj needs multi-latent attention. stepcast
// also refuses a module the model does not have (Megatron-Core would silently skip it), so a
// scenario never claims a saving it does not get. `fp8_delayed`: FP8 with delayed scaling, which
// Megatron-Core refuses with moe_act and layernorm.
void check_recompute_modules(DiagnosticSink& sink, const TransformerSpec& m, const ParallelConfig& p, bool fp8_delayed) {
  const std::string key = "parallel.recompute_modules";
  const RecomputeModules mods = p.recompute_modules;
  if (p.recompute != Recompute::selective) {
    sink.error_at(key, "recompute_modules " + recompute_modules_text(mods) + " act only with recompute: selective (found " +
                           std::string(enum_name(p.recompute)) + "); Megatron-Core applies them with " +
                           "--recompute-granularity selective");
    return;
  }
  const auto lacks = [&](RecomputeModule module, const std::string& what) {
    if (mods.has(module)) sink.error_at(key, std::string(enum_name(module)) + " needs " + what);
  };
  if (!m.mla) lacks(RecomputeModule::mla_up_proj, "multi-head latent attention (model.mla); this model has none");
  if (!m.is_moe()) {
    for (RecomputeModule x : {RecomputeModule::moe_act, RecomputeModule::moe, RecomputeModule::shared_experts}) {
      lacks(x, "a mixture-of-experts model (model.experts > 1)");
    }
  } else if (m.moe.shared_experts == 0) {
    lacks(RecomputeModule::shared_experts, "shared experts (model.shared_experts > 0); this model has none");
  }
  if (m.is_moe() && moe_layer_count(m) == m.layers) {
    lacks(RecomputeModule::mlp, "dense MLP layers; every layer of this model is a MoE layer (recompute them with moe)");
  }
  if (fp8_delayed && (mods.has(RecomputeModule::moe_act) || mods.has(RecomputeModule::layernorm))) {
    sink.error_at(key, "moe_act and layernorm recompute need FP8 current scaling (precision.fp8_scaling: current); "
                       "Megatron-Core refuses them with delayed scaling");
  }
}

// parallel.cuda_graphs: full_iteration captures every micro-batch's forward and backward as one
// CUDA graph (model/parallel.h CudaGraphs), which is a training feature and needs static shapes
// with no host synchronization inside the step. A MoE layer's dispatcher that reads the token
// counts on the host (model/moe_ops.h moe_forward_host_sync: dropless routing without the flex
// dispatcher's device-side grouped GEMM) cannot be captured: Megatron-Core refuses a graph that
// holds a whole MoE module unless it is "drop-padding MoE or transformer_engine sync-free HybridEP"
// (validate_moe_cuda_graph_support, megatron/core/transformer/cuda_graph_config.py, NVIDIA/
// Megatron-LM @5955fdaf), and a full-iteration graph holds every module.
void check_full_iteration_graph(DiagnosticSink& sink, const Scenario& s, const ScenarioReadState& state,
                                const ParallelConfig& p) {
  if (!s.is_training()) {
    if (state.workload_read) {
      sink.error_at("parallel.cuda_graphs", "cuda_graphs: full_iteration applies to training scenarios only "
                                            "(it captures the training step's forward and backward)");
    }
    return;
  }
  // The scenario's MoE layer as the prediction builds it (a dense model's has moe_layer false).
  const LayerShape moe = moe_layer_shape(make_layer_shape(s.model, s.training(), p, s.precision));
  if (moe.moe_layer && moe_activation_host_sync(moe)) {
    // The clamped GLU of GPT-OSS's experts copies a Python scalar to the device on every call, a
    // blocking host synchronization (model/moe_ops.h moe_activation_host_sync), which a CUDA graph
    // cannot hold either.
    sink.error_at("parallel.cuda_graphs",
                  "cuda_graphs: full_iteration cannot capture this model's clamped expert activation: Megatron-Core's "
                  "weighted_bias_quick_geglu_impl copies its linear offset to the device on every call, a blocking "
                  "host synchronization. Use cuda_graphs: none");
  }
  if (moe_forward_host_sync(moe)) {
    sink.error_at("parallel.cuda_graphs",
                  "cuda_graphs: full_iteration cannot capture this model's dropless MoE layers: their dispatcher "
                  "reads the token counts on the host before the all-to-all, which a CUDA graph cannot hold "
                  "(Megatron-Core allows a graphed MoE module only with drop-and-pad or sync-free HybridEP). "
                  "Drop tokens at a fixed capacity (model.capacity_factor > 0), or run the device-side grouped "
                  "GEMM with a flex dispatcher (parallel.moe_grouped_gemm: grouped with parallel.ep_dispatcher: "
                  "hybridep or deepep), or use cuda_graphs: none");
  }
}

void check_layers(DiagnosticSink& sink, const TransformerSpec& m, const ParallelConfig& p) {
  const int chunks = p.pp * p.vpp;
  const bool first = p.first_stage_layers >= 0;
  const bool last = p.last_stage_layers >= 0;
  if ((first || last) && p.pp == 1) {
    sink.error_at(first ? "parallel.first_stage_layers" : "parallel.last_stage_layers",
                  "an uneven first/last stage needs pp > 1");
    return;
  }
  if (!first && !last) {
    if (m.layers % chunks != 0) {
      const std::string path = product_path(sink, {"parallel.pp", "parallel.vpp", "model.layers"});
      sink.error_at(path, "model layers (" + str(m.layers) + ") do not split evenly over pp*vpp = " + str(p.pp) + "*" +
                              str(p.vpp) + " = " + str(chunks) + " model chunks");
    }
    return;
  }
  const int fixed = std::max(p.first_stage_layers, 0) + std::max(p.last_stage_layers, 0);
  const int middle_chunks = chunks - (first ? 1 : 0) - (last ? 1 : 0);
  const int rest = m.layers - fixed;
  std::vector<std::string> candidates;
  if (first) candidates.push_back("parallel.first_stage_layers");
  if (last) candidates.push_back("parallel.last_stage_layers");
  for (const char* p_key : {"parallel.pp", "parallel.vpp", "model.layers"}) candidates.push_back(p_key);
  const std::string path = product_path(sink, candidates);
  if (rest < 0) {
    sink.error_at(path, "first_stage_layers + last_stage_layers = " + str(fixed) + " exceeds the model's " +
                            str(m.layers) + " layers");
  } else if (middle_chunks == 0 ? rest != 0 : rest % middle_chunks != 0) {
    sink.error_at(path, "the remaining " + str(rest) + " layers do not split evenly over the other " +
                            str(middle_chunks) + " of pp*vpp = " + str(chunks) + " model chunks");
  }
}

// True when none of `paths` (nor anything below them) had an error while the file was read.
bool clean(const DiagnosticSink& sink, const ScenarioReadState& state, std::initializer_list<const char*> paths) {
  return std::none_of(paths.begin(), paths.end(),
                      [&](const char* p) { return sink.has_errors_under(p, state.reading_errors); });
}

// An inference scenario's engines against the cluster: model instances of tp*pp GPUs.
void check_inference(DiagnosticSink& sink, const Scenario& s, const ScenarioReadState& state) {
  const ParallelConfig& p = s.parallel;
  const InferenceWorkload& w = s.inference();
  const auto ok = [&](std::initializer_list<const char*> paths) { return clean(sink, state, paths); };
  if (ok({"parallel.cp"}) && p.cp > 1) {
    sink.error_at("parallel.cp", "context parallelism (cp = " + str(p.cp) + ") is not modelled for inference; use tp, "
                                 "pp and replicas");
  }
  if (w.mode != InferenceMode::serving) return;
  const ServingWorkload& sv = w.serving;
  const int instance = p.tp * p.pp;
  if (!ok({"parallel.tp", "parallel.pp", "system.gpus"})) return;
  if (sv.disaggregation.enabled && ok({"inference.disaggregation"})) {
    const auto& d = sv.disaggregation;
    if (d.prefill_gpus + d.decode_gpus != s.system.gpus) {
      sink.error_at("inference.disaggregation", "prefill_gpus + decode_gpus = " + str(d.prefill_gpus) + " + " +
                                                    str(d.decode_gpus) + " = " + str(d.prefill_gpus + d.decode_gpus) +
                                                    ", but system.gpus is " + str(s.system.gpus));
    }
    for (const auto& [name, gpus] : {std::pair{"prefill_gpus", d.prefill_gpus}, std::pair{"decode_gpus", d.decode_gpus}}) {
      if (gpus % instance != 0) {
        sink.error_at(std::string("inference.disaggregation.") + name,
                      std::string(name) + " (" + str(gpus) + ") is not a multiple of tp*pp = " + str(p.tp) + "*" +
                          str(p.pp) + " = " + str(instance) + " (each prefill or decode instance runs the whole model)");
      }
    }
  }
  if (sink.was_read("inference.replicas") && ok({"inference.replicas"}) && !sv.disaggregation.enabled &&
      sv.replicas * instance != s.system.gpus) {
    sink.error_at("inference.replicas", "replicas * tp * pp = " + str(sv.replicas) + "*" + str(p.tp) + "*" +
                                            str(p.pp) + " = " + str(sv.replicas * instance) +
                                            " GPUs, but system.gpus is " + str(s.system.gpus) +
                                            " (each replica is one model instance of tp*pp GPUs)");
  }
  if (sink.was_read("inference.replicas") && ok({"inference.replicas", "inference.disaggregation"}) &&
      sv.disaggregation.enabled && sv.replicas * instance != s.system.gpus) {
    sink.error_at("inference.replicas", "replicas (" + str(sv.replicas) + ") must count every prefill and decode "
                                        "instance: system.gpus / (tp*pp) = " + str(s.system.gpus / instance));
  }
}

}  // namespace

// A serving scenario's replicas, when not written: its model instances, gpus / (tp*pp).
void derive_replicas(const DiagnosticSink& sink, Scenario& s, const ScenarioReadState& state) {
  if (s.is_training() || !state.workload_read || sink.was_read("inference.replicas")) return;
  InferenceWorkload& w = std::get<InferenceWorkload>(s.workload);
  const int instance = std::max(s.parallel.tp * s.parallel.pp, 1);
  if (w.mode == InferenceMode::serving && s.system.gpus % instance == 0) w.serving.replicas = s.system.gpus / instance;
}

bool derive_data_parallel(DiagnosticSink& sink, Scenario& s, const ScenarioReadState& state) {
  if (!state.system_read || !state.parallel_read) return false;
  derive_replicas(sink, s, state);
  if (state.dp_given) return clean(sink, state, {"parallel.dp"});
  if (!clean(sink, state, {"system.gpus", "parallel.tp", "parallel.pp", "parallel.cp"})) return false;
  ParallelConfig& p = s.parallel;
  const int model_parallel = p.tp * p.pp * p.cp;
  if (s.system.gpus % model_parallel != 0) {
    const std::string path = product_path(sink, {"parallel.tp", "parallel.pp", "parallel.cp", "system.gpus"});
    sink.error_at(path, "system.gpus (" + str(s.system.gpus) + ") is not divisible by tp*pp*cp = " + str(p.tp) + "*" +
                            str(p.pp) + "*" + str(p.cp) + " = " + str(model_parallel) +
                            ", so dp = gpus/(tp*pp*cp) is not a whole number");
    return false;
  }
  p.dp = s.system.gpus / model_parallel;
  return true;
}

void check_scenario(DiagnosticSink& sink, const Scenario& s, const ScenarioReadState& state) {
  const ParallelConfig& p = s.parallel;
  const TransformerSpec& m = s.model;
  const SystemSpec& sys = s.system;

  const auto ok = [&](std::initializer_list<const char*> paths) { return clean(sink, state, paths); };

  // --- Cluster shape -------------------------------------------------------------------------
  if (state.system_read) {
    if (ok({"system.gpus", "system.gpus_per_node"}) && sys.gpus > sys.gpus_per_node &&
        sys.gpus % sys.gpus_per_node != 0) {
      sink.error_at("system.gpus", "gpus (" + str(sys.gpus) + ") spans more than one node but is not a multiple of "
                                   "gpus_per_node (" + str(sys.gpus_per_node) + ")");
    }
    if (ok({"system.nvlink_domain_gpus", "system.gpus_per_node"}) && sys.nvlink_domain_gpus > sys.gpus_per_node &&
        sys.nvlink_domain_gpus % sys.gpus_per_node != 0) {
      sink.error_at("system.nvlink_domain_gpus", "nvlink_domain_gpus (" + str(sys.nvlink_domain_gpus) +
                                                     ") must be a multiple of gpus_per_node (" +
                                                     str(sys.gpus_per_node) + ")");
    }
    if (ok({"system.gpus", "system.gpus_per_node", "system.nvlink_domain_gpus", "system.network"}) &&
        sys.gpus > sys.nvlink_domain_gpus && sys.gpus > sys.gpus_per_node &&
        (sys.network.nics_per_node == 0 || sys.network.nic_bandwidth.value() <= 0.0)) {
      sink.error_at("system.gpus", "gpus (" + str(sys.gpus) + ") spans " + str(sys.nodes()) + " nodes but system '" +
                                       sys.name + "' has no known network between nodes; give " +
                                       "system.network.nics_per_node and system.network.nic_bandwidth");
    }
  }

  // --- Parallel layout against the cluster ---------------------------------------------------
  if (state.parallel_read && state.system_read && state.dp_given &&
      ok({"parallel.tp", "parallel.pp", "parallel.dp", "parallel.cp", "system.gpus"}) && p.world_size() != sys.gpus) {
    const std::string path =
        product_path(sink, {"parallel.tp", "parallel.pp", "parallel.dp", "parallel.cp", "system.gpus"});
    sink.error_at(path, "tp*pp*dp*cp = " + str(p.tp) + "*" + str(p.pp) + "*" + str(p.dp) + "*" + str(p.cp) + " = " +
                            str(p.world_size()) + ", but system.gpus is " + str(sys.gpus));
  }
  if (state.parallel_read) {
    if (ok({"parallel.order", "parallel.ep"})) check_order(sink, p);
    if (ok({"parallel.vpp", "parallel.pp"}) && p.vpp > 1 && p.pp == 1) {
      sink.error_at("parallel.vpp", "vpp > 1 (interleaved pipeline) needs pp > 1");
    }
    if (ok({"parallel.vpp", "parallel.schedule"}) && p.vpp > 1 && p.schedule != PipelineSchedule::one_f_one_b) {
      sink.error_at("parallel.vpp", "vpp > 1 interleaves the 1f1b schedule; it needs schedule: 1f1b");
    }
  }

  // --- Model against the layout ----------------------------------------------------------------
  if (state.parallel_read && state.model_read && ok({"model"})) {
    if (ok({"parallel.tp"}) && m.heads % p.tp != 0) {
      sink.error_at(product_path(sink, {"parallel.tp"}),
                    "model heads (" + str(m.heads) + ") are not divisible by tp (" + str(p.tp) + ")");
    } else if (ok({"parallel.tp"}) && m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0) {
      sink.error_at(product_path(sink, {"parallel.tp"}),
                    "model kv_heads (" + str(m.kv_heads) + ") and tp (" + str(p.tp) +
                        "): one must divide the other (KV heads are split or replicated over TP ranks)");
    }
    if (ok({"parallel.pp", "parallel.vpp", "parallel.first_stage_layers", "parallel.last_stage_layers"})) {
      check_layers(sink, m, p);
    }
    if (ok({"parallel.recompute_layers", "parallel.recompute", "parallel.pp", "parallel.vpp"}) && p.recompute_layers > 0) {
      const int per_chunk = (m.layers + p.pp * p.vpp - 1) / (p.pp * p.vpp);
      if (p.recompute != Recompute::full) {
        sink.error_at("parallel.recompute_layers", "recompute_layers counts fully recomputed layers; it needs recompute: full");
      } else if (p.recompute_layers > per_chunk) {
        sink.error_at("parallel.recompute_layers", "recompute_layers (" + str(p.recompute_layers) +
                                                       ") exceeds the layers of a model chunk (" + str(per_chunk) + ")");
      }
    }
    if (ok({"parallel.activation_offload_layers", "parallel.pp", "parallel.vpp", "parallel.recompute"}) &&
        p.activation_offload_layers > 0) {
      // Megatron-Core's TransformerConfig.__post_init__ (megatron/core/transformer/transformer_config.py):
      // cpu_offloading_num_layers < num_layers, no pipeline parallelism, no recomputation.
      if (state.workload_read && !s.is_training()) {
        sink.error_at("parallel.activation_offload_layers", "activation_offload_layers applies to training scenarios only");
      } else if (p.activation_offload_layers >= m.layers) {
        sink.error_at("parallel.activation_offload_layers",
                      "activation_offload_layers (" + str(p.activation_offload_layers) +
                          ") must be less than the model's layers (" + str(m.layers) +
                          "): the last layer's activations are never offloaded");
      } else if (p.pp > 1 || p.vpp > 1) {
        sink.error_at("parallel.activation_offload_layers",
                      "activation_offload_layers needs pp = 1 and vpp = 1 (Megatron-Core has no CPU offloading "
                      "with pipeline parallelism)");
      } else if (p.recompute != Recompute::none) {
        sink.error_at("parallel.activation_offload_layers",
                      "activation_offload_layers needs recompute: none (Megatron-Core's CPU offloading does not work "
                      "with activation recomputation)");
      }
    }
    if (ok({"parallel.recompute"}) && p.recompute == Recompute::selective_op && !selective_op_applies(m)) {
      // torchtitan's per-op policy counts aten.mm calls in a dense Llama block (model/op_checkpoint.h);
      // stepcast prices it for that block only. The branches below only word the refusal.
      if (m.is_moe() || m.mla) {
        sink.error_at("parallel.recompute", std::string("recompute: selective_op (torchtitan's per-op checkpointing) is priced for "
                                                        "dense GQA/MHA blocks; this model has ") +
                                                (m.is_moe() ? "MoE layers" : "multi-latent attention") +
                                                " (use none, selective or full)");
      } else {
        sink.error_at("parallel.recompute", "recompute: selective_op (torchtitan's per-op checkpointing) counts bias-free "
                                            "linears (aten.mm); this model has linear_bias: true (a biased nn.Linear is "
                                            "aten.addmm, which the policy neither counts nor saves)");
      }
    }
    if (ok({"parallel.recompute_modules", "parallel.recompute"}) && !p.recompute_modules.is_default()) {
      const bool fp8_delayed = state.precision_read && s.precision.compute == DataType::fp8 &&
                               s.precision.fp8_scaling == Fp8Scaling::delayed;
      check_recompute_modules(sink, m, p, fp8_delayed);
    }
    if (ok({"parallel.ep"}) && p.ep > 1) {
      if (!m.is_moe()) {
        sink.error_at("parallel.ep", "ep = " + str(p.ep) + " needs a mixture-of-experts model (model.experts > 1)");
      } else if (m.moe.experts % p.ep != 0) {
        sink.error_at("parallel.ep", "ep (" + str(p.ep) + ") does not divide model experts (" + str(m.moe.experts) + ")");
      }
      if (!s.is_training() && ok({"parallel.tp"}) && p.tp % p.ep != 0) {
        // Inference splits the experts over ep of the tp ranks (TensorRT-LLM: moe_ep_size *
        // moe_tp_size = tp_size).
        sink.error_at("parallel.ep", "ep (" + str(p.ep) + ") does not divide tp (" + str(p.tp) +
                                         "): inference splits the experts over the tensor-parallel ranks");
      }
    }
    if (ok({"parallel.cuda_graphs", "parallel.ep", "parallel.expert_tp", "parallel.ep_dispatcher",
            "parallel.moe_grouped_gemm"}) &&
        p.cuda_graphs == CudaGraphs::full_iteration) {
      check_full_iteration_graph(sink, s, state, p);
    }
    // Megatron-Core MoE (parallel folding): the tp*cp*dp ranks of a stage regroup as
    // expert_tp * ep * expert-dp, so expert_tp*ep must divide tp*cp*dp.
    if (s.is_training() && state.dp_valid && ok({"parallel.tp", "parallel.cp", "parallel.ep", "parallel.expert_tp"}) &&
        (p.tp * p.cp * p.dp) % (p.expert_tensor_parallel() * p.ep) != 0) {
      sink.error_at("parallel.expert_tp", "expert_tp*ep = " + str(p.expert_tensor_parallel()) + "*" + str(p.ep) +
                                              " does not divide tp*cp*dp = " + str(p.tp * p.cp * p.dp));
    }
    if (ok({"parallel.tp", "parallel.cp", "parallel.cp_kind"}) && p.cp > 1 &&
        p.cp_kind == ContextParallelKind::ulysses && m.heads % (p.tp * p.cp) != 0) {
      sink.error_at("parallel.cp", "Ulysses context parallelism splits heads over tp*cp = " + str(p.tp * p.cp) +
                                       ", which does not divide model heads (" + str(m.heads) + ")");
    }
  }

  // --- Workload against the layout -------------------------------------------------------------
  if (state.parallel_read && state.workload_read && s.is_training()) {
    const TrainingWorkload& t = s.training();
    const bool batch_ok = state.dp_valid && ok({"training.global_batch", "training.micro_batch"});
    const bool seq_ok = ok({"training.seq_len", "parallel.tp", "parallel.cp", "parallel.sequence_parallel"});
    if (batch_ok && t.global_batch % p.dp != 0) {
      sink.error_at("training.global_batch", "global_batch (" + str(t.global_batch) +
                                                 ") does not split evenly over dp = " + str(p.dp) + " replicas");
    } else if (batch_ok && (t.global_batch / p.dp) % t.micro_batch != 0) {
      sink.error_at("training.micro_batch", "micro_batch (" + str(t.micro_batch) +
                                                ") does not divide the per-replica batch global_batch/dp = " +
                                                str(t.global_batch) + "/" + str(p.dp) + " = " +
                                                str(t.global_batch / p.dp));
    }
    // The micro-batches per step, once the batch splits evenly (0 when it does not: the checks
    // below that need the count are then skipped, the error above having been given).
    const bool batch_splits =
        batch_ok && t.global_batch % p.dp == 0 && (t.global_batch / p.dp) % t.micro_batch == 0;
    const int microbatches = batch_splits ? t.global_batch / (p.dp * t.micro_batch) : 0;
    if (batch_splits && microbatches > kMaxMicrobatchesPerStep) {
      sink.error_at(product_path(sink, {"training.global_batch", "training.micro_batch"}),
                    "global_batch/(dp*micro_batch) = " + str(t.global_batch) + "/(" + str(p.dp) + "*" +
                        str(t.micro_batch) + ") = " + str(microbatches) + " micro-batches per step; at most " +
                        str(kMaxMicrobatchesPerStep) + " are simulated (raise micro_batch or dp)");
    }
    // Megatron-LM's interleaved schedule refuses a micro-batch count that is not a multiple of pp
    // (megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving:
    // "number of microbatches is not divisible by pipeline-model-parallel-size when using
    // interleaved schedule"); its warm-up groups pp micro-batches per model chunk.
    const bool interleaving_ok = ok({"parallel.vpp", "parallel.pp"});
    if (batch_splits && interleaving_ok && p.vpp > 1 && p.pp > 1) {
      if (microbatches % p.pp != 0) {
        sink.error_at(product_path(sink, {"parallel.vpp", "parallel.pp", "training.micro_batch", "training.global_batch"}),
                      "vpp > 1 (interleaved 1F1B) needs the micro-batches per step, global_batch/(dp*micro_batch) = " +
                          str(t.global_batch) + "/(" + str(p.dp) + "*" + str(t.micro_batch) + ") = " + str(microbatches) +
                          ", to be a multiple of pp (" + str(p.pp) + "), as Megatron-LM's interleaved schedule requires");
      }
    }
    // DualPipe's shape (deepseek-ai/DualPipe, DualPipe.step(): an even rank count, an even number of
    // micro-batches of at least twice the ranks).
    if (batch_splits && ok({"parallel.schedule", "parallel.pp"}) && p.schedule == PipelineSchedule::dualpipe) {
      const std::string problem = pipeline_shape_problem(p.schedule, p.pp, 2, microbatches);
      if (!problem.empty() && (p.pp < 2 || p.pp % 2 != 0)) {
        sink.error_at(product_path(sink, {"parallel.pp", "parallel.schedule"}), problem);
      } else if (!problem.empty()) {
        sink.error_at(product_path(sink, {"parallel.schedule", "parallel.pp", "training.micro_batch", "training.global_batch"}),
                      problem + "; micro-batches per step are global_batch/(dp*micro_batch) = " + str(t.global_batch) +
                          "/(" + str(p.dp) + "*" + str(t.micro_batch) + ") = " + str(microbatches));
      }
    }
    if (seq_ok && p.cp > 1 && t.seq_len % (2 * p.cp) != 0) {
      sink.error_at("training.seq_len", "seq_len (" + str(t.seq_len) + ") must be divisible by 2*cp = " +
                                            str(2 * p.cp) + " (context parallelism splits it into 2*cp chunks)");
    }
    // Packed documents (training.document_tokens): at most one per sequence's length, and under
    // context parallelism each splits into 2*cp load-balanced chunks as the sequence would
    // (Transformer Engine's THD context parallelism; Megatron-Bridge pads every packed document to
    // a multiple of 2*cp for it).
    if (t.document_tokens > 0 && ok({"training.document_tokens", "training.seq_len"})) {
      if (t.document_tokens > t.seq_len) {
        sink.error_at("training.document_tokens", "document_tokens (" + str(t.document_tokens) +
                                                      ") exceeds seq_len (" + str(t.seq_len) +
                                                      "): a document is packed inside one sequence");
      } else if (ok({"parallel.cp"}) && p.cp > 1 && t.document_tokens % (2 * p.cp) != 0) {
        sink.error_at(product_path(sink, {"training.document_tokens", "parallel.cp"}),
                      "document_tokens (" + str(t.document_tokens) + ") must be divisible by 2*cp = " + str(2 * p.cp) +
                          " (context parallelism splits every packed document into 2*cp chunks)");
      }
    }
    if (seq_ok && p.sequence_parallel && p.tp > 1 && t.seq_len % p.tp != 0) {
      sink.error_at("training.seq_len", "seq_len (" + str(t.seq_len) + ") must be divisible by tp (" + str(p.tp) +
                                            ") with sequence_parallel");
    }
  }

  if (state.parallel_read && state.workload_read && state.system_read && !s.is_training()) {
    check_inference(sink, s, state);
  }

  // --- Attention kernel against the GPU -------------------------------------------------------
  if (state.workload_read && state.system_read && s.is_training() &&
      s.training().attention_kernel != AttentionKernel::best &&
      ok({"training.attention_kernel", "training.flash_attention", "system.gpu"})) {
    // flash2 and triton (priced relative to FlashAttention-2, model/triton_attention.h) need a
    // FlashAttention-2 figure for the GPU.
    const std::string kernel(enum_name(s.training().attention_kernel));
    if (!s.training().flash_attention) {
      sink.error_at("training.attention_kernel",
                    "attention_kernel " + kernel +
                        " names a fused attention kernel, but flash_attention is false (the unfused softmax path)");
    } else if (!flash2_priced(sys.gpu.architecture)) {
      sink.error_at("training.attention_kernel",
                    "no FlashAttention-2 efficiency is known for GPU '" + sys.gpu.name + "' (" +
                        std::string(enum_name(sys.gpu.architecture)) + "): " + kernel +
                        " is priced on ampere, ada and hopper GPUs; use attention_kernel: best");
    }
  }

  // --- FP8 attention: a quantized training format, the fused kernel, a GPU with measured FP8 SDPA --
  if (state.precision_read && s.precision.fp8_attention && ok({"precision.fp8_attention", "precision"})) {
    std::string why;
    if (!s.is_training()) {
      why = "is a training setting (serving prices attention by the KV-cache format)";
    } else if (!is_quantized_training_format(s.precision.compute)) {
      why = "needs a quantized compute format (fp8, mxfp8 or nvfp4), not " +
            std::string(to_string(s.precision.compute)) + ": Transformer Engine runs FP8 attention only under FP8 training";
    } else if (state.workload_read && !s.training().flash_attention) {
      why = "needs the fused attention kernel (training.flash_attention: true)";
    } else if (state.workload_read && s.training().attention_kernel != AttentionKernel::best) {
      why = "runs cuDNN's FP8 kernel, so attention_kernel must be best";
    } else if (state.system_read && ok({"system.gpu"}) && sys.gpu.architecture != GpuArchitecture::hopper &&
               sys.gpu.architecture != GpuArchitecture::blackwell) {
      why = "is measured on Hopper and Blackwell only (cuDNN's FP8 SDPA); GPU '" + sys.gpu.name + "' is " +
            std::string(enum_name(sys.gpu.architecture));
    }
    if (!why.empty()) sink.error_at("precision.fp8_attention", "fp8_attention " + why);
  }

  // --- MXFP8 weights against the layout: the distributed optimizer's path only ---------------------
  // params: mxfp8 is Megatron-Core's --fp8-param-gather with --reuse-grad-buf-for-mxfp8-param-ag
  // (PrecisionConfig::distributed_optimizer_gather): the weights of ZeRO 1/2 ranks. How Megatron-FSDP
  // or host offload would hold and move MXFP8 weights is not modelled.
  if (state.precision_read && state.parallel_read && s.is_training() && s.precision.params == DataType::mxfp8 &&
      ok({"precision.params", "precision", "parallel.zero", "parallel.offload"})) {
    // The two ways out of mxfp8_weights_supported (model/precision.h), each with its reason.
    if (p.zero >= 3) {
      sink.error_at("parallel.zero", "params: mxfp8 is modelled for the distributed optimizer (zero 1 or 2), whose "
                                     "BF16 parameter all-gather fills the gradient buffer; ZeRO-3/FSDP with MXFP8 "
                                     "weights is not (use params: bf16)");
    } else if (p.zero == 0 && state.dp_valid && p.dp > 1) {
      // Megatron-LM's arguments.py: "--fp8-param-gather only supported with distributed optimizer,
      // torch fsdp2, megatron fsdp, or inference mode".
      sink.error_at("parallel.zero", "params: mxfp8 needs the distributed optimizer (zero 1 or 2) over dp = " +
                                         str(p.dp) + " replicas: Megatron-LM supports --fp8-param-gather only with it");
    } else if (p.offload == Offload::optimizer_and_params) {
      sink.error_at("parallel.offload", "params: mxfp8 with the weights offloaded to the host is not modelled "
                                        "(use offload: optimizer, or params: bf16)");
    }
  }

  // --- Precision against the GPU ---------------------------------------------------------------
  // The measured NVFP4 GEMM speed is a ratio to the part's FP8 peak (model/op_time.h gemm_peak): a GPU
  // without both peaks cannot use it, and silently ignoring it would hide a typo'd spec.
  if (state.system_read && ok({"system.gpu"}) && sys.gpu.nvfp4_gemm_over_fp8 > 0.0 &&
      !(sys.gpu.supports(DataType::nvfp4) && sys.gpu.supports(DataType::fp8))) {
    sink.error_at("system.gpu", "nvfp4_gemm_over_fp8 is a speed relative to the FP8 GEMM; GPU '" + sys.gpu.name +
                                    "' needs both an fp8 and an nvfp4 dense peak for it");
  }
  if (state.precision_read && state.system_read && ok({"precision", "system.gpu", "system.power_mode"}) &&
      !sys.gpu.supports(s.precision.compute)) {
    std::string supported;
    for (DataType t : kAllDataTypes) {
      if (sys.gpu.supports(t)) supported += (supported.empty() ? "" : ", ") + std::string(to_string(t));
    }
    sink.error_at(sink.was_read("precision.compute") ? "precision.compute" : "precision",
                  "GPU '" + sys.gpu.name + "' has no " + std::string(to_string(s.precision.compute)) +
                      " peak in the catalog; it supports " + supported);
  }
}

std::string recheck_scenario(Scenario& scenario, bool dp_given) {
  DiagnosticSink sink(scenario.source);
  ScenarioReadState state;
  state.model_read = state.system_read = state.parallel_read = state.workload_read = state.precision_read = true;
  state.dp_given = dp_given;
  state.dp_valid = derive_data_parallel(sink, scenario, state);
  check_scenario(sink, scenario, state);
  if (sink.error_count() == 0) return {};
  const std::vector<Diagnostic> errors = sink.take();
  return (errors.front().key_path.empty() ? "" : errors.front().key_path + ": ") + errors.front().message;
}

}  // namespace stepcast
