#include "gui/models/scenario_document.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace stepcast::gui {
namespace {

bool is_at_or_below(const std::string& key, const std::string& prefix) {
  return key == prefix || (key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0 &&
                           key[prefix.size()] == '.');
}

}  // namespace

ScenarioDocument::ScenarioDocument(std::string text, std::string source)
    : m_text(std::move(text)), m_source(std::move(source)) {}

ScenarioDocument ScenarioDocument::open(const std::string& name_or_path, const Catalog& catalog) {
  std::error_code ec;
  std::ifstream in;
  if (std::filesystem::is_regular_file(name_or_path, ec)) in.open(name_or_path, std::ios::binary);
  if (in.is_open()) {
    std::ostringstream text;
    text << in.rdbuf();
    return ScenarioDocument(text.str(), name_or_path);
  }
  if (const CatalogScenario* s = catalog.find_scenario(name_or_path)) return ScenarioDocument(s->text, s->source);
  ScenarioDocument unreadable({}, name_or_path);
  unreadable.m_unreadable = Diagnostic{name_or_path, 0, 0, "", "cannot read the file (not a file, or not readable)", ""};
  return unreadable;
}

ScenarioDocument ScenarioDocument::from_scenario(const Scenario& scenario, std::string source) {
  return ScenarioDocument(write_scenario_yaml(scenario), std::move(source));
}

void ScenarioDocument::set(const std::string& key_path, const std::string& value) {
  std::erase_if(m_edits, [&](const Override& o) { return is_at_or_below(o.key_path, key_path); });
  m_edits.push_back(Override{key_path, value});
}

void ScenarioDocument::unset(const std::string& key_path) {
  std::erase_if(m_edits, [&](const Override& o) { return o.key_path == key_path; });
}

std::optional<std::string> ScenarioDocument::edit_of(const std::string& key_path) const {
  for (auto it = m_edits.rbegin(); it != m_edits.rend(); ++it) {
    if (it->key_path == key_path) return it->value;
  }
  return std::nullopt;
}

Evaluation ScenarioDocument::evaluate(const Catalog& catalog) const {
  Evaluation out;
  if (m_unreadable) {
    out.diagnostics.push_back(*m_unreadable);
    return out;
  }
  try {
    out.scenario = parse_scenario(m_text, m_source, m_edits, catalog);
  } catch (const InputError& e) {
    out.diagnostics = e.diagnostics();
    if (out.diagnostics.empty()) out.diagnostics.push_back(Diagnostic{m_source, 0, 0, "", e.what(), ""});
  }
  return out;
}

std::string ScenarioDocument::text_to_save(const Catalog& catalog) const {
  if (!modified()) return m_text;
  Evaluation e = evaluate(catalog);
  if (!e.scenario) throw InputError(e.diagnostics);
  return write_scenario_yaml(*e.scenario);
}

void ScenarioDocument::mark_saved(std::string text, std::string path) {
  m_text = std::move(text);
  m_source = std::move(path);
  m_edits.clear();
  m_unreadable.reset();
}

std::string describe_diagnostic(const Diagnostic& diagnostic) {
  std::string line = diagnostic.to_string();
  constexpr std::string_view set_label = "--set ";
  if (line.compare(0, set_label.size(), set_label) == 0) line = "edit " + line.substr(set_label.size());
  return line;
}

}  // namespace stepcast::gui
