#pragma once
// The scenario editor's fields: which keys of a scenario the window lets people change, how each
// is shown (label with mnemonic, group, kind, unit, range, choices) and its current value read
// from a valid Scenario. The fields depend on the workload (training; static inference; serving).
//
// Values are QVariants: int for integer fields, double for real ones (in the unit shown: requests
// per second, milliseconds), bool, and QString for choices.

#include <QString>
#include <QStringList>
#include <QVariant>

#include <vector>

#include "model/scenario.h"
#include "simulator/catalog.h"

namespace stepcast::gui {

enum class FieldKind { integer, real, choice, boolean };

struct FieldSpec {
  QString key;       // scenario key path ("parallel.tp"); "model", "system", "system.gpu", "precision" are presets
  QString label;     // with a mnemonic ("&TP")
  QString group;     // "Model", "System", "Parallelism", "Precision", "Batching", "Workload", "Serving"
  FieldKind kind = FieldKind::integer;
  QString unit;      // shown after the value ("GPUs", "tokens", "ms")
  QString help;      // tooltip
  double minimum = 1.0;
  double maximum = 1.0e9;
  QString special_value;  // text shown at the minimum instead of the number ("auto", "none")
  QStringList choices;
  QVariant value;
};

// The fields for `scenario`'s workload, with values and choices filled in.
std::vector<FieldSpec> editor_fields(const Scenario& scenario, const Catalog& catalog);

}  // namespace stepcast::gui
