#include "simulator/catalog.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "simulator/builtin_files.h"
#include "simulator/diagnostics.h"
#include "simulator/spec_readers.h"
#include "simulator/yaml_reader.h"
#include "simulator/text_file.h"

namespace stepcast {
namespace {

const std::vector<std::string> kCatalogSections = {"gpus", "systems", "models"};

// Fields that are labels or links rather than figures: they need no source.
bool needs_source(const std::string& field) {
  return field != "display_name" && field != "architecture" && field != "default_system" && field != "sources" &&
         field != "notes" && field != "gpu";
}

// Parses a document; on an error reports it and returns a null node.
YAML::Node parse_document(DiagnosticSink& sink, const std::string& text) {
  return load_document(sink, text).value_or(YAML::Node());
}

bool is_catalog_document(const YAML::Node& root) {
  if (!root.IsMap()) return false;
  for (const auto& key : {"gpus", "systems", "models", "references"}) {
    for (auto it = root.begin(); it != root.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == key) return true;
    }
  }
  return false;
}

// The leading comment block of a scenario file, without '#' marks: its description.
std::string header_comment(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::string out;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '#') break;
    std::string body = line.substr(1);
    if (!body.empty() && body[0] == ' ') body.erase(0, 1);
    if (!out.empty()) out += '\n';
    out += body;
  }
  return out;
}

std::string stem_of(const std::string& label) {
  return std::filesystem::path(label).stem().string();
}

bool valid_name(const std::string& name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
  });
}

}  // namespace

// One parsed catalog document while the catalog is being read.
struct CatalogDocumentState {
  DiagnosticSink sink;
  YAML::Node root;
  std::unique_ptr<MapReader> top;
  std::map<std::string, std::string> references;  // this file's `references:` (ids are per file)
};

namespace {

// Reads `sources:` of an entry, checks the citations and that every figure given has one.
std::map<std::string, std::string> read_sources(const MapReader& entry, const std::map<std::string, std::string>& refs) {
  DiagnosticSink& sink = entry.sink();
  std::map<std::string, std::string> out;
  const auto v = entry.get("sources");
  if (!v) {
    for (const auto& field : entry.keys()) {
      if (needs_source(field)) {
        sink.error(entry.where(), entry.path_of("sources"),
                   "missing required key 'sources' (a citation for every figure, e.g. sources: {" + field + ": ...})");
        return out;
      }
    }
    return out;
  }
  if (!v->node.IsMap()) {
    sink.error(v->where, v->path, "expected a mapping of field to citation, found " + describe_node(v->node));
    return out;
  }
  for (auto it = v->node.begin(); it != v->node.end(); ++it) {
    const Location where = sink.location_of(it->second, v->where);
    if (!it->first.IsScalar() || !it->second.IsScalar() || it->second.Scalar().empty()) {
      sink.error(where, v->path, "expected 'field: citation text', found " + describe_node(it->second));
      continue;
    }
    const std::string field = it->first.Scalar();
    const std::string base = field.substr(0, field.find('.'));
    const std::string path = v->path + "." + field;
    if (field != "all" && !entry.has(base)) {
      sink.error(where, path, "cites a field that the entry does not give");
      continue;
    }
    // Expand "[id]" references.
    std::string text = it->second.Scalar();
    std::string expanded;
    std::size_t pos = 0;
    bool ok = true;
    while (pos < text.size()) {
      const std::size_t open = text.find('[', pos);
      if (open == std::string::npos) {
        expanded += text.substr(pos);
        break;
      }
      const std::size_t close = text.find(']', open);
      if (close == std::string::npos) {
        expanded += text.substr(pos);
        break;
      }
      const std::string id = text.substr(open + 1, close - open - 1);
      expanded += text.substr(pos, open - pos);
      const auto ref = refs.find(id);
      if (ref == refs.end()) {
        std::vector<std::string> ids;
        for (const auto& [k, _] : refs) ids.push_back(k);
        const std::string near = closest_match(id, ids);
        sink.error(where, path, "unknown reference '[" + id + "]'", near.empty() ? "" : "did you mean '" + near + "'?");
        ok = false;
        break;
      }
      expanded += ref->second;
      pos = close + 1;
    }
    if (ok) out[field] = expanded;
  }
  const YAML::Node& sources_node = v->node;  // const: lookup must not insert the key
  const bool cites_all = sources_node["all"].IsDefined();
  if (!cites_all) {
    for (const auto& field : entry.keys()) {
      if (!needs_source(field)) continue;
      const bool cited = std::any_of(out.begin(), out.end(), [&](const auto& kv) {
        return kv.first == field || kv.first.rfind(field + ".", 0) == 0;
      });
      if (!cited) sink.error_at(entry.path_of(field), "no source for this figure; add sources." + field);
    }
  }
  return out;
}

}  // namespace

void Catalog::add_documents(const std::vector<Document>& documents) {
  std::vector<std::unique_ptr<CatalogDocumentState>> catalogs;
  std::vector<Diagnostic> all_errors;

  // 1. Parse every document; set scenarios aside, keep catalog documents for the passes below.
  for (const Document& doc : documents) {
    auto state =
        std::make_unique<CatalogDocumentState>(CatalogDocumentState{DiagnosticSink(doc.label), {}, nullptr, {}});
    state->root = parse_document(state->sink, doc.text);
    if (state->sink.error_count() == 0 && !is_catalog_document(state->root)) {
      const std::string name = stem_of(doc.label);
      m_scenarios[name] = CatalogScenario{name, doc.label, doc.text, header_comment(doc.text)};
      continue;
    }
    if (state->sink.error_count() == 0) {
      state->top = std::make_unique<MapReader>(state->sink, state->root, "", state->sink.start_of_file(),
                                               std::vector<std::string>{"schema_version", "references", "gpus",
                                                                        "systems", "models"});
      if (auto v = state->top->get("schema_version")) {
        read_integer(state->sink, *v, {1, 1});
      } else {
        state->top->missing("schema_version", "1");
      }
    }
    catalogs.push_back(std::move(state));
  }

  // 2. Each file's references.
  for (auto& doc : catalogs) {
    if (!doc->top) continue;
    const auto v = doc->top->get("references");
    if (!v) continue;
    const MapReader refs(doc->sink, v->node, v->path, v->where, [&] {
      std::vector<std::string> keys;
      if (v->node.IsMap()) {
        for (auto it = v->node.begin(); it != v->node.end(); ++it) {
          if (it->first.IsScalar()) keys.push_back(it->first.Scalar());
        }
      }
      return keys;
    }());
    for (const auto& id : refs.keys()) {
      if (auto text = refs.string(id)) doc->references[id] = *text;
    }
  }

  // 3. Entries, kind by kind, so systems can name GPUs from any file.
  const auto entry_names = [](const YamlValue& section) {
    std::vector<std::string> keys;
    if (section.node.IsMap()) {
      for (auto it = section.node.begin(); it != section.node.end(); ++it) {
        if (it->first.IsScalar()) keys.push_back(it->first.Scalar());
      }
    }
    return keys;
  };
  const auto check_name = [&](DiagnosticSink& sink, const MapReader& section, const std::string& name,
                              const std::string& kind) {
    if (!valid_name(name)) {
      sink.error_at(section.path_of(name), "catalog names use lowercase letters, digits, '-', '_' and '.'");
      return false;
    }
    const bool clash = (kind != "gpu" && m_gpus.count(name)) || (kind != "system" && m_systems.count(name)) ||
                       (kind != "model" && m_models.count(name));
    if (clash) {
      sink.error_at(section.path_of(name), "the name '" + name + "' is already used by another kind of entry");
      return false;
    }
    return true;
  };
  std::vector<std::pair<std::string, std::string>> default_systems;  // gpu, system
  std::vector<std::pair<DiagnosticSink*, std::string>> default_system_paths;

  for (auto& doc : catalogs) {
    if (!doc->top) continue;
    const auto v = doc->top->get("gpus");
    if (!v) continue;
    const MapReader section(doc->sink, v->node, v->path, v->where, entry_names(*v));
    for (const auto& name : section.keys()) {
      const auto e = section.get(name);
      if (!check_name(doc->sink, section, name, "gpu")) continue;
      const std::size_t before = doc->sink.error_count();
      const MapReader entry(doc->sink, e->node, e->path, e->where,
                            with_keys(gpu_field_keys(), {"default_system", "sources", "notes"}));
      if (!entry.is_mapping()) continue;
      require_gpu_fields(entry);
      GpuSpec gpu;
      gpu.name = name;
      read_gpu_fields(entry, gpu);
      if (!entry.has("display_name")) gpu.display_name = name;
      const auto sources = read_sources(entry, doc->references);
      const auto notes = entry.string("notes");
      const auto default_system = entry.string("default_system");
      if (doc->sink.error_count() != before) continue;
      m_gpus[name] = gpu;
      for (const auto& [field, text] : sources) m_sources[name + "/" + field] = text;
      if (notes) m_notes[name] = *notes;
      m_files[name] = doc->sink.file();
      if (default_system) {
        default_systems.emplace_back(name, *default_system);
        default_system_paths.emplace_back(&doc->sink, entry.path_of("default_system"));
      }
    }
  }

  for (auto& doc : catalogs) {
    if (!doc->top) continue;
    const auto v = doc->top->get("systems");
    if (!v) continue;
    const MapReader section(doc->sink, v->node, v->path, v->where, entry_names(*v));
    for (const auto& name : section.keys()) {
      const auto e = section.get(name);
      if (!check_name(doc->sink, section, name, "system")) continue;
      const std::size_t before = doc->sink.error_count();
      const MapReader entry(doc->sink, e->node, e->path, e->where,
                            with_keys(system_field_keys(), {"gpu", "network", "sources", "notes"}));
      if (!entry.is_mapping()) continue;
      SystemSpec system;
      system.name = name;
      if (const auto g = entry.get("gpu")) {
        if (const auto gpu_name = read_string(doc->sink, *g)) {
          if (const GpuSpec* gpu = find_gpu(*gpu_name)) {
            system.gpu = *gpu;
          } else {
            const std::string near = closest_match(*gpu_name, gpu_names());
            doc->sink.error(g->where, g->path, "unknown GPU '" + *gpu_name + "'",
                            near.empty() ? "" : "did you mean '" + near + "'?");
          }
        }
      } else {
        entry.missing("gpu", "a GPU name from the catalog");
      }
      for (const char* key : {"gpus_per_node", "nvlink_domain_gpus", "intra_node_bandwidth", "intra_node_latency",
                              "host_memory_per_node"}) {
        if (!entry.has(key)) entry.missing(key, "see the file header");
      }
      read_system_fields(entry, system);
      system.gpus = system.gpus_per_node;
      if (const auto n = entry.get("network")) {
        const MapReader net(doc->sink, n->node, n->path, n->where, network_field_keys());
        read_network_fields(net, system.network);
        if (net.is_mapping() && !net.has("nics_per_node")) net.missing("nics_per_node", "application NICs per node");
        if (system.network.nics_per_node > 0) {
          if (!net.has("nic_bandwidth")) net.missing("nic_bandwidth", "per NIC and direction, e.g. \"400 Gb/s\"");
          if (!net.has("nic_latency")) net.missing("nic_latency", "one network hop, e.g. \"5 us\"");
        }
      } else {
        entry.missing("network", "the scale-out network; {nics_per_node: 0, fabric: none} for none");
      }
      if (system.nvlink_domain_gpus % system.gpus_per_node != 0 && system.nvlink_domain_gpus > system.gpus_per_node) {
        doc->sink.error_at(entry.path_of("nvlink_domain_gpus"), "must be a multiple of gpus_per_node (" +
                                                                    std::to_string(system.gpus_per_node) + ")");
      }
      const auto sources = read_sources(entry, doc->references);
      const auto notes = entry.string("notes");
      if (doc->sink.error_count() != before) continue;
      m_systems[name] = system;
      for (const auto& [field, text] : sources) m_sources[name + "/" + field] = text;
      if (notes) m_notes[name] = *notes;
      m_files[name] = doc->sink.file();
    }
  }

  for (std::size_t i = 0; i < default_systems.size(); ++i) {
    const auto& [gpu, system] = default_systems[i];
    const auto it = m_systems.find(system);
    if (it == m_systems.end()) {
      const std::string near = closest_match(system, system_names());
      default_system_paths[i].first->error_at(default_system_paths[i].second, "unknown system '" + system + "'",
                                              near.empty() ? "" : "did you mean '" + near + "'?");
    } else if (it->second.gpu.name != gpu) {
      default_system_paths[i].first->error_at(default_system_paths[i].second,
                                              "system '" + system + "' has GPU '" + it->second.gpu.name + "', not '" +
                                                  gpu + "'");
    } else {
      m_default_system_of_gpu[gpu] = system;
    }
  }

  for (auto& doc : catalogs) {
    if (!doc->top) continue;
    const auto v = doc->top->get("models");
    if (!v) continue;
    const MapReader section(doc->sink, v->node, v->path, v->where, entry_names(*v));
    for (const auto& name : section.keys()) {
      const auto e = section.get(name);
      if (!check_name(doc->sink, section, name, "model")) continue;
      const std::size_t before = doc->sink.error_count();
      const MapReader entry(doc->sink, e->node, e->path, e->where,
                            with_keys(model_field_keys(), {"sources", "notes"}));
      if (!entry.is_mapping()) continue;
      require_model_fields(entry);
      TransformerSpec model;
      model.name = name;
      read_model_fields(entry, model);
      if (doc->sink.error_count() == before) check_model(doc->sink, e->path, model);
      const auto sources = read_sources(entry, doc->references);
      const auto notes = entry.string("notes");
      if (doc->sink.error_count() != before) continue;
      m_models[name] = model;
      for (const auto& [field, text] : sources) m_sources[name + "/" + field] = text;
      if (notes) m_notes[name] = *notes;
      m_files[name] = doc->sink.file();
    }
  }

  for (auto& doc : catalogs) {
    for (auto& d : doc->sink.take()) all_errors.push_back(std::move(d));
  }
  if (!all_errors.empty()) throw InputError(std::move(all_errors));
}

void Catalog::add_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw InputError(dir.string() + ": error: STEPCAST_CATALOG_PATH names a directory that does not exist");
  }
  std::vector<std::filesystem::path> files;
  for (const auto& sub : {dir, dir / "catalog", dir / "examples"}) {
    if (!std::filesystem::is_directory(sub, ec)) continue;
    for (const auto& f : std::filesystem::directory_iterator(sub)) {
      if (f.is_regular_file() && f.path().extension() == ".yaml") files.push_back(f.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<Document> documents;
  for (const auto& f : files) documents.push_back({f.string(), read_text_file(f)});
  add_documents(documents);
}

const Catalog& Catalog::builtin() {
  static const Catalog catalog = [] {
    Catalog c;
    std::vector<Document> documents;
    // Catalog files first: the builtin scenarios are stored as text and parsed on use.
    for (const BuiltinFile& f : builtin_files()) {
      documents.push_back({"<builtin>/" + std::string(f.path), std::string(f.text)});
    }
    c.add_documents(documents);
    if (const char* path = std::getenv("STEPCAST_CATALOG_PATH")) {
      std::string list = path;
      std::size_t start = 0;
      while (start <= list.size()) {
        const std::size_t end = std::min(list.find(':', start), list.size());
        if (end > start) c.add_directory(list.substr(start, end - start));
        start = end + 1;
      }
    }
    return c;
  }();
  return catalog;
}

const GpuSpec* Catalog::find_gpu(const std::string& name) const {
  const auto it = m_gpus.find(name);
  return it == m_gpus.end() ? nullptr : &it->second;
}

const SystemSpec* Catalog::find_system(const std::string& name) const {
  const auto it = m_systems.find(name);
  return it == m_systems.end() ? nullptr : &it->second;
}

const TransformerSpec* Catalog::find_model(const std::string& name) const {
  const auto it = m_models.find(name);
  return it == m_models.end() ? nullptr : &it->second;
}

const CatalogScenario* Catalog::find_scenario(const std::string& name) const {
  const auto it = m_scenarios.find(name);
  return it == m_scenarios.end() ? nullptr : &it->second;
}

// Figures of the generic single-node system used for GPUs without a catalog system. A custom
// GPU's own links decide the node: NVLink-capable GPUs form an 8-GPU NVLink node (the HGX
// baseboard size, NVIDIA HGX platform), others talk over their host link.
namespace {
constexpr int kGenericGpusPerNode = 8;  // HGX baseboards carry 8 GPUs (NVIDIA HGX A100/H100/B200)
// NCCL src/graph/tuning.cc hwLat: base latency of one NVLink (0.6 us) and PCIe (1.0 us) hop, LL protocol.
constexpr double kNvlinkHopLatencyS = 0.6e-6;
constexpr double kPcieHopLatencyS = 1.0e-6;
}  // namespace

SystemSpec Catalog::default_system_for(const GpuSpec& gpu) const {
  const auto it = m_default_system_of_gpu.find(gpu.name);
  if (it != m_default_system_of_gpu.end()) {
    SystemSpec s = m_systems.at(it->second);
    s.gpu = gpu;
    return s;
  }
  SystemSpec s;
  s.name = "generic-" + gpu.name;
  s.display_name = "one node of " + std::to_string(kGenericGpusPerNode) + " " + gpu.display_name;
  s.gpu = gpu;
  s.gpus_per_node = kGenericGpusPerNode;
  s.gpus = kGenericGpusPerNode;
  const bool nvlink = gpu.nvlink_bandwidth.value() > 0.0;
  s.nvlink_domain_gpus = nvlink ? kGenericGpusPerNode : 1;
  s.intra_node_bandwidth = nvlink ? gpu.nvlink_bandwidth : gpu.host_bandwidth;
  s.intra_node_latency = Seconds(nvlink ? kNvlinkHopLatencyS : kPcieHopLatencyS);
  s.network.nics_per_node = 0;
  s.network.fabric = FabricKind::none;
  return s;
}

namespace {
template <class Map>
std::vector<std::string> keys_of(const Map& m) {
  std::vector<std::string> out;
  for (const auto& [k, _] : m) out.push_back(k);
  return out;
}
}  // namespace

std::vector<std::string> Catalog::gpu_names() const { return keys_of(m_gpus); }
std::vector<std::string> Catalog::system_names() const { return keys_of(m_systems); }
std::vector<std::string> Catalog::model_names() const { return keys_of(m_models); }
std::vector<std::string> Catalog::scenario_names() const { return keys_of(m_scenarios); }

std::string Catalog::source_of(const std::string& entry, const std::string& field) const {
  std::string f = field;
  while (true) {
    const auto it = m_sources.find(entry + "/" + f);
    if (it != m_sources.end()) return it->second;
    const std::size_t dot = f.rfind('.');
    if (dot == std::string::npos) break;
    f.resize(dot);
  }
  const auto all = m_sources.find(entry + "/all");
  return all == m_sources.end() ? std::string() : all->second;
}

std::string Catalog::notes_of(const std::string& entry) const {
  const auto it = m_notes.find(entry);
  return it == m_notes.end() ? std::string() : it->second;
}

std::string Catalog::file_of(const std::string& entry) const {
  const auto it = m_files.find(entry);
  return it == m_files.end() ? std::string() : it->second;
}

std::string Catalog::default_system_name(const std::string& gpu) const {
  const auto it = m_default_system_of_gpu.find(gpu);
  return it == m_default_system_of_gpu.end() ? std::string() : it->second;
}

}  // namespace stepcast
