#include "gui/models/editor_fields.h"

#include "simulator/enum_names.h"

namespace stepcast::gui {
namespace {

QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QStringList q_list(const std::vector<std::string>& words) {
  QStringList out;
  for (const auto& w : words) out << QString::fromStdString(w);
  return out;
}

template <class E>
QStringList spellings() {
  return q_list(enum_spellings<E>());
}

// A catalog name list with `current` added when it is not one of them (a custom entry).
QStringList with_current(QStringList names, const QString& current) {
  if (!current.isEmpty() && !names.contains(current)) names.prepend(current);
  return names;
}

FieldSpec integer(QString key, QString label, QString group, int value, QString unit, QString help,
                  double minimum = 1.0, double maximum = 1.0e7, QString special = {}) {
  FieldSpec f;
  f.key = std::move(key);
  f.label = std::move(label);
  f.group = std::move(group);
  f.kind = FieldKind::integer;
  f.unit = std::move(unit);
  f.help = std::move(help);
  f.minimum = minimum;
  f.maximum = maximum;
  f.special_value = std::move(special);
  f.value = value;
  return f;
}

FieldSpec real(QString key, QString label, QString group, double value, QString unit, QString help,
               double minimum, double maximum, QString special = {}) {
  FieldSpec f = integer(std::move(key), std::move(label), std::move(group), 0, std::move(unit), std::move(help),
                        minimum, maximum, std::move(special));
  f.kind = FieldKind::real;
  f.value = value;
  return f;
}

FieldSpec choice(QString key, QString label, QString group, QString value, QStringList choices, QString help) {
  FieldSpec f;
  f.key = std::move(key);
  f.label = std::move(label);
  f.group = std::move(group);
  f.kind = FieldKind::choice;
  f.help = std::move(help);
  f.choices = with_current(std::move(choices), value);
  f.value = std::move(value);
  return f;
}

FieldSpec boolean(QString key, QString label, QString group, bool value, QString help) {
  FieldSpec f;
  f.key = std::move(key);
  f.label = std::move(label);
  f.group = std::move(group);
  f.kind = FieldKind::boolean;
  f.help = std::move(help);
  f.value = value;
  return f;
}

}  // namespace

std::vector<FieldSpec> editor_fields(const Scenario& s, const Catalog& catalog) {
  const QString M = QStringLiteral("Model");
  const QString S = QStringLiteral("System");
  const QString P = QStringLiteral("Parallelism");
  const QString R = QStringLiteral("Precision");
  const TransformerSpec& m = s.model;
  const ParallelConfig& p = s.parallel;
  std::vector<FieldSpec> f;

  f.push_back(choice("model", "&Model", M, QString::fromStdString(m.name), q_list(catalog.model_names()),
                     "A catalog model; the fields below override its shape"));
  f.push_back(integer("model.layers", "Layers", M, m.layers, "layers", "Transformer layers", 1, 1000));
  f.push_back(integer("model.hidden", "Hidden size", M, m.hidden, "", "Model width h", 1, 1 << 20));
  f.push_back(integer("model.heads", "Attention heads", M, m.heads, "heads", "Query heads a", 1, 1 << 14));
  f.push_back(integer("model.kv_heads", "KV heads", M, m.kv_heads, "heads", "Key/value heads g (GQA/MQA: g < a)", 1,
                      1 << 14));
  f.push_back(integer("model.ffn_hidden", "FFN hidden size", M, m.ffn_hidden, "", "MLP width f", 1, 1 << 22));
  f.push_back(integer("model.vocab", "Vocabulary", M, m.vocab, "tokens", "Vocabulary size V", 1, 1 << 24));

  f.push_back(choice("system", "S&ystem", S, QString::fromStdString(s.system.name), q_list(catalog.system_names()),
                     "A catalog system (GPU, node, NVLink domain and network)"));
  f.push_back(choice("system.gpu", "GP&U type", S, QString::fromStdString(s.system.gpu.name), q_list(catalog.gpu_names()),
                     "A catalog GPU in its default system"));
  f.push_back(integer("system.gpus", "&GPUs", S, s.system.gpus, "GPUs", "GPUs in the job", 1, 1 << 20));
  f.push_back(integer("system.gpus_per_node", "GPUs per node", S, s.system.gpus_per_node, "GPUs", "GPUs in one node",
                      1, 1024));

  f.push_back(integer("parallel.tp", "&TP", P, p.tp, "GPUs", "Tensor parallel degree", 1, 1024));
  f.push_back(integer("parallel.pp", "&PP", P, p.pp, "stages", "Pipeline parallel stages", 1, 1024));
  f.push_back(integer("parallel.dp", "&DP", P, p.dp, "replicas",
                      "Data parallel replicas; auto = gpus / (tp x pp x cp)", 0, 1 << 20, "auto"));
  f.push_back(integer("parallel.cp", "&CP", P, p.cp, "GPUs", "Context parallel degree", 1, 1024));
  if (m.is_moe()) f.push_back(integer("parallel.ep", "EP", P, p.ep, "GPUs", "Expert parallel degree", 1, 1024));
  if (m.is_moe()) {
    f.push_back(choice("parallel.ep_dispatcher", "EP dispatcher", P, q(enum_name(p.ep_dispatcher)),
                       spellings<ExpertDispatcher>(),
                       "How MoE tokens reach their experts: alltoall (one copy per routed expert) or deepep "
                       "(DeepEP/HybridEP: once per NVLink domain, then forwarded over NVLink)"));
    f.push_back(choice("parallel.moe_grouped_gemm", "Expert GEMMs", P, q(enum_name(p.moe_grouped_gemm)),
                       spellings<MoeGroupedGemm>(),
                       "per_expert: Transformer Engine's GroupedLinear loop, one GEMM per expert; grouped: one "
                       "grouped kernel over all experts with on-device group sizes (TE >= 2.14)"));
  }
  f.push_back(integer("parallel.vpp", "&VPP", P, p.vpp, "chunks",
                      "Model chunks per pipeline rank (interleaved 1F1B when > 1)", 1, 1024));
  f.push_back(boolean("parallel.sequence_parallel", "Sequence parallel", P, p.sequence_parallel,
                      "Shard layer norms and dropout over the TP group (Korthikanti et al. 2022)"));
  if (s.is_training()) {
    f.push_back(choice("parallel.schedule", "Sc&hedule", P, q(enum_name(p.schedule)), spellings<PipelineSchedule>(),
                       "Pipeline schedule"));
    f.push_back(integer("parallel.zero", "&ZeRO stage", P, p.zero, "", "0 none, 1 optimizer states, 2 + gradients, 3 + parameters", 0, 3));
    if (p.zero == 3) {
      f.push_back(choice("parallel.fsdp", "FSDP implementation", P, q(enum_name(p.fsdp)), spellings<FsdpImplementation>(),
                         "megatron: parameters and gradients live in the collectives' buffers; fsdp2: PyTorch "
                         "fully_shard, which copies around every gather and reduce-scatter"));
    }
    f.push_back(choice("parallel.recompute", "&Recompute", P, q(enum_name(p.recompute)), spellings<Recompute>(),
                       "Activation recomputation"));
    if (p.recompute == Recompute::full) {
      f.push_back(choice("parallel.checkpoint", "Checkpoint replay", P, q(enum_name(p.checkpoint)),
                         spellings<CheckpointImplementation>(),
                         "megatron: the whole forward runs again; pytorch: torch.utils.checkpoint stops once every "
                         "saved tensor is rebuilt (a dense layer skips its last GEMM)"));
    }
    f.push_back(integer("parallel.recompute_layers", "Recomputed layers", P, p.recompute_layers, "per chunk",
                        "With full recomputation: layers of each model chunk recomputed; all = every layer", 0, 1 << 16,
                        "all"));
    if (p.recompute == Recompute::selective) {
      // Megatron-Core's recompute_modules: the default, the current set and each single module this
      // model has (a set of several is written in the scenario file).
      QStringList sets{QStringLiteral("[core_attn]")};
      const auto offer = [&](RecomputeModule x) {
        RecomputeModules one = RecomputeModules::empty();
        one.add(x);
        sets.push_back(q(recompute_modules_text(one)));
      };
      offer(RecomputeModule::layernorm);
      if (m.mla) offer(RecomputeModule::mla_up_proj);
      if (!m.is_moe() || m.moe.first_dense_layers > 0) offer(RecomputeModule::mlp);
      if (m.is_moe()) {
        offer(RecomputeModule::moe_act);
        offer(RecomputeModule::moe);
        if (m.moe.shared_experts > 0) offer(RecomputeModule::shared_experts);
      }
      f.push_back(choice("parallel.recompute_modules", "Recomputed modules", P,
                         q(recompute_modules_text(p.recompute_modules)), sets,
                         "With selective recomputation: Megatron-Core's recompute_modules (default: the attention core)"));
    }
    f.push_back(choice("parallel.offload", "Offload", P, q(enum_name(p.offload)), spellings<Offload>(),
                       "Optimizer (and parameter) offload to host memory"));
  }

  if (s.is_training()) {
    const bool shorthand = s.precision == precision_shorthand(s.precision.compute);
    const QString word = shorthand ? q(enum_name(s.precision.compute))
                                   : QStringLiteral("custom (%1 compute)").arg(q(enum_name(s.precision.compute)));
    f.push_back(choice("precision", "Precisio&n", R, word,
                       {QStringLiteral("fp32"), QStringLiteral("tf32"), QStringLiteral("fp16"), QStringLiteral("bf16"),
                        QStringLiteral("fp8")},
                       "Mixed precision recipe (DESIGN.md: bf16 = BF16 compute and weights, FP32 grads and Adam)"));
    const TrainingWorkload& t = s.training();
    f.push_back(choice("training.kernels", "Kernels", R, q(enum_name(t.kernels)), spellings<KernelFusion>(),
                       "fused: Megatron/Transformer Engine or torch.compile kernels; eager: plain PyTorch ops"));
    f.push_back(choice("training.attention_kernel", "Attention kernel", R, q(enum_name(t.attention_kernel)),
                       spellings<AttentionKernel>(),
                       "best: the GPU generation's fused attention (cuDNN, FlashAttention-3); flash2: FlashAttention-2 "
                       "(PyTorch SDPA's flash backend, flash-attn 2); triton: llm-foundry's Triton FlashAttention "
                       "(attn_impl: triton)"));
    const QString B = QStringLiteral("Batching");
    f.push_back(integer("training.seq_len", "Se&quence length", B, t.seq_len, "tokens", "Tokens per sequence", 1, 1 << 24));
    f.push_back(integer("training.global_batch", "G&lobal batch", B, t.global_batch, "sequences",
                        "Sequences per optimizer step", 1, 1 << 24));
    f.push_back(integer("training.micro_batch", "Micro-&batch", B, t.micro_batch, "sequences",
                        "Sequences per micro-batch per replica", 1, 1 << 20));
    f.push_back(integer("training.document_tokens", "Document length", B, t.document_tokens, "tokens",
                        "Packed documents, attention masked per document (packed SFT, Llama 3's document "
                        "mask); whole sequence: one document per sequence",
                        0, 1 << 24, "whole sequence"));
    return f;
  }

  const PrecisionConfig& pr = s.precision;
  f.push_back(choice("precision.compute", "Precisio&n (compute)", R, q(enum_name(pr.compute)), spellings<DataType>(),
                     "GEMM input format"));
  f.push_back(choice("precision.params", "Weights", R, q(enum_name(pr.params)), spellings<DataType>(),
                     "Stored weight format (int8/int4 weight-only, fp8 W8A8)"));
  f.push_back(choice("precision.kv_cache", "KV cache", R, q(enum_name(pr.kv_cache)), spellings<DataType>(),
                     "KV cache format"));

  const InferenceWorkload& w = s.inference();
  const QString W = QStringLiteral("Workload");
  f.push_back(choice("inference.mode", "Mod&e", W, q(enum_name(w.mode)), spellings<InferenceMode>(),
                     "static: one batch of fixed lengths; serving: a request stream"));
  if (w.mode == InferenceMode::static_batch) {
    f.push_back(integer("inference.batch", "&Batch", W, w.batch, "sequences", "Sequences in the batch", 1, 1 << 20));
    f.push_back(integer("inference.input_len", "Input lengt&h", W, w.input_len, "tokens", "Prompt tokens", 1, 1 << 24));
    f.push_back(integer("inference.output_len", "&Output length", W, w.output_len, "tokens", "Generated tokens", 1,
                        1 << 24));
    return f;
  }
  const ServingWorkload& sv = w.serving;
  f.push_back(real("inference.arrival_rate", "&Arrival rate", W, sv.arrival_rate_per_s, "requests/s",
                   "Mean request arrival rate", 0.001, 1e6));
  f.push_back(integer("inference.requests", "Requests", W, sv.requests, "requests", "Requests simulated", 1, 1 << 24));
  f.push_back(integer("inference.input_len", "Input lengt&h (mean)", W, static_cast<int>(sv.input_len.mean), "tokens",
                      "Mean prompt tokens", 1, 1 << 24));
  f.push_back(integer("inference.output_len", "&Output length (mean)", W, static_cast<int>(sv.output_len.mean),
                      "tokens", "Mean generated tokens", 1, 1 << 24));
  f.push_back(integer("inference.max_batch", "Max &batch", W, sv.max_batch, "sequences", "Sequences in flight", 1, 1 << 20));
  f.push_back(integer("inference.max_batch_tokens", "Max batch tokens", W, sv.max_batch_tokens, "tokens",
                      "Token budget per iteration (chunked prefill)", 1, 1 << 24));
  f.push_back(choice("inference.scheduler", "Scheduler", W, q(enum_name(sv.scheduler)), spellings<BatchScheduler>(),
                     "Batching policy"));
  f.push_back(boolean("inference.chunked_prefill", "Chunked prefill", W, sv.chunked_prefill,
                      "Split long prompts over iterations"));
  f.push_back(real("inference.slo.ttft", "SLO: TTFT", W, sv.slo.ttft.value() * 1e3, "ms",
                   "Time-to-first-token objective (none: no SLO)", 0.0, 1e7, "none"));
  f.push_back(real("inference.slo.tpot", "SLO: TPOT", W, sv.slo.tpot.value() * 1e3, "ms",
                   "Time-per-output-token objective (none: no SLO)", 0.0, 1e7, "none"));
  return f;
}

}  // namespace stepcast::gui
