#pragma once
// Joins the tables of a sharded sweep or search (simulator/result_table.h) into the table one
// unsharded run writes: every row in point order (selection all), the top K by the objectives, or
// the Pareto set. The top K of the union of each shard's top K is the top K of the whole, and the
// Pareto set of the union of each shard's Pareto set is the Pareto set of the whole, because the
// ranking is a total order and dominance does not depend on what else was seen.
//
// The shards must come from the same input (equal fingerprints, kinds, selections, K, objectives
// and columns), with shard counts that agree and each shard index present once; anything else is
// an InputError naming the file.

#include <string>
#include <vector>

#include "simulator/result_table.h"

namespace stepcast {

// `sources` label the tables in errors (their file names).
Table merge_tables(const std::vector<Table>& shards, const std::vector<std::string>& sources);

// Writes a table (header, rows, summary) as TableWriter would.
void write_table(std::ostream& out, const Table& table, const FieldTable& fields);

}  // namespace stepcast
