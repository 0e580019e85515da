#pragma once
// Pipeline timeline table (the Gantt chart's data): one row per pass of one micro-batch of one
// model chunk on one stage, in the predictor's order. Start and end in seconds from the start of
// the step (TableModel::SortRole), shown in one unit for the whole step. Cells are formatted when
// asked (a 1024-GPU step has thousands of passes), and the Gantt view paints entries() directly.

#include <QAbstractTableModel>

#include <vector>

#include "gui/models/display_units.h"
#include "model/prediction.h"

namespace stepcast::gui {

class TimelineModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { StageColumn, PassColumn, MicrobatchColumn, ChunkColumn, StartColumn, EndColumn, ColumnCount };

  explicit TimelineModel(QObject* parent = nullptr);

  // `stages` pipeline stages; `bubble_fraction` of the step idle on the critical stage.
  void set_timeline(std::vector<TimelineEntry> entries, int stages, double bubble_fraction);
  void clear() { set_timeline({}, 0, 0.0); }

  [[nodiscard]] const std::vector<TimelineEntry>& entries() const { return m_entries; }
  [[nodiscard]] int stages() const { return m_stages; }
  [[nodiscard]] double bubble_fraction() const { return m_bubble_fraction; }
  [[nodiscard]] double end_seconds() const { return m_end; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<TimelineEntry> m_entries;
  int m_stages = 0;
  double m_bubble_fraction = 0.0;
  double m_end = 0.0;
  TimeUnit m_unit;
};

QString pass_name(TimelineEntry::Kind kind);

}  // namespace stepcast::gui
