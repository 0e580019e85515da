#pragma once
// Step-time breakdown table: one row per time component, one column per stacked bar (a training
// step; for serving the prefill and decode iterations), then each component's share of the first
// bar. Components that are zero in every bar are left out. Values in seconds (SortRole), shown in
// one unit chosen for the largest bar.

#include <vector>

#include "gui/models/components.h"
#include "gui/models/table_model.h"

namespace stepcast::gui {

class BreakdownModel : public TableModel {
  Q_OBJECT

 public:
  struct Bar {
    QString name;                      // "Training step", "Prefill", "Decode step"
    std::vector<Component> components; // the same components, in the same order, for every bar
  };

  explicit BreakdownModel(QObject* parent = nullptr);

  void set_bars(std::vector<Bar> bars);
  void clear() { set_bars({}); }

  [[nodiscard]] const std::vector<Bar>& bars() const { return m_bars; }
  // Components (by index into Bar::components) shown as rows.
  [[nodiscard]] const std::vector<int>& shown_components() const { return m_shown; }

 private:
  std::vector<Bar> m_bars;
  std::vector<int> m_shown;
};

}  // namespace stepcast::gui
