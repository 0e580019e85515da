#pragma once
// The scenario editor: a form generated from ScenarioEditorModel's rows, grouped by section
// (Model, System, Parallelism, Precision, Batching / Workload). Integers are spin boxes (keyboard
// tracking off: a value is applied when typing ends or an arrow steps it), choices combo boxes,
// switches check boxes; each label carries a mnemonic and is the buddy of its field, so Alt+T
// jumps to TP. Under each field, the loader's explanation of what is wrong with it, in red.
//
// The widget holds no state of its own: it writes edits to the model with setData() and redraws
// from the model's dataChanged/modelReset.

#include <QHash>
#include <QWidget>

class QFormLayout;
class QLabel;
class QVBoxLayout;

namespace stepcast::gui {

class ScenarioEditorModel;

class ScenarioEditorWidget : public QWidget {
  Q_OBJECT

 public:
  explicit ScenarioEditorWidget(ScenarioEditorModel& model, QWidget* parent = nullptr);

  // The input widget of a field (tests drive these as a user would), or null.
  [[nodiscard]] QWidget* field_widget(const QString& key) const { return m_fields.value(key).input; }
  [[nodiscard]] QLabel* problem_label(const QString& key) const { return m_fields.value(key).problem; }

 private:
  struct Field {
    QWidget* input = nullptr;
    QLabel* problem = nullptr;
    QLabel* unit = nullptr;
    int row = -1;
  };
  void rebuild();
  void refresh(int first_row, int last_row);
  void refresh_row(int row);
  QWidget* make_input(int row);

  ScenarioEditorModel& m_model;
  QVBoxLayout* m_layout = nullptr;
  QWidget* m_form = nullptr;
  QLabel* m_empty = nullptr;
  QHash<QString, Field> m_fields;
};

}  // namespace stepcast::gui
