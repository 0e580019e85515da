#include "gui/models/comparison_model.h"

#include <cmath>

#include "gui/models/components.h"
#include "gui/models/display_units.h"

namespace stepcast::gui {

ComparisonModel::ComparisonModel(QObject* parent)
    : TableModel({QStringLiteral("Component"), QStringLiteral("A"), QStringLiteral("B"), QStringLiteral("B - A"),
                  QStringLiteral("Share of step-time change")},
                 parent) {}

void ComparisonModel::set_pair(const std::optional<TrainingPrediction>& a, const QString& a_name,
                               const std::optional<TrainingPrediction>& b, const QString& b_name) {
  m_deltas.clear();
  m_complete = a.has_value() && b.has_value();
  const QStringList headers{QStringLiteral("Component"), QStringLiteral("A: %1").arg(a_name),
                            QStringLiteral("B: %1").arg(b_name), QStringLiteral("B - A"),
                            QStringLiteral("Share of step-time change")};
  std::vector<std::vector<Cell>> rows;
  std::vector<QColor> colors;
  const auto value_cell = [](const std::optional<double>& v, const auto& format) {
    return v ? number_cell(*v, format(*v)) : Cell{QStringLiteral("-"), QVariant(), {}};
  };
  const auto add = [&](const QString& label, std::optional<double> va, std::optional<double> vb, const auto& format,
                       double step_delta, QColor color) {
    std::vector<Cell> row{text_cell(label), value_cell(va, format), value_cell(vb, format)};
    if (va && vb) {
      const double d = *vb - *va;
      row.push_back(number_cell(d, (d > 0 ? QStringLiteral("+") : QString()) + format(d)));
      if (step_delta != 0.0) {
        row.push_back(number_cell(d / step_delta, format_percent(d / step_delta)));
      } else {
        row.push_back(Cell{});
      }
    } else {
      row.push_back(Cell{});
      row.push_back(Cell{});
    }
    rows.push_back(std::move(row));
    colors.push_back(color);
  };
  const auto opt = [](const std::optional<TrainingPrediction>& p, auto get) -> std::optional<double> {
    return p ? std::optional<double>(get(*p)) : std::nullopt;
  };
  const auto seconds = [](double v) { return format_seconds(v); };
  const auto bytes = [](double v) { return format_bytes(v); };
  const auto percent = [](double v) { return format_percent(v); };
  const auto rate = [](double v) { return format_rate(v, QStringLiteral("tokens")); };

  const std::optional<double> step_a = opt(a, [](const auto& p) { return p.step_time.value(); });
  const std::optional<double> step_b = opt(b, [](const auto& p) { return p.step_time.value(); });
  // The step-time change that the time rows' shares divide (0: no shares).
  const double step_delta = step_a && step_b ? *step_b - *step_a : 0.0;
  add(QStringLiteral("Step time"), step_a, step_b, seconds, step_delta, {});
  const auto ca = a ? time_components(a->time) : std::vector<Component>{};
  const auto cb = b ? time_components(b->time) : std::vector<Component>{};
  const auto& names = !ca.empty() ? ca : cb;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::optional<double> va = a ? std::optional<double>(ca[i].value) : std::nullopt;
    const std::optional<double> vb = b ? std::optional<double>(cb[i].value) : std::nullopt;
    if (va.value_or(0.0) == 0.0 && vb.value_or(0.0) == 0.0) continue;
    add(QStringLiteral("  ") + names[i].label, va, vb, seconds, step_delta, names[i].color);
    if (va && vb && *vb != *va) m_deltas.push_back(Delta{names[i].label, *vb - *va, names[i].color});
  }
  add(QStringLiteral("Throughput"), opt(a, [](const auto& p) { return p.tokens_per_s; }),
      opt(b, [](const auto& p) { return p.tokens_per_s; }), rate, 0.0, {});
  add(QStringLiteral("MFU"), opt(a, [](const auto& p) { return p.mfu; }), opt(b, [](const auto& p) { return p.mfu; }),
      percent, 0.0, {});
  add(QStringLiteral("Peak memory per GPU"), opt(a, [](const auto& p) { return p.memory.peak.value(); }),
      opt(b, [](const auto& p) { return p.memory.peak.value(); }), bytes, 0.0, {});
  const auto ma = a ? memory_components(a->memory) : std::vector<Component>{};
  const auto mb = b ? memory_components(b->memory) : std::vector<Component>{};
  const auto& mnames = !ma.empty() ? ma : mb;
  for (std::size_t i = 0; i < mnames.size(); ++i) {
    const std::optional<double> va = a ? std::optional<double>(ma[i].value) : std::nullopt;
    const std::optional<double> vb = b ? std::optional<double>(mb[i].value) : std::nullopt;
    if (va.value_or(0.0) == 0.0 && vb.value_or(0.0) == 0.0) continue;
    add(QStringLiteral("  ") + mnames[i].label, va, vb, bytes, 0.0, mnames[i].color);
  }
  reset_table(headers, std::move(rows), std::move(colors));
}

}  // namespace stepcast::gui
