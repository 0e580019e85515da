#pragma once
// The Sweep page: search every training layout of the current scenario (the `stepcast search`
// engine), with progress and cancel; the kept layouts in a sortable, filterable table; and a
// Pareto scatter of throughput against peak memory per GPU. Clicking a point (or double-clicking a
// row) loads that layout into the editor.

#include <QWidget>

class QChartView;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QScatterSeries;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;
class QValueAxis;
class QLineSeries;

namespace stepcast::gui {

class ExplorerSession;
class SweepResultsModel;
class SweepRunner;

class SweepView : public QWidget {
  Q_OBJECT

 public:
  SweepView(ExplorerSession& session, SweepResultsModel& results, SweepRunner& runner, QWidget* parent = nullptr);

  void run();
  void cancel();
  // Loads the layout of a results row (source-model row) into the editor.
  void load_row(int row);

  [[nodiscard]] QTableView* table() const { return m_table; }
  [[nodiscard]] QChartView* chart_view() const { return m_chart; }
  [[nodiscard]] QLineEdit* filter() const { return m_filter; }
  [[nodiscard]] QSortFilterProxyModel* proxy() const { return m_proxy; }
  [[nodiscard]] QLabel* status() const { return m_status; }
  [[nodiscard]] QPushButton* run_button() const { return m_run; }
  [[nodiscard]] QPushButton* cancel_button() const { return m_cancel; }
  [[nodiscard]] QProgressBar* progress_bar() const { return m_progress; }
  [[nodiscard]] QScatterSeries* layouts_series() const { return m_all; }

 Q_SIGNALS:
  // A layout was loaded into the editor (the window shows the overview).
  void layout_loaded();

 private:
  void rebuild_chart();
  void on_point_clicked(const QPointF& point);
  void finished(bool cancelled);

  ExplorerSession& m_session;
  SweepResultsModel& m_results;
  SweepRunner& m_runner;
  QComboBox* m_objective = nullptr;
  QComboBox* m_keep = nullptr;
  QSpinBox* m_top = nullptr;
  QPushButton* m_run = nullptr;
  QPushButton* m_cancel = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_status = nullptr;
  QLineEdit* m_filter = nullptr;
  QComboBox* m_filter_column = nullptr;
  QSortFilterProxyModel* m_proxy = nullptr;
  QTableView* m_table = nullptr;
  QChartView* m_chart = nullptr;
  QScatterSeries* m_all = nullptr;
  QScatterSeries* m_front = nullptr;
  QScatterSeries* m_unfit = nullptr;
  QLineSeries* m_front_line = nullptr;
  QValueAxis* m_x = nullptr;
  QValueAxis* m_y = nullptr;
  double m_y_scale = 1.0;           // tokens/s per unit of the throughput axis
  std::vector<int> m_all_rows;    // results row of each point of m_all
  std::vector<int> m_front_rows;  // ... of m_front
};

}  // namespace stepcast::gui
