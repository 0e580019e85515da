#include "simulator/search_table.h"

#include <fmt/format.h>

#include <ostream>

#include "simulator/enum_names.h"
#include "simulator/scenario_loader.h"
#include "simulator/sweep_file.h"

namespace stepcast {

TableHeader search_table_header(const Scenario& base, const SearchOptions& options) {
  TableHeader h;
  h.kind = "search";
  h.name = base.name;
  h.shard_index = options.shard_index;
  h.shard_count = options.shard_count;
  h.selection = options.pareto ? Selection::pareto : Selection::top;
  h.top = options.pareto ? 0 : options.top;
  for (const Objective& o : options.objectives) h.objectives.push_back(o.text());
  if (h.objectives.empty()) h.objectives.emplace_back("min step_time_s");
  h.columns = layout_columns();
  for (const auto& c : result_columns()) h.columns.push_back(c);

  std::string identity = write_scenario_yaml(base);
  for (PipelineSchedule s : options.space.schedules) identity += std::string(enum_name(s)) + ",";
  for (Recompute r : options.space.recompute) identity += std::string(enum_name(r)) + ",";
  for (int z : options.space.zero) identity += std::to_string(z) + ",";
  identity += fmt::format("|cp={}|flags={}|mb<={}|", options.space.context_parallel, options.space.overlap_flags,
                          options.space.max_micro_batch);
  for (const auto& o : h.objectives) identity += o + ";";
  for (const SearchCondition& c : options.constraints) identity += c.expression.text() + ";";
  identity += fmt::format("|{}|{}|{}|{}|{}", to_string(h.selection), h.top, options.gpu_hour_usd, options.exhaustive,
                          options.variant);
  CostParameters params = options.parameters;
  params.for_each_constant([&](std::string_view name, double value, std::string_view) {
    identity += fmt::format("{}={};", name, value);
  });
  h.fingerprint = fmt::format("{:016x}", fnv1a(identity));
  return h;
}

void write_search_table(std::ostream& out, TableFormat format, const TableHeader& header, const SearchResult& result,
                        const CandidateTexts& texts_of) {
  const FieldTable& fields = FieldTable::training();
  TableWriter writer(out, format, header, fields);
  writer.begin();
  for (const Candidate& c : result.best) {
    const std::vector<double> objectives = objective_values(c, header.objectives);
    if (texts_of) {
      const std::vector<std::string> texts = texts_of(c);
      writer.row(c.point, c.row, objectives, texts);
    } else {
      writer.row(c.point, c.row, objectives);
    }
  }
  TableSummary s;
  s.points = result.counts.enumerated;
  s.pruned = result.counts.pruned;
  s.infeasible = result.counts.infeasible;
  s.feasible = result.counts.feasible;
  s.timed = result.counts.timed;
  s.kept = result.best.size();
  s.seconds = result.counts.seconds;
  writer.end(s);
}

}  // namespace stepcast
