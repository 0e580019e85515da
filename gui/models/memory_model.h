#pragma once
// Memory per GPU table: one row per pipeline stage (one row for inference), one column per memory
// component that is non-zero somewhere, then the peak, the GPU's capacity and whether it fits.
// Values in bytes (SortRole), shown in GiB.

#include <vector>

#include "gui/models/table_model.h"
#include "model/prediction.h"

namespace stepcast::gui {

class MemoryModel : public TableModel {
  Q_OBJECT

 public:
  explicit MemoryModel(QObject* parent = nullptr);

  // `row_names` labels the rows ("Stage 0", ...); `capacity` is the GPU's memory in bytes.
  void set_memory(std::vector<MemoryBreakdown> rows, QStringList row_names, double capacity);
  void clear() { set_memory({}, {}, 0.0); }

  [[nodiscard]] const std::vector<MemoryBreakdown>& rows() const { return m_rows; }
  [[nodiscard]] const QStringList& row_names() const { return m_names; }
  [[nodiscard]] double capacity() const { return m_capacity; }
  // Memory components (index into memory_components()) shown as columns.
  [[nodiscard]] const std::vector<int>& shown_components() const { return m_shown; }

 private:
  std::vector<MemoryBreakdown> m_rows;
  QStringList m_names;
  double m_capacity = 0.0;
  std::vector<int> m_shown;
};

}  // namespace stepcast::gui
