#pragma once
// The text a person reads after `stepcast search`: what was searched and how the space was cut
// down (layouts, how many do not fit, how many were fully predicted, how many the bound skipped,
// time and rate), then the best layouts with their step time, throughput, MFU and memory, and the
// breakdown of each one's step into the predictor's components.

#include <string>

#include "model/scenario.h"
#include "simulator/training_search.h"

namespace stepcast {

std::string search_report_table(const Scenario& base, const SearchOptions& options, const SearchResult& result);

}  // namespace stepcast
