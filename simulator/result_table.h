#pragma once
// Result tables of sweeps and searches, as CSV or JSON Lines, and reading them back for merge.
//
// Both formats carry the same three parts, so shards can be merged and checked:
//   header   what produced the rows: kind (sweep | search), name, fingerprint of the input, shard
//            I/N, selection (all | top | pareto), K, the objectives, the columns, and the cost
//            model that priced them (the text reports' "cost model:" line: collective model,
//            calibration, constants set by hand; absent in tables written before it was added).
//   rows     one per configuration: `point` (its index in the full grid, which orders rows and
//            breaks ties), the chosen columns, then objective_1..n (each objective's value). A
//            column is a field (simulator/result_fields.h) or, for a sweep axis over a key that is
//            not one, the axis value as text.
//   summary  counts (points, invalid, pruned, infeasible, feasible, timed, kept) and seconds.
// CSV: the header is the first line, "# stepcast {json}", then the column names; the summary is
// the last line, "# summary {json}" (pandas: read_csv(path, comment="#")). JSON Lines: the header
// object {"stepcast": {...}}, one object per row, then {"summary": {...}}.
//
// Numbers are written in the shortest form that reads back as the same double, so a merged table
// ranks exactly as the run that wrote it.

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "simulator/result_fields.h"

namespace stepcast {

enum class TableFormat { csv, jsonl };
// "csv" or "jsonl"; throws UsageError otherwise.
TableFormat parse_table_format(std::string_view text);

enum class Selection { all, top, pareto };
std::string_view to_string(Selection s);

struct TableHeader {
  std::string kind = "sweep";     // sweep | search
  std::string name;
  std::string fingerprint;        // hex; shards of one run share it
  int shard_index = 0;
  int shard_count = 1;
  Selection selection = Selection::all;
  std::size_t top = 0;            // K for Selection::top
  std::vector<std::string> objectives;  // "min step_time_s", ...
  std::vector<std::string> columns;     // field names or text columns (without point and objective_i)
  std::string model;              // "nccl, datasheet", "nccl, calibrated 'h200'", + constants set by hand
};

struct TableSummary {
  std::uint64_t points = 0;       // configurations in the grid or space (this shard)
  std::uint64_t invalid = 0;      // inconsistent (not a valid scenario)
  std::uint64_t pruned = 0;       // failed a constraint before timing
  std::uint64_t infeasible = 0;   // do not fit in GPU memory
  std::uint64_t feasible = 0;     // fit and pass the constraints known before timing
  std::uint64_t timed = 0;        // fully predicted (pipeline simulated)
  std::uint64_t kept = 0;         // rows written
  double seconds = 0.0;
  TableSummary& operator+=(const TableSummary& o);
};

// One row as read back: its point, the cells as written, and the objective values.
struct TableRow {
  std::uint64_t point = 0;
  std::vector<std::string> cells;   // in header column order (JSON: the raw JSON values)
  std::vector<double> objectives;
};

class TableWriter {
 public:
  TableWriter(std::ostream& out, TableFormat format, TableHeader header, const FieldTable& fields);
  // Writes the header (once, before rows).
  void begin();
  // `texts` holds, in column order, the cells of the columns that are not fields.
  void row(std::uint64_t point, std::span<const double> values, std::span<const double> objectives,
           std::span<const std::string> texts = {});
  // Writes a row read from another table with the same header (merge).
  void row(const TableRow& row);
  void end(const TableSummary& summary);

 private:
  std::ostream& m_out;
  TableFormat m_format;
  TableHeader m_header;
  const FieldTable& m_fields;
  std::vector<int> m_slots;  // per column; -1 for a text column
};

struct Table {
  TableFormat format = TableFormat::csv;
  TableHeader header;
  std::vector<TableRow> rows;
  TableSummary summary;
  bool has_summary = false;
};

// Reads a table written by TableWriter; throws InputError naming the file and line.
Table read_table(const std::string& path);
Table parse_table(std::string_view text, const std::string& source);

}  // namespace stepcast
