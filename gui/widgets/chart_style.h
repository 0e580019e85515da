#pragma once
// One look for every chart: titles and axis labels large enough to read in a screenshot, no
// animation (a chart redraws on every edit), legend at the bottom.

#include <QString>

class QAbstractAxis;
class QValueAxis;
class QChart;
class QChartView;

namespace stepcast::gui {

void style_chart(QChart* chart, const QString& title);
void style_axis(QAbstractAxis* axis, const QString& title);
// A QChartView set up for our charts (antialiasing, minimum size).
void style_view(QChartView* view);
// Change texts only when they differ: every change re-lays the chart out, which is what an edit's
// redraw spends most on.
void retitle(QChart* chart, const QString& title);
void retitle(QAbstractAxis* axis, const QString& title);
// Sets a value axis to [lower, upper] widened to round tick steps (1, 2, 2.5 or 5 times a power of
// ten, about `ticks` intervals), in one range change (applyNiceNumbers() would make two).
void set_nice_range(QValueAxis* axis, double lower, double upper, int ticks = 5);

}  // namespace stepcast::gui
