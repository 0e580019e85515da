#pragma once
// The base of the result tables: a read-only grid of cells, each with the text shown and the raw
// value sorted on, filled all at once by the concrete models' set_*() functions (a model reset).
//
// Roles: DisplayRole the formatted text (with its unit where the header has none), SortRole the
// raw number or text (what QSortFilterProxyModel and CSV export use), ToolTipRole, TextAlignment
// (numbers right-aligned) and DecorationRole (a row's colour, matching its chart series).

#include <QAbstractTableModel>
#include <QColor>
#include <QStringList>
#include <QVariant>

#include <vector>

namespace stepcast::gui {

struct Cell {
  QString text;
  QVariant raw;     // double, int, bool or QString
  QString tooltip;
  bool left = false;  // left-align even a number (sentences in a value column)
};

class TableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  static constexpr int SortRole = Qt::UserRole + 1;

  explicit TableModel(QStringList headers, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  [[nodiscard]] const Cell& cell(int row, int column) const { return m_rows[row][column]; }

 protected:
  // Replaces the whole table (one model reset). Every row must have as many cells as headers.
  void reset_rows(std::vector<std::vector<Cell>> rows, std::vector<QColor> row_colors = {});
  // The same, with new column headers.
  void reset_table(QStringList headers, std::vector<std::vector<Cell>> rows, std::vector<QColor> row_colors = {});

 private:
  QStringList m_headers;
  std::vector<std::vector<Cell>> m_rows;
  std::vector<QColor> m_row_colors;
};

// Cell helpers.
Cell text_cell(const QString& text, const QString& tooltip = {});
Cell number_cell(double value, const QString& text, const QString& tooltip = {});

}  // namespace stepcast::gui
