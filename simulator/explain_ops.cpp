#include "simulator/explain_ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace stepcast {
namespace {

std::string seconds_text(Seconds t) {
  const double s = t.value();
  if (std::abs(s) >= 1.0) return fmt::format("{:.3f} s", s);
  if (std::abs(s) >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}

std::string_view kind_name(OpKind k) {
  switch (k) {
    case OpKind::gemm: return "gemm";
    case OpKind::flash_forward: return "flash fwd";
    case OpKind::flash_backward: return "flash bwd";
    case OpKind::memory_bound: return "memory-bound";
    case OpKind::data_movement: return "data movement";
    case OpKind::reduction: return "reduction";
  }
  return "?";
}

std::string_view bound_name(OpBound b) {
  switch (b) {
    case OpBound::compute: return "compute";
    case OpBound::memory: return "memory";
    case OpBound::kernel_gap: return "kernel gap";
  }
  return "?";
}

// GEMM: m x n x k x batch (and the launches of a per-expert loop); attention: b*h, s_q, s_kv, d.
std::string shape_text(const Op& op) {
  if (op.kind == OpKind::gemm) {
    std::string s = fmt::format("{:g}x{:g}x{:g}x{:g}", op.gemm.m, op.gemm.n, op.gemm.k, op.gemm.batch);
    if (op.launches > 1.0) s += fmt::format(" ({:g} launches)", op.launches);
    return s;
  }
  if (op.kind == OpKind::flash_forward || op.kind == OpKind::flash_backward) {
    const AttentionShape& a = op.attention;
    if (a.batch_heads <= 0.0) return "unknown";
    return fmt::format("bh {:g} sq {:g} skv {:g} d {:g}{}", a.batch_heads, a.seq_q, a.seq_kv, a.head_dim,
                       a.causal ? " causal" : "");
  }
  return op.launches > 1.0 ? fmt::format("({:g} launches)", op.launches) : std::string("-");
}

bool has_dtype(const Op& op) { return op.kind == OpKind::gemm || op.kind == OpKind::flash_forward || op.kind == OpKind::flash_backward; }

}  // namespace

std::vector<KernelRow> kernel_rows(const std::vector<std::pair<std::string, const KernelPass*>>& passes) {
  std::vector<KernelRow> rows;
  for (const auto& [phase, pass] : passes) {
    for (int i = 0; i < pass->ops.size(); ++i) {
      const OpTiming& t = pass->timings[static_cast<std::size_t>(i)];
      rows.push_back({std::string(pass->ops[i].name), phase, &pass->ops[i], t, t.total, std::string(bound_name(op_bound(t))), 0.0});
    }
    for (int s = 0; s < pass->stretch_count; ++s) {
      const KernelStretch& st = pass->stretches[static_cast<std::size_t>(s)];
      if (st.host_bound()) rows.push_back({"(host launch wait)", phase, nullptr, {}, st.host - st.gpu, "host launch", 0.0});
    }
  }
  Seconds total(0.0);
  for (const KernelRow& r : rows) total += r.time;
  for (KernelRow& r : rows) r.share = total.value() > 0.0 ? r.time / total : 0.0;
  std::stable_sort(rows.begin(), rows.end(), [](const KernelRow& a, const KernelRow& b) { return a.time > b.time; });
  return rows;
}

std::vector<KernelTable> kernel_tables(const StepKernels& k) {
  std::vector<KernelTable> tables;
  for (const StageLayerKernels& layer : k.layers) {
    KernelTable t;
    t.title = fmt::format("{} layer", layer.kind);
    std::vector<std::pair<std::string, const KernelPass*>> passes = {{"fwd", &layer.kernels.forward},
                                                                      {"bwd", &layer.kernels.backward}};
    if (!layer.kernels.recompute.empty()) passes.emplace_back("recompute", &layer.kernels.recompute);
    t.rows = kernel_rows(passes);
    t.forward = layer.kernels.forward.time();
    t.backward = layer.kernels.backward.time();
    t.recompute = layer.kernels.recompute.time();
    t.passes = layer.passes;
    t.recompute_passes = layer.recompute_passes;
    tables.push_back(std::move(t));
  }
  const EmbeddingOutputKernels& e = k.embedding_output;
  // The embedding and the output layer: a forward and a backward list each, no recompute.
  const auto forward_backward_table = [&](std::string title, const auto& forward, const auto& backward, auto passes) {
    KernelTable t;
    t.title = std::move(title);
    t.rows = kernel_rows({{"fwd", &forward}, {"bwd", &backward}});
    t.forward = forward.time();
    t.backward = backward.time();
    t.passes = passes;
    tables.push_back(std::move(t));
  };
  forward_backward_table("embedding", e.embedding_forward, e.embedding_backward, k.embedding_passes);
  forward_backward_table("output layer and loss", e.output_forward, e.output_backward, k.output_passes);
  if (k.mtp_passes > 0.0) {
    forward_backward_table("multi-token prediction (embedding, norms, eh_proj)", e.mtp_forward, e.mtp_backward,
                           k.mtp_passes);
  }
  return tables;
}

KernelReconciliation reconcile(const std::vector<KernelTable>& tables) {
  KernelReconciliation r;
  for (const KernelTable& t : tables) {
    r.compute += (t.forward + t.backward) * t.passes;
    r.recompute += t.recompute * t.recompute_passes;
  }
  return r;
}

std::string kernel_tables_text(const Scenario& sc, const StepKernels& k, std::size_t max_rows) {
  const TrainingPrediction& p = k.prediction;
  const std::vector<KernelTable> tables = kernel_tables(k);
  std::string out;
  out += fmt::format("\nKernels of one micro-batch on the critical pipeline stage (stage {} of {}), one tensor-parallel rank, "
                     "{} (top {} by time):\n",
                     k.critical_stage, std::max(sc.parallel.pp, 1), sc.system.gpu.name, max_rows);
  for (const KernelTable& t : tables) {
    const Seconds layer = t.time();
    out += fmt::format("\n{}: fwd {}, bwd {}", t.title, seconds_text(t.forward), seconds_text(t.backward));
    if (t.recompute.value() > 0.0) out += fmt::format(", recompute {}", seconds_text(t.recompute));
    out += fmt::format("; {} per micro-batch\n", seconds_text(layer));
    if (t.title == "embedding" || t.title == "output layer and loss") {
      out += t.passes > 0.0 ? fmt::format("  runs {:.10g} times per step on this stage (once per micro-batch)\n", t.passes)
                            : std::string("  not on the critical stage: none of its passes counts in this stage's compute\n");
    } else {
      const double layers = t.passes / std::max(k.microbatches, 1);
      out += fmt::format("  runs {:.10g} times per step on this stage: {:.10g} {} x {} {}", t.passes, layers,
                         layers == 1.0 ? "layer" : "layers", k.microbatches, k.microbatches == 1 ? "micro-batch" : "micro-batches");
      if (t.recompute_passes > 0.0 && t.recompute_passes < t.passes) {
        out += fmt::format("; recomputed in {:.10g} of them", t.recompute_passes);
      }
      out += "\n";
    }
    // The op column fits the longest name shown (26 characters at least).
    std::size_t name_width = 26;
    for (std::size_t j = 0; j < t.rows.size() && j < max_rows; ++j) name_width = std::max(name_width, t.rows[j].name.size());
    out += fmt::format("  {:>3} {:<{}} {:<9} {:<12} {:<32} {:<6} {:>10} {:>10} {:>11}  {:<11} {:>6}\n", "#", "op", name_width,
                       "phase", "kind", "shape (gemm m x n x k x batch)", "dtype", "GFLOP", "MB", "time", "bound", "share");
    Seconds shown(0.0);
    std::size_t i = 0;
    for (; i < t.rows.size() && i < max_rows; ++i) {
      const KernelRow& r = t.rows[i];
      shown += r.time;
      const Op* op = r.op;
      out += fmt::format("  {:>3} {:<{}} {:<9} {:<12} {:<32} {:<6} {:>10} {:>10} {:>11}  {:<11} {:>5.1f}%\n", i + 1, r.name,
                         name_width, r.phase, op ? kind_name(op->kind) : "-", op ? shape_text(*op) : "-",
                         op && has_dtype(*op) ? to_string(op->dtype) : "-",
                         op && op->flops.value() > 0.0 ? fmt::format("{:.2f}", op->flops.value() / 1e9) : "-",
                         op ? fmt::format("{:.1f}", op->bytes.value() / 1e6) : "-", seconds_text(r.time), r.bound,
                         100.0 * r.share);
    }
    if (i < t.rows.size()) {
      const Seconds rest = layer - shown;
      out += fmt::format("      ({} more rows: {}, {:.1f}%)\n", t.rows.size() - i, seconds_text(rest),
                         layer.value() > 0.0 ? 100.0 * (rest / layer) : 0.0);
    }
    out += fmt::format("  per step: {:.10g} x (fwd + bwd) = {}", t.passes, seconds_text((t.forward + t.backward) * t.passes));
    if (t.recompute_passes > 0.0) {
      out += fmt::format(", recompute {:.10g} x {} = {}", t.recompute_passes, seconds_text(t.recompute),
                         seconds_text(t.recompute * t.recompute_passes));
    }
    out += "\n";
  }
  const KernelReconciliation r = reconcile(tables);
  const auto gap = [](Seconds sum, Seconds line) {
    return line.value() > 0.0 ? fmt::format("{:+.3f}%", 100.0 * (sum - line).value() / line.value()) : std::string("-");
  };
  out += fmt::format("\nThe tables against the step's breakdown (critical stage): kernels x passes = {}, the compute line "
                     "{} ({}); recompute {} against {} ({}).\n",
                     seconds_text(r.compute), seconds_text(p.time.compute), gap(r.compute, p.time.compute),
                     seconds_text(r.recompute), seconds_text(p.time.recompute), gap(r.recompute, p.time.recompute));
  out += "Left out of the tables: tensor-, expert-, context- and data-parallel communication, pipeline bubble and "
         "transfers, the optimizer step, offload and the per-step overhead (the breakdown's other lines). Each pass's "
         "host dispatch is in it (the host launch wait rows); overlap between passes is not.\n";
  return out;
}

}  // namespace stepcast
