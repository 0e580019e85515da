#pragma once
// Loads scenario files (DESIGN.md, schema_version 1) strictly into immutable Scenario values.
//
// Strict means: unknown keys, missing required keys, wrong YAML types, bad enum values, numbers
// without units where a unit is required (and units of the wrong dimension), non-positive sizes,
// duplicate keys, unknown catalog names and inconsistent products (tp*pp*dp*cp != gpus, heads not
// divisible by tp, ...) are all errors. Every error of a file is collected and thrown together as
// one InputError whose diagnostics carry file:line:column, the key path, what was expected and,
// for typos, a suggestion. The returned Scenario satisfies the invariants in model/scenario.h.

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "model/scenario.h"
#include "simulator/catalog.h"

namespace YAML {
class Node;
}

namespace stepcast {

// A --set key.path=value override, applied to the YAML document before it is validated, so an
// override is checked exactly like the file itself (errors name the override).
struct Override {
  std::string key_path;  // "parallel.tp"
  std::string value;     // YAML scalar or flow text: "8", "\"900 GB/s\"", "[1, 2]"
};

// Parses "key.path=value"; throws UsageError when there is no '=' or the key is empty.
Override parse_override(std::string_view text);

// `name_or_path` is a file path, or the name of a catalog scenario (e.g. "gpt3-175b-selene").
Scenario load_scenario(const std::string& name_or_path, std::span<const Override> overrides = {},
                       const Catalog& catalog = Catalog::builtin());

// `source_name` labels diagnostics (usually the file path).
Scenario parse_scenario(std::string_view yaml_text, const std::string& source_name,
                        std::span<const Override> overrides = {},
                        const Catalog& catalog = Catalog::builtin());

// Same, from a document already parsed (e.g. a scenario written inline in a sweep file): its
// marks give the lines and columns of diagnostics in `source_name`. No overrides: they would have
// to change the caller's document.
Scenario parse_scenario_node(const YAML::Node& document, const std::string& source_name,
                             const Catalog& catalog = Catalog::builtin());

// The document `yaml_text` with `overrides` applied as parse_scenario() applies them, written
// back as YAML (a sweep point as a file). Throws InputError when the text is not YAML or an
// override cannot be applied; the result is not validated.
std::string apply_overrides(std::string_view yaml_text, std::span<const Override> overrides);

// Writes a scenario as a complete, explicit schema_version 1 document (every field, catalog
// presets expanded) that parse_scenario() turns back into an equal Scenario.
std::string write_scenario_yaml(const Scenario& scenario);

// What a one-word `precision:` means in an inference scenario (int8 W8A8, int4 weight-only with
// BF16 compute, fp8 W8A8 with FP8 weights; the others as in training).
PrecisionConfig inference_precision_shorthand(DataType word);

}  // namespace stepcast
