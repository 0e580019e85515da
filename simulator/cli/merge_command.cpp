// `stepcast merge SHARD... [--out FILE]`
// Joins the result tables of a sharded sweep or search (--shard I/N) into the table one run
// writes: all rows in point order, the top K, or the Pareto set (simulator/table_merge.h).

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <memory>

#include "simulator/cli/commands.h"
#include "simulator/diagnostics.h"
#include "simulator/table_merge.h"

namespace stepcast::cli {
namespace {

struct MergeOptions {
  std::vector<std::string> shards;
  std::string out;
};

void run_merge(const MergeOptions& o) {
  std::vector<Table> tables;
  tables.reserve(o.shards.size());
  for (const auto& path : o.shards) tables.push_back(read_table(path));
  const Table merged = merge_tables(tables, o.shards);
  const FieldTable& fields = merged.header.kind == "serving-search" ? FieldTable::serving() : FieldTable::training();
  if (o.out.empty()) {
    write_table(std::cout, merged, fields);
    return;
  }
  std::ofstream file(o.out, std::ios::binary);
  if (!file) throw InputError({Diagnostic{o.out, 0, 0, "", "cannot write the file", ""}});
  write_table(file, merged, fields);
  std::cerr << "merged " << o.shards.size() << " shards: " << merged.rows.size() << " rows to " << o.out << '\n';
}

}  // namespace

void add_merge_command(CLI::App& app, CommandSet& commands) {
  auto o = std::make_shared<MergeOptions>();
  CLI::App* cmd = app.add_subcommand("merge", "Join sharded sweep or search tables into the table of one run");
  cmd->add_option("shards", o->shards, "The shard tables (CSV or JSON Lines), one per shard")->required();
  cmd->add_option("--out", o->out, "Write the merged table to FILE (default: stdout)");
  cmd->callback([o, &commands] {
    run_merge(*o);
    commands.exit_code = 0;
  });
}

}  // namespace stepcast::cli
