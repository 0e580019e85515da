#include "gui/models/summary_model.h"

#include "gui/models/display_units.h"

namespace stepcast::gui {

QString with_interval(double seconds, const std::optional<PredictionInterval>& interval) {
  if (!interval) return format_seconds(seconds);
  return QStringLiteral("%1 (%2 %: %3 - %4)")
      .arg(format_seconds(seconds))
      .arg(interval->confidence * 100.0, 0, 'f', 0)
      .arg(format_seconds(seconds * interval->lower_ratio), format_seconds(seconds * interval->upper_ratio));
}

SummaryModel::SummaryModel(QObject* parent) : TableModel({QStringLiteral("Quantity"), QStringLiteral("Value")}, parent) {}

void SummaryModel::clear() {
  m_headline.clear();
  reset_rows({});
}

void SummaryModel::set_analysis(const Analysis& a) {
  std::vector<std::vector<Cell>> rows;
  const auto add = [&](const QString& name, const QVariant& raw, const QString& text, const QString& tip = {}) {
    rows.push_back({text_cell(name), Cell{text, raw, tip, true}});
  };
  m_headline.clear();
  if (a.training) {
    const TrainingPrediction& p = *a.training;
    const Scenario& s = *a.evaluation.scenario;
    const double capacity = s.system.gpu.memory.value();
    add(QStringLiteral("Step time"), p.step_time.value(), with_interval(p.step_time.value(), a.interval),
        QString::fromStdString(a.profile));
    add(QStringLiteral("Throughput"), p.tokens_per_s, format_rate(p.tokens_per_s, QStringLiteral("tokens")));
    add(QStringLiteral("MFU"), p.mfu, format_percent(p.mfu), QStringLiteral("model FLOPs / (step time x GPUs x dense peak)"));
    add(QStringLiteral("HFU"), p.hfu, format_percent(p.hfu), QStringLiteral("MFU with recompute FLOPs"));
    add(QStringLiteral("Pipeline bubble"), p.bubble_fraction, format_percent(p.bubble_fraction));
    add(QStringLiteral("Peak memory per GPU"), p.memory.peak.value(),
        QStringLiteral("%1 of %2 (stage %3)").arg(format_bytes(p.memory.peak.value()), format_bytes(capacity)).arg(p.peak_stage));
    add(QStringLiteral("Fits in memory"), p.fits, p.fits ? QStringLiteral("yes") : QStringLiteral("no: out of memory"));
    add(QStringLiteral("GPUs"), s.system.gpus,
        QStringLiteral("%1 x %2").arg(s.system.gpus).arg(QString::fromStdString(s.system.gpu.name)));
    for (const auto& g : p.placement) {
      add(QStringLiteral("%1 placement").arg(QString::fromStdString(g.group).toUpper()), g.size,
          QString::fromStdString(g.description));
    }
    for (const auto& n : p.notes) add(QStringLiteral("Note"), QString::fromStdString(n), QString::fromStdString(n));
    add(QStringLiteral("Calibration"), QString::fromStdString(a.profile), QString::fromStdString(a.profile));
    m_headline = QStringLiteral("Step %1  ·  %2  ·  MFU %3  ·  peak %4 of %5%6")
                     .arg(with_interval(p.step_time.value(), a.interval),
                          format_rate(p.tokens_per_s, QStringLiteral("tokens")), format_percent(p.mfu),
                          format_bytes(p.memory.peak.value()), format_bytes(capacity),
                          p.fits ? QString() : QStringLiteral("  ·  OUT OF MEMORY"));
  }
  reset_rows(std::move(rows));
}

}  // namespace stepcast::gui
