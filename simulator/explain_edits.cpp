#include "simulator/explain_edits.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "model/activation_offload.h"
#include "model/divisors.h"
#include "model/op_checkpoint.h"
#include "simulator/enum_names.h"
#include "simulator/scenario_checks.h"
#include "simulator/sweep_points.h"

namespace stepcast {
namespace {

// Uneven splits worth predicting: (first, last) layers of the first and last model chunk (-1:
// left to the even split) such that the other chunks still split the rest evenly and hold at
// least as many layers as either end (the ends carry the embedding and the output layer, so
// moving layers onto them never helps). At most kMaxBalanceSplits, the ones closest to the even
// split first (moving fewer layers).
constexpr std::size_t kMaxBalanceSplits = 8;

std::vector<std::pair<int, int>> pipeline_balance_splits(int layers, const ParallelConfig& p) {
  std::vector<std::pair<int, int>> out;
  if (p.pp <= 1 || p.schedule == PipelineSchedule::dualpipe) return out;
  const int chunks = p.pp * std::max(p.vpp, 1);
  const int share = layers / chunks;
  std::vector<int> firsts, lasts;
  if (p.first_stage_layers < 0) firsts.push_back(-1);
  if (p.last_stage_layers < 0) lasts.push_back(-1);
  for (int n = 0; n <= share; ++n) {
    firsts.push_back(n);
    lasts.push_back(n);
  }
  std::vector<std::tuple<int, int, int>> ranked;  // (layers moved, first, last)
  for (int f : firsts) {
    for (int l : lasts) {
      if (f == p.first_stage_layers && l == p.last_stage_layers) continue;
      if (f < 0 && l < 0) continue;  // the even split: only reachable from it, and it is the base
      const int middle = chunks - (f >= 0 ? 1 : 0) - (l >= 0 ? 1 : 0);
      const int rest = layers - std::max(f, 0) - std::max(l, 0);
      if (middle <= 0 || rest < 0 || rest % middle != 0) continue;
      const int each = rest / middle;
      if (each < std::max(f, l) || (f >= 0 ? f : each) + (l >= 0 ? l : each) == 2 * each) continue;
      ranked.emplace_back((f >= 0 ? each - f : 0) + (l >= 0 ? each - l : 0), f, l);
    }
  }
  std::sort(ranked.begin(), ranked.end());
  for (const auto& [moved, f, l] : ranked) {
    if (out.size() == kMaxBalanceSplits) break;
    out.emplace_back(f, l);
  }
  return out;
}

std::string str(long long v) { return std::to_string(v); }

}  // namespace

std::vector<ExplainEdit> candidate_edits(const Scenario& sc) {
  const ParallelConfig& p = sc.parallel;
  const TrainingWorkload& t = sc.training();
  const int per_replica = t.global_batch / std::max(p.dp, 1);
  const int m = per_replica / std::max(t.micro_batch, 1);
  std::vector<ExplainEdit> out;
  const auto add = [&](std::string title, std::string why, std::vector<Override> o) {
    out.push_back({std::move(title), std::move(why), std::move(o)});
  };

  // Micro-batch size: smaller ones give more micro-batches (a shorter bubble), larger ones bigger GEMMs.
  const std::vector<int> mbs = divisors(per_replica);
  const auto it = std::find(mbs.begin(), mbs.end(), t.micro_batch);
  if (it != mbs.end() && it != mbs.begin()) {
    const int smaller = *(it - 1);
    add(fmt::format("more micro-batches: micro_batch {} -> {} ({} -> {} per step)", t.micro_batch, smaller, m,
                    per_replica / smaller),
        "shrinks the pipeline bubble, (p-1)/(v m) of the ideal", {{"training.micro_batch", str(smaller)}});
  }
  if (it != mbs.end() && it + 1 != mbs.end()) {
    const int larger = *(it + 1);
    add(fmt::format("larger micro-batch: micro_batch {} -> {} ({} -> {} per step)", t.micro_batch, larger, m,
                    per_replica / larger),
        "bigger GEMMs run closer to peak and fewer kernels launch; the bubble grows and so does memory",
        {{"training.micro_batch", str(larger)}});
  }
  // Interleaving.
  if (p.pp > 1 && m % p.pp == 0) {
    for (int v : divisors(sc.model.layers / p.pp)) {
      if (v == p.vpp || v > 8) continue;
      std::vector<Override> o = {{"parallel.vpp", str(v)}};
      if (v > 1 && p.schedule != PipelineSchedule::one_f_one_b) o.push_back({"parallel.schedule", "1f1b"});
      add(fmt::format("interleave: vpp {} -> {}", p.vpp, v),
          v > p.vpp ? "more model chunks per stage shrink the bubble v-fold, for v-fold pipeline transfers"
                    : "fewer model chunks: fewer pipeline transfers, a longer bubble",
          std::move(o));
    }
  }
  // Uneven first/last model chunks (Megatron-Core --decoder-first-pipeline-num-layers and
  // --decoder-last-pipeline-num-layers): the first chunk also runs the embedding, the last the
  // output layer and loss, so fewer layers there can even out the stages.
  for (const auto& [first, last] : pipeline_balance_splits(sc.model.layers, p)) {
    const auto text = [](int n) { return n < 0 ? std::string("even") : str(n); };
    std::vector<Override> o;
    if (first >= 0) o.push_back({"parallel.first_stage_layers", str(first)});
    if (last >= 0) o.push_back({"parallel.last_stage_layers", str(last)});
    add(fmt::format("rebalance the pipeline: layers in the first/last model chunk {}/{} -> {}/{}",
                    text(p.first_stage_layers), text(p.last_stage_layers), text(first), text(last)),
        fmt::format("the first chunk also runs the embedding, the last the output layer ({}-token logits) and the loss: "
                    "fewer layers there even out the stages",
                    sc.model.vocab),
        std::move(o));
  }
  if (p.pp > 1 && p.schedule == PipelineSchedule::gpipe) {
    add("schedule: gpipe -> 1f1b", "same bubble, far fewer activations held (p instead of m micro-batches)",
        {{"parallel.schedule", "1f1b"}});
  }
  // Other splits of the GPUs between tensor and pipeline parallelism (dp follows).
  const int gpus = sc.system.gpus;
  const std::pair<int, int> splits[] = {{p.tp / 2, p.pp}, {p.tp * 2, p.pp}, {p.tp, p.pp / 2}, {p.tp, p.pp * 2},
                                        {p.tp * 2, p.pp / 2}, {p.tp / 2, p.pp * 2}};
  std::set<std::pair<int, int>> seen;
  for (const auto& [tp, pp] : splits) {
    if (tp < 1 || pp < 1 || (tp == p.tp && pp == p.pp) || !seen.insert({tp, pp}).second) continue;
    if (gpus % (tp * pp * p.cp) != 0) continue;
    const int dp = gpus / (tp * pp * p.cp);
    std::vector<Override> o = {{"parallel.tp", str(tp)}, {"parallel.pp", str(pp)}, {"parallel.dp", str(dp)}};
    // Keep interleaving where it still divides; otherwise drop it.
    const int m2 = t.global_batch / std::max(dp * t.micro_batch, 1);
    if (p.vpp > 1 && (pp == 1 || sc.model.layers % (pp * p.vpp) != 0 || m2 % pp != 0)) o.push_back({"parallel.vpp", "1"});
    if (p.sequence_parallel && tp == 1) o.push_back({"parallel.sequence_parallel", "false"});
    add(fmt::format("split: TP {} PP {} DP {} -> TP {} PP {} DP {}", p.tp, p.pp, p.dp, tp, pp, dp),
        tp > p.tp ? "more tensor parallelism: less memory and work per GPU, more TP traffic"
        : pp > p.pp ? "more pipeline stages: less memory per GPU, a longer bubble"
                    : "less model parallelism: less communication, more memory per GPU",
        std::move(o));
  }
  // Recomputation. torchtitan's per-op policy only where it is priced (dense, no MLA, no linear bias).
  // Every edit goes back to Megatron-Core's default modules ([core_attn]), which any recompute accepts.
  const bool modules = !p.recompute_modules.is_default();
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full, Recompute::selective_op}) {
    if (r == Recompute::selective_op && !selective_op_applies(sc.model)) continue;
    if (r == p.recompute && !(r == Recompute::full && p.recompute_layers > 0) &&
        !(r == Recompute::selective && modules)) {
      continue;
    }
    std::vector<Override> o = {{"parallel.recompute", std::string(enum_name(r))}};
    if (p.recompute_layers > 0) o.push_back({"parallel.recompute_layers", "0"});  // every layer, or none
    if (modules) o.push_back({"parallel.recompute_modules", "[core_attn]"});
    const std::string from = modules ? fmt::format("{} {}", enum_name(p.recompute), recompute_modules_text(p.recompute_modules))
                                     : std::string(enum_name(p.recompute));
    add(r == p.recompute && !modules ? fmt::format("recompute: {} layers per chunk -> all", p.recompute_layers)
        : r == p.recompute           ? fmt::format("recompute: {} -> {} [core_attn]", from, enum_name(r))
                                     : fmt::format("recompute: {} -> {}", from, enum_name(r)),
        r == Recompute::full ? "recomputes each layer's forward: least activation memory, most extra work"
        : r == Recompute::selective ? "recomputes only attention's core (Korthikanti et al. 2022): little work, much memory saved"
        : r == Recompute::selective_op
            ? "torchtitan's per-op selective checkpointing: keeps every other GEMM output and attention, replays the rest"
            : "no recomputation: no extra forward work, the most activation memory",
        std::move(o));
  }
  // Activation offloading (Megatron-Core cpu_offloading with activations; model/activation_offload.h):
  // Megatron-Core runs it only without a pipeline and without recomputation, so it is offered there,
  // at a quarter, a half and three quarters of the layers (or turned off when it is on).
  if (p.pp == 1 && p.vpp <= 1 && p.recompute == Recompute::none && sc.model.layers > 1) {
    const int layers = sc.model.layers;
    std::set<int> counts;
    for (int quarter : {1, 2, 3}) counts.insert(std::clamp(layers * quarter / 4, 1, layers - 1));
    if (p.activation_offload_layers > 0) counts.insert(0);
    counts.erase(p.activation_offload_layers);
    for (int n : counts) {
      add(fmt::format("activation offload: {} -> {} of {} layers", p.activation_offload_layers, n, layers),
          n > p.activation_offload_layers
              ? "the saved activations of the first layers go to host memory after their forward and come back "
                "before their backward (Megatron-Core cpu_offloading), under the neighbouring layers' compute"
              : "fewer layers' activations offloaded: less host traffic, more GPU memory",
          {{"parallel.activation_offload_layers", str(n)}});
    }
  }
  // Eager PyTorch modules -> fused kernels.
  if (t.kernels == KernelFusion::eager) {
    add("kernels: eager -> fused",
        "fused norm, RoPE and activation kernels (torch.compile, Transformer Engine): one read and one write per module "
        "instead of a pass per PyTorch op, and fewer saved tensors",
        {{"training.kernels", "fused"}});
  }
  // FlashAttention-2 -> the GPU generation's best attention kernel (cuDNN / FlashAttention-3).
  if (t.flash_attention && t.attention_kernel == AttentionKernel::flash2 &&
      sc.system.gpu.architecture != GpuArchitecture::ampere && sc.system.gpu.architecture != GpuArchitecture::ada) {
    add("attention_kernel: flash2 -> best",
        "the GPU generation's own fused attention (cuDNN through Transformer Engine or SDPA's cuDNN backend, "
        "FlashAttention-3) instead of FlashAttention-2's Ampere-era kernels",
        {{"training.attention_kernel", "best"}});
  }
  // llm-foundry's Triton FlashAttention -> FlashAttention-2 (llm-foundry's attn_impl: flash).
  if (t.flash_attention && t.attention_kernel == AttentionKernel::triton) {
    add("attention_kernel: triton -> flash2",
        "FlashAttention-2 (flash-attn 2, llm-foundry's attn_impl: flash) instead of the Triton FlashAttention of "
        "triton_pre_mlir: about 1.4x faster forward and 2x backward (FlashAttention-2 paper, Sec. 4.1)",
        {{"training.attention_kernel", "flash2"}});
  }
  // ZeRO stage.
  if (p.dp > 1) {
    for (int z = 0; z <= 3; ++z) {
      if (z == p.zero) continue;
      add(fmt::format("ZeRO stage {} -> {}", p.zero, z),
          z > p.zero ? "shards more model state over the data-parallel group: less memory, more gathers"
                     : "shards less model state: fewer collectives, more memory",
          {{"parallel.zero", str(z)}});
    }
  }
  if (p.tp > 1) {
    add(fmt::format("sequence parallelism: {} -> {}", p.sequence_parallel ? "on" : "off", p.sequence_parallel ? "off" : "on"),
        "sequence parallelism splits norms and dropout over TP and turns all-reduces into gather/scatter pairs",
        {{"parallel.sequence_parallel", p.sequence_parallel ? "false" : "true"}});
    if (!p.tp_comm_overlap) {
      add("overlap TP communication with GEMMs (tp_comm_overlap)", "pipelines each TP collective with its GEMM (userbuffers)",
          {{"parallel.tp_comm_overlap", "true"}});
    }
  }
  if (p.dp > 1 && !p.overlap_grad_reduce) {
    add("overlap the gradient reduction (overlap_grad_reduce)", "reduces gradients bucket by bucket during the backward pass",
        {{"parallel.overlap_grad_reduce", "true"}});
  }
  if (p.dp > 1 && (p.zero == 1 || p.zero == 2) && !p.overlap_param_gather) {
    add("overlap the parameter gather (overlap_param_gather)", "gathers updated parameters under the next forward pass",
        {{"parallel.overlap_param_gather", "true"}});
  }
  // Expert parallelism: hide the all-to-alls behind another micro-batch, or fold expert TP into EP.
  // Megatron-Core runs the overlap (combined 1F1B) without a pipeline or on an interleaved one, and
  // not with the moe recompute module (docs/user-guide/features/moe_a2a_overlap.md, "Hard
  // requirements"; model/ep_overlap.h).
  const bool overlap_runs = (p.pp <= 1 || (p.vpp > 1 && p.schedule == PipelineSchedule::one_f_one_b)) &&
                            !recomputes_module(p.recompute, p.recompute_modules, RecomputeModule::moe);
  if (sc.model.is_moe() && p.ep > 1 && !p.ep_comm_overlap && overlap_runs) {
    add("overlap the MoE all-to-alls (ep_comm_overlap)",
        "each micro-batch's dispatch and combine run under the paired micro-batch's compute "
        "(Megatron-Core --overlap-moe-expert-parallel-comm)",
        {{"parallel.ep_comm_overlap", "true"}});
  }
  // The other token dispatcher: DeepEP/HybridEP send a token once per remote NVLink domain and
  // forward it over NVLink, once per GPU however many of its experts that GPU holds
  // (model/moe_ops.h moe_deepep_bytes); the all-to-all dispatcher sends every routed copy.
  if (sc.model.is_moe() && p.ep > 1) {
    const bool to_deepep = p.ep_dispatcher == ExpertDispatcher::alltoall;
    add(fmt::format("token dispatcher: {} -> {}", enum_name(p.ep_dispatcher),
                    to_deepep ? "deepep" : "alltoall"),
        to_deepep ? "DeepEP/HybridEP (Megatron-Core --moe-token-dispatcher-type flex): each token crosses the network "
                    "once per destination node, then NVLink once per GPU holding its experts"
                  : "Megatron-Core's all-to-all dispatcher: every routed copy of a token is sent on its own",
        {{"parallel.ep_dispatcher", to_deepep ? "deepep" : "alltoall"}});
  }
  // The grouped GEMM with on-device group sizes (model/moe_ops.h): one kernel per expert GEMM
  // instead of one per expert, and (with the flex dispatcher) no host sync before the dispatch.
  if (sc.model.is_moe() && p.moe_grouped_gemm == MoeGroupedGemm::per_expert) {
    add("expert GEMMs: per_expert -> grouped",
        "one grouped kernel per expert GEMM with the token counts on the device (Transformer Engine >= 2.14 "
        "GroupedTensor; for MXFP8 SwiGLU experts the fused grouped MLP)",
        {{"parallel.moe_grouped_gemm", "grouped"}});
  }
  if (sc.model.is_moe() && p.expert_tensor_parallel() > 1 &&
      (p.tp * p.cp * p.dp) % p.ep == 0 && sc.model.moe.experts % p.ep == 0) {
    add(fmt::format("expert_tp {} -> 1", p.expert_tensor_parallel()),
        "whole experts per rank: no expert-TP gather/scatter, fewer and larger expert GEMMs, more expert memory",
        {{"parallel.expert_tp", "1"}});
  }
  // Context parallelism: the other ways of exchanging K and V.
  if (p.cp > 1) {
    for (ContextParallelKind k : {ContextParallelKind::ring, ContextParallelKind::ring_allgather,
                                  ContextParallelKind::ulysses, ContextParallelKind::all_gather}) {
      if (k == p.cp_kind) continue;
      add(fmt::format("context parallelism: {} -> {}", enum_name(p.cp_kind), enum_name(k)),
          k == ContextParallelKind::ring ? "K/V blocks passed around the ring under each attention step"
          : k == ContextParallelKind::ring_allgather
              ? "the ring's steps over K/V all-gathered once under its first step (PyTorch's default rotater)"
          : k == ContextParallelKind::ulysses ? "all-to-alls re-shard Q, K, V by heads; not overlapped"
                                              : "K and V all-gathered before attention (small under GQA)",
          {{"parallel.cp_kind", std::string(enum_name(k))}});
    }
  }
  if (sc.precision.compute != DataType::fp8 && sc.system.gpu.supports(DataType::fp8)) {
    // Only the GEMM format changes: a precision mapping keeps its weights, gradients and optimizer
    // states (moments, master_remainders); a one-word precision is its own shorthand, so the word.
    const bool shorthand = sc.precision == precision_shorthand(sc.precision.compute);
    add(fmt::format("FP8 compute: precision {} -> fp8", to_string(sc.precision.compute)),
        "FP8 tensor cores double the dense peak of 16-bit ones (Transformer Engine)",
        {{shorthand ? "precision" : "precision.compute", "fp8"}});
  }
  // FP8 attention under FP8 training, where cuDNN's FP8 SDPA is measured (model/op_time.h
  // flash_fp8_speedup). `--set precision.KEY=...` turns a one-word precision into the mapping that
  // keeps its word (scenario_loader.cpp precision_mapping_of), so these edits name the key alone.
  const GpuArchitecture arch = sc.system.gpu.architecture;
  if (is_quantized_training_format(sc.precision.compute) && !sc.precision.fp8_attention && t.flash_attention &&
      t.attention_kernel == AttentionKernel::best && (arch == GpuArchitecture::hopper || arch == GpuArchitecture::blackwell)) {
    add("FP8 attention (fp8_attention)", "Transformer Engine's FP8 dot-product attention runs cuDNN's FP8 fused kernel",
        {{"precision.fp8_attention", "true"}});
  }
  // MXFP8 weights in place of BF16 ones (Megatron-Core --fp8-param-gather with
  // --reuse-grad-buf-for-mxfp8-param-ag): 2 bytes a parameter less, the same BF16 parameter
  // all-gather (PrecisionConfig::distributed_optimizer_gather), so it matters where memory binds.
  if (sc.precision.compute == DataType::mxfp8 && sc.precision.params == DataType::bf16 &&
      mxfp8_weights_supported(p.zero, p.dp) &&
      p.offload != Offload::optimizer_and_params && !sc.precision.master_remainders) {
    add("MXFP8 weights (params: mxfp8)",
        "weights kept as their MXFP8 row- and column-wise copies, no BF16 copy (Megatron-Core --fp8-param-gather "
        "with --reuse-grad-buf-for-mxfp8-param-ag)",
        {{"precision.params", "mxfp8"}});
  }
  // FP8 weights in place of BF16 ones under per-tensor FP8 (Megatron-Core --fp8-param-gather, which
  // NeMo's and Megatron-Bridge's FP8 recipes set): the weights are the FP8 copy (and its transpose
  // where FP8 GEMMs need one), no BF16 copy, and the parameter all-gathers move FP8.
  if (sc.precision.compute == DataType::fp8 && sc.precision.params == DataType::bf16 &&
      !sc.precision.master_remainders) {
    add("FP8 weights (params: fp8)",
        "weights kept as their FP8 copy, no BF16 copy; the parameter all-gathers move FP8 (Megatron-Core "
        "--fp8-param-gather)",
        {{"precision.params", "fp8"}});
  }
  // Per-tensor FP8 with delayed scaling: current scaling drops the amax history and the per-chunk
  // amax all-reduce over the stage's ranks (simulator/layer_costs.h), for an amax pass before each
  // cast (model/layer_ops.h). The other way is not offered: some recompute modules need current
  // scaling (scenario_checks.cpp).
  if (sc.precision.compute == DataType::fp8 && sc.precision.fp8_scaling == Fp8Scaling::delayed) {
    add("FP8 scaling: delayed -> current",
        "each tensor scaled by its own amax (Transformer Engine Float8CurrentScaling): no amax all-reduce over the "
        "stage's ranks per chunk and pass, one more read of each tensor before its cast",
        {{"precision.fp8_scaling", "current"}});
    // The same recipe with its amax reduced over the tensor- and context-parallel ranks alone.
    if (sc.precision.fp8_amax_group == Fp8AmaxGroup::stage && p.dp > 1) {
      add("FP8 amax group: stage -> tp (tp_only_amax_red)",
          "delayed scaling's per-chunk amax all-reduce over the TP and CP ranks only, not every rank of the stage "
          "(Megatron-Core --tp-only-amax-red)",
          {{"precision.fp8_amax_group", "tp"}});
    }
  }
  return out;
}

// An explain edit in memory: a precision.KEY edit sets that one field, as `--set precision.KEY=...`
// does on the loaded precision (a one-word precision's FP8-compute edit is `precision`, the word);
// every other key takes the sweep's in-memory path. A value that does not parse is not applied.
bool apply_edit(Scenario& scenario, const Override& o) {
  PrecisionConfig& precision = scenario.precision;
  if (o.key_path == "precision.fp8_attention") {
    if (o.value != "true" && o.value != "false") return false;
    precision.fp8_attention = o.value == "true";
    return true;
  }
  const auto set = [&](auto parsed, auto& field) {
    if (!parsed) return false;
    field = *parsed;
    return true;
  };
  if (o.key_path == "precision.fp8_scaling") return set(parse_enum<Fp8Scaling>(o.value), precision.fp8_scaling);
  if (o.key_path == "precision.fp8_amax_group") return set(parse_enum<Fp8AmaxGroup>(o.value), precision.fp8_amax_group);
  if (o.key_path == "precision.params") return set(parse_datatype(o.value), precision.params);
  if (o.key_path == "precision.compute") return set(parse_datatype(o.value), precision.compute);
  return apply_override_in_memory(scenario, o);
}

}  // namespace stepcast
