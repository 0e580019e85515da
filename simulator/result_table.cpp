#include "simulator/result_table.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>

#include "simulator/diagnostics.h"
#include "simulator/text_file.h"

namespace stepcast {
namespace {

using json = nlohmann::ordered_json;

std::string number_text(double v) { return std::isnan(v) ? std::string() : fmt::format("{}", v); }

json header_json(const TableHeader& h) {
  json j;
  j["schema_version"] = 1;
  j["kind"] = h.kind;
  j["name"] = h.name;
  j["fingerprint"] = h.fingerprint;
  j["shard"] = {h.shard_index, h.shard_count};
  j["selection"] = std::string(to_string(h.selection));
  j["top"] = h.top;
  j["objectives"] = h.objectives;
  j["columns"] = h.columns;
  if (!h.model.empty()) j["model"] = h.model;
  return j;
}

json summary_json(const TableSummary& s) {
  json j;
  j["points"] = s.points;
  j["invalid"] = s.invalid;
  j["pruned"] = s.pruned;
  j["infeasible"] = s.infeasible;
  j["feasible"] = s.feasible;
  j["timed"] = s.timed;
  j["kept"] = s.kept;
  j["seconds"] = s.seconds;
  return j;
}

[[noreturn]] void bad(const std::string& source, int line, const std::string& message) {
  throw InputError({Diagnostic{source, line, 0, "", message, ""}});
}

TableHeader read_header(const json& j, const std::string& source, int line) {
  try {
    TableHeader h;
    if (j.at("schema_version").get<int>() != 1) bad(source, line, "unsupported result table schema_version");
    h.kind = j.at("kind").get<std::string>();
    h.name = j.at("name").get<std::string>();
    h.fingerprint = j.at("fingerprint").get<std::string>();
    h.shard_index = j.at("shard").at(0).get<int>();
    h.shard_count = j.at("shard").at(1).get<int>();
    const std::string selection = j.at("selection").get<std::string>();
    if (selection == "all") h.selection = Selection::all;
    else if (selection == "top") h.selection = Selection::top;
    else if (selection == "pareto") h.selection = Selection::pareto;
    else bad(source, line, "unknown selection '" + selection + "'");
    h.top = j.at("top").get<std::size_t>();
    h.objectives = j.at("objectives").get<std::vector<std::string>>();
    h.columns = j.at("columns").get<std::vector<std::string>>();
    h.model = j.value("model", std::string());  // optional: tables written before it carry none
    return h;
  } catch (const json::exception& e) {
    bad(source, line, std::string("not a stepcast result header: ") + e.what());
  }
}

TableSummary read_summary(const json& j, const std::string& source, int line) {
  try {
    TableSummary s;
    s.points = j.at("points").get<std::uint64_t>();
    s.invalid = j.at("invalid").get<std::uint64_t>();
    s.pruned = j.at("pruned").get<std::uint64_t>();
    s.infeasible = j.at("infeasible").get<std::uint64_t>();
    s.feasible = j.at("feasible").get<std::uint64_t>();
    s.timed = j.at("timed").get<std::uint64_t>();
    s.kept = j.at("kept").get<std::uint64_t>();
    s.seconds = j.at("seconds").get<double>();
    return s;
  } catch (const json::exception& e) {
    bad(source, line, std::string("not a stepcast summary: ") + e.what());
  }
}

double parse_double(const std::string& text) {
  if (text.empty() || text == "null") return std::numeric_limits<double>::quiet_NaN();
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::numeric_limits<double>::quiet_NaN();
  return v;
}

// RFC 4180: a cell with a comma or a quote is quoted, its quotes doubled.
std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// The raw cells of a CSV line (quoted cells kept as written, so they are written back unchanged).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (true) {
    std::size_t end = i;
    if (end < line.size() && line[end] == '"') {
      ++end;
      while (end < line.size()) {
        if (line[end] == '"' && end + 1 < line.size() && line[end + 1] == '"') {
          end += 2;
        } else if (line[end] == '"') {
          ++end;
          break;
        } else {
          ++end;
        }
      }
    }
    end = std::min(line.find(',', end), line.size());
    out.push_back(line.substr(i, end - i));
    if (end >= line.size()) break;
    i = end + 1;
  }
  return out;
}

// The raw value texts of a flat JSON object written by TableWriter ({"a":1,"b":"x",...}), in order.
std::vector<std::string> split_json_values(const std::string& line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    const std::size_t colon = line.find("\":", i);
    if (colon == std::string::npos) break;
    std::size_t start = colon + 2;
    std::size_t end = start;
    if (end < line.size() && line[end] == '"') {
      ++end;
      while (end < line.size() && line[end] != '"') end += line[end] == '\\' ? 2 : 1;
      ++end;
    } else {
      while (end < line.size() && line[end] != ',' && line[end] != '}') ++end;
    }
    out.push_back(line.substr(start, end - start));
    i = end;
  }
  return out;
}

}  // namespace

TableFormat parse_table_format(std::string_view text) {
  if (text == "csv") return TableFormat::csv;
  if (text == "jsonl") return TableFormat::jsonl;
  throw UsageError("--format " + std::string(text) + ": expected csv or jsonl");
}

std::string_view to_string(Selection s) {
  switch (s) {
    case Selection::all: return "all";
    case Selection::top: return "top";
    case Selection::pareto: return "pareto";
  }
  return "?";
}

TableSummary& TableSummary::operator+=(const TableSummary& o) {
  points += o.points;
  invalid += o.invalid;
  pruned += o.pruned;
  infeasible += o.infeasible;
  feasible += o.feasible;
  timed += o.timed;
  kept += o.kept;
  seconds += o.seconds;
  return *this;
}

TableWriter::TableWriter(std::ostream& out, TableFormat format, TableHeader header, const FieldTable& fields)
    : m_out(out), m_format(format), m_header(std::move(header)), m_fields(fields) {
  for (const auto& c : m_header.columns) m_slots.push_back(fields.slot_of(c));
}

void TableWriter::begin() {
  if (m_format == TableFormat::csv) {
    m_out << "# stepcast " << header_json(m_header).dump() << '\n';
    m_out << "point";
    for (const auto& c : m_header.columns) m_out << ',' << c;
    for (std::size_t i = 0; i < m_header.objectives.size(); ++i) m_out << ",objective_" << i + 1;
    m_out << '\n';
  } else {
    json j;
    j["stepcast"] = header_json(m_header);
    m_out << j.dump() << '\n';
  }
}

void TableWriter::row(std::uint64_t point, std::span<const double> values, std::span<const double> objectives,
                      std::span<const std::string> texts) {
  TableRow r;
  r.point = point;
  r.cells.reserve(m_slots.size() + objectives.size());
  std::size_t next_text = 0;
  for (int slot : m_slots) {
    if (slot < 0) {
      const std::string text = next_text < texts.size() ? texts[next_text++] : std::string();
      r.cells.push_back(m_format == TableFormat::jsonl ? json(text).dump() : csv_cell(text));
      continue;
    }
    const double v = values[static_cast<std::size_t>(slot)];
    std::string text = m_fields.format(slot, v);
    if (m_format == TableFormat::jsonl) {
      const ExprType type = m_fields.at(slot).type;
      if (std::isnan(v)) text = "null";
      else if (type == ExprType::word) text = "\"" + text + "\"";
    }
    r.cells.push_back(std::move(text));
  }
  for (double o : objectives) {
    r.cells.push_back(m_format == TableFormat::jsonl && std::isnan(o) ? std::string("null") : number_text(o));
  }
  row(r);
}

void TableWriter::row(const TableRow& r) {
  const std::size_t objectives = m_header.objectives.size();
  if (m_format == TableFormat::csv) {
    m_out << r.point;
    for (const auto& cell : r.cells) m_out << ',' << cell;
    m_out << '\n';
    return;
  }
  m_out << "{\"point\":" << r.point;
  for (std::size_t i = 0; i < r.cells.size(); ++i) {
    const bool objective = i >= m_header.columns.size();
    const std::string name = objective ? "objective_" + std::to_string(i - m_header.columns.size() + 1) : m_header.columns[i];
    m_out << ",\"" << name << "\":" << r.cells[i];
  }
  (void)objectives;
  m_out << "}\n";
}

void TableWriter::end(const TableSummary& summary) {
  if (m_format == TableFormat::csv) {
    m_out << "# summary " << summary_json(summary).dump() << '\n';
  } else {
    json j;
    j["summary"] = summary_json(summary);
    m_out << j.dump() << '\n';
  }
  m_out.flush();
}

Table parse_table(std::string_view text, const std::string& source) {
  Table t;
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  bool have_header = false;
  bool have_columns = false;
  std::size_t width = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    if (!have_header) {
      if (line.rfind("# stepcast ", 0) == 0) {
        t.format = TableFormat::csv;
        t.header = read_header(json::parse(line.substr(11), nullptr, false), source, number);
      } else {
        const json j = json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("stepcast")) {
          bad(source, number, "not a stepcast sweep or search table (its first line is not a stepcast header)");
        }
        t.format = TableFormat::jsonl;
        t.header = read_header(j["stepcast"], source, number);
        have_columns = true;
      }
      have_header = true;
      width = t.header.columns.size() + t.header.objectives.size();
      continue;
    }
    if (t.format == TableFormat::csv) {
      if (line.rfind("# summary ", 0) == 0) {
        const json j = json::parse(line.substr(10), nullptr, false);
        t.summary = read_summary(j, source, number);
        t.has_summary = true;
        continue;
      }
      std::vector<std::string> cells = split_csv(line);
      if (!have_columns) {
        if (cells.size() != width + 1 || cells.front() != "point") bad(source, number, "the column names do not match the header");
        have_columns = true;
        continue;
      }
      if (cells.size() != width + 1) {
        bad(source, number, "expected " + std::to_string(width + 1) + " cells, found " + std::to_string(cells.size()));
      }
      TableRow r;
      r.point = static_cast<std::uint64_t>(parse_double(cells.front()));
      r.cells.assign(cells.begin() + 1, cells.end());
      for (std::size_t i = t.header.columns.size(); i < width; ++i) r.objectives.push_back(parse_double(r.cells[i]));
      t.rows.push_back(std::move(r));
    } else {
      const json j = json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) bad(source, number, "not a JSON object");
      if (j.contains("summary")) {
        t.summary = read_summary(j["summary"], source, number);
        t.has_summary = true;
        continue;
      }
      std::vector<std::string> values = split_json_values(line);
      if (values.size() != width + 1 || !j.contains("point")) {
        bad(source, number, "expected a row with point and " + std::to_string(width) + " values");
      }
      TableRow r;
      r.point = j["point"].get<std::uint64_t>();
      r.cells.assign(values.begin() + 1, values.end());
      for (std::size_t i = t.header.columns.size(); i < width; ++i) r.objectives.push_back(parse_double(r.cells[i]));
      t.rows.push_back(std::move(r));
    }
  }
  if (!have_header) bad(source, 0, "the file is empty; expected a stepcast sweep or search table");
  return t;
}

Table read_table(const std::string& path) {
  return parse_table(read_text_file(path), path);
}

}  // namespace stepcast
