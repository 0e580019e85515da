#pragma once
// The scenario editor as an item model: one row per editable field (gui/models/editor_fields.h),
// columns label / value / note. Editing a value (setData on the value column) turns into an edit of
// the ScenarioDocument and emits document_changed(); the owner evaluates the document off the GUI
// thread and hands the loader's verdict back with apply_evaluation().
//
// A valid evaluation refreshes every value from the scenario (a new model preset fills in its
// shape, dp follows the layout) and may change the rows (static <-> serving). An invalid one keeps
// the values the user typed and attaches each loader diagnostic to the field of its key path
// (ProblemRole, and the note column in red); diagnostics() keeps them all, in the loader's words.
//
// Data parallelism follows the layout ("auto") until the user sets dp: while auto, an edit of tp,
// pp, cp or the GPU count also sets dp = gpus / (tp pp cp) when that divides, so that a file that
// spells dp out stays consistent.

#include <QAbstractTableModel>

#include <optional>
#include <vector>

#include "gui/models/editor_fields.h"
#include "gui/models/scenario_document.h"

namespace stepcast::gui {

class ScenarioEditorModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { LabelColumn, ValueColumn, NoteColumn, ColumnCount };
  enum Role {
    KeyRole = Qt::UserRole + 1,  // QString key path
    KindRole,                    // int(FieldKind)
    ChoicesRole,                 // QStringList
    MinimumRole,
    MaximumRole,
    SpecialValueRole,            // text at the minimum ("auto")
    GroupRole,
    UnitRole,
    ProblemRole,                 // the loader's messages for this field, empty when fine
    MnemonicLabelRole,           // the label with its '&' mnemonic, for a QLabel buddy
  };

  explicit ScenarioEditorModel(const Catalog& catalog = Catalog::builtin(), QObject* parent = nullptr);

  // A new document: edits cleared, rows kept until its evaluation arrives.
  void open(ScenarioDocument document);
  [[nodiscard]] const ScenarioDocument& document() const { return m_document; }
  // After the document was saved to `path` with `text`.
  void mark_saved(std::string text, std::string path);

  // The loader's verdict on document() (from a job).
  void apply_evaluation(const Evaluation& evaluation);

  // Convenience for code and tests: the row of a key, its value, and setting it as a user would.
  [[nodiscard]] int row_of(const QString& key) const;
  [[nodiscard]] QVariant value(const QString& key) const;
  bool set_value(const QString& key, const QVariant& value);

  [[nodiscard]] const std::vector<Diagnostic>& diagnostics() const { return m_diagnostics; }
  // The last valid scenario (the one the views show), if any.
  [[nodiscard]] const std::optional<Scenario>& scenario() const { return m_scenario; }
  [[nodiscard]] bool dp_auto() const { return m_dp_auto; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 Q_SIGNALS:
  // The document changed (an edit or a newly opened document): evaluate it.
  void document_changed();
  // diagnostics() changed.
  void diagnostics_changed();

 private:
  struct Row {
    FieldSpec spec;
    QString problem;
  };
  void edit(const FieldSpec& field, const QVariant& value);
  void follow_data_parallel();
  [[nodiscard]] int int_value(const QString& key, int fallback) const;
  [[nodiscard]] QString note_of(const Row& row) const;

  const Catalog& m_catalog;
  ScenarioDocument m_document;
  std::vector<Row> m_rows;
  std::vector<Diagnostic> m_diagnostics;
  std::optional<Scenario> m_scenario;
  bool m_dp_auto = true;
};

}  // namespace stepcast::gui
