#pragma once
// The pipeline timeline as a Gantt chart, painted directly: one lane per pipeline stage, one bar
// per forward or backward pass of a micro-batch (its number inside when it fits), on a time axis
// of one step of one data-parallel replica. Each lane's background is the idle colour, so the
// pipeline bubble shows as the uncovered stretches at the ends of the lanes.

#include <QWidget>

namespace stepcast::gui {

class TimelineModel;

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineView(TimelineModel& model, QWidget* parent = nullptr);
  QSize sizeHint() const override { return {640, 300}; }
  QSize minimumSizeHint() const override { return {320, 200}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  TimelineModel& m_model;
};

}  // namespace stepcast::gui
