#include "gui/models/breakdown_model.h"

#include <algorithm>

#include "gui/models/display_units.h"

namespace stepcast::gui {

BreakdownModel::BreakdownModel(QObject* parent) : TableModel({QStringLiteral("Component")}, parent) {}

void BreakdownModel::set_bars(std::vector<Bar> bars) {
  m_bars = std::move(bars);
  m_shown.clear();
  double largest = 0.0;
  std::vector<double> totals;
  for (const Bar& b : m_bars) {
    double total = 0.0;
    for (const Component& c : b.components) total += c.value;
    totals.push_back(total);
    largest = std::max(largest, total);
  }
  const std::size_t count = m_bars.empty() ? 0 : m_bars.front().components.size();
  for (std::size_t i = 0; i < count; ++i) {
    const bool nonzero = std::any_of(m_bars.begin(), m_bars.end(),
                                     [&](const Bar& b) { return b.components[i].value > 0.0; });
    if (nonzero) m_shown.push_back(static_cast<int>(i));
  }
  const TimeUnit unit = time_unit_for(largest);
  QStringList headers{QStringLiteral("Component")};
  for (const Bar& b : m_bars) headers << QStringLiteral("%1 (%2)").arg(b.name, unit.name);
  if (!m_bars.empty()) headers << QStringLiteral("Share of %1").arg(m_bars.front().name.toLower());

  std::vector<std::vector<Cell>> rows;
  std::vector<QColor> colors;
  for (int i : m_shown) {
    const Component& first = m_bars.front().components[static_cast<std::size_t>(i)];
    std::vector<Cell> row{text_cell(first.label, first.key)};
    for (const Bar& b : m_bars) {
      const double v = b.components[static_cast<std::size_t>(i)].value;
      row.push_back(number_cell(v, QString::number(v * unit.per_second, 'f', 3)));
    }
    const double share = totals.front() > 0.0 ? first.value / totals.front() : 0.0;
    row.push_back(number_cell(share, format_percent(share)));
    rows.push_back(std::move(row));
    colors.push_back(first.color);
  }
  reset_table(headers, std::move(rows), std::move(colors));
}

}  // namespace stepcast::gui
