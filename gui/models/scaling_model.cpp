#include "gui/models/scaling_model.h"

#include "gui/models/display_units.h"

namespace stepcast::gui {

ScalingModel::ScalingModel(QObject* parent)
    : TableModel({QStringLiteral("GPUs"), QStringLiteral("DP"), QStringLiteral("Step time (s)"),
                  QStringLiteral("Tokens/s"), QStringLiteral("MFU (%)"), QStringLiteral("Fits")},
                 parent) {}

void ScalingModel::set_points(std::vector<ScalingPoint> points) {
  m_points = std::move(points);
  std::vector<std::vector<Cell>> rows;
  for (const auto& p : m_points) {
    const QString mark = p.current ? QStringLiteral(" (this scenario)") : QString();
    rows.push_back({number_cell(p.gpus, QString::number(p.gpus) + mark), number_cell(p.dp, QString::number(p.dp)),
                    number_cell(p.step_time.value(), QString::number(p.step_time.value(), 'f', 3)),
                    number_cell(p.tokens_per_s, QString::number(p.tokens_per_s, 'f', 0)),
                    number_cell(p.mfu, QString::number(p.mfu * 100.0, 'f', 1)),
                    Cell{p.fits ? QStringLiteral("yes") : QStringLiteral("no"), p.fits, {}}});
  }
  reset_rows(std::move(rows));
}

}  // namespace stepcast::gui
