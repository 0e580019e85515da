#include "simulator/explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>

#include "model/activation_offload.h"
#include "model/op_checkpoint.h"
#include "model/placement.h"
#include "simulator/enum_names.h"
#include "simulator/scenario_checks.h"
#include "simulator/sweep_points.h"
#include "simulator/training_predictor.h"

namespace stepcast {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Below this share of the step, no single overhead is called the bottleneck: the step is compute-bound.
constexpr double kOverheadWorthNaming = 0.10;

std::string seconds_text(Seconds t) {
  const double s = t.value();
  if (std::abs(s) >= 1.0) return fmt::format("{:.3f} s", s);
  if (std::abs(s) >= 1e-3) return fmt::format("{:.1f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

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

// One candidate edit: a title, what it acts on, and the overrides that make it.
struct Edit {
  std::string title;
  std::string why;
  std::vector<Override> overrides;
};

std::string str(long long v) { return std::to_string(v); }

std::vector<Edit> candidate_edits(const Scenario& sc) {
  const ParallelConfig& p = sc.parallel;
  const TrainingWorkload& t = sc.training();
  const int per_replica = t.global_batch / std::max(p.dp, 1);
  const int m = per_replica / std::max(t.micro_batch, 1);
  std::vector<Edit> out;
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
      (p.zero == 1 || p.zero == 2 || p.dp == 1) &&
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

// An explain edit in memory: precision.compute sets the GEMM format alone (the edit for a
// precision mapping; a one-word precision is edited as `precision`, the word); every other key
// takes the sweep's in-memory path.
bool apply_edit(Scenario& scenario, const Override& o) {
  if (o.key_path == "precision.fp8_attention") {
    scenario.precision.fp8_attention = o.value == "true";
    return true;
  }
  if (o.key_path == "precision.fp8_scaling") {
    scenario.precision.fp8_scaling = o.value == "current" ? Fp8Scaling::current : Fp8Scaling::delayed;
    return true;
  }
  if (o.key_path == "precision.params" && (o.value == "mxfp8" || o.value == "fp8")) {
    scenario.precision.params = o.value == "fp8" ? DataType::fp8 : DataType::mxfp8;
    return true;
  }
  if (o.key_path == "precision.fp8_amax_group") {
    scenario.precision.fp8_amax_group = o.value == "tp" ? Fp8AmaxGroup::tp : Fp8AmaxGroup::stage;
    return true;
  }
  if (o.key_path != "precision.compute") return apply_override_in_memory(scenario, o);
  const auto format = parse_datatype(o.value);
  if (!format) return false;
  scenario.precision.compute = *format;
  return true;
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
  for (Edit& e : candidate_edits(scenario)) {
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
