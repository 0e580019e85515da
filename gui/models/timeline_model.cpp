#include "gui/models/timeline_model.h"

#include <algorithm>

#include "gui/models/table_model.h"

namespace stepcast::gui {

QString pass_name(TimelineEntry::Kind kind) {
  switch (kind) {
    case TimelineEntry::Kind::forward:
      return QStringLiteral("forward");
    case TimelineEntry::Kind::backward:
      return QStringLiteral("backward");
    case TimelineEntry::Kind::backward_input:
      return QStringLiteral("backward (input grad)");
    case TimelineEntry::Kind::backward_weight:
      return QStringLiteral("backward (weight grad)");
    case TimelineEntry::Kind::comm:
      return QStringLiteral("communication");
  }
  return {};
}

TimelineModel::TimelineModel(QObject* parent) : QAbstractTableModel(parent), m_unit(time_unit_for(1.0)) {}

void TimelineModel::set_timeline(std::vector<TimelineEntry> entries, int stages, double bubble_fraction) {
  beginResetModel();
  m_entries = std::move(entries);
  m_stages = stages;
  m_bubble_fraction = bubble_fraction;
  m_end = 0.0;
  for (const auto& e : m_entries) m_end = std::max(m_end, e.end.value());
  m_unit = time_unit_for(m_end);
  endResetModel();
}

int TimelineModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

int TimelineModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant TimelineModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const TimelineEntry& e = m_entries[static_cast<std::size_t>(index.row())];
  if (role == Qt::TextAlignmentRole) {
    return QVariant::fromValue(Qt::AlignVCenter | (index.column() == PassColumn ? Qt::AlignLeft : Qt::AlignRight));
  }
  if (role != Qt::DisplayRole && role != TableModel::SortRole) return {};
  const bool text = role == Qt::DisplayRole;
  switch (index.column()) {
    case StageColumn:
      return text ? QVariant(QString::number(e.stage)) : QVariant(e.stage);
    case PassColumn:
      return pass_name(e.kind);
    case MicrobatchColumn:
      return text ? QVariant(QString::number(e.microbatch)) : QVariant(e.microbatch);
    case ChunkColumn:
      return text ? QVariant(QString::number(e.chunk)) : QVariant(e.chunk);
    case StartColumn:
      return text ? QVariant(QString::number(e.start.value() * m_unit.per_second, 'f', 3)) : QVariant(e.start.value());
    case EndColumn:
      return text ? QVariant(QString::number(e.end.value() * m_unit.per_second, 'f', 3)) : QVariant(e.end.value());
    default:
      return {};
  }
}

QVariant TimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case StageColumn:
      return QStringLiteral("Stage");
    case PassColumn:
      return QStringLiteral("Pass");
    case MicrobatchColumn:
      return QStringLiteral("Micro-batch");
    case ChunkColumn:
      return QStringLiteral("Chunk");
    case StartColumn:
      return QStringLiteral("Start (%1)").arg(m_unit.name);
    case EndColumn:
      return QStringLiteral("End (%1)").arg(m_unit.name);
    default:
      return {};
  }
}

}  // namespace stepcast::gui
