#pragma once
// The named values of one evaluated training configuration: its scenario keys and its predicted
// results. Sweep constraints and objectives name them in expressions, sweep and search outputs
// use them as column names, and merge reads them back.
//
// Names follow the scenario file (parallel.tp, training.micro_batch, system.gpus, model.layers,
// precision.compute) and the JSON of `stepcast predict` (step_time_s, tokens_per_s, mfu, hfu,
// time_breakdown_s.<part>, memory_per_gpu_bytes.<part>, fits). Values are SI (seconds, bytes).
// Derived names:
//   training.microbatches         global_batch / (dp * micro_batch), micro-batches per step
//   system.nodes                  servers the job spans
//   bubble_fraction               pp_bubble / step_time
//   gpu_hours_per_million_tokens  gpus * step_time / 3600 / (tokens per step) * 1e6
//   cost_per_million_tokens_usd   the same times the sweep's gpu_hour_usd (NaN without a price)
//
// Each field is known after one phase of evaluation: `key` from the scenario alone, `memory`
// after the closed-form memory (no timing), `time` after the full prediction. A row is a flat
// array of doubles indexed by slot (words as the index of their spelling, true/false as 1/0).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/prediction.h"
#include "model/scenario.h"
#include "simulator/expression.h"

namespace stepcast {

enum class FieldPhase { key = 0, memory = 1, time = 2 };

struct FieldDef {
  std::string name;
  ExprType type = ExprType::number;  // number, truth or word
  FieldPhase phase = FieldPhase::key;
  std::vector<std::string> words;    // spellings, for ExprType::word
  bool integer = false;              // printed without a fraction
};

class FieldTable {
 public:
  // The fields of a training configuration.
  static const FieldTable& training();
  // The fields of a serving layout (simulator/serving_search.h).
  static const FieldTable& serving();

  [[nodiscard]] std::size_t size() const { return m_fields.size(); }
  [[nodiscard]] const FieldDef& at(int slot) const { return m_fields[static_cast<std::size_t>(slot)]; }
  [[nodiscard]] const std::vector<FieldDef>& fields() const { return m_fields; }
  // -1 when unknown.
  [[nodiscard]] int slot_of(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> names() const;
  // Resolves expression names to this table's slots.
  [[nodiscard]] ExprResolver resolver() const;
  // The latest phase among the fields an expression reads.
  [[nodiscard]] FieldPhase phase_of(const Expression& e) const;

  // A value as output text: words by spelling, truth values as true/false, integers without a
  // fraction, other numbers in the shortest form that reads back as the same double.
  [[nodiscard]] std::string format(int slot, double value) const;

 private:
  std::vector<FieldDef> m_fields;
};

// Column sets for outputs: the layout keys a search varies, and the predicted results.
std::vector<std::string> layout_columns();
std::vector<std::string> result_columns();

// Slots of the training table, for code that fills rows (kept in step with the table's order).
namespace training_slot {
int peak_memory();
int fits();
int step_time();
int tokens_per_s();
int cost_per_million_tokens();
}  // namespace training_slot

// Filling a row of FieldTable::training(); `row` has its size.
void fill_key_fields(const Scenario& scenario, std::span<double> row);
void fill_memory_fields(const MemoryBreakdown& memory, bool fits, std::span<double> row);
// `gpu_hour_usd` <= 0: no price (cost_per_million_tokens_usd is NaN).
void fill_time_fields(const Scenario& scenario, const TrainingPrediction& prediction, double gpu_hour_usd,
                      std::span<double> row);

}  // namespace stepcast
