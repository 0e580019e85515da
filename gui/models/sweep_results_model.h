#pragma once
// The configurations a layout search kept (simulator/training_search.h), one row each, best
// first: the layout keys, the predicted step time, throughput, MFU and peak memory, whether it
// fits, and whether it is on the Pareto front of throughput against peak memory among the rows
// (no other row is at least as fast with at most as much memory, and better in one).
//
// Values come from the search's own result rows (FieldTable::training()); SortRole gives the raw
// number for sorting and filtering. scenario_of(row) rebuilds a row's full scenario from its point
// index in the layout space, to load it into the editor.

#include <optional>
#include <vector>

#include "gui/models/table_model.h"
#include "model/scenario.h"
#include "simulator/training_layouts.h"
#include "simulator/training_search.h"

namespace stepcast::gui {

class SweepResultsModel : public TableModel {
  Q_OBJECT

 public:
  explicit SweepResultsModel(QObject* parent = nullptr);

  void set_result(const Scenario& base, const LayoutSpaceOptions& space, SearchResult result);
  void clear();

  [[nodiscard]] const SearchResult& result() const { return m_result; }
  // Per row (search order): its throughput, peak memory and Pareto flag, for the scatter plot.
  struct Point {
    double tokens_per_s = 0.0;
    double peak_memory = 0.0;
    bool fits = true;
    bool pareto = false;
  };
  [[nodiscard]] const std::vector<Point>& points() const { return m_points; }
  // The scenario of a row (a source-model row, not a proxy's), or nothing when out of range.
  [[nodiscard]] std::optional<Scenario> scenario_of(int row) const;
  // "tp 8, pp 8, dp 16, vpp 3, mb 1, sp, 1f1b, selective, zero 1": a row's layout in one line.
  [[nodiscard]] QString describe(int row) const;

 private:
  std::optional<Scenario> m_base;
  LayoutSpaceOptions m_space;
  SearchResult m_result;
  std::vector<Point> m_points;
};

}  // namespace stepcast::gui
