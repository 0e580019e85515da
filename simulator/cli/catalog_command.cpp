// `stepcast catalog [gpus|systems|models|scenarios] [NAME]`: what the built-in catalog (plus
// STEPCAST_CATALOG_PATH) holds. Without a NAME, one line of key figures per entry; with a NAME,
// every field of that entry with the citation it carries in the catalog file.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "simulator/catalog.h"
#include "simulator/cli/commands.h"
#include "simulator/diagnostics.h"
#include "simulator/enum_names.h"
#include "simulator/quantity_parse.h"

namespace stepcast::cli {
namespace {

struct CatalogOptions {
  std::string kind;  // empty: everything
  std::string name;
};

// Integer formats count operations, not floating-point operations: "1978.9 TOP/s".
std::string format_peak(FlopRate rate, DataType t) {
  std::string text = format_quantity(rate.value(), Dimension::flop_rate);
  if (t == DataType::int8 || t == DataType::int4) {
    const std::size_t at = text.find("FLOP");
    if (at != std::string::npos) text.replace(at, 4, "OP");
  }
  return text;
}

// A capacity as people read it: the exact spelling when it is short ("80 GB", "192 GiB"), else
// GiB to two decimals with the exact byte count ("79.35 GiB (85198045184 B)") in the detail view.
std::string capacity_text(Bytes b, bool with_exact_bytes) {
  const std::string exact = format_quantity(b.value(), Dimension::size);
  if (exact.size() <= 8) return exact;
  const std::string readable = fmt::format("{:.2f} GiB", b.value() / (1024.0 * 1024.0 * 1024.0));
  return with_exact_bytes ? fmt::format("{} ({:.0f} B)", readable, b.value()) : readable;
}

std::string quantity_or(double si, Dimension d, const char* zero_word) {
  return si == 0.0 ? std::string(zero_word) : format_quantity(si, d);
}

// Names in natural order: digit runs compare as numbers, so gpt-3.6b lists before gpt-18.4b.
std::vector<std::string> natural_order(std::vector<std::string> names) {
  const auto less = [](const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
      if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
        std::size_t ei = i, ej = j;
        while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
        while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
        const std::string na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
        if (na.size() != nb.size()) return na.size() < nb.size();
        if (na != nb) return na < nb;
        i = ei;
        j = ej;
      } else {
        if (a[i] != b[j]) return a[i] < b[j];
        ++i;
        ++j;
      }
    }
    return a.size() - i < b.size() - j;
  };
  std::sort(names.begin(), names.end(), less);
  return names;
}

std::string per_direction(Bandwidth b, const char* zero_word) {
  return b.value() == 0.0 ? std::string(zero_word) : format_quantity(b.value(), Dimension::bandwidth) + " per direction";
}

// Prints an entry's fields, each with its citation underneath; a citation shared with the field
// above (all the dense peaks of one datasheet) is printed once.
class FieldPrinter {
 public:
  FieldPrinter(std::ostream& out, const Catalog& catalog, std::string entry)
      : m_out(out), m_catalog(catalog), m_entry(std::move(entry)) {}

  void field(const std::string& name, const std::string& value) {
    m_out << fmt::format("  {:<24} {}\n", name, value);
    const std::string source = m_catalog.source_of(m_entry, name);
    if (!source.empty() && source != m_last_source) m_out << fmt::format("  {:<24}   source: {}\n", "", source);
    m_last_source = source;
  }

 private:
  std::ostream& m_out;
  const Catalog& m_catalog;
  std::string m_entry;
  std::string m_last_source;
};

void print_notes(std::ostream& out, const Catalog& c, const std::string& entry) {
  const std::string notes = c.notes_of(entry);
  if (!notes.empty()) out << "  notes: " << notes << "\n";
  out << "  defined in " << c.file_of(entry) << "\n";
}

void list_gpus(std::ostream& out, const Catalog& c) {
  out << fmt::format("{:<22} {:<10} {:>15} {:>10} {:>11} {:>12} {:>7}  {}\n", "GPU", "arch", "bf16 dense",
                     "memory", "HBM bw", "NVLink/dir", "TDP", "default system");
  for (const auto& name : natural_order(c.gpu_names())) {
    const GpuSpec& g = *c.find_gpu(name);
    out << fmt::format("{:<22} {:<10} {:>15} {:>10} {:>11} {:>12} {:>7}  {}\n", name, enum_name(g.architecture),
                       quantity_or(g.peak(DataType::bf16).value(), Dimension::flop_rate, "-"),
                       capacity_text(g.memory, false),
                       format_quantity(g.memory_bandwidth.value(), Dimension::bandwidth),
                       quantity_or(g.nvlink_bandwidth.value(), Dimension::bandwidth, "none"),
                       quantity_or(g.tdp_watts, Dimension::power, "?"),
                       c.default_system_name(name).empty() ? "(generic node)" : c.default_system_name(name));
  }
}

void show_gpu(std::ostream& out, const Catalog& c, const std::string& name) {
  FieldPrinter p(out, c, name);
  const GpuSpec& g = *c.find_gpu(name);
  out << name << ": " << g.display_name << "\n";
  p.field("architecture", std::string(enum_name(g.architecture)));
  for (DataType t : kAllDataTypes) {
    if (!g.supports(t)) continue;
    p.field("dense_peak." + std::string(to_string(t)), format_peak(g.peak(t), t));
  }
  p.field("memory", capacity_text(g.memory, true));
  p.field("memory_bandwidth", format_quantity(g.memory_bandwidth.value(), Dimension::bandwidth));
  p.field("sm_count", g.sm_count == 0 ? "unknown" : std::to_string(g.sm_count));
  p.field("l2_cache", quantity_or(g.l2_cache.value(), Dimension::size, "unknown"));
  p.field("nvlink_bandwidth", per_direction(g.nvlink_bandwidth, "none"));
  p.field("host_bandwidth", per_direction(g.host_bandwidth, "unknown"));
  p.field("tdp", quantity_or(g.tdp_watts, Dimension::power, "unknown"));
  if (!g.power_modes.empty()) {
    std::string modes;
    for (const PowerMode& m : g.power_modes) {
      modes += fmt::format("{}{} ({} W, compute x{:.3f}, memory bandwidth x{:.3f})", modes.empty() ? "" : "; ",
                           m.name, m.watts, m.compute_scale, m.memory_bandwidth_scale);
    }
    p.field("power_modes", modes);
  }
  const std::string system = c.default_system_name(name);
  out << fmt::format("  {:<24} {}\n", "default_system", system.empty() ? "(generic single node)" : system);
  print_notes(out, c, name);
}

void list_systems(std::ostream& out, const Catalog& c) {
  out << fmt::format("{:<24} {:<22} {:>9} {:>12} {:>11} {:>22}  {}\n", "system", "GPU", "GPUs/node", "NVLink dom",
                     "NVLink/dir", "NICs per node", "transport");
  for (const auto& name : natural_order(c.system_names())) {
    const SystemSpec& s = *c.find_system(name);
    const NetworkSpec& n = s.network;
    const std::string nics =
        n.nics_per_node == 0 ? "none"
                             : fmt::format("{} x {}", n.nics_per_node,
                                           n.nic_bandwidth.value() == 0.0
                                               ? std::string("unknown")
                                               : format_number(n.nic_bandwidth.value() * 8 / 1e9) + " Gb/s");
    out << fmt::format("{:<24} {:<22} {:>9} {:>12} {:>11} {:>22}  {}\n", name, s.gpu.name, s.gpus_per_node,
                       s.nvlink_domain_gpus, quantity_or(s.intra_node_bandwidth.value(), Dimension::bandwidth, "?"),
                       nics, n.nics_per_node == 0 ? "-" : std::string(enum_name(n.transport)));
  }
}

void show_system(std::ostream& out, const Catalog& c, const std::string& name) {
  FieldPrinter p(out, c, name);
  const SystemSpec& s = *c.find_system(name);
  const NetworkSpec& n = s.network;
  out << name << ": " << s.display_name << "\n";
  p.field("gpu", s.gpu.name);
  p.field("gpus_per_node", std::to_string(s.gpus_per_node));
  p.field("nvlink_domain_gpus", std::to_string(s.nvlink_domain_gpus));
  p.field("nvlink_sharp", s.nvlink_sharp ? "true" : "false");
  p.field("intra_node_bandwidth", per_direction(s.intra_node_bandwidth, "unknown"));
  p.field("intra_node_latency", format_quantity(s.intra_node_latency.value(), Dimension::time));
  p.field("host_memory_per_node",
              quantity_or(s.host_memory_per_node.value(), Dimension::size, "unknown"));
  p.field("network.nics_per_node", std::to_string(n.nics_per_node));
  p.field("network.nic_bandwidth",
              n.nic_bandwidth.value() == 0.0
                  ? std::string("unknown")
                  : format_number(n.nic_bandwidth.value() * 8 / 1e9) + " Gb/s (" +
                        format_quantity(n.nic_bandwidth.value(), Dimension::bandwidth) + ") per direction");
  p.field("network.nic_latency", format_quantity(n.nic_latency.value(), Dimension::time));
  p.field("network.transport", std::string(enum_name(n.transport)));
  p.field("network.fabric", std::string(enum_name(n.fabric)));
  p.field("network.tiers", std::to_string(n.tiers));
  p.field("network.oversubscription", format_number(n.oversubscription) + ":1");
  p.field("network.nodes_per_leaf", std::to_string(n.nodes_per_leaf));
  p.field("network.in_network_reduction", n.in_network_reduction ? "true" : "false");
  if (n.simple_protocol_only) p.field("network.simple_protocol_only", "true (the net plugin sets NCCL_PROTO=simple)");
  print_notes(out, c, name);
}

void list_models(std::ostream& out, const Catalog& c) {
  out << fmt::format("{:<14} {:>6} {:>7} {:>6} {:>8} {:>7} {:>7} {:<7} {}\n", "model", "layers", "hidden", "heads",
                     "kv_heads", "ffn", "vocab", "mlp", "experts");
  for (const auto& name : natural_order(c.model_names())) {
    const TransformerSpec& m = *c.find_model(name);
    out << fmt::format("{:<14} {:>6} {:>7} {:>6} {:>8} {:>7} {:>7} {:<7} {}\n", name, m.layers, m.hidden, m.heads,
                       m.kv_heads, m.ffn_hidden, m.vocab, enum_name(m.mlp),
                       m.is_moe() ? fmt::format("{} (top {})", m.moe.experts, m.moe.top_k) : std::string("-"));
  }
}

void show_model(std::ostream& out, const Catalog& c, const std::string& name) {
  FieldPrinter p(out, c, name);
  const TransformerSpec& m = *c.find_model(name);
  out << name << "\n";
  p.field("layers", std::to_string(m.layers));
  p.field("hidden", std::to_string(m.hidden));
  p.field("heads", std::to_string(m.heads));
  p.field("kv_heads", std::to_string(m.kv_heads));
  p.field("head_dim", std::to_string(m.head_dim));
  p.field("ffn_hidden", std::to_string(m.ffn_hidden));
  p.field("vocab", std::to_string(m.vocab));
  p.field("mlp", std::string(enum_name(m.mlp)));
  p.field("norm", std::string(enum_name(m.norm)));
  p.field("tied_embeddings", m.tied_embeddings ? "true" : "false");
  p.field("linear_bias", m.linear_bias ? "true" : "false");
  if (m.is_moe()) {
    p.field("experts", std::to_string(m.moe.experts));
    p.field("top_k", std::to_string(m.moe.top_k));
    p.field("moe_ffn_hidden", std::to_string(m.moe.ffn_hidden));
  }
  print_notes(out, c, name);
}

void list_scenarios(std::ostream& out, const Catalog& c) {
  out << fmt::format("{:<26} {}\n", "scenario", "description");
  for (const auto& name : c.scenario_names()) {
    const CatalogScenario& s = *c.find_scenario(name);
    const std::string first = s.description.substr(0, s.description.find('\n'));
    out << fmt::format("{:<26} {}\n", name, first);
  }
}

void show_scenario(std::ostream& out, const Catalog& c, const std::string& name) {
  const CatalogScenario& s = *c.find_scenario(name);
  out << "# " << s.source << "\n" << s.text;
}

void run_catalog(const CatalogOptions& options) {
  const Catalog& c = Catalog::builtin();
  std::ostream& out = std::cout;
  const std::vector<std::string> kinds = {"gpus", "systems", "models", "scenarios"};
  if (!options.kind.empty() && std::find(kinds.begin(), kinds.end(), options.kind) == kinds.end()) {
    const std::string near = closest_match(options.kind, kinds);
    throw UsageError("catalog: unknown section '" + options.kind + "'; expected gpus, systems, models or scenarios" +
                     (near.empty() ? "" : "; did you mean '" + near + "'?"));
  }
  const auto lookup = [&](const std::vector<std::string>& names, const std::string& what) {
    if (std::find(names.begin(), names.end(), options.name) != names.end()) return;
    const std::string near = closest_match(options.name, names);
    throw InputError({Diagnostic{"catalog", 0, 0, "", "no " + what + " named '" + options.name + "'",
                                 near.empty() ? "" : "did you mean '" + near + "'?"}});
  };
  if (!options.name.empty()) {
    if (options.kind == "gpus") {
      lookup(c.gpu_names(), "GPU");
      show_gpu(out, c, options.name);
    } else if (options.kind == "systems") {
      lookup(c.system_names(), "system");
      show_system(out, c, options.name);
    } else if (options.kind == "models") {
      lookup(c.model_names(), "model");
      show_model(out, c, options.name);
    } else {
      lookup(c.scenario_names(), "scenario");
      show_scenario(out, c, options.name);
    }
    return;
  }
  const bool all = options.kind.empty();
  if (all || options.kind == "gpus") list_gpus(out, c);
  if (all) out << "\n";
  if (all || options.kind == "systems") list_systems(out, c);
  if (all) out << "\n";
  if (all || options.kind == "models") list_models(out, c);
  if (all) out << "\n";
  if (all || options.kind == "scenarios") list_scenarios(out, c);
  out << "\nEvery figure is cited in its catalog file; `stepcast catalog <section> <name>` shows the citations.\n";
}

}  // namespace

void add_catalog_command(CLI::App& app, CommandSet& commands) {
  auto options = std::make_shared<CatalogOptions>();
  CLI::App* cmd = app.add_subcommand("catalog", "List the GPUs, systems, models and example scenarios stepcast knows");
  cmd->add_option("section", options->kind, "gpus, systems, models or scenarios (default: all)");
  cmd->add_option("name", options->name, "show one entry with every field and its source");
  cmd->callback([options, &commands] {
    if (!options->name.empty() && options->kind.empty()) throw UsageError("catalog: give a section before the name");
    run_catalog(*options);
    commands.exit_code = 0;
  });
}

}  // namespace stepcast::cli
