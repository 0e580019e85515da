#include "gui/models/memory_model.h"

#include <algorithm>

#include "gui/models/components.h"
#include "gui/models/display_units.h"

namespace stepcast::gui {

MemoryModel::MemoryModel(QObject* parent) : TableModel({QStringLiteral("Stage")}, parent) {}

void MemoryModel::set_memory(std::vector<MemoryBreakdown> rows, QStringList row_names, double capacity) {
  m_rows = std::move(rows);
  m_names = std::move(row_names);
  m_capacity = capacity;
  m_shown.clear();
  const std::size_t count = memory_components(MemoryBreakdown{}).size();
  for (std::size_t i = 0; i < count; ++i) {
    const bool nonzero = std::any_of(m_rows.begin(), m_rows.end(),
                                     [&](const MemoryBreakdown& m) { return memory_components(m)[i].value > 0.0; });
    if (nonzero) m_shown.push_back(static_cast<int>(i));
  }
  QStringList headers{QStringLiteral("Stage")};
  const auto names = memory_components(MemoryBreakdown{});
  for (int i : m_shown) headers << names[static_cast<std::size_t>(i)].label + QStringLiteral(" (GiB)");
  headers << QStringLiteral("Peak (GiB)") << QStringLiteral("Capacity (GiB)") << QStringLiteral("Fits");

  std::vector<std::vector<Cell>> table;
  for (std::size_t r = 0; r < m_rows.size(); ++r) {
    const auto parts = memory_components(m_rows[r]);
    std::vector<Cell> row{text_cell(r < static_cast<std::size_t>(m_names.size()) ? m_names[static_cast<int>(r)]
                                                                                : QString::number(r))};
    for (int i : m_shown) {
      const double v = parts[static_cast<std::size_t>(i)].value;
      row.push_back(number_cell(v, QString::number(v / kGiB, 'f', 2)));
    }
    const double peak = m_rows[r].peak.value();
    row.push_back(number_cell(peak, QString::number(peak / kGiB, 'f', 2)));
    row.push_back(number_cell(m_capacity, QString::number(m_capacity / kGiB, 'f', 1)));
    const bool fits = peak <= m_capacity;
    row.push_back(Cell{fits ? QStringLiteral("yes") : QStringLiteral("no: out of memory"), fits, {}});
    table.push_back(std::move(row));
  }
  reset_table(headers, std::move(table));
}

}  // namespace stepcast::gui
