// write_scenario_yaml (declared in simulator/scenario_loader.h): a complete, explicit
// schema_version 1 document. Every field is written, catalog presets expanded, so the document
// stands on its own; quantities are written with units chosen by format_quantity(), which reads
// back to the same double, so parse_scenario() of the result equals the scenario. Zero figures
// that mean "unknown" or "none" are written as those words; zero optional settings (SLOs, goodput
// terms, uneven stages) are left out, which reads back as the same zero.

#include <sstream>

#include "simulator/enum_names.h"
#include "simulator/quantity_parse.h"
#include "simulator/scenario_loader.h"

namespace stepcast {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

class Writer {
 public:
  void key(int indent, const std::string& k) { m_out << std::string(indent, ' ') << k << ":\n"; }
  void value(int indent, const std::string& k, const std::string& v) {
    m_out << std::string(indent, ' ') << k << ": " << v << "\n";
  }
  void integer(int indent, const std::string& k, long long v) { value(indent, k, std::to_string(v)); }
  void real(int indent, const std::string& k, double v) { value(indent, k, format_number(v)); }
  void boolean(int indent, const std::string& k, bool v) { value(indent, k, v ? "true" : "false"); }
  void text(int indent, const std::string& k, const std::string& v) { value(indent, k, quoted(v)); }
  void quantity(int indent, const std::string& k, double si, Dimension d) {
    value(indent, k, quoted(format_quantity(si, d)));
  }
  // A quantity whose zero is written as `word` ("unknown", "none").
  void quantity_or(int indent, const std::string& k, double si, Dimension d, const char* word) {
    if (si == 0.0) {
      value(indent, k, word);
    } else {
      quantity(indent, k, si, d);
    }
  }
  template <class E>
  void enumeration(int indent, const std::string& k, E v) {
    value(indent, k, std::string(enum_name(v)));
  }
  [[nodiscard]] std::string str() const { return m_out.str(); }
  void raw(const std::string& s) { m_out << s; }

 private:
  std::ostringstream m_out;
};

void write_model(Writer& w, const TransformerSpec& m) {
  w.key(0, "model");
  w.text(2, "name", m.name);
  w.integer(2, "layers", m.layers);
  w.integer(2, "hidden", m.hidden);
  w.integer(2, "heads", m.heads);
  w.integer(2, "kv_heads", m.kv_heads);
  w.integer(2, "head_dim", m.head_dim);
  w.integer(2, "ffn_hidden", m.ffn_hidden);
  w.integer(2, "vocab", m.vocab);
  w.enumeration(2, "mlp", m.mlp);
  w.enumeration(2, "norm", m.norm);
  w.enumeration(2, "position", m.position);
  w.boolean(2, "tied_embeddings", m.tied_embeddings);
  w.boolean(2, "linear_bias", m.linear_bias);
  w.boolean(2, "dropout", m.dropout);
  if (m.qk_norm) w.boolean(2, "qk_norm", m.qk_norm);  // written when set: older files stay as they were
  w.integer(2, "experts", m.moe.experts);
  w.integer(2, "top_k", m.moe.top_k);
  w.integer(2, "moe_ffn_hidden", m.moe.ffn_hidden);
  w.integer(2, "shared_experts", m.moe.shared_experts);
  w.real(2, "capacity_factor", m.moe.capacity_factor);
  w.real(2, "load_imbalance", m.moe.load_imbalance);
  w.integer(2, "first_dense_layers", m.moe.first_dense_layers);
  if (m.moe.router_groups > 0) w.integer(2, "router_groups", m.moe.router_groups);  // written when set
  if (m.moe.router_group_topk > 0) w.integer(2, "router_group_topk", m.moe.router_group_topk);
  w.integer(2, "sliding_window", m.sliding_window);
  w.integer(2, "full_attention_every", m.full_attention_every);
  if (m.activation_clamp > 0.0) w.real(2, "activation_clamp", m.activation_clamp);  // written when set
  if (m.mtp_depth > 0) w.integer(2, "mtp_depth", m.mtp_depth);  // written when set
  if (m.mla) {
    w.key(2, "mla");
    w.integer(4, "q_lora_rank", m.mla->q_lora_rank);
    w.integer(4, "kv_lora_rank", m.mla->kv_lora_rank);
    w.integer(4, "qk_nope_head_dim", m.mla->qk_nope_head_dim);
    w.integer(4, "qk_rope_head_dim", m.mla->qk_rope_head_dim);
    w.integer(4, "v_head_dim", m.mla->v_head_dim);
  }
}

void write_gpu(Writer& w, int indent, const GpuSpec& g) {
  w.key(indent, "gpu");
  const int i = indent + 2;
  w.text(i, "name", g.name);
  w.text(i, "display_name", g.display_name);
  w.enumeration(i, "architecture", g.architecture);
  w.key(i, "dense_peak");
  for (DataType t : kAllDataTypes) {
    if (g.supports(t)) w.quantity(i + 2, std::string(to_string(t)), g.peak(t).value(), Dimension::flop_rate);
  }
  w.quantity(i, "memory", g.memory.value(), Dimension::size);
  w.quantity(i, "memory_bandwidth", g.memory_bandwidth.value(), Dimension::bandwidth);
  if (g.sm_count == 0) {
    w.value(i, "sm_count", "unknown");
  } else {
    w.integer(i, "sm_count", g.sm_count);
  }
  w.quantity_or(i, "l2_cache", g.l2_cache.value(), Dimension::size, "unknown");
  w.quantity_or(i, "nvlink_bandwidth", g.nvlink_bandwidth.value(), Dimension::bandwidth, "none");
  w.quantity_or(i, "host_bandwidth", g.host_bandwidth.value(), Dimension::bandwidth, "unknown");
  w.quantity_or(i, "tdp", g.tdp_watts, Dimension::power, "unknown");
  if (g.unified_memory) w.value(i, "unified_memory", "true");
  if (g.sfu_exp_per_sm_clock > 0.0) w.real(i, "sfu_exp_per_sm_clock", g.sfu_exp_per_sm_clock);
  if (g.sustained_clock_fraction > 0.0) w.real(i, "sustained_clock_fraction", g.sustained_clock_fraction);
  if (g.nvfp4_gemm_over_fp8 > 0.0) w.real(i, "nvfp4_gemm_over_fp8", g.nvfp4_gemm_over_fp8);
  if (!g.power_modes.empty()) {
    w.key(i, "power_modes");
    for (const PowerMode& m : g.power_modes) {
      w.raw(std::string(i + 2, ' ') + "- name: " + quoted(m.name) + "\n");
      w.quantity(i + 4, "power", m.watts, Dimension::power);
      w.real(i + 4, "compute_scale", m.compute_scale);
      w.real(i + 4, "memory_bandwidth_scale", m.memory_bandwidth_scale);
    }
  }
}

void write_system(Writer& w, const SystemSpec& s) {
  w.key(0, "system");
  w.text(2, "name", s.name);
  w.text(2, "display_name", s.display_name);
  write_gpu(w, 2, s.gpu);
  w.integer(2, "gpus", s.gpus);
  w.integer(2, "gpus_per_node", s.gpus_per_node);
  w.integer(2, "nvlink_domain_gpus", s.nvlink_domain_gpus);
  w.boolean(2, "nvlink_sharp", s.nvlink_sharp);
  w.quantity_or(2, "intra_node_bandwidth", s.intra_node_bandwidth.value(), Dimension::bandwidth, "unknown");
  w.quantity(2, "intra_node_latency", s.intra_node_latency.value(), Dimension::time);
  w.quantity_or(2, "host_memory_per_node", s.host_memory_per_node.value(), Dimension::size, "unknown");
  const NetworkSpec& n = s.network;
  w.key(2, "network");
  w.integer(4, "nics_per_node", n.nics_per_node);
  w.quantity_or(4, "nic_bandwidth", n.nic_bandwidth.value(), Dimension::bandwidth, "none");
  w.quantity(4, "nic_latency", n.nic_latency.value(), Dimension::time);
  w.enumeration(4, "transport", n.transport);
  w.enumeration(4, "fabric", n.fabric);
  w.integer(4, "tiers", n.tiers);
  w.real(4, "oversubscription", n.oversubscription);
  w.integer(4, "nodes_per_leaf", n.nodes_per_leaf);
  w.boolean(4, "in_network_reduction", n.in_network_reduction);
  if (n.simple_protocol_only) w.boolean(4, "simple_protocol_only", true);  // default false: omitted
}

void write_training(Writer& w, const TrainingWorkload& t) {
  w.key(0, "training");
  w.integer(2, "seq_len", t.seq_len);
  w.integer(2, "global_batch", t.global_batch);
  w.integer(2, "micro_batch", t.micro_batch);
  w.boolean(2, "flash_attention", t.flash_attention);
  if (t.attention_kernel != AttentionKernel::best) w.enumeration(2, "attention_kernel", t.attention_kernel);
  w.enumeration(2, "kernels", t.kernels);
  if (t.cross_entropy_fusion != CrossEntropyFusion::native) w.enumeration(2, "cross_entropy_fusion", t.cross_entropy_fusion);
  if (t.repeat_kv) w.boolean(2, "repeat_kv", *t.repeat_kv);
  if (t.document_tokens > 0) w.integer(2, "document_tokens", t.document_tokens);
  const auto& g = t.goodput;
  if (g == TrainingWorkload::Goodput{}) return;
  w.key(2, "goodput");
  if (g.dataloader_samples_per_s > 0) w.quantity(4, "dataloader_rate", g.dataloader_samples_per_s, Dimension::frequency);
  if (g.straggler_cv > 0) w.real(4, "straggler_cv", g.straggler_cv);
  if (g.checkpoint_interval.value() > 0) w.quantity(4, "checkpoint_interval", g.checkpoint_interval.value(), Dimension::time);
  if (g.checkpoint_size.value() > 0) w.quantity(4, "checkpoint_size", g.checkpoint_size.value(), Dimension::size);
  if (g.checkpoint_write_bandwidth.value() > 0) {
    w.quantity(4, "checkpoint_write_bandwidth", g.checkpoint_write_bandwidth.value(), Dimension::bandwidth);
  }
  if (g.gpu_mtbf_hours > 0) w.value(4, "gpu_mtbf", quoted(format_number(g.gpu_mtbf_hours) + " h"));
  if (g.restart_time.value() > 0) w.quantity(4, "restart_time", g.restart_time.value(), Dimension::time);
}

void write_length(Writer& w, const std::string& key, const LengthSpec& l) {
  w.key(2, key);
  w.enumeration(4, "dist", l.dist);
  if (l.mean > 0) w.real(4, "mean", l.mean);
  if (l.p99 > 0) w.real(4, "p99", l.p99);
  w.real(4, "min", l.min);
  if (l.max > 0) w.real(4, "max", l.max);
}

void write_inference(Writer& w, const InferenceWorkload& inf) {
  w.key(0, "inference");
  w.enumeration(2, "mode", inf.mode);
  w.boolean(2, "cuda_graphs", inf.cuda_graphs);
  w.enumeration(2, "decode_attention", inf.decode_attention);
  if (inf.mode == InferenceMode::static_batch) {
    w.integer(2, "batch", inf.batch);
    w.integer(2, "input_len", inf.input_len);
    w.integer(2, "output_len", inf.output_len);
    return;
  }
  const ServingWorkload& s = inf.serving;
  w.enumeration(2, "arrivals", s.arrivals);
  if (s.arrivals == ArrivalProcess::closed_loop) {
    w.integer(2, "concurrency", s.concurrency);
  } else {
    w.quantity(2, "arrival_rate", s.arrival_rate_per_s, Dimension::frequency);
  }
  w.real(2, "gamma_cv", s.gamma_cv);
  w.integer(2, "requests", s.requests);
  if (s.warmup_requests >= 0) w.integer(2, "warmup_requests", s.warmup_requests);
  if (s.arrivals == ArrivalProcess::trace) {
    w.text(2, "trace", s.trace_file);
    if (s.input_len != LengthSpec{}) write_length(w, "input_len", s.input_len);
    if (s.output_len != LengthSpec{}) write_length(w, "output_len", s.output_len);
  } else {
    write_length(w, "input_len", s.input_len);
    write_length(w, "output_len", s.output_len);
  }
  w.integer(2, "seed", static_cast<long long>(s.seed));
  w.enumeration(2, "scheduler", s.scheduler);
  w.integer(2, "max_batch", s.max_batch);
  w.integer(2, "max_batch_tokens", s.max_batch_tokens);
  w.boolean(2, "chunked_prefill", s.chunked_prefill);
  if (s.prefill_first) w.boolean(2, "prefill_first", s.prefill_first);
  w.quantity(2, "batch_timeout", s.batch_timeout.value(), Dimension::time);
  w.integer(2, "kv_block", s.kv_block_tokens);
  w.real(2, "kv_memory_fraction", s.kv_memory_fraction);
  w.enumeration(2, "preemption", s.preemption);
  w.enumeration(2, "kv_admission", s.kv_admission);
  if (s.max_output_tokens > 0) w.integer(2, "max_output_tokens", s.max_output_tokens);
  w.real(2, "prefix_cache_hit_rate", s.prefix_cache_hit_rate);
  w.integer(2, "replicas", s.replicas);
  if (s.disaggregation.enabled) {
    w.key(2, "disaggregation");
    w.integer(4, "prefill_gpus", s.disaggregation.prefill_gpus);
    w.integer(4, "decode_gpus", s.disaggregation.decode_gpus);
  }
  if (s.slo.ttft.value() > 0 || s.slo.tpot.value() > 0) {
    w.key(2, "slo");
    if (s.slo.ttft.value() > 0) w.quantity(4, "ttft", s.slo.ttft.value(), Dimension::time);
    if (s.slo.tpot.value() > 0) w.quantity(4, "tpot", s.slo.tpot.value(), Dimension::time);
  }
}

void write_parallel(Writer& w, const ParallelConfig& p) {
  w.key(0, "parallel");
  w.integer(2, "tp", p.tp);
  w.integer(2, "pp", p.pp);
  w.integer(2, "dp", p.dp);
  w.integer(2, "cp", p.cp);
  w.integer(2, "ep", p.ep);
  if (p.expert_tp > 0) w.integer(2, "expert_tp", p.expert_tp);  // omitted: follows tp
  w.integer(2, "vpp", p.vpp);
  if (p.first_stage_layers >= 0) w.integer(2, "first_stage_layers", p.first_stage_layers);
  if (p.last_stage_layers >= 0) w.integer(2, "last_stage_layers", p.last_stage_layers);
  w.boolean(2, "sequence_parallel", p.sequence_parallel);
  w.enumeration(2, "schedule", p.schedule);
  w.integer(2, "zero", p.zero);
  w.enumeration(2, "recompute", p.recompute);
  if (p.recompute_layers > 0) w.integer(2, "recompute_layers", p.recompute_layers);
  if (!p.recompute_modules.is_default()) w.value(2, "recompute_modules", recompute_modules_text(p.recompute_modules));
  w.enumeration(2, "offload", p.offload);
  if (p.activation_offload_layers > 0) w.integer(2, "activation_offload_layers", p.activation_offload_layers);
  w.enumeration(2, "cp_kind", p.cp_kind);
  // Written when set: files from before the setting stay as they were.
  if (p.ep_dispatcher != ExpertDispatcher::alltoall) w.enumeration(2, "ep_dispatcher", p.ep_dispatcher);
  if (p.moe_grouped_gemm != MoeGroupedGemm::per_expert) w.enumeration(2, "moe_grouped_gemm", p.moe_grouped_gemm);
  if (p.fsdp != FsdpImplementation::megatron) w.enumeration(2, "fsdp", p.fsdp);
  if (p.checkpoint != CheckpointImplementation::megatron) w.enumeration(2, "checkpoint", p.checkpoint);
  w.boolean(2, "overlap_grad_reduce", p.overlap_grad_reduce);
  w.boolean(2, "overlap_param_gather", p.overlap_param_gather);
  w.boolean(2, "tp_comm_overlap", p.tp_comm_overlap);
  w.boolean(2, "ep_comm_overlap", p.ep_comm_overlap);
  if (p.cuda_graphs != CudaGraphs::none) w.enumeration(2, "cuda_graphs", p.cuda_graphs);  // written when set
  w.text(2, "order", p.order);
}

void write_precision(Writer& w, const PrecisionConfig& p) {
  w.key(0, "precision");
  w.enumeration(2, "compute", p.compute);
  w.enumeration(2, "params", p.params);
  w.enumeration(2, "grads", p.grads);
  w.enumeration(2, "optimizer", p.optimizer);
  if (p.moments) w.enumeration(2, "moments", *p.moments);
  w.enumeration(2, "kv_cache", p.kv_cache);
  w.enumeration(2, "fp8_scaling", p.fp8_scaling);
  if (p.fp8_amax_group != Fp8AmaxGroup::stage) w.enumeration(2, "fp8_amax_group", p.fp8_amax_group);
  w.boolean(2, "master_weights", p.master_weights);
  w.boolean(2, "loss_scaling", p.loss_scaling);
  if (p.master_remainders) w.boolean(2, "master_remainders", p.master_remainders);
  if (p.fp8_attention) w.boolean(2, "fp8_attention", true);
  if (p.bf16_edge_layers >= 0) w.integer(2, "bf16_edge_layers", p.bf16_edge_layers);
}

}  // namespace

std::string write_scenario_yaml(const Scenario& scenario) {
  Writer w;
  w.raw("# Written by stepcast from " + scenario.source + ": every field explicit, catalog presets expanded.\n");
  w.integer(0, "schema_version", 1);
  w.text(0, "name", scenario.name);
  write_model(w, scenario.model);
  write_system(w, scenario.system);
  if (scenario.is_training()) {
    write_training(w, scenario.training());
  } else {
    write_inference(w, scenario.inference());
  }
  write_parallel(w, scenario.parallel);
  write_precision(w, scenario.precision);
  return w.str();
}

}  // namespace stepcast
