#pragma once
// Pipeline timeline table (the Gantt chart's data): one row per pass of one micro-batch of one
// model chunk on one stage, in the predictor's order. Start and end in seconds from the start of
// the step (SortRole), shown in one unit for the whole step. The Gantt view paints entries()
// directly: thousands of bars are cheaper to read as a vector than through data().

#include <vector>

#include "gui/models/table_model.h"
#include "model/prediction.h"

namespace stepcast::gui {

class TimelineModel : public TableModel {
  Q_OBJECT

 public:
  explicit TimelineModel(QObject* parent = nullptr);

  // `stages` pipeline stages; `bubble_fraction` of the step idle on the critical stage.
  void set_timeline(std::vector<TimelineEntry> entries, int stages, double bubble_fraction);
  void clear() { set_timeline({}, 0, 0.0); }

  [[nodiscard]] const std::vector<TimelineEntry>& entries() const { return m_entries; }
  [[nodiscard]] int stages() const { return m_stages; }
  [[nodiscard]] double bubble_fraction() const { return m_bubble_fraction; }
  [[nodiscard]] double end_seconds() const { return m_end; }

 private:
  std::vector<TimelineEntry> m_entries;
  int m_stages = 0;
  double m_bubble_fraction = 0.0;
  double m_end = 0.0;
};

QString pass_name(TimelineEntry::Kind kind);

}  // namespace stepcast::gui
