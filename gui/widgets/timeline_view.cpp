#include "gui/widgets/timeline_view.h"

#include <QFontMetrics>
#include <QPaintEvent>
#include <QPainter>

#include <cmath>

#include "gui/models/display_units.h"
#include "gui/models/timeline_model.h"

namespace stepcast::gui {
namespace {

QColor pass_color(TimelineEntry::Kind kind) {
  // Okabe-Ito blue / vermillion / orange / yellow, grey for transfers (see gui/models/components.cpp).
  switch (kind) {
    case TimelineEntry::Kind::forward:
      return {0, 114, 178};
    case TimelineEntry::Kind::backward:
      return {230, 159, 0};
    case TimelineEntry::Kind::backward_input:
      return {213, 94, 0};
    case TimelineEntry::Kind::backward_weight:
      return {240, 228, 66};
    case TimelineEntry::Kind::comm:
      return {150, 150, 150};
  }
  return Qt::black;
}

const QColor kIdle(250, 215, 210);  // light red: time a stage waits (the bubble)

// A "nice" tick step (1, 2 or 5 times a power of ten) for about `ticks` ticks over `span`.
double tick_step(double span, int ticks) {
  const double raw = span / std::max(ticks, 1);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * power) return m * power;
  }
  return 10.0 * power;
}

}  // namespace

TimelineView::TimelineView(TimelineModel& model, QWidget* parent) : QWidget(parent), m_model(model) {
  setFocusPolicy(Qt::StrongFocus);
  setAutoFillBackground(true);
  setBackgroundRole(QPalette::Base);
  connect(&m_model, &QAbstractItemModel::modelReset, this, qOverload<>(&QWidget::update));
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  QFont title_font = font();
  title_font.setPointSizeF(10.5);
  title_font.setBold(true);
  QFont small = font();
  small.setPointSizeF(8.5);
  const QFontMetrics fm(small);

  const auto& entries = m_model.entries();
  const int stages = m_model.stages();
  p.setFont(title_font);
  const QString title =
      entries.empty() ? tr("Pipeline timeline (no prediction)")
                      : tr("Pipeline timeline: one step of one replica, bubble %1 of the step")
                            .arg(format_percent(m_model.bubble_fraction()));
  const int title_height = QFontMetrics(title_font).height() + 6;
  p.drawText(QRect(0, 2, width(), title_height), Qt::AlignHCenter | Qt::AlignVCenter, title);
  if (entries.empty() || stages <= 0 || m_model.end_seconds() <= 0.0) return;

  p.setFont(small);
  const int left = fm.horizontalAdvance(tr("Stage 00")) + 10;
  const int right = 12;
  const int legend_height = fm.height() + 8;
  const int axis_height = 2 * fm.height() + 8;
  const QRect plot(left, title_height + 2, width() - left - right,
                   height() - title_height - 2 - axis_height - legend_height);
  if (plot.width() < 10 || plot.height() < stages) return;
  const double end = m_model.end_seconds();
  const double lane = static_cast<double>(plot.height()) / stages;
  const auto x_of = [&](double t) { return plot.left() + t / end * plot.width(); };

  for (int s = 0; s < stages; ++s) {
    const QRectF lane_rect(plot.left(), plot.top() + s * lane + 1, plot.width(), lane - 2);
    p.fillRect(lane_rect, kIdle);
    p.setPen(Qt::black);
    p.drawText(QRectF(0, lane_rect.top(), left - 6, lane_rect.height()), Qt::AlignRight | Qt::AlignVCenter,
               tr("Stage %1").arg(s));
  }
  p.setRenderHint(QPainter::Antialiasing, false);
  // Thousands of passes at a pixel or two each: fill only, and outline and number a bar only when
  // it is wide enough to show them (measuring text is what costs).
  const int digit_width = fm.horizontalAdvance(QLatin1Char('0'));
  for (const TimelineEntry& e : entries) {
    if (e.stage < 0 || e.stage >= stages) continue;
    const bool comm = e.kind == TimelineEntry::Kind::comm;
    const double top = plot.top() + e.stage * lane + 1 + (comm ? lane * 0.35 : 0.0);
    const double h = comm ? lane * 0.3 : lane - 2;
    const double x0 = x_of(e.start.value());
    const QRectF bar(x0, top, std::max(1.0, x_of(e.end.value()) - x0), h);
    const QColor color = pass_color(e.kind);
    p.fillRect(bar, color);
    if (bar.width() < 5.0) continue;
    p.setPen(color.darker(140));
    p.drawRect(bar);
    const int digits = e.microbatch < 10 ? 1 : e.microbatch < 100 ? 2 : e.microbatch < 1000 ? 3 : 4;
    if (!comm && bar.width() > digits * digit_width + 4 && bar.height() > fm.height()) {
      p.setPen(e.kind == TimelineEntry::Kind::forward ? Qt::white : Qt::black);
      p.drawText(bar, Qt::AlignCenter, QString::number(e.microbatch));
    }
  }

  // Time axis.
  const TimeUnit unit = time_unit_for(end);
  p.setPen(Qt::black);
  p.drawLine(plot.bottomLeft() + QPoint(0, 1), plot.bottomRight() + QPoint(0, 1));
  const double step = tick_step(end * unit.per_second, std::max(2, plot.width() / 90));
  for (double t = 0.0; t <= end * unit.per_second * (1.0 + 1e-9); t += step) {
    const double x = x_of(t / unit.per_second);
    p.drawLine(QPointF(x, plot.bottom() + 1), QPointF(x, plot.bottom() + 5));
    p.drawText(QRectF(x - 40, plot.bottom() + 5, 80, fm.height()), Qt::AlignHCenter | Qt::AlignTop,
               QString::number(t, 'g', 4));
  }
  p.drawText(QRect(plot.left(), plot.bottom() + 5 + fm.height(), plot.width(), fm.height() + 2), Qt::AlignHCenter,
             tr("Time from step start (%1)").arg(unit.name));

  // Legend.
  int x = plot.left();
  const int y = height() - legend_height + 3;
  const auto legend = [&](const QColor& c, const QString& text) {
    p.fillRect(QRect(x, y + 2, 12, fm.height() - 4), c);
    p.drawText(QPoint(x + 16, y + fm.ascent()), text);
    x += 16 + fm.horizontalAdvance(text) + 14;
  };
  bool kinds[5] = {};
  for (const auto& e : entries) kinds[static_cast<int>(e.kind)] = true;
  for (auto kind : {TimelineEntry::Kind::forward, TimelineEntry::Kind::backward, TimelineEntry::Kind::backward_input,
                    TimelineEntry::Kind::backward_weight, TimelineEntry::Kind::comm}) {
    if (kinds[static_cast<int>(kind)]) legend(pass_color(kind), pass_name(kind));
  }
  legend(kIdle, tr("idle (bubble)"));
  p.drawText(QPoint(x, y + fm.ascent()), tr("numbers: micro-batch"));
}

}  // namespace stepcast::gui
