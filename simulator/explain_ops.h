#pragma once
// `stepcast explain --ops N`: where a layer's time goes, kernel by kernel. For the critical
// pipeline stage of a training prediction, one table per layer kind the stage holds (dense, MoE,
// the first dense layers of a MoE model, FP8's BF16 edge layers) and for the embedding and the
// output layer: the ops of one micro-batch's forward, backward and recomputation, sorted by time,
// with their shapes, FLOPs, HBM bytes, time and what bounds each one; the pass totals; and how
// many times each pass runs per step. The times are the KernelPass times the prediction charges
// (simulator/layer_kernels.h through TrainingPredictor::step_kernels), not a second costing; the
// view only sums and sorts them, and checks its sums against the prediction's compute and
// recompute lines.
//
// What bounds an op: the largest term of its time (model/op_time.h OpTiming: compute, memory, or
// the kernel gap). A pass stretch whose host dispatch takes longer than its kernels run (launches x
// CostParameters::training_host_dispatch_s) adds a "(host launch wait)" row for the difference,
// bound "host launch", so that a table's shares add up to its layer's time.

#include <cstddef>
#include <string>
#include <vector>

#include "model/scenario.h"
#include "simulator/training_predictor.h"

namespace stepcast {

struct KernelRow {
  std::string name;   // the op's name, or "(host launch wait)"
  std::string phase;  // "fwd", "bwd", "recompute"
  const Op* op = nullptr;  // null for a host launch wait
  OpTiming timing;    // zero terms for a host launch wait
  Seconds time;
  std::string bound;  // "compute", "memory", "kernel gap", "host launch"
  double share = 0.0; // of the layer's time per micro-batch (the sum of its passes)
};

// One table: the passes of one layer kind (or of the embedding or output layer), one micro-batch.
struct KernelTable {
  std::string title;
  std::vector<KernelRow> rows;  // every op and host wait of the passes, longest first
  Seconds forward, backward, recompute;  // the pass times (KernelPass::time)
  double passes = 0.0;            // forward and backward passes per step on the critical stage
  double recompute_passes = 0.0;
  [[nodiscard]] Seconds time() const { return forward + backward + recompute; }
};

// The rows of `passes` (phase name, pass), sorted by time, longest first (ties in list order).
std::vector<KernelRow> kernel_rows(const std::vector<std::pair<std::string, const KernelPass*>>& passes);

// One table per layer kind, then the embedding's and the output layer's.
std::vector<KernelTable> kernel_tables(const StepKernels& kernels);

// The sums the view checks against the prediction: kernel pass times x passes per step.
struct KernelReconciliation {
  Seconds compute;     // forward + backward passes of every table
  Seconds recompute;   // recompute passes
};
KernelReconciliation reconcile(const std::vector<KernelTable>& tables);

// The text: each table's first `rows` rows, its totals, and the reconciliation.
std::string kernel_tables_text(const Scenario& scenario, const StepKernels& kernels, std::size_t rows);

}  // namespace stepcast
