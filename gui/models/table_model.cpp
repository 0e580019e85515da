#include "gui/models/table_model.h"

#include <cassert>

namespace stepcast::gui {

TableModel::TableModel(QStringList headers, QObject* parent)
    : QAbstractTableModel(parent), m_headers(std::move(headers)) {}

int TableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int TableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : m_headers.size(); }

QVariant TableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Cell& c = m_rows[static_cast<std::size_t>(index.row())][static_cast<std::size_t>(index.column())];
  switch (role) {
    case Qt::DisplayRole:
      return c.text;
    case SortRole:
      return c.raw;
    case Qt::ToolTipRole:
      return c.tooltip.isEmpty() ? QVariant() : QVariant(c.tooltip);
    case Qt::TextAlignmentRole: {
      const bool number = !c.left && (c.raw.typeId() == QMetaType::Double || c.raw.typeId() == QMetaType::Int ||
                                       c.raw.typeId() == QMetaType::LongLong);
      return QVariant::fromValue(Qt::AlignVCenter | (number ? Qt::AlignRight : Qt::AlignLeft));
    }
    case Qt::DecorationRole:
      if (index.column() == 0 && static_cast<std::size_t>(index.row()) < m_row_colors.size() &&
          m_row_colors[static_cast<std::size_t>(index.row())].isValid()) {
        return m_row_colors[static_cast<std::size_t>(index.row())];
      }
      return {};
    default:
      return {};
  }
}

QVariant TableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation == Qt::Horizontal && role == Qt::DisplayRole && section >= 0 && section < m_headers.size()) {
    return m_headers[section];
  }
  if (orientation == Qt::Vertical && role == Qt::DisplayRole && section >= 0 && section < rowCount()) {
    return section + 1;
  }
  return {};
}

void TableModel::reset_rows(std::vector<std::vector<Cell>> rows, std::vector<QColor> row_colors) {
  reset_table(m_headers, std::move(rows), std::move(row_colors));
}

void TableModel::reset_table(QStringList headers, std::vector<std::vector<Cell>> rows,
                             std::vector<QColor> row_colors) {
  beginResetModel();
  m_headers = std::move(headers);
  m_rows = std::move(rows);
  m_row_colors = std::move(row_colors);
  for ([[maybe_unused]] const auto& r : m_rows) assert(static_cast<int>(r.size()) == m_headers.size());
  endResetModel();
}

Cell text_cell(const QString& text, const QString& tooltip) { return Cell{text, text, tooltip}; }

Cell number_cell(double value, const QString& text, const QString& tooltip) { return Cell{text, value, tooltip}; }

}  // namespace stepcast::gui
