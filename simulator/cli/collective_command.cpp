// `stepcast collective --system NAME --nodes N --op OP --sizes MIN:MAX [--gpus-per-node G]
//  [--step-factor F] [--algo A] [--proto P]`: what nccl-tests would print for one collective on a
// catalog system, with the algorithm and protocol the NCCL-faithful model picks.

#include <CLI/CLI.hpp>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>

#include "model/nccl_model.h"
#include "model/placement.h"
#include "model/topology.h"
#include "simulator/catalog.h"
#include "simulator/cli/cli_parsing.h"
#include "simulator/cli/commands.h"
#include "simulator/collective_table.h"
#include "simulator/diagnostics.h"
#include "simulator/quantity_parse.h"

namespace stepcast::cli {

namespace {

// Bounds that keep one run short: the group's ranks are enumerated (16,000 nodes of 8 GPUs take
// 1.3 s here), and a table longer than this many rows is a step factor typed wrong.
constexpr int kMaxNodes = 131072;
constexpr double kMaxRows = 10000;

struct CollectiveOptions {
  std::string system;
  int nodes = 1;
  int gpus_per_node = 0;  // 0: every GPU of each node
  std::string op = "all_reduce";
  std::string sizes = "8:8G";
  double step_factor = 2.0;
  std::string algo;
  std::string proto;
};

int run_collective(const CollectiveOptions& o) {
  const Catalog& catalog = Catalog::builtin();
  const SystemSpec* found = catalog.find_system(o.system);
  if (found == nullptr) {
    const std::string guess = closest_match(o.system, catalog.system_names());
    throw UsageError("unknown --system '" + o.system + "'" + (guess.empty() ? "" : "; did you mean '" + guess + "'?") +
                     " (`stepcast catalog systems` lists them)");
  }
  SystemSpec system = *found;
  const int server_gpus = std::max(system.gpus_per_node, 1);
  const int per_node = o.gpus_per_node > 0 ? o.gpus_per_node : server_gpus;
  if (per_node > server_gpus) {
    throw UsageError("--gpus-per-node " + std::to_string(per_node) + " exceeds the " + std::to_string(server_gpus) +
                     " GPUs of a " + o.system + " node");
  }
  if (o.nodes < 1) throw UsageError("--nodes must be at least 1");
  if (o.nodes > kMaxNodes) {
    throw UsageError("--nodes " + std::to_string(o.nodes) + " is more than the " + std::to_string(kMaxNodes) +
                     " nodes a group is priced for");
  }
  system.gpus = o.nodes * server_gpus;
  const bool crosses_domains = o.nodes * server_gpus > std::max(system.nvlink_domain_gpus, server_gpus);
  if (crosses_domains && (system.network.nics_per_node <= 0 || system.network.nic_bandwidth.value() <= 0.0)) {
    throw InputError("system '" + o.system + "' has no known network bandwidth between nodes (" +
                     describe(system.network) + "); use --nodes 1 or a system with network.nic_bandwidth");
  }

  CollectiveSweep sweep;
  sweep.op = parse_collective_op(o.op);
  const auto [lo, hi] = parse_size_range(o.sizes);
  sweep.min_size = lo;
  sweep.max_size = hi;
  sweep.step_factor = o.step_factor;
  if (!(o.step_factor > 1.0)) throw UsageError("--step-factor must be above 1 (each row's size is the last one's times it)");
  const double row_count = std::floor(std::log(hi.value() / lo.value()) / std::log(o.step_factor)) + 1.0;
  if (row_count > kMaxRows) {
    throw UsageError("--sizes " + o.sizes + " with --step-factor " + format_number(o.step_factor) + " makes " +
                     std::to_string(static_cast<long long>(row_count)) + " rows; at most " + std::to_string(static_cast<long long>(kMaxRows)) +
                     " (use a larger --step-factor)");
  }
  if (!o.algo.empty()) sweep.filter.algorithm = parse_algorithm(o.algo);
  if (!o.proto.empty()) sweep.filter.protocol = parse_protocol(o.proto);

  // The group: the first `per_node` GPUs of every node, in rank order.
  std::vector<int> members;
  for (int s = 0; s < o.nodes; ++s) {
    for (int i = 0; i < per_node; ++i) members.push_back(s * server_gpus + i);
  }
  const GroupLayout group = layout_of(members, system);
  const Topology topology(system);
  // The ring's kinds of hop: inside a node, node to node, and the wrap-around (which crosses the
  // spine when the nodes span leaf switches).
  std::vector<int> sample{members.front()};
  if (per_node > 1) sample.push_back(members[1]);
  if (o.nodes > 1) {
    sample.push_back(members[static_cast<std::size_t>(per_node)]);
    sample.push_back(members.back());
  }
  const GroupLinks links = links_crossed(sample, topology);

  const NcclCollectiveModel model(system);
  const auto rows = sweep_collective(model, group, sweep);
  const std::vector<std::string> title{
      "stepcast collective: " + std::string(to_string(sweep.op)) + ", " + std::to_string(group.size) + " ranks on " +
          std::to_string(o.nodes) + " x " + o.system + " (" + std::to_string(per_node) + " GPUs per node)",
      "model: nccl (NCCL's tuning tables, model/nccl_parameters.h); sizes as nccl-tests count them",
      "placement: " + describe(group, system) + "; links: " + describe(links),
  };
  std::cout << format_collective_table(rows, sweep, title);
  return 0;
}

}  // namespace

void add_collective_command(CLI::App& app, CommandSet& commands) {
  auto options = std::make_shared<CollectiveOptions>();
  CLI::App* cmd = app.add_subcommand(
      "collective", "Predict one collective over a size sweep, printed like nccl-tests, with the chosen algorithm");
  cmd->add_option("--system", options->system, "Catalog system, e.g. dgx-h100")->required();
  cmd->add_option("--nodes", options->nodes, "Nodes (servers) in the group")->capture_default_str();
  cmd->add_option("--gpus-per-node", options->gpus_per_node, "GPUs of each node in the group (default: all)")
      ->check(whole_number_in(1, 1024));
  cmd->add_option("--op", options->op,
                  "all_reduce | all_gather | reduce_scatter | broadcast | reduce | all_to_all | send_recv")
      ->capture_default_str();
  cmd->add_option("--sizes", options->sizes, "MIN:MAX in bytes, e.g. 8B:8GiB or 8:8G (nccl-tests' -b/-e)")
      ->capture_default_str();
  cmd->add_option("--step-factor", options->step_factor, "Size multiplier between rows (nccl-tests' -f)")
      ->capture_default_str();
  cmd->add_option("--algo", options->algo, "Force an algorithm (like NCCL_ALGO): ring, tree, nvls, nvls_tree, pat, ...");
  cmd->add_option("--proto", options->proto, "Force a protocol (like NCCL_PROTO): LL, LL128, Simple");
  cmd->callback([options, &commands] { commands.exit_code = run_collective(*options); });
}

}  // namespace stepcast::cli
