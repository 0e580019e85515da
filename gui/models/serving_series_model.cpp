#include "gui/models/serving_series_model.h"

namespace stepcast::gui {

ServingSeriesModel::ServingSeriesModel(QObject* parent)
    : TableModel({QStringLiteral("Time (s)"), QStringLiteral("Queued requests"), QStringLiteral("Running sequences"),
                  QStringLiteral("KV cache used (%)")},
                 parent) {}

void ServingSeriesModel::set_series(std::vector<ServingSample> samples) {
  m_samples = std::move(samples);
  std::vector<std::vector<Cell>> rows;
  rows.reserve(m_samples.size());
  for (const auto& s : m_samples) {
    rows.push_back({number_cell(s.time.value(), QString::number(s.time.value(), 'f', 2)),
                    number_cell(s.queued, QString::number(s.queued, 'f', 1)),
                    number_cell(s.running, QString::number(s.running, 'f', 1)),
                    number_cell(s.kv_occupancy, QString::number(s.kv_occupancy * 100.0, 'f', 1))});
  }
  reset_rows(std::move(rows));
}

}  // namespace stepcast::gui
