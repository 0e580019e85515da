#include "gui/widgets/chart_style.h"

#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QLegend>
#include <QValueAxis>

#include <cmath>

namespace stepcast::gui {

void style_chart(QChart* chart, const QString& title) {
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->setTitle(title);
  QFont title_font = chart->titleFont();
  title_font.setPointSizeF(10.5);
  title_font.setBold(true);
  chart->setTitleFont(title_font);
  chart->setMargins(QMargins(4, 2, 4, 2));
  chart->setBackgroundRoundness(0);
  chart->legend()->setAlignment(Qt::AlignBottom);
  QFont legend_font = chart->legend()->font();
  legend_font.setPointSizeF(8.5);
  chart->legend()->setFont(legend_font);
}

void style_axis(QAbstractAxis* axis, const QString& title) {
  axis->setTitleText(title);
  QFont f = axis->titleFont();
  f.setPointSizeF(9.0);
  f.setBold(false);
  axis->setTitleFont(f);
  QFont l = axis->labelsFont();
  l.setPointSizeF(8.5);
  axis->setLabelsFont(l);
}

void retitle(QChart* chart, const QString& title) {
  if (chart->title() != title) chart->setTitle(title);
}

void retitle(QAbstractAxis* axis, const QString& title) {
  if (axis->titleText() != title) axis->setTitleText(title);
}

void set_nice_range(QValueAxis* axis, double lower, double upper, int ticks) {
  const double span = upper - lower;
  if (!(span > 0.0) || !std::isfinite(span)) {
    if (axis->min() != 0.0 || axis->max() != 1.0) axis->setRange(0.0, 1.0);
    return;
  }
  const double raw = span / std::max(ticks, 1);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10.0 * power;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw <= m * power) {
      step = m * power;
      break;
    }
  }
  const double lo = std::floor(lower / step + 1e-9) * step;
  const double hi = std::ceil(upper / step - 1e-9) * step;
  const int count = static_cast<int>(std::lround((hi - lo) / step)) + 1;
  if (axis->tickCount() != count) axis->setTickCount(count);
  if (axis->min() != lo || axis->max() != hi) axis->setRange(lo, hi);
}

void style_view(QChartView* view) {
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumSize(320, 220);
  view->setFocusPolicy(Qt::StrongFocus);
}

}  // namespace stepcast::gui
