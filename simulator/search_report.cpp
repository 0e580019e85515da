#include "simulator/search_report.h"

#include <fmt/format.h>

#include <cmath>

#include "simulator/quantity_parse.h"

namespace stepcast {
namespace {

std::string seconds_text(double s) {
  if (s >= 100.0) return fmt::format("{:.1f} s", s);
  if (s >= 1.0) return fmt::format("{:.3f} s", s);
  return fmt::format("{:.1f} ms", s * 1e3);
}

}  // namespace

std::string search_report_table(const Scenario& base, const SearchOptions& options, const SearchResult& r) {
  const FieldTable& f = FieldTable::training();
  const auto value = [&](const Candidate& c, const char* name) { return c.row[static_cast<std::size_t>(f.slot_of(name))]; };
  const auto text = [&](const Candidate& c, const char* name) { return f.format(f.slot_of(name), value(c, name)); };
  const TrainingWorkload& t = base.training();
  std::string out;
  out += fmt::format("Search: {} on {} x {} ({}), global batch {}, sequence {}\n", base.name, base.system.gpus,
                     base.system.gpu.name, base.system.name, t.global_batch, t.seq_len);
  if (!options.variant.empty()) out += fmt::format("  cost model: {}\n", options.variant);
  const SearchCounts& n = r.counts;
  if (options.shard_count > 1) {
    out += fmt::format("  shard {}/{}: {} of {} layouts\n", options.shard_index, options.shard_count,
                       thousands(n.enumerated), thousands(n.space));
  } else {
    out += fmt::format("  {} layouts\n", thousands(n.enumerated));
  }
  if (n.pruned > 0) out += fmt::format("  {} fail a constraint before timing\n", thousands(n.pruned));
  out += fmt::format("  {} do not fit in {:.0f} GiB (exact memory, no timing)\n", thousands(n.infeasible),
                     base.system.gpu.memory.value() / (1024.0 * 1024.0 * 1024.0));
  out += fmt::format("  {} fit: {} fully predicted", thousands(n.feasible), thousands(n.timed));
  if (r.bounded) {
    out += fmt::format(", {} skipped (their step-time bound cannot reach the top {})", thousands(n.skipped), options.top);
  }
  out += "\n";
  const double rate = n.seconds > 0.0 ? static_cast<double>(n.enumerated) / n.seconds : 0.0;
  out += fmt::format("  {} ({} screening, {} timing): {} layouts/s\n", seconds_text(n.seconds), seconds_text(n.screen_seconds),
                     seconds_text(n.time_seconds), thousands(static_cast<unsigned long long>(rate)));
  if (r.cancelled) out += "  cancelled: the layouts below are the best found before the run stopped\n";
  if (r.best.empty()) {
    out += "\nNo layout fits and passes the constraints.\n";
    return out;
  }
  std::string objective = "min step_time_s";
  if (!options.objectives.empty()) objective = options.objectives.front().text();
  out += fmt::format("\n{} by {}:\n", options.pareto ? "Pareto set" : fmt::format("Best {}", r.best.size()),
                     options.pareto ? [&] {
                       std::string all;
                       for (const auto& o : options.objectives) all += (all.empty() ? "" : ", ") + o.text();
                       return all;
                     }()
                                    : objective);
  out += fmt::format("  {:>3} {:>3} {:>3} {:>4} {:>3} {:>3} {:>4} {:>3} {:>12} {:>4} {:>8} {:>5}  {:>10} {:>11} {:>6} {:>10}\n",
                     "#", "tp", "pp", "dp", "cp", "vpp", "mb", "sp", "recompute", "zero", "schedule", "tpov", "step", "tokens/s",
                     "MFU", "memory");
  int rank = 0;
  for (const Candidate& c : r.best) {
    out += fmt::format("  {:>3} {:>3} {:>3} {:>4} {:>3} {:>3} {:>4} {:>3} {:>12} {:>4} {:>8} {:>5}  {:>10} {:>11.0f} {:>5.1f}% {:>6.1f} GiB\n",
                       ++rank, text(c, "parallel.tp"), text(c, "parallel.pp"), text(c, "parallel.dp"), text(c, "parallel.cp"),
                       text(c, "parallel.vpp"), text(c, "training.micro_batch"),
                       value(c, "parallel.sequence_parallel") != 0.0 ? "on" : "off", text(c, "parallel.recompute"),
                       text(c, "parallel.zero"), text(c, "parallel.schedule"),
                       value(c, "parallel.tp_comm_overlap") != 0.0 ? "on" : "off", seconds_text(value(c, "step_time_s")),
                       value(c, "tokens_per_s"), 100.0 * value(c, "mfu"),
                       value(c, "memory_per_gpu_bytes.peak") / (1024.0 * 1024.0 * 1024.0));
  }
  out += "\nWhere each step goes (seconds on the critical pipeline stage):\n";
  out += fmt::format("  {:>3} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "#", "compute", "recompute", "tp comm",
                     "bubble", "pp comm", "dp comm", "optimizer", "other");
  rank = 0;
  for (const Candidate& c : r.best) {
    out += fmt::format("  {:>3} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f}\n", ++rank,
                       value(c, "time_breakdown_s.compute"), value(c, "time_breakdown_s.recompute"),
                       value(c, "time_breakdown_s.tp_comm_exposed"), value(c, "time_breakdown_s.pp_bubble"),
                       value(c, "time_breakdown_s.pp_comm_exposed"), value(c, "time_breakdown_s.dp_comm_exposed"),
                       value(c, "time_breakdown_s.optimizer"),
                       value(c, "time_breakdown_s.other") + value(c, "time_breakdown_s.cp_comm_exposed") +
                           value(c, "time_breakdown_s.ep_comm_exposed") + value(c, "time_breakdown_s.offload_exposed"));
  }
  return out;
}

}  // namespace stepcast
