#pragma once
// The named parts of a prediction, in the order the window lists and stacks them: the step-time
// components of TimeBreakdown and the memory components of MemoryBreakdown, each with a label for
// people, its JSON key (DESIGN.md) and a fixed colour shared by every chart and table.

#include <QColor>
#include <QString>

#include <vector>

#include "model/prediction.h"

namespace stepcast::gui {

struct Component {
  QString key;     // JSON key, e.g. "pp_bubble"
  QString label;   // "Pipeline bubble"
  double value = 0.0;  // seconds or bytes
  QColor color;
};

// Every time component of `t` (seconds), in TimeBreakdown order; they sum to t.total().
std::vector<Component> time_components(const TimeBreakdown& t);
// Every component of an inference iteration (seconds), in StepBreakdown order; they sum to total().
std::vector<Component> step_components(const StepBreakdown& s);
// Every memory component of `m` (bytes) except the peak; they sum to m.peak.
std::vector<Component> memory_components(const MemoryBreakdown& m);

}  // namespace stepcast::gui
