#pragma once
// The stepcast-gui window.
//
//   left dock   Scenario: the editor (gui/widgets/scenario_editor_widget.h) and the calibration
//               profile picker.
//   Overview    the headline figures, the loader's problems (file:line:col, in red), and four
//               views that follow every edit: step-time breakdown, memory per GPU against
//               capacity, the pipeline Gantt chart, and the scaling curve; for inference the
//               prefill/decode breakdown, memory, the serving run over time and the
//               latency-throughput curve with its SLO lines.
//   Sweep       every training layout of the scenario searched (progress, cancel), a sortable and
//               filterable table, and a Pareto scatter whose points load into the editor.
//   Compare     A (pinned) against B (current), by component.
//   Tables      every view's numbers as sortable tables (exportable as CSV).
//
// Keyboard: Ctrl+O open, Ctrl+S save, Ctrl+Shift+S save as, Ctrl+1..4 pages, F5 run the search
// (Esc cancels it), Ctrl+B pin baseline,
// Ctrl+E export the current page's chart, Ctrl+Shift+E export its table, Ctrl+Q quit; every
// editor label has an Alt mnemonic. The window's geometry, dock and splitter layout, page and
// profile are saved in the QSettings given to the constructor (no global settings object).

#include <QMainWindow>

#include <vector>

#include "gui/models/calibration_profiles.h"

class QComboBox;
class QLabel;
class QSettings;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QTableView;
class QAbstractItemModel;

namespace stepcast::gui {

class BreakdownChart;
class ComparisonView;
class ExplorerSession;
class LatencyChart;
class MemoryChart;
class ScalingChart;
class ServingChart;
class SweepView;
class ScenarioEditorWidget;
class TimelineView;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  MainWindow(ExplorerSession& session, QSettings& settings, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens a scenario file or catalog scenario (errors appear in the window, never as a crash).
  void open_scenario(const QString& name_or_path);
  // Saves the scenario being edited; false (with a message in the window) when it cannot.
  bool save_to(const QString& path);
  // Loads a calibration profile file into the picker and selects it; false (with the loader's
  // message in the window) when it cannot.
  bool open_profile(const QString& path);
  // Adds a model variant (stepcast-gui --constant's what-if) to the model picker and selects it.
  void add_variant(CalibrationChoice choice);

  enum class Page { overview, sweep, compare, tables };
  void show_page(Page page);

  // Everything views are made of, for tests, export and the benchmark.
  [[nodiscard]] ScenarioEditorWidget& editor() const { return *m_editor; }
  [[nodiscard]] BreakdownChart& breakdown_chart() const { return *m_breakdown; }
  [[nodiscard]] MemoryChart& memory_chart() const { return *m_memory; }
  [[nodiscard]] TimelineView& timeline_view() const { return *m_timeline; }
  [[nodiscard]] ScalingChart& scaling_chart() const { return *m_scaling; }
  [[nodiscard]] ServingChart& serving_chart() const { return *m_serving; }
  [[nodiscard]] LatencyChart& latency_chart() const { return *m_latency; }
  [[nodiscard]] ComparisonView& comparison_view() const { return *m_comparison; }
  [[nodiscard]] SweepView& sweep_view() const { return *m_sweep; }
  [[nodiscard]] QLabel& problems_label() const { return *m_problems; }
  [[nodiscard]] QLabel& headline_label() const { return *m_headline; }
  [[nodiscard]] QComboBox& profile_picker() const { return *m_profiles; }
  [[nodiscard]] QWidget& overview_page() const { return *m_overview; }

  // The charts by name ("breakdown", "memory", "timeline", "scaling", "serving", "latency",
  // "comparison") and the tables by name (the same, and "summary").
  [[nodiscard]] QWidget* chart(const QString& name) const;
  [[nodiscard]] QAbstractItemModel* table(const QString& name) const;

  void save_layout();

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void build_menus();
  QWidget* build_overview();
  QWidget* build_tables();
  void restore_layout();
  void update_from_analysis();
  void open_dialog();
  void open_profile_dialog();
  void refresh_profiles();
  bool save_dialog();
  void export_chart_dialog(const QString& name);
  void export_table_dialog(const QString& name);
  void export_current_chart();
  void export_current_table();
  void show_message(const QString& text, bool error);

  ExplorerSession& m_session;
  QSettings& m_settings;
  QTabWidget* m_pages = nullptr;
  QWidget* m_overview = nullptr;
  QTabWidget* m_table_tabs = nullptr;
  ScenarioEditorWidget* m_editor = nullptr;
  QComboBox* m_profiles = nullptr;
  QLabel* m_headline = nullptr;
  QLabel* m_problems = nullptr;
  QLabel* m_status = nullptr;
  BreakdownChart* m_breakdown = nullptr;
  MemoryChart* m_memory = nullptr;
  TimelineView* m_timeline = nullptr;
  ScalingChart* m_scaling = nullptr;
  ServingChart* m_serving = nullptr;
  LatencyChart* m_latency = nullptr;
  QStackedWidget* m_bottom_left = nullptr;   // Gantt chart (training) or serving run (inference)
  QStackedWidget* m_bottom_right = nullptr;  // scaling curve (training) or latency curve (inference)
  ComparisonView* m_comparison = nullptr;
  SweepView* m_sweep = nullptr;
  std::vector<QSplitter*> m_splitters;
  QString m_last_dir;
};

}  // namespace stepcast::gui
