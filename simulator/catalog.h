#pragma once
// The named GPUs, systems, models and example scenarios users can refer to.
//
// The built-in catalog is parsed once from the files compiled into the binary
// (scenarios/catalog/*.yaml, scenarios/examples/*.yaml); directories named in the
// STEPCAST_CATALOG_PATH environment variable (colon-separated) add or replace entries. Every
// entry keeps its source file and the citation of each figure, for `stepcast catalog`.
//
// Catalog file format (documented in full at the top of scenarios/catalog/gpus.yaml):
//   schema_version: 1
//   references: {id: full citation, ...}        # cited from this file's sources as "[id] detail"
//   gpus | systems | models:
//     <name>: {<fields as in a scenario's inline mapping>, sources: {field: citation}, notes: text}
// Every figure must have a source (`sources.<field>`, or `sources.all` for the whole entry); a
// catalog file without one is rejected. Names are unique across GPUs, systems and models.
// A directory holds catalog files (*.yaml with gpus/systems/models/references) and scenario files
// (any other *.yaml); its catalog/ and examples/ sub-directories are read the same way.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/hardware.h"
#include "model/transformer.h"

namespace stepcast {

struct CatalogScenario {
  std::string name;        // file stem, e.g. "gpt3-175b-selene"
  std::string source;      // "<builtin>/examples/gpt3-175b-selene.yaml" or a path
  std::string text;        // the YAML, to be parsed by the scenario loader
  std::string description;
};

class Catalog {
 public:
  // The built-in catalog plus STEPCAST_CATALOG_PATH; parsed on first use. Throws InputError if a
  // catalog file is malformed.
  static const Catalog& builtin();

  // Parses catalog YAML files (gpus, systems, models) and example scenarios from `dir`.
  void add_directory(const std::filesystem::path& dir);

  // One file's text and the label its diagnostics carry ("<builtin>/catalog/gpus.yaml").
  struct Document {
    std::string label;
    std::string text;
  };
  // Adds catalog documents and scenarios; all of them are read before any error is thrown
  // (one InputError with every diagnostic). Later entries replace earlier ones of the same name.
  void add_documents(const std::vector<Document>& documents);

  [[nodiscard]] const GpuSpec* find_gpu(const std::string& name) const;
  [[nodiscard]] const SystemSpec* find_system(const std::string& name) const;
  [[nodiscard]] const TransformerSpec* find_model(const std::string& name) const;
  [[nodiscard]] const CatalogScenario* find_scenario(const std::string& name) const;

  // The system a bare `system: {gpu: X}` gets: the catalog system marked as X's default, or a
  // generic single-node system built from the GPU's own links.
  [[nodiscard]] SystemSpec default_system_for(const GpuSpec& gpu) const;

  [[nodiscard]] std::vector<std::string> gpu_names() const;
  [[nodiscard]] std::vector<std::string> system_names() const;
  [[nodiscard]] std::vector<std::string> model_names() const;
  [[nodiscard]] std::vector<std::string> scenario_names() const;

  // Citation text for a field of an entry ("h100-sxm-80gb", "memory_bandwidth"), empty if none.
  // "dense_peak.fp8" falls back to the citation of "dense_peak", any field to "all".
  [[nodiscard]] std::string source_of(const std::string& entry, const std::string& field) const;
  // The entry's `notes:` text (assumptions, unknown figures), empty if none.
  [[nodiscard]] std::string notes_of(const std::string& entry) const;
  // The catalog file an entry came from.
  [[nodiscard]] std::string file_of(const std::string& entry) const;
  // Name of the system marked as `gpu`'s default, empty if none.
  [[nodiscard]] std::string default_system_name(const std::string& gpu) const;

 private:
  std::map<std::string, GpuSpec> m_gpus;
  std::map<std::string, SystemSpec> m_systems;
  std::map<std::string, TransformerSpec> m_models;
  std::map<std::string, CatalogScenario> m_scenarios;
  std::map<std::string, std::string> m_default_system_of_gpu;
  std::map<std::string, std::string> m_sources;  // "entry/field" -> citation
  std::map<std::string, std::string> m_notes;    // entry -> notes
  std::map<std::string, std::string> m_files;    // entry -> catalog file label
};

}  // namespace stepcast
