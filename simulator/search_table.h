#pragma once
// A search result as a result table (simulator/result_table.h), so that sharded searches can be
// merged like sweeps: kind "search", the layout columns and the result columns, one row per kept
// layout (point = its index in the layout space), the objectives' values, and the counts as the
// summary. The fingerprint covers the scenario (as written by write_scenario_yaml) and every
// option that changes the space or the ranking, not the shard or the thread count.

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "simulator/result_table.h"
#include "simulator/training_search.h"

namespace stepcast {

TableHeader search_table_header(const Scenario& base, const SearchOptions& options);

// `texts_of(candidate)`, when given, supplies each row's cells of the header's text columns (the
// columns that are not fields, in order): a calibrated search's interval columns
// (simulator/calibrated_columns.h).
using CandidateTexts = std::function<std::vector<std::string>(const Candidate&)>;
void write_search_table(std::ostream& out, TableFormat format, const TableHeader& header, const SearchResult& result,
                        const CandidateTexts& texts_of = {});

}  // namespace stepcast
