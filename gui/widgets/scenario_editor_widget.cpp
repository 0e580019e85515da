#include "gui/widgets/scenario_editor_widget.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <limits>

#include "gui/models/scenario_editor_model.h"

namespace stepcast::gui {
namespace {

int clamp_int(double v) {
  return static_cast<int>(std::clamp(v, static_cast<double>(std::numeric_limits<int>::min()),
                                     static_cast<double>(std::numeric_limits<int>::max())));
}

}  // namespace

ScenarioEditorWidget::ScenarioEditorWidget(ScenarioEditorModel& model, QWidget* parent)
    : QWidget(parent), m_model(model) {
  m_layout = new QVBoxLayout(this);
  m_layout->setContentsMargins(4, 4, 4, 4);
  m_empty = new QLabel(tr("No valid scenario yet: see the problems listed in the window."), this);
  m_empty->setWordWrap(true);
  m_layout->addWidget(m_empty);
  connect(&m_model, &QAbstractItemModel::modelReset, this, &ScenarioEditorWidget::rebuild);
  connect(&m_model, &QAbstractItemModel::dataChanged, this,
          [this](const QModelIndex& a, const QModelIndex& b) { refresh(a.row(), b.row()); });
  rebuild();
}

QWidget* ScenarioEditorWidget::make_input(int row) {
  const QModelIndex value = m_model.index(row, ScenarioEditorModel::ValueColumn);
  const auto kind = static_cast<FieldKind>(value.data(ScenarioEditorModel::KindRole).toInt());
  const QString tip = value.data(Qt::ToolTipRole).toString();
  QWidget* input = nullptr;
  switch (kind) {
    case FieldKind::integer: {
      auto* spin = new QSpinBox;
      spin->setRange(clamp_int(value.data(ScenarioEditorModel::MinimumRole).toDouble()),
                     clamp_int(value.data(ScenarioEditorModel::MaximumRole).toDouble()));
      spin->setSpecialValueText(value.data(ScenarioEditorModel::SpecialValueRole).toString());
      spin->setKeyboardTracking(false);
      spin->setAccelerated(true);
      connect(spin, &QSpinBox::valueChanged, this,
              [this, row](int v) { m_model.setData(m_model.index(row, ScenarioEditorModel::ValueColumn), v); });
      input = spin;
      break;
    }
    case FieldKind::real: {
      auto* spin = new QDoubleSpinBox;
      spin->setDecimals(3);
      spin->setRange(value.data(ScenarioEditorModel::MinimumRole).toDouble(),
                     value.data(ScenarioEditorModel::MaximumRole).toDouble());
      spin->setSpecialValueText(value.data(ScenarioEditorModel::SpecialValueRole).toString());
      spin->setKeyboardTracking(false);
      connect(spin, &QDoubleSpinBox::valueChanged, this,
              [this, row](double v) { m_model.setData(m_model.index(row, ScenarioEditorModel::ValueColumn), v); });
      input = spin;
      break;
    }
    case FieldKind::choice: {
      auto* combo = new QComboBox;
      combo->addItems(value.data(ScenarioEditorModel::ChoicesRole).toStringList());
      connect(combo, &QComboBox::textActivated, this, [this, row](const QString& v) {
        m_model.setData(m_model.index(row, ScenarioEditorModel::ValueColumn), v);
      });
      input = combo;
      break;
    }
    case FieldKind::boolean: {
      auto* check = new QCheckBox;
      connect(check, &QCheckBox::toggled, this,
              [this, row](bool v) { m_model.setData(m_model.index(row, ScenarioEditorModel::ValueColumn), v); });
      input = check;
      break;
    }
  }
  input->setToolTip(tip);
  input->setObjectName(value.data(ScenarioEditorModel::KeyRole).toString());
  return input;
}

void ScenarioEditorWidget::rebuild() {
  if (m_form != nullptr) {
    m_form->hide();
    m_form->deleteLater();
    m_form = nullptr;
  }
  m_fields.clear();
  m_empty->setVisible(m_model.rowCount() == 0);
  if (m_model.rowCount() == 0) return;

  m_form = new QWidget(this);
  auto* column = new QVBoxLayout(m_form);
  column->setContentsMargins(0, 0, 0, 0);
  QString group;
  QFormLayout* form = nullptr;
  for (int row = 0; row < m_model.rowCount(); ++row) {
    const QModelIndex label = m_model.index(row, ScenarioEditorModel::LabelColumn);
    const QString row_group = label.data(ScenarioEditorModel::GroupRole).toString();
    if (form == nullptr || row_group != group) {
      group = row_group;
      auto* box = new QGroupBox(group, m_form);
      form = new QFormLayout(box);
      form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
      form->setContentsMargins(6, 4, 6, 4);
      form->setVerticalSpacing(3);
      column->addWidget(box);
    }
    Field field;
    field.row = row;
    field.input = make_input(row);
    field.unit = new QLabel;
    field.problem = new QLabel;
    field.problem->setWordWrap(true);
    field.problem->setStyleSheet(QStringLiteral("color: #b41414;"));
    field.problem->setTextInteractionFlags(Qt::TextSelectableByMouse);
    field.problem->hide();
    auto* line = new QWidget;
    auto* h = new QHBoxLayout(line);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(field.input, 1);
    h->addWidget(field.unit);
    auto* cell = new QWidget;
    auto* v = new QVBoxLayout(cell);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(1);
    v->addWidget(line);
    v->addWidget(field.problem);
    const QString key = label.data(ScenarioEditorModel::KeyRole).toString();
    auto* text = new QLabel;
    text->setText(label.data(ScenarioEditorModel::MnemonicLabelRole).toString());
    text->setBuddy(field.input);
    text->setToolTip(label.data(Qt::ToolTipRole).toString());
    form->addRow(text, cell);
    m_fields.insert(key, field);
    refresh_row(row);
  }
  column->addStretch(1);
  m_layout->addWidget(m_form);
  m_form->show();  // a child added to a visible widget is not shown by itself
}

void ScenarioEditorWidget::refresh(int first_row, int last_row) {
  for (int row = std::max(0, first_row); row <= last_row && row < m_model.rowCount(); ++row) refresh_row(row);
}

void ScenarioEditorWidget::refresh_row(int row) {
  const QModelIndex value = m_model.index(row, ScenarioEditorModel::ValueColumn);
  const QString key = value.data(ScenarioEditorModel::KeyRole).toString();
  const auto it = m_fields.find(key);
  if (it == m_fields.end()) return;
  const Field& f = *it;
  const QVariant v = value.data(Qt::EditRole);
  const QSignalBlocker block(f.input);
  if (auto* spin = qobject_cast<QSpinBox*>(f.input)) {
    if (!spin->hasFocus() || spin->value() != v.toInt()) spin->setValue(v.toInt());
  } else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(f.input)) {
    dspin->setValue(v.toDouble());
  } else if (auto* combo = qobject_cast<QComboBox*>(f.input)) {
    const QStringList choices = value.data(ScenarioEditorModel::ChoicesRole).toStringList();
    QStringList items;
    for (int i = 0; i < combo->count(); ++i) items << combo->itemText(i);
    if (items != choices) {
      combo->clear();
      combo->addItems(choices);
    }
    combo->setCurrentText(v.toString());
  } else if (auto* check = qobject_cast<QCheckBox*>(f.input)) {
    check->setChecked(v.toBool());
  }
  const QString problem = value.data(ScenarioEditorModel::ProblemRole).toString();
  f.problem->setText(problem);
  f.problem->setVisible(!problem.isEmpty());
  f.unit->setText(m_model.index(row, ScenarioEditorModel::NoteColumn).data().toString());
  if (!problem.isEmpty()) f.unit->setText(value.data(ScenarioEditorModel::UnitRole).toString());
}

}  // namespace stepcast::gui
