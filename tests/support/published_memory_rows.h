#pragma once
// The rows of tests/fixtures/reference/published_memory.yaml and the scenario each row maps to, for
// the fidelity tests that predict them (memory against the measured peaks, step time against the
// measured TPS).

#include <string>

#include <yaml-cpp/yaml.h>

#include "simulator/scenario_loader.h"

namespace stepcast::test {

// The file's `memory_runs` list (paths are relative to the repository root, where tests run).
inline YAML::Node published_memory_runs() {
  return YAML::LoadFile("tests/fixtures/reference/published_memory.yaml")["memory_runs"];
}

// A row's `scenario` mapping read as a scenario document (the file leaves out schema_version).
inline Scenario published_memory_scenario(const YAML::Node& row, const std::string& id) {
  YAML::Node doc = YAML::Clone(row["scenario"]);
  doc["schema_version"] = 1;
  return parse_scenario_node(doc, id);
}

}  // namespace stepcast::test
