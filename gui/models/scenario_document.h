#pragma once
// A scenario being edited: the text it was loaded from plus the user's edits, each an Override
// (simulator/scenario_loader.h) applied on top of that text by the loader itself.
//
// Keeping the original text and layering edits over it means every problem is reported by the
// scenario loader, with the loader's own wording: an error in the file names file:line:col, an
// error caused by an edit names the edit ("--set parallel.tp=5: error: parallel.tp: model heads
// (96) are not divisible by tp (5)"). Nothing here re-implements a check.
//
// Edits are ordered; setting a key replaces an earlier edit of the same key and drops earlier
// edits below it ("system" replaced as a whole drops "system.gpus"), so a later section
// replacement is never undone by an older nested edit. Plain C++, no Qt: the GUI models own one.

#include <optional>
#include <string>
#include <vector>

#include "model/scenario.h"
#include "simulator/catalog.h"
#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"

namespace stepcast::gui {

// What the loader made of a document: a valid scenario, or every diagnostic it reported.
struct Evaluation {
  std::optional<Scenario> scenario;
  std::vector<Diagnostic> diagnostics;
};

class ScenarioDocument {
 public:
  ScenarioDocument() = default;
  // `source` labels diagnostics (the file path, or "<builtin>/examples/x.yaml").
  ScenarioDocument(std::string text, std::string source);

  // Reads a file, or a catalog scenario by name (as `stepcast predict NAME` does). A file that
  // cannot be read gives a document whose evaluation is that one diagnostic.
  static ScenarioDocument open(const std::string& name_or_path, const Catalog& catalog = Catalog::builtin());

  // A document holding `scenario` as write_scenario_yaml() writes it.
  static ScenarioDocument from_scenario(const Scenario& scenario, std::string source);

  // Sets `key_path` to `value` (YAML text, as after '=' in --set).
  void set(const std::string& key_path, const std::string& value);
  // Removes the edit of exactly `key_path` (if any).
  void unset(const std::string& key_path);
  // The value of the latest edit of exactly `key_path`, if any.
  [[nodiscard]] std::optional<std::string> edit_of(const std::string& key_path) const;
  void clear_edits() { m_edits.clear(); }

  [[nodiscard]] const std::string& text() const { return m_text; }
  [[nodiscard]] const std::string& source() const { return m_source; }
  [[nodiscard]] const std::vector<Override>& edits() const { return m_edits; }
  [[nodiscard]] bool modified() const { return !m_edits.empty(); }

  // Runs the loader over the text with the edits.
  [[nodiscard]] Evaluation evaluate(const Catalog& catalog = Catalog::builtin()) const;

  // The text to save: the original text when nothing was edited (comments and layout kept), else
  // the edited scenario written in full by write_scenario_yaml(). Throws InputError when the
  // edited document is not a valid scenario.
  [[nodiscard]] std::string text_to_save(const Catalog& catalog = Catalog::builtin()) const;

  // After saving to `path`: the saved text becomes the document, with no edits.
  void mark_saved(std::string text, std::string path);

 private:
  std::string m_text;
  std::string m_source;
  std::vector<Override> m_edits;
  std::optional<Diagnostic> m_unreadable;
};

// A diagnostic as one line for the window: the loader's to_string(), with an edit's "--set"
// label read as "edit".
std::string describe_diagnostic(const Diagnostic& diagnostic);

}  // namespace stepcast::gui
