#pragma once
// The named GPUs, systems, models and example scenarios users can refer to.
//
// The built-in catalog is parsed once from the files compiled into the binary
// (scenarios/catalog/*.yaml, scenarios/examples/*.yaml); directories named in the
// STEPCAST_CATALOG_PATH environment variable (colon-separated) add or replace entries. Every
// entry keeps its source file and the citation of each figure, for `stepcast catalog`.

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
  [[nodiscard]] std::string source_of(const std::string& entry, const std::string& field) const;

 private:
  std::map<std::string, GpuSpec> m_gpus;
  std::map<std::string, SystemSpec> m_systems;
  std::map<std::string, TransformerSpec> m_models;
  std::map<std::string, CatalogScenario> m_scenarios;
  std::map<std::string, std::string> m_default_system_of_gpu;
  std::map<std::string, std::string> m_sources;  // "entry/field" -> citation
};

}  // namespace stepcast
