#include "gui/models/comparison_model.h"

#include <cmath>

#include "gui/models/display_units.h"

namespace stepcast::gui {
namespace {

using Unit = ComparisonSide::Unit;

QString format(double v, Unit unit) {
  switch (unit) {
    case Unit::seconds:
      return format_seconds(v);
    case Unit::bytes:
      return format_bytes(v);
    case Unit::percent:
      return format_percent(v);
    case Unit::tokens_per_s:
      return format_rate(v, QStringLiteral("tokens"));
    case Unit::requests_per_s:
      return format_rate(v, QStringLiteral("requests"));
  }
  return {};
}

void add_components(ComparisonSide& side, const std::vector<Component>& parts, Unit unit, bool time) {
  for (const Component& c : parts) side.rows.push_back({QStringLiteral("  ") + c.label, c.value, unit, c.color, time});
}

}  // namespace

ComparisonSide comparison_side(const TrainingPrediction& p, const QString& name) {
  ComparisonSide s;
  s.name = name;
  s.rows.push_back({QStringLiteral("Step time"), p.step_time.value(), Unit::seconds, {}, false});
  add_components(s, time_components(p.time), Unit::seconds, true);
  s.rows.push_back({QStringLiteral("Throughput"), p.tokens_per_s, Unit::tokens_per_s, {}, false});
  s.rows.push_back({QStringLiteral("MFU"), p.mfu, Unit::percent, {}, false});
  s.rows.push_back({QStringLiteral("Peak memory per GPU"), p.memory.peak.value(), Unit::bytes, {}, false});
  add_components(s, memory_components(p.memory), Unit::bytes, false);
  return s;
}

ComparisonSide comparison_side(const InferencePrediction& p, const QString& name) {
  ComparisonSide s;
  s.name = name;
  s.rows.push_back({QStringLiteral("Decode step"), p.decode_step.total().value(), Unit::seconds, {}, false});
  add_components(s, step_components(p.decode_step), Unit::seconds, true);
  s.rows.push_back({QStringLiteral("TTFT p90"), p.ttft.p90.value(), Unit::seconds, {}, false});
  s.rows.push_back({QStringLiteral("TPOT p90"), p.tpot.p90.value(), Unit::seconds, {}, false});
  s.rows.push_back({QStringLiteral("Output throughput"), p.output_tokens_per_s, Unit::tokens_per_s, {}, false});
  s.rows.push_back({QStringLiteral("Requests"), p.requests_per_s, Unit::requests_per_s, {}, false});
  s.rows.push_back({QStringLiteral("Peak memory per GPU"), p.memory.peak.value(), Unit::bytes, {}, false});
  add_components(s, memory_components(p.memory), Unit::bytes, false);
  return s;
}

ComparisonModel::ComparisonModel(QObject* parent)
    : TableModel({QStringLiteral("Component"), QStringLiteral("A"), QStringLiteral("B"), QStringLiteral("B - A"),
                  QStringLiteral("Share of change")},
                 parent) {}

void ComparisonModel::set_pair(const std::optional<ComparisonSide>& a, const std::optional<ComparisonSide>& b) {
  m_deltas.clear();
  const ComparisonSide empty;
  const ComparisonSide& sa = a ? *a : empty;
  const ComparisonSide& sb = b ? *b : empty;
  const ComparisonSide& order = !sb.rows.empty() ? sb : sa;
  m_headline = order.rows.empty() ? QString() : order.rows.front().label;
  // Shares only when both sides have the same headline time (same kind of workload).
  const bool same_kind = !sa.rows.empty() && !sb.rows.empty() && sa.rows.front().label == sb.rows.front().label;
  m_complete = same_kind;
  const double headline_delta = same_kind ? sb.rows.front().value - sa.rows.front().value : 0.0;

  const auto find = [](const ComparisonSide& s, const QString& label) -> const ComparisonSide::Row* {
    for (const auto& r : s.rows) {
      if (r.label == label) return &r;
    }
    return nullptr;
  };
  const QStringList headers{QStringLiteral("Component"),
                            QStringLiteral("A: %1").arg(a ? sa.name : QStringLiteral("(pin one)")),
                            QStringLiteral("B: %1").arg(sb.name), QStringLiteral("B - A"),
                            QStringLiteral("Share of %1 change").arg(m_headline.toLower())};
  std::vector<std::vector<Cell>> rows;
  std::vector<QColor> colors;
  // Rows of B in B's order, then rows only A has.
  std::vector<const ComparisonSide::Row*> labels;
  for (const auto& r : order.rows) labels.push_back(&r);
  if (&order == &sb) {
    for (const auto& r : sa.rows) {
      if (find(sb, r.label) == nullptr) labels.push_back(&r);
    }
  }
  for (const ComparisonSide::Row* label : labels) {
    const ComparisonSide::Row* ra = find(sa, label->label);
    const ComparisonSide::Row* rb = find(sb, label->label);
    if ((ra == nullptr || ra->value == 0.0) && (rb == nullptr || rb->value == 0.0)) continue;
    const auto cell = [](const ComparisonSide::Row* r) {
      return r != nullptr ? number_cell(r->value, format(r->value, r->unit)) : Cell{QStringLiteral("-"), QVariant(), {}};
    };
    std::vector<Cell> row{text_cell(label->label), cell(ra), cell(rb)};
    if (ra != nullptr && rb != nullptr) {
      const double d = rb->value - ra->value;
      row.push_back(number_cell(d, (d > 0 ? QStringLiteral("+") : QString()) + format(d, label->unit)));
      const bool shared = same_kind && (label->time_component || label == &order.rows.front());
      row.push_back(shared && headline_delta != 0.0
                        ? number_cell(d / headline_delta, format_percent(d / headline_delta))
                        : Cell{});
      if (same_kind && label->time_component && d != 0.0) {
        m_deltas.push_back(Delta{label->label.trimmed(), d, label->color});
      }
    } else {
      row.push_back(Cell{});
      row.push_back(Cell{});
    }
    rows.push_back(std::move(row));
    colors.push_back(label->color);
  }
  reset_table(headers, std::move(rows), std::move(colors));
}

}  // namespace stepcast::gui
