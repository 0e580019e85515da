#pragma once
// A complete, valid scenario: model, system, parallelism, precision and workload.
//
// Scenarios are built only by the loader (simulator/scenario_loader.h), which guarantees the
// invariants below, so cost functions never re-check them:
//   parallel.tp * pp * dp * cp == system.gpus
//   heads % tp == 0, kv_heads % tp == 0 or tp % kv_heads == 0 (KV heads replicated)
//   layers splits over pp * vpp model chunks (with first/last_stage_layers if given)
//   for training: global_batch % (dp * micro_batch) == 0
// Tests may build scenarios by hand; they must respect the same invariants.

#include <string>
#include <variant>

#include "model/hardware.h"
#include "model/parallel.h"
#include "model/precision.h"
#include "model/transformer.h"
#include "model/workload.h"

namespace stepcast {

struct Scenario {
  std::string name;
  std::string source;         // file it was loaded from ("<builtin>/..." for the built-in ones)
  TransformerSpec model;
  SystemSpec system;
  ParallelConfig parallel;
  PrecisionConfig precision;
  std::variant<TrainingWorkload, InferenceWorkload> workload;

  [[nodiscard]] bool is_training() const { return std::holds_alternative<TrainingWorkload>(workload); }
  [[nodiscard]] const TrainingWorkload& training() const { return std::get<TrainingWorkload>(workload); }
  [[nodiscard]] const InferenceWorkload& inference() const { return std::get<InferenceWorkload>(workload); }
  bool operator==(const Scenario&) const = default;
};

}  // namespace stepcast
