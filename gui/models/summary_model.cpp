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
    m_headline = QStringLiteral("Step %1  ·  %2  ·  MFU %3  ·  peak %4 of %5%6")
                     .arg(with_interval(p.step_time.value(), a.interval),
                          format_rate(p.tokens_per_s, QStringLiteral("tokens")), format_percent(p.mfu),
                          format_bytes(p.memory.peak.value()), format_bytes(capacity),
                          p.fits ? QString() : QStringLiteral("  ·  OUT OF MEMORY"));
  }
  if (a.inference) {
    const InferencePrediction& p = *a.inference;
    const Scenario& s = *a.evaluation.scenario;
    const double capacity = s.system.gpu.memory.value();
    const auto latency = [&](const char* name, const LatencyStats& l) {
      add(QString::fromLatin1(name), l.p90.value(),
          QStringLiteral("p50 %1 · p90 %2 · p99 %3 · mean %4")
              .arg(format_seconds(l.p50.value()), with_interval(l.p90.value(), a.interval), format_seconds(l.p99.value()),
                   format_seconds(l.mean.value())));
    };
    add(QStringLiteral("Mode"), p.serving, p.serving ? QStringLiteral("serving (request stream)") : QStringLiteral("static batch"));
    latency("Time to first token", p.ttft);
    latency("Time per output token", p.tpot);
    latency("End-to-end latency", p.e2e);
    add(QStringLiteral("Output throughput"), p.output_tokens_per_s, format_rate(p.output_tokens_per_s, QStringLiteral("tokens")));
    add(QStringLiteral("Request throughput"), p.requests_per_s, format_rate(p.requests_per_s, QStringLiteral("requests")));
    if (p.serving) {
      add(QStringLiteral("Offered load"), p.arrival_rate_per_s, format_rate(p.arrival_rate_per_s, QStringLiteral("requests")));
      add(QStringLiteral("Goodput (meets every SLO)"), p.goodput_requests_per_s,
          format_rate(p.goodput_requests_per_s, QStringLiteral("requests")));
      add(QStringLiteral("SLO attainment"), p.slo_attainment, format_percent(p.slo_attainment));
      add(QStringLiteral("Saturated"), p.saturated,
          p.saturated ? QString::fromStdString(p.saturation) : QStringLiteral("no: the engines keep up"));
      add(QStringLiteral("Mean batch"), p.mean_batch, QString::number(p.mean_batch, 'f', 1) + QStringLiteral(" sequences"));
      add(QStringLiteral("KV cache occupancy"), p.mean_kv_occupancy,
          QStringLiteral("mean %1 · peak %2").arg(format_percent(p.mean_kv_occupancy), format_percent(p.peak_kv_occupancy)));
      add(QStringLiteral("Preemptions"), p.preemptions, QString::number(p.preemptions));
    }
    add(QStringLiteral("Max concurrent sequences"), p.max_concurrent_sequences, QString::number(p.max_concurrent_sequences));
    add(QStringLiteral("Peak memory per GPU"), p.memory.peak.value(),
        QStringLiteral("%1 of %2").arg(format_bytes(p.memory.peak.value()), format_bytes(capacity)));
    add(QStringLiteral("Fits in memory"), p.fits, p.fits ? QStringLiteral("yes") : QStringLiteral("no: out of memory"));
    add(QStringLiteral("GPUs"), s.system.gpus,
        QStringLiteral("%1 x %2").arg(s.system.gpus).arg(QString::fromStdString(s.system.gpu.name)));
    for (const auto& n : p.notes) add(QStringLiteral("Note"), QString::fromStdString(n), QString::fromStdString(n));
    m_headline = QStringLiteral("TTFT p90 %1  ·  TPOT p90 %2  ·  %3%4  ·  peak %5 of %6%7")
                     .arg(with_interval(p.ttft.p90.value(), a.interval), with_interval(p.tpot.p90.value(), a.interval),
                          format_rate(p.output_tokens_per_s, QStringLiteral("tokens")),
                          p.serving ? QStringLiteral("  ·  SLO met by %1").arg(format_percent(p.slo_attainment)) : QString(),
                          format_bytes(p.memory.peak.value()), format_bytes(capacity),
                          !p.fits ? QStringLiteral("  ·  OUT OF MEMORY")
                                  : p.saturated ? QStringLiteral("  ·  SATURATED") : QString());
  }
  if (a.predicted()) {
    add(QStringLiteral("Model variant"), QString::fromStdString(a.profile), QString::fromStdString(a.profile));
    for (const auto& line : a.component_intervals) {
      add(QStringLiteral("Calibrated component"), QString::fromStdString(line), QString::fromStdString(line));
    }
    for (const auto& w : a.warnings) add(QStringLiteral("Warning"), QString::fromStdString(w), QString::fromStdString(w));
  }
  reset_rows(std::move(rows));
}

}  // namespace stepcast::gui
