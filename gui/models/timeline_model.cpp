#include "gui/models/timeline_model.h"

#include <algorithm>

#include "gui/models/display_units.h"

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

TimelineModel::TimelineModel(QObject* parent)
    : TableModel({QStringLiteral("Stage"), QStringLiteral("Pass"), QStringLiteral("Micro-batch"),
                  QStringLiteral("Chunk"), QStringLiteral("Start"), QStringLiteral("End")},
                 parent) {}

void TimelineModel::set_timeline(std::vector<TimelineEntry> entries, int stages, double bubble_fraction) {
  m_entries = std::move(entries);
  m_stages = stages;
  m_bubble_fraction = bubble_fraction;
  m_end = 0.0;
  for (const auto& e : m_entries) m_end = std::max(m_end, e.end.value());
  const TimeUnit unit = time_unit_for(m_end);
  std::vector<std::vector<Cell>> rows;
  rows.reserve(m_entries.size());
  for (const auto& e : m_entries) {
    rows.push_back({number_cell(e.stage, QString::number(e.stage)), text_cell(pass_name(e.kind)),
                    number_cell(e.microbatch, QString::number(e.microbatch)),
                    number_cell(e.chunk, QString::number(e.chunk)),
                    number_cell(e.start.value(), QString::number(e.start.value() * unit.per_second, 'f', 3)),
                    number_cell(e.end.value(), QString::number(e.end.value() * unit.per_second, 'f', 3))});
  }
  reset_table({QStringLiteral("Stage"), QStringLiteral("Pass"), QStringLiteral("Micro-batch"), QStringLiteral("Chunk"),
               QStringLiteral("Start (%1)").arg(unit.name), QStringLiteral("End (%1)").arg(unit.name)},
              std::move(rows));
}

}  // namespace stepcast::gui
