#include "gui/models/sweep_results_model.h"

#include "gui/models/display_units.h"
#include "simulator/result_fields.h"

namespace stepcast::gui {
namespace {

// The columns shown, by field name, and how their header reads.
struct Column {
  const char* field;
  const char* header;
};
constexpr Column kColumns[] = {
    {"parallel.tp", "TP"},
    {"parallel.pp", "PP"},
    {"parallel.dp", "DP"},
    {"parallel.cp", "CP"},
    {"parallel.ep", "EP"},
    {"parallel.vpp", "VPP"},
    {"training.micro_batch", "Micro-batch"},
    {"parallel.sequence_parallel", "SP"},
    {"parallel.schedule", "Schedule"},
    {"parallel.recompute", "Recompute"},
    {"parallel.zero", "ZeRO"},
    {"step_time_s", "Step time (s)"},
    {"tokens_per_s", "Tokens/s"},
    {"mfu", "MFU (%)"},
    {"memory_per_gpu_bytes.peak", "Peak memory (GiB)"},
    {"fits", "Fits"},
};

QStringList headers() {
  QStringList out{QStringLiteral("Rank")};
  for (const Column& c : kColumns) out << QString::fromLatin1(c.header);
  out << QStringLiteral("Pareto");
  return out;
}

}  // namespace

SweepResultsModel::SweepResultsModel(QObject* parent) : TableModel(headers(), parent) {}

void SweepResultsModel::clear() {
  m_base.reset();
  m_result = {};
  m_points.clear();
  reset_rows({});
}

void SweepResultsModel::set_result(const Scenario& base, const LayoutSpaceOptions& space, SearchResult result) {
  m_base = base;
  m_space = space;
  m_result = std::move(result);
  const FieldTable& table = FieldTable::training();
  const int tokens = table.slot_of("tokens_per_s");
  const int memory = table.slot_of("memory_per_gpu_bytes.peak");
  const int fits = table.slot_of("fits");
  m_points.clear();
  for (const Candidate& c : m_result.best) {
    const auto at = [&](int slot) { return static_cast<std::size_t>(slot) < c.row.size() ? c.row[static_cast<std::size_t>(slot)] : 0.0; };
    m_points.push_back(Point{at(tokens), at(memory), at(fits) != 0.0, false});
  }
  // Pareto front among the rows that fit: more tokens/s, less peak memory.
  for (std::size_t i = 0; i < m_points.size(); ++i) {
    Point& p = m_points[i];
    if (!p.fits) continue;
    p.pareto = true;
    for (std::size_t j = 0; j < m_points.size() && p.pareto; ++j) {
      const Point& q = m_points[j];
      if (j == i || !q.fits) continue;
      const bool no_worse = q.tokens_per_s >= p.tokens_per_s && q.peak_memory <= p.peak_memory;
      const bool better = q.tokens_per_s > p.tokens_per_s || q.peak_memory < p.peak_memory;
      if (no_worse && better) p.pareto = false;
    }
  }

  std::vector<std::vector<Cell>> rows;
  rows.reserve(m_result.best.size());
  for (std::size_t r = 0; r < m_result.best.size(); ++r) {
    const Candidate& c = m_result.best[r];
    std::vector<Cell> row{number_cell(static_cast<double>(r + 1), QString::number(r + 1))};
    for (const Column& col : kColumns) {
      const int slot = table.slot_of(col.field);
      const double v = slot >= 0 && static_cast<std::size_t>(slot) < c.row.size() ? c.row[static_cast<std::size_t>(slot)] : 0.0;
      const std::string_view name(col.field);
      QString text;
      if (name == "step_time_s") {
        text = QString::number(v, 'f', 3);
      } else if (name == "tokens_per_s") {
        text = QString::number(v, 'f', 0);
      } else if (name == "mfu") {
        text = QString::number(v * 100.0, 'f', 1);
      } else if (name == "memory_per_gpu_bytes.peak") {
        text = QString::number(v / kGiB, 'f', 1);
      } else {
        text = slot >= 0 ? QString::fromStdString(table.format(slot, v)) : QString();
      }
      const FieldDef* def = slot >= 0 ? &table.at(slot) : nullptr;
      // Words and truth values sort and filter by their text; numbers by value.
      const bool numeric = def != nullptr && def->type == ExprType::number;
      row.push_back(numeric ? number_cell(v, text) : text_cell(text));
    }
    row.push_back(text_cell(m_points[r].pareto ? QStringLiteral("yes") : QString()));
    rows.push_back(std::move(row));
  }
  reset_rows(std::move(rows));
}

std::optional<Scenario> SweepResultsModel::scenario_of(int row) const {
  if (!m_base || row < 0 || static_cast<std::size_t>(row) >= m_result.best.size()) return std::nullopt;
  const LayoutSpace space(*m_base, m_space);
  Scenario s = *m_base;
  apply_layout(space.at(m_result.best[static_cast<std::size_t>(row)].point), s);
  return s;
}

QString SweepResultsModel::describe(int row) const {
  if (row < 0 || row >= rowCount()) return {};
  QStringList parts;
  for (std::size_t i = 0; i < std::size(kColumns); ++i) {
    const std::string_view name(kColumns[i].field);
    if (name.rfind("parallel.", 0) != 0 && name != "training.micro_batch") continue;
    parts << QStringLiteral("%1 %2").arg(QString::fromLatin1(kColumns[i].header).toLower(),
                                        cell(row, static_cast<int>(i) + 1).text);
  }
  return parts.join(QStringLiteral(", "));
}

}  // namespace stepcast::gui
