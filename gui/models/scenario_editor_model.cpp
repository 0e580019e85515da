#include "gui/models/scenario_editor_model.h"

#include <QBrush>
#include <QColor>

namespace stepcast::gui {
namespace {

bool at_or_below(const std::string& path, const std::string& prefix) {
  return path == prefix ||
         (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 && path[prefix.size()] == '.');
}

// Keys whose edit changes the GPU count or the model-parallel size, and so the derived dp.
bool moves_data_parallel(const QString& key) {
  return key == QLatin1String("parallel.tp") || key == QLatin1String("parallel.pp") ||
         key == QLatin1String("parallel.cp") || key == QLatin1String("system.gpus") ||
         key == QLatin1String("system") || key == QLatin1String("system.gpu");
}

QString number_text(double v) { return QString::number(v, 'g', 12); }

// Defaults when switching an inference scenario between static and serving: a modest stream
// (a few requests per second) or batch; the user adjusts them in the fields that appear.
constexpr double kDefaultArrivalRatePerS = 4.0;
constexpr int kDefaultRequests = 500;
constexpr int kDefaultStaticBatch = 16;

}  // namespace

ScenarioEditorModel::ScenarioEditorModel(const Catalog& catalog, QObject* parent)
    : QAbstractTableModel(parent), m_catalog(catalog) {}

void ScenarioEditorModel::open(ScenarioDocument document) {
  beginResetModel();
  m_document = std::move(document);
  m_rows.clear();
  m_scenario.reset();
  m_dp_auto = true;
  endResetModel();
  m_diagnostics.clear();
  Q_EMIT diagnostics_changed();
  Q_EMIT document_changed();
}

void ScenarioEditorModel::mark_saved(std::string text, std::string path) {
  m_document.mark_saved(std::move(text), std::move(path));
  Q_EMIT document_changed();
}

void ScenarioEditorModel::apply_evaluation(const Evaluation& evaluation) {
  m_diagnostics = evaluation.diagnostics;
  if (evaluation.scenario) {
    m_scenario = evaluation.scenario;
    std::vector<FieldSpec> fields = editor_fields(*evaluation.scenario, m_catalog);
    bool same_rows = fields.size() == m_rows.size();
    for (std::size_t i = 0; same_rows && i < fields.size(); ++i) {
      same_rows = fields[i].key == m_rows[i].spec.key && fields[i].choices == m_rows[i].spec.choices;
    }
    if (!same_rows) {
      beginResetModel();
      m_rows.clear();
      for (auto& f : fields) m_rows.push_back(Row{std::move(f), {}});
      endResetModel();
    } else {
      for (std::size_t i = 0; i < fields.size(); ++i) m_rows[i] = Row{std::move(fields[i]), {}};
      if (!m_rows.empty()) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    }
  } else {
    for (Row& r : m_rows) r.problem.clear();
    for (const Diagnostic& d : m_diagnostics) {
      // The field whose key is the longest prefix of the diagnostic's key path.
      Row* best = nullptr;
      std::size_t best_length = 0;
      for (Row& r : m_rows) {
        const std::string key = r.spec.key.toStdString();
        if (at_or_below(d.key_path, key) && (best == nullptr || key.size() > best_length)) {
          best = &r;
          best_length = key.size();
        }
      }
      if (best == nullptr) continue;
      QString text = QString::fromStdString(d.message);
      if (!d.suggestion.empty()) text += QStringLiteral("; ") + QString::fromStdString(d.suggestion);
      best->problem += (best->problem.isEmpty() ? QString() : QStringLiteral("\n")) + text;
    }
    if (!m_rows.empty()) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
  }
  Q_EMIT diagnostics_changed();
}

int ScenarioEditorModel::row_of(const QString& key) const {
  for (std::size_t i = 0; i < m_rows.size(); ++i) {
    if (m_rows[i].spec.key == key) return static_cast<int>(i);
  }
  return -1;
}

QVariant ScenarioEditorModel::value(const QString& key) const {
  const int row = row_of(key);
  return row < 0 ? QVariant() : m_rows[static_cast<std::size_t>(row)].spec.value;
}

bool ScenarioEditorModel::set_value(const QString& key, const QVariant& value) {
  const int row = row_of(key);
  return row >= 0 && setData(index(row, ValueColumn), value, Qt::EditRole);
}

int ScenarioEditorModel::int_value(const QString& key, int fallback) const {
  const QVariant v = value(key);
  return v.isValid() ? v.toInt() : fallback;
}

void ScenarioEditorModel::follow_data_parallel() {
  const int gpus = int_value(QStringLiteral("system.gpus"), 1);
  const int model_parallel = int_value(QStringLiteral("parallel.tp"), 1) * int_value(QStringLiteral("parallel.pp"), 1) *
                             int_value(QStringLiteral("parallel.cp"), 1);
  if (model_parallel > 0 && gpus % model_parallel == 0) {
    m_document.set("parallel.dp", std::to_string(gpus / model_parallel));
  } else {
    m_document.unset("parallel.dp");  // the loader explains why gpus do not divide
  }
}

void ScenarioEditorModel::edit(const FieldSpec& f, const QVariant& v) {
  const auto set = [&](const QString& key, const QString& text) { m_document.set(key.toStdString(), text.toStdString()); };
  const QString& key = f.key;
  const int gpus = int_value(QStringLiteral("system.gpus"), 1);
  if (key == QLatin1String("system")) {
    set(key, QStringLiteral("{preset: %1, gpus: %2}").arg(v.toString()).arg(gpus));
  } else if (key == QLatin1String("system.gpu")) {
    set(QStringLiteral("system"), QStringLiteral("{gpu: %1, gpus: %2}").arg(v.toString()).arg(gpus));
  } else if (key.startsWith(QLatin1String("precision."))) {
    // An inference precision is written as a whole mapping, so a one-word `precision:` in the file
    // is replaced rather than indexed into.
    const auto part = [&](const char* k) {
      return QLatin1String(k) == key ? v.toString() : value(QLatin1String(k)).toString();
    };
    set(QStringLiteral("precision"), QStringLiteral("{compute: %1, params: %2, kv_cache: %3}")
                                         .arg(part("precision.compute"), part("precision.params"),
                                              part("precision.kv_cache")));
  } else if (key == QLatin1String("inference.mode")) {
    const int in = int_value(QStringLiteral("inference.input_len"), 128);
    const int out = int_value(QStringLiteral("inference.output_len"), 128);
    if (v.toString() == QLatin1String("serving")) {
      set(QStringLiteral("inference"), QStringLiteral("{mode: serving, arrival_rate: \"%1/s\", requests: %2, input_len: %3, output_len: %4}")
                                           .arg(kDefaultArrivalRatePerS).arg(kDefaultRequests).arg(in).arg(out));
    } else {
      set(QStringLiteral("inference"), QStringLiteral("{mode: %1, batch: %2, input_len: %3, output_len: %4}")
                                           .arg(v.toString()).arg(kDefaultStaticBatch).arg(in).arg(out));
    }
  } else if (key == QLatin1String("parallel.dp")) {
    m_dp_auto = v.toInt() <= 0;
    if (m_dp_auto) {
      follow_data_parallel();
    } else {
      set(key, QString::number(v.toInt()));
    }
  } else if ((key == QLatin1String("inference.input_len") || key == QLatin1String("inference.output_len")) &&
             m_scenario && !m_scenario->is_training() && m_scenario->inference().mode == InferenceMode::serving) {
    const ServingWorkload& sv = m_scenario->inference().serving;
    const LengthSpec& length = key.endsWith(QLatin1String("input_len")) ? sv.input_len : sv.output_len;
    set(length.dist == LengthDistribution::fixed ? key : key + QStringLiteral(".mean"), QString::number(v.toInt()));
  } else if (key == QLatin1String("training.document_tokens") && v.toInt() <= 0) {
    m_document.unset(key.toStdString());  // one document per sequence: the key's absence
  } else if (key == QLatin1String("inference.arrival_rate")) {
    set(key, QStringLiteral("\"%1/s\"").arg(number_text(v.toDouble())));
  } else if (key.startsWith(QLatin1String("inference.slo."))) {
    if (v.toDouble() > 0.0) {
      set(key, QStringLiteral("\"%1 ms\"").arg(number_text(v.toDouble())));
    } else {
      m_document.unset(key.toStdString());  // back to the file's own SLO (none if it has none)
    }
  } else {
    switch (f.kind) {
      case FieldKind::boolean:
        set(key, v.toBool() ? QStringLiteral("true") : QStringLiteral("false"));
        break;
      case FieldKind::integer:
        set(key, QString::number(v.toLongLong()));
        break;
      case FieldKind::real:
        set(key, number_text(v.toDouble()));
        break;
      case FieldKind::choice:
        set(key, v.toString());
        break;
    }
  }
  if (m_dp_auto && moves_data_parallel(key)) follow_data_parallel();
}

int ScenarioEditorModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int ScenarioEditorModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString ScenarioEditorModel::note_of(const Row& row) const {
  if (!row.problem.isEmpty()) return row.problem;
  if (row.spec.key == QLatin1String("parallel.dp") && m_dp_auto) {
    return row.spec.unit + QStringLiteral(" (auto)");
  }
  return row.spec.unit;
}

QVariant ScenarioEditorModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = m_rows[static_cast<std::size_t>(index.row())];
  const FieldSpec& f = row.spec;
  switch (role) {
    case KeyRole:
      return f.key;
    case KindRole:
      return static_cast<int>(f.kind);
    case ChoicesRole:
      return f.choices;
    case MinimumRole:
      return f.minimum;
    case MaximumRole:
      return f.maximum;
    case SpecialValueRole:
      return f.special_value;
    case GroupRole:
      return f.group;
    case UnitRole:
      return f.unit;
    case ProblemRole:
      return row.problem;
    case MnemonicLabelRole:
      return f.label;
    case Qt::ToolTipRole:
      return f.help;
    default:
      break;
  }
  switch (index.column()) {
    case LabelColumn:
      if (role == Qt::DisplayRole) return QString(f.label).remove(QLatin1Char('&'));
      return {};
    case ValueColumn:
      if (role == Qt::EditRole) return f.value;
      if (role == Qt::DisplayRole) {
        if (f.kind == FieldKind::boolean) return f.value.toBool() ? QStringLiteral("yes") : QStringLiteral("no");
        if (!f.special_value.isEmpty() && f.value.toDouble() <= f.minimum) return f.special_value;
        if (f.key == QLatin1String("parallel.dp") && m_dp_auto) return f.value.toString();
        return f.value.toString();
      }
      return {};
    case NoteColumn:
      if (role == Qt::DisplayRole) return note_of(row);
      if (role == Qt::ForegroundRole && !row.problem.isEmpty()) return QBrush(QColor(180, 20, 20));
      return {};
    default:
      return {};
  }
}

bool ScenarioEditorModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::EditRole || index.column() != ValueColumn ||
      !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return false;
  }
  Row& row = m_rows[static_cast<std::size_t>(index.row())];
  QVariant typed = value;
  switch (row.spec.kind) {
    case FieldKind::integer:
      if (!typed.convert(QMetaType(QMetaType::Int))) return false;
      break;
    case FieldKind::real:
      if (!typed.convert(QMetaType(QMetaType::Double))) return false;
      break;
    case FieldKind::boolean:
      if (!typed.convert(QMetaType(QMetaType::Bool))) return false;
      break;
    case FieldKind::choice:
      if (!typed.convert(QMetaType(QMetaType::QString))) return false;
      break;
  }
  const bool dp_to_auto = row.spec.key == QLatin1String("parallel.dp") && typed.toInt() <= 0 && !m_dp_auto;
  if (typed == row.spec.value && !dp_to_auto) return true;
  const FieldSpec spec = row.spec;
  row.spec.value = typed;
  edit(spec, typed);
  Q_EMIT dataChanged(this->index(index.row(), 0), this->index(index.row(), ColumnCount - 1));
  Q_EMIT document_changed();
  return true;
}

Qt::ItemFlags ScenarioEditorModel::flags(const QModelIndex& index) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return Qt::NoItemFlags;
  Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
  if (index.column() == ValueColumn) f |= Qt::ItemIsEditable;
  return f;
}

QVariant ScenarioEditorModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case LabelColumn:
      return QStringLiteral("Field");
    case ValueColumn:
      return QStringLiteral("Value");
    case NoteColumn:
      return QStringLiteral("Unit / problem");
    default:
      return {};
  }
}

}  // namespace stepcast::gui
