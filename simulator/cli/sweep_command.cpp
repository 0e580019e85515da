// `stepcast sweep SWEEP [--threads N] [--out FILE] [--format csv|jsonl] [--top K | --pareto]
//                [--shard I/N] [--collectives MODEL] [--calibration PROFILE]`
// Runs a sweep file (simulator/sweep_file.h): one row per point that is consistent and passes
// the constraints, in point order, as CSV or JSON Lines (simulator/result_table.h), to --out or
// stdout. --top K keeps the K best by the objectives, --pareto the non-dominated set (both only
// among layouts that fit). Progress goes to stderr when it is a terminal; a summary of what was
// skipped and why goes to stderr at the end. With --calibration each row also carries its step
// time's 90% interval and what it extrapolates (simulator/calibrated_columns.h).

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <algorithm>
#include <set>

#include "simulator/calibrated_columns.h"
#include "simulator/cli/cli_parsing.h"
#include "simulator/cli/commands.h"
#include "simulator/cli/model_choice.h"
#include "simulator/cli/progress_bar.h"
#include "simulator/diagnostics.h"
#include "simulator/quantity_parse.h"
#include "simulator/sweep_file.h"
#include "simulator/sweep_points.h"
#include "simulator/sweep_runner.h"

namespace stepcast::cli {
namespace {

struct SweepCommandOptions {
  std::string sweep;
  int threads = 0;
  std::string out;
  std::string format;
  std::size_t top = 0;
  bool pareto = false;
  std::string shard;
  ModelChoice model;
};

// Axis value text as a cell: the --set text without YAML quotes around a plain string.
std::string axis_text(const std::string& value) {
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
    return value.substr(1, value.size() - 2);
  }
  return value;
}

void run_sweep_command(const SweepCommandOptions& o) {
  const SweepFile sweep = load_sweep_file(o.sweep);
  const ChosenModel model = choose_model(o.model, sweep.base.system);
  for (const auto& w : model.warnings) std::cerr << "stepcast: warning: " << w << '\n';

  SweepRunOptions options;
  options.threads = o.threads;
  if (!o.shard.empty()) std::tie(options.shard_index, options.shard_count) = parse_shard(o.shard);
  if (o.top > 0 && o.pareto) throw UsageError("--top and --pareto keep different sets; give one");
  options.selection = o.pareto ? Selection::pareto : (o.top > 0 ? Selection::top : Selection::all);
  options.top = o.top;
  options.parameters = model.cost;
  options.collectives = model.collectives;

  // Columns: the axes (fields, or their text for other keys), the rest of the layout, the results.
  const FieldTable& fields = FieldTable::training();
  TableHeader header;
  header.kind = "sweep";
  header.name = sweep.name;
  header.fingerprint = fmt::format("{:016x}", fnv1a(fmt::format("{:016x}|{}", sweep.fingerprint, model.variant)));
  header.model = model.variant;
  header.shard_index = options.shard_index;
  header.shard_count = options.shard_count;
  header.selection = options.selection;
  header.top = options.selection == Selection::top ? options.top : 0;
  for (const auto& obj : sweep.objectives) header.objectives.push_back(obj.text());
  std::set<std::string> seen;
  std::vector<std::size_t> text_axes;  // axes over keys that are not fields
  for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
    const std::string& key = sweep.axes[a].key;
    if (!seen.insert(key).second) continue;
    header.columns.push_back(key);
    if (fields.slot_of(key) < 0) text_axes.push_back(a);
  }
  for (const auto& c : layout_columns()) {
    if (seen.insert(c).second) header.columns.push_back(c);
  }
  for (const auto& c : result_columns()) {
    if (seen.insert(c).second) header.columns.push_back(c);
  }
  // With a profile, each row's interval and extrapolation (simulator/calibrated_columns.h).
  if (model.profile) {
    for (const auto& c : calibrated_columns()) header.columns.push_back(c);
  }

  std::ofstream file;
  if (!o.out.empty()) {
    file.open(o.out, std::ios::binary);
    if (!file) throw InputError({Diagnostic{o.out, 0, 0, "", "cannot write the file", ""}});
  }
  std::ostream& out = o.out.empty() ? std::cout : file;
  const TableFormat format = table_format_for(o.format.empty() ? "csv" : o.format, o.out);
  TableWriter writer(out, format, header, fields);
  writer.begin();
  std::vector<std::size_t> index(sweep.axes.size());
  std::vector<std::string> texts(text_axes.size());
  PointBuilder builder(sweep);  // rows arrive on one thread, in order
  const auto texts_of = [&](std::uint64_t point) {
    sweep.decode(point, index);
    texts.resize(text_axes.size());
    for (std::size_t t = 0; t < text_axes.size(); ++t) texts[t] = axis_text(sweep.axes[text_axes[t]].values[index[text_axes[t]]]);
    if (model.profile) {
      std::string reason;
      const Scenario* scenario = builder.build(point, reason);
      // A row's point was built once already; it builds again the same way.
      const auto cells = scenario != nullptr ? calibrated_cells(*model.profile, *scenario, model.cost, model.collectives)
                                             : std::vector<std::string>(calibrated_columns().size());
      texts.insert(texts.end(), cells.begin(), cells.end());
    }
    return std::span<const std::string>(texts);
  };

  ProgressBar bar;
  const SweepRunResult result = run_sweep(
      sweep, options,
      [&](std::uint64_t point, std::span<const double> row, std::span<const double> objectives) {
        writer.row(point, row, objectives, texts_of(point));
      },
      bar.control());
  bar.clear();
  for (const Candidate& c : result.kept) {
    std::vector<double> objectives;
    for (std::size_t i = 0; i < sweep.objectives.size(); ++i) {
      objectives.push_back(sweep.objectives[i].sense == Objective::Sense::minimize ? c.score[i] : -c.score[i]);
    }
    writer.row(c.point, c.row, objectives, texts_of(c.point));
  }
  writer.end(result.summary);

  const TableSummary& s = result.summary;
  std::cerr << fmt::format("{}: {} points{}: {} invalid, {} pruned by constraints, {} rows ({} fit){}; {:.2f} s\n", sweep.name,
                           thousands(s.points),
                           options.shard_count > 1 ? fmt::format(" (shard {}/{})", options.shard_index, options.shard_count) : "",
                           thousands(s.invalid), thousands(s.pruned), thousands(s.feasible + s.infeasible), thousands(s.feasible),
                           options.selection == Selection::all ? "" : fmt::format(", kept {}", s.kept), s.seconds);
  // The commonest reasons first.
  std::vector<std::pair<std::uint64_t, std::string>> reasons;
  for (const auto& [reason, count] : result.invalid_reasons) reasons.emplace_back(count, reason);
  std::stable_sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < reasons.size() && i < 3; ++i) {
    std::cerr << "  " << thousands(reasons[i].first) << " invalid: " << reasons[i].second << '\n';
  }
  if (reasons.size() > 3) std::cerr << "  (and " << reasons.size() - 3 << " other reasons)\n";
  if (!o.out.empty()) std::cerr << "wrote " << o.out << '\n';
}

}  // namespace

void add_sweep_command(CLI::App& app, CommandSet& commands) {
  auto o = std::make_shared<SweepCommandOptions>();
  CLI::App* cmd = app.add_subcommand("sweep", "Predict every point of a sweep file's grid, in order, as CSV or JSON Lines");
  cmd->add_option("sweep", o->sweep, "Sweep file (YAML: base, axes, constraints, objectives)")->required();
  cmd->add_option("--threads", o->threads, "Worker threads (default: every core)")
      ->check(whole_number_in(1, kMaxWorkerThreads));
  cmd->add_option("--out", o->out, "Write the table to FILE (default: stdout)");
  cmd->add_option("--format", o->format, "csv (default) or jsonl")->check(CLI::IsMember({"csv", "jsonl"}));
  cmd->add_option("--top", o->top, "Keep only the K best rows by the objectives")
      ->check(whole_number_in(1, kMaxTop));
  cmd->add_flag("--pareto", o->pareto, "Keep only the Pareto set over the objectives");
  cmd->add_option("--shard", o->shard, "Take shard I of N of the points (I/N); join with `stepcast merge`");
  add_model_options(*cmd, o->model);
  cmd->callback([o, &commands] {
    run_sweep_command(*o);
    commands.exit_code = 0;
  });
}

}  // namespace stepcast::cli
