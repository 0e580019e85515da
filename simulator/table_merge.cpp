#include "simulator/table_merge.h"

#include <algorithm>
#include <ostream>
#include <set>

#include "simulator/diagnostics.h"
#include "simulator/ranking.h"

namespace stepcast {
namespace {

[[noreturn]] void mismatch(const std::string& source, const std::string& what) {
  throw InputError({Diagnostic{source, 0, 0, "", what, ""}});
}

}  // namespace

Table merge_tables(const std::vector<Table>& shards, const std::vector<std::string>& sources) {
  if (shards.empty()) throw UsageError("merge: give at least one shard table");
  const TableHeader& first = shards.front().header;
  std::set<int> seen;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const TableHeader& h = shards[i].header;
    const std::string& src = sources[i];
    if (h.fingerprint != first.fingerprint || h.kind != first.kind) {
      mismatch(src, "comes from a different " + h.kind + " (fingerprint " + h.fingerprint + ", " + sources.front() +
                        " has " + first.fingerprint + ")");
    }
    if (h.selection != first.selection || h.top != first.top || h.objectives != first.objectives ||
        h.columns != first.columns) {
      mismatch(src, "was written with other options (selection, --top, objectives or columns) than " + sources.front());
    }
    if (h.shard_count != first.shard_count) {
      mismatch(src, "is shard " + std::to_string(h.shard_index) + "/" + std::to_string(h.shard_count) + " but " +
                        sources.front() + " is of " + std::to_string(first.shard_count) + " shards");
    }
    if (!seen.insert(h.shard_index).second) mismatch(src, "repeats shard " + std::to_string(h.shard_index));
  }
  if (static_cast<int>(seen.size()) != first.shard_count) {
    std::string missing;
    for (int i = 0; i < first.shard_count; ++i) {
      if (seen.count(i) == 0) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    }
    throw InputError({Diagnostic{"merge", 0, 0, "", "shards " + missing + " of " + std::to_string(first.shard_count) +
                                                        " are missing", ""}});
  }

  Table out;
  out.format = shards.front().format;
  out.header = first;
  out.header.shard_index = 0;
  out.header.shard_count = 1;
  out.has_summary = true;
  std::vector<const TableRow*> rows;
  for (const Table& t : shards) {
    out.summary += t.summary;
    for (const TableRow& r : t.rows) rows.push_back(&r);
  }

  const std::size_t objectives = first.objectives.size();
  std::vector<Candidate> candidates;
  candidates.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Candidate c;
    c.point = rows[i]->point;
    for (std::size_t k = 0; k < objectives && k < kMaxObjectives; ++k) {
      c.score[k] = rows[i]->objectives[k] * objective_sign(first.objectives[k]);
    }
    c.row = {static_cast<double>(i)};  // index into `rows`
    candidates.push_back(std::move(c));
  }
  std::vector<Candidate> kept;
  switch (first.selection) {
    case Selection::all:
      kept = std::move(candidates);
      std::sort(kept.begin(), kept.end(), [](const Candidate& a, const Candidate& b) { return a.point < b.point; });
      break;
    case Selection::top: {
      TopK top(first.top, objectives);
      for (auto& c : candidates) top.offer(std::move(c));
      kept = top.sorted();
      break;
    }
    case Selection::pareto: {
      ParetoSet set(objectives);
      for (auto& c : candidates) set.offer(std::move(c));
      kept = set.sorted();
      break;
    }
  }
  for (const Candidate& c : kept) out.rows.push_back(*rows[static_cast<std::size_t>(c.row.front())]);
  out.summary.kept = out.rows.size();
  return out;
}

void write_table(std::ostream& out, const Table& table, const FieldTable& fields) {
  TableWriter writer(out, table.format, table.header, fields);
  writer.begin();
  for (const TableRow& r : table.rows) writer.row(r);
  writer.end(table.summary);
}

}  // namespace stepcast
