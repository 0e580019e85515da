#pragma once
// One what-if session: the scenario being edited and every view's model, kept up to date off the
// GUI thread. Qt Core/Gui only, so tests drive it headless.
//
// Each edit (ScenarioEditorModel::document_changed) starts two jobs with higher ids: the analysis
// (load + predict with the pipeline timeline: what must appear within a frame) and the curves
// (re-predictions at other GPU counts). Results an edit made stale are dropped by the job trackers
// (gui/models/job_tracker.h); a delivered analysis updates the editor's values or its problems,
// then the breakdown, memory, timeline (training) or serving time series (inference), summary and
// comparison models; delivered curves update the scaling or latency-throughput model. The comparison's A is a
// pinned baseline (pin_baseline()), its B the current prediction.

#include <QObject>

#include <memory>
#include <optional>
#include <vector>

#include "gui/models/analysis.h"
#include "gui/models/breakdown_model.h"
#include "gui/models/calibration_profiles.h"
#include "gui/models/comparison_model.h"
#include "gui/models/job_tracker.h"
#include "gui/models/latency_curve_model.h"
#include "gui/models/memory_model.h"
#include "gui/models/scaling_model.h"
#include "gui/models/scenario_editor_model.h"
#include "gui/models/serving_series_model.h"
#include "gui/models/summary_model.h"
#include "gui/models/sweep_results_model.h"
#include "gui/models/sweep_runner.h"
#include "gui/models/timeline_model.h"

namespace stepcast::gui {

class ExplorerSession : public QObject {
  Q_OBJECT

 public:
  explicit ExplorerSession(const CalibrationProfileSource& profiles, const Catalog& catalog = Catalog::builtin(),
                           QObject* parent = nullptr);
  ~ExplorerSession() override;

  // Opens a scenario file or catalog scenario by name; a file that cannot be read shows up as the
  // editor's diagnostics like any other loader error.
  void open(const QString& name_or_path);
  void open_document(ScenarioDocument document);
  // Loads `scenario` into the editor as a new document (e.g. a sweep point), labelled `source`.
  void open_scenario(const Scenario& scenario, const QString& source);

  [[nodiscard]] ScenarioEditorModel& editor() { return m_editor; }
  [[nodiscard]] BreakdownModel& breakdown() { return m_breakdown; }
  [[nodiscard]] MemoryModel& memory() { return m_memory; }
  [[nodiscard]] TimelineModel& timeline() { return m_timeline; }
  [[nodiscard]] ScalingModel& scaling() { return m_scaling; }
  [[nodiscard]] SummaryModel& summary() { return m_summary; }
  [[nodiscard]] ComparisonModel& comparison() { return m_comparison; }
  [[nodiscard]] ServingSeriesModel& serving_series() { return m_serving_series; }
  [[nodiscard]] LatencyCurveModel& latency_curve() { return m_latency_curve; }
  [[nodiscard]] SweepResultsModel& sweep_results() { return m_sweep_results; }
  [[nodiscard]] SweepRunner& sweep() { return m_sweep; }
  [[nodiscard]] const Catalog& catalog() const { return m_catalog; }

  [[nodiscard]] const std::vector<CalibrationChoice>& profiles() const { return m_profiles; }
  [[nodiscard]] int profile_index() const { return m_profile; }
  void set_profile_index(int index);
  [[nodiscard]] const CalibrationChoice& profile() const { return m_profiles[static_cast<std::size_t>(m_profile)]; }
  // Adds a choice (a profile file opened in the window) and returns its index.
  int add_profile(CalibrationChoice choice);

  // The latest delivered analysis.
  [[nodiscard]] const Analysis& analysis() const { return m_analysis; }
  // Updates every model from `analysis` (what a delivered job does; public for the benchmark).
  void apply(const Analysis& analysis);
  void apply_curves(const Curves& curves);

  // Pins the current prediction as the comparison's A.
  void pin_baseline();
  [[nodiscard]] bool has_baseline() const { return m_baseline.has_value(); }

  // Processes events until both jobs are done (tests, screenshots). False on timeout.
  bool wait_until_idle(int timeout_ms = 30000);
  [[nodiscard]] bool busy() const { return m_analysis_jobs.busy() || m_curve_jobs.busy(); }

 Q_SIGNALS:
  void analysis_changed();
  void curves_changed();
  void comparison_changed();
  void profiles_changed();
  void busy_changed(bool busy);

 private:
  void recompute();
  void update_comparison();

  const Catalog& m_catalog;
  std::vector<CalibrationChoice> m_profiles;
  int m_profile = 0;
  ScenarioEditorModel m_editor;
  BreakdownModel m_breakdown;
  MemoryModel m_memory;
  TimelineModel m_timeline;
  ScalingModel m_scaling;
  SummaryModel m_summary;
  ComparisonModel m_comparison;
  ServingSeriesModel m_serving_series;
  LatencyCurveModel m_latency_curve;
  SweepResultsModel m_sweep_results;
  SweepRunner m_sweep{m_sweep_results};
  Analysis m_analysis;
  std::optional<ComparisonSide> m_baseline;
  JobTracker m_analysis_jobs;
  JobTracker m_curve_jobs;
};

}  // namespace stepcast::gui
