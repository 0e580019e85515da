#pragma once
// `stepcast explain`: where a training step's time and memory go, what bounds it, which changes
// would make it faster (each one predicted, not guessed), and how sensitive the answer is to the
// hardware figures and to the cost model's constants.
//
//   Components   the step's time split as the predictor reports it (model/prediction.h), ranked;
//                the bottleneck is the largest component other than the model's own compute (or
//                memory, when the layout does not fit; or compute itself, when nothing else takes
//                more than a tenth of the step).
//   Changes      candidate edits of the layout and run options, each applied to a copy of the
//                scenario, checked like a file (simulator/scenario_checks.h) and predicted again:
//                more micro-batches (smaller micro_batch), interleaving (vpp), 1F1B instead of
//                GPipe, other TP/PP/DP splits, no, selective or full recompute (and torchtitan's
//                per-op selective_op where the model takes it, model/op_checkpoint.h), the ZeRO
//                stage, sequence parallelism, the overlap flags, FP8 compute, a larger micro-batch.
//                Ranked by the step time they save; layouts that stop fitting in memory are kept
//                apart.
//   Sensitivity  each hardware figure (dense peak, HBM bandwidth, NVLink, NIC bandwidth, intra-node
//                and network latency) and each CostParameters constant moved by -10% and +10%, the
//                step predicted again; a tornado table sorted by the swing.
// Every number comes from a full prediction; nothing is estimated by formula here.

#include <optional>
#include <string>
#include <vector>

#include "model/cost_parameters.h"
#include "model/prediction.h"
#include "model/scenario.h"
#include "simulator/collective_factory.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"

namespace stepcast {

struct ExplainComponent {
  std::string key;    // time_breakdown_s name: "pp_bubble"
  std::string name;   // "pipeline bubble"
  Seconds time;
  double share = 0.0; // of the step
};

struct ExplainChange {
  std::string title;                 // "more micro-batches: micro_batch 2 -> 1"
  std::string why;                   // what it acts on
  std::vector<Override> overrides;   // the change as --set overrides on the scenario
  TrainingPrediction prediction;     // the changed scenario, predicted
  Seconds saved;                     // base step - changed step (negative: slower)
  bool fits = true;
};

struct SensitivityRow {
  std::string name;        // "hardware.memory_bandwidth" or a constant's name
  std::string source;      // where the figure comes from
  double value = 0.0;      // its value in the scenario / model
  Seconds step_minus;      // step at -10%
  Seconds step_plus;       // step at +10%
  Bytes peak_minus;        // peak memory at -10%
  Bytes peak_plus;
  [[nodiscard]] double swing() const { return std::abs(step_plus.value() - step_minus.value()); }
};

struct Explanation {
  TrainingPrediction base;
  std::vector<ExplainComponent> components;  // every non-zero component, largest first
  std::string bottleneck;                    // a component key, or "memory" / "compute"
  std::string bottleneck_text;               // the bottleneck in words, with its numbers
  std::vector<ExplainChange> changes;        // faster ones first (by time saved), then the rest
  std::vector<ExplainChange> no_fit;         // faster, but no longer fit in memory
  std::vector<SensitivityRow> sensitivity;   // largest swing first
  std::vector<std::string> placement;        // one line per parallel group
  // With ExplainOptions::kernels: the kernels behind the base prediction's compute
  // (TrainingPredictor::step_kernels; simulator/explain_ops.h prints them).
  std::optional<StepKernels> kernels;
};

struct ExplainOptions {
  CostParameters parameters;
  CollectiveMaker collectives;    // empty: the default collective model
  double perturbation = 0.10;     // the +-fraction of the tornado
  bool sensitivity = true;
  bool kernels = false;           // fill Explanation::kernels
};

Explanation explain_training(const Scenario& scenario, const ExplainOptions& options = {});

// The explanation for people: components, bottleneck, placement, changes, tornado.
std::string explanation_text(const Scenario& scenario, const Explanation& explanation, std::size_t max_changes = 10,
                             std::size_t max_sensitivity = 15);

}  // namespace stepcast
