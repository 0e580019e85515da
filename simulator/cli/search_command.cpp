// `stepcast search SCENARIO [--set key=value ...] [--objective "min step_time_s"] [--constraint EXPR ...]
//                 [--top K | --pareto] [--threads N] [--shard I/N] [--out FILE] [--format table|csv|jsonl]
//                 [--context-parallel] [--overlap-flags] [--max-micro-batch N] [--exhaustive]
//                 [--gpu-hour-usd X] [--collectives MODEL] [--calibration PROFILE]`
// Every valid training layout of the scenario's model on its GPUs at its global batch, ranked
// (simulator/training_search.h). Prints the best layouts with their breakdowns and how many were
// enumerated, did not fit, were fully predicted and were skipped by the bound; --out writes them
// as a result table that `stepcast merge` joins across shards. On a serving scenario: the best
// serving layouts over tp, precision, batch limits and replicas (simulator/serving_search.h)
// [--precisions W ...] [--max-batch N ...] [--max-batch-tokens N ...] [--all-gpus].

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <memory>

#include "simulator/calibrated_columns.h"
#include "simulator/cli/cli_parsing.h"
#include "simulator/cli/commands.h"
#include "simulator/cli/model_choice.h"
#include "simulator/cli/progress_bar.h"
#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"
#include "simulator/prediction_interval.h"
#include "simulator/search_report.h"
#include "simulator/search_table.h"
#include "simulator/serving_search.h"
#include "simulator/training_predictor.h"
#include "simulator/training_search.h"

namespace stepcast::cli {
namespace {

struct SearchCommandOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::vector<std::string> objectives;
  std::vector<std::string> constraints;
  std::size_t top = 10;
  bool pareto = false;
  int threads = 0;
  std::string shard;
  std::string out;
  std::string format = "table";
  bool context_parallel = false;
  bool overlap_flags = false;
  int max_micro_batch = 0;
  bool exhaustive = false;
  double gpu_hour_usd = 0.0;
  // Serving scenarios.
  std::vector<std::string> precisions;
  std::vector<int> max_batch;
  std::vector<int> max_batch_tokens;
  bool all_gpus = false;
  ModelChoice model;
};

// `stepcast search` on a serving scenario (simulator/serving_search.h).
void run_serving(const Scenario& base, const SearchCommandOptions& o, const ChosenModel& model) {
  if (o.pareto || o.context_parallel || o.overlap_flags || o.max_micro_batch > 0 || o.exhaustive) {
    throw UsageError("--pareto, --context-parallel, --overlap-flags, --max-micro-batch and --exhaustive are for "
                     "training searches; a serving search takes --precisions, --max-batch, --max-batch-tokens and "
                     "--all-gpus");
  }
  ServingSearchOptions options;
  options.inference = model.inference;
  const FieldTable& fields = FieldTable::serving();
  for (const auto& text : o.objectives) options.objectives.push_back(parse_objective_option(text, fields));
  if (options.objectives.size() > kMaxObjectives) throw UsageError("at most 8 objectives");
  for (const auto& text : o.constraints) options.constraints.push_back(parse_condition_option(text, fields));
  for (const auto& word : o.precisions) {
    const auto t = parse_datatype(word);
    if (!t || (*t != DataType::bf16 && *t != DataType::fp16 && *t != DataType::fp8 && *t != DataType::int8 &&
               *t != DataType::int4)) {
      throw UsageError("--precisions: '" + word + "' is not one of bf16, fp16, fp8, int8, int4");
    }
    options.space.precisions.push_back(*t);
  }
  options.space.max_batch = o.max_batch;
  options.space.max_batch_tokens = o.max_batch_tokens;
  options.space.fewer_replicas = !o.all_gpus;
  options.top = o.top;
  options.threads = o.threads;
  if (!o.shard.empty()) std::tie(options.shard_index, options.shard_count) = parse_shard(o.shard);
  options.parameters = model.cost;
  options.collectives = model.collectives;
  ProgressBar bar;
  const ServingSearchResult result = run_serving_search(base, options, bar.control());
  bar.clear();
  const bool table_out = o.out.empty() && (o.format.empty() || o.format == "table");
  if (table_out) {
    std::cout << serving_search_report(base, result);
    std::cout << "cost model: " << model.variant << '\n';
    std::cout.flush();
    return;
  }
  const TableFormat format = table_format_for(o.format, o.out);
  TableHeader header = serving_search_table_header(base, options);
  header.model = model.variant;
  if (o.out.empty()) {
    write_serving_search_table(std::cout, format, header, result);
    return;
  }
  std::ofstream file(o.out, std::ios::binary);
  if (!file) throw InputError({Diagnostic{o.out, 0, 0, "", "cannot write the file", ""}});
  write_serving_search_table(file, format, header, result);
  std::cout << serving_search_report(base, result);
  std::cout << "cost model: " << model.variant << '\n';
  std::cout << "\nwrote " << result.best.size() << " layouts to " << o.out << '\n';
}

void run_search(const SearchCommandOptions& o) {
  std::vector<Override> overrides;
  for (const auto& text : o.overrides) overrides.push_back(parse_override(text));
  const Scenario base = load_scenario(o.scenario, overrides);
  const ChosenModel model = choose_model(o.model, base.system);
  for (const auto& w : model.warnings) std::cerr << "stepcast: warning: " << w << '\n';
  if (!base.is_training()) {
    run_serving(base, o, model);
    return;
  }

  SearchOptions options;
  for (const auto& text : o.objectives) options.objectives.push_back(parse_objective_option(text));
  if (options.objectives.empty()) options.objectives.push_back(parse_objective_option("min step_time_s"));
  if (options.objectives.size() > kMaxObjectives) throw UsageError("at most 8 objectives");
  const FieldTable& fields = FieldTable::training();
  for (const auto& text : o.constraints) {
    Expression e = parse_condition_option(text);
    const FieldPhase phase = fields.phase_of(e);
    options.constraints.push_back({std::move(e), phase});
  }
  for (const Objective& objective : options.objectives) {
    for (int slot : objective.expression.slots()) {
      if (fields.at(slot).name == "cost_per_million_tokens_usd" && o.gpu_hour_usd <= 0.0) {
        throw UsageError("--objective '" + objective.text() + "' needs a price: add --gpu-hour-usd X");
      }
    }
  }
  options.top = o.top;
  options.pareto = o.pareto;
  options.threads = o.threads;
  if (!o.shard.empty()) std::tie(options.shard_index, options.shard_count) = parse_shard(o.shard);
  options.space.context_parallel = o.context_parallel;
  options.space.overlap_flags = o.overlap_flags;
  options.space.max_micro_batch = o.max_micro_batch;
  options.exhaustive = o.exhaustive;
  options.gpu_hour_usd = o.gpu_hour_usd;
  options.parameters = model.cost;
  options.collectives = model.collectives;
  options.variant = model.variant;
  if (o.context_parallel) {
    std::cerr << "stepcast: warning: --context-parallel: the predictor does not price context-parallel traffic yet, "
                 "so layouts with cp > 1 look faster than they are\n";
  }

  ProgressBar bar;
  const SearchResult result = run_training_search(base, options, bar.control());
  bar.clear();

  // With a profile, the best layout's step time gets its interval (simulator/prediction_interval.h).
  std::string interval_line;
  if (model.profile && !result.best.empty()) {
    Scenario best = base;
    apply_layout(LayoutSpace(base, options.space).at(result.best.front().point), best);
    TrainingPredictor predictor(model.cost);
    const auto net = model.collectives(best.system);
    const TrainingPrediction p = predictor.predict(best, *net);
    interval_line = "\nthe best layout's step time with calibration: " +
                    training_interval(*model.profile, best, p, model.cost).describe(p.step_time.value(), "s") + "\n";
  }
  const bool table_out = o.out.empty() && (o.format.empty() || o.format == "table");
  if (table_out) {
    std::cout << search_report_table(base, options, result) << interval_line;
    std::cout.flush();
    return;
  }
  const TableFormat format = table_format_for(o.format, o.out);
  TableHeader header = search_table_header(base, options);
  header.model = model.variant;
  // With a profile, each kept layout's interval and extrapolation (simulator/calibrated_columns.h).
  CandidateTexts texts_of;
  if (model.profile) {
    for (const auto& c : calibrated_columns()) header.columns.push_back(c);
    texts_of = [&](const Candidate& c) {
      Scenario layout = base;
      apply_layout(LayoutSpace(base, options.space).at(c.point), layout);
      return calibrated_cells(*model.profile, layout, model.cost, model.collectives);
    };
  }
  if (o.out.empty()) {
    write_search_table(std::cout, format, header, result, texts_of);
    return;
  }
  std::ofstream file(o.out, std::ios::binary);
  if (!file) throw InputError({Diagnostic{o.out, 0, 0, "", "cannot write the file", ""}});
  write_search_table(file, format, header, result, texts_of);
  std::cout << search_report_table(base, options, result) << interval_line;
  std::cout << "\nwrote " << result.best.size() << " layouts to " << o.out << '\n';
}

}  // namespace

void add_search_command(CLI::App& app, CommandSet& commands) {
  auto o = std::make_shared<SearchCommandOptions>();
  CLI::App* cmd = app.add_subcommand("search", "Find the best training layouts of a scenario's model on its GPUs, or the best serving layouts");
  cmd->add_option("scenario", o->scenario, "Scenario file, or the name of a catalog scenario")->required();
  cmd->add_option("--set", o->overrides, "Override a scenario key: key.path=value (repeatable)");
  cmd->add_option("--objective", o->objectives,
                  "What to optimise: \"min step_time_s\" (default), \"max tokens_per_s\", \"max mfu\", "
                  "\"min memory_per_gpu_bytes.peak\", \"min cost_per_million_tokens_usd\"; repeat for ties or --pareto");
  cmd->add_option("--constraint", o->constraints, "A condition every layout must meet, e.g. \"parallel.tp <= 8\" (repeatable)");
  cmd->add_option("--top", o->top, "How many layouts to keep (default 10)")
      ->check(whole_number_in(1, kMaxTop));
  cmd->add_flag("--pareto", o->pareto, "Keep the Pareto set over the objectives instead of the top K");
  cmd->add_option("--threads", o->threads, "Worker threads (default: every core)")
      ->check(whole_number_in(1, kMaxWorkerThreads));
  cmd->add_option("--shard", o->shard, "Take shard I of N of the layouts (I/N), for job arrays; join with `stepcast merge`");
  cmd->add_option("--out", o->out, "Write the kept layouts as a table (CSV or JSON Lines) to FILE");
  cmd->add_option("--format", o->format, "table (stdout, default), csv or jsonl")
      ->check(CLI::IsMember({"table", "csv", "jsonl"}));
  cmd->add_flag("--context-parallel", o->context_parallel, "Also search cp > 1 (its traffic is not priced yet)");
  cmd->add_flag("--overlap-flags", o->overlap_flags, "Also search tp_comm_overlap, overlap_grad_reduce, overlap_param_gather");
  cmd->add_option("--max-micro-batch", o->max_micro_batch, "Largest micro-batch to consider (default: any)");
  cmd->add_flag("--exhaustive", o->exhaustive, "Predict every layout that fits (no bound pruning): slower, for checks");
  cmd->add_option("--gpu-hour-usd", o->gpu_hour_usd, "Price of a GPU-hour, for cost_per_million_tokens_usd");
  cmd->add_option("--precisions", o->precisions,
                  "Serving: weight formats to try (default bf16 fp8 int8 int4; those the GPU lacks are skipped)");
  cmd->add_option("--max-batch", o->max_batch, "Serving: max_batch values to try (default 8, 16, ... up to 2x the scenario's)");
  cmd->add_option("--max-batch-tokens", o->max_batch_tokens, "Serving: max_batch_tokens values to try (default the scenario's)");
  cmd->add_flag("--all-gpus", o->all_gpus, "Serving: use every GPU (replicas = gpus / (tp pp)) instead of also trying fewer");
  add_model_options(*cmd, o->model);
  cmd->callback([o, &commands] {
    if (o->pareto && o->objectives.size() < 2) throw UsageError("--pareto needs two or more --objective");
    run_search(*o);
    commands.exit_code = 0;
  });
}

}  // namespace stepcast::cli
