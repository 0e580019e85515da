#pragma once
// A JSON Schema (draft 2020-12) validator for the subset of keywords our schemas use, so tests can
// check written files against validation/measurement_schema.json without a third-party validator.
//
// Supported: type (incl. "integer" and type arrays), enum, const, properties, required,
// additionalProperties (boolean or schema), items, minItems, minimum, exclusiveMinimum, maximum,
// pattern (ECMAScript regex via std::regex), $ref to "#/$defs/<name>", allOf, anyOf, oneOf, not,
// if/then/else. Annotation keywords ($schema, $id, title, description, $comment, $defs) are
// ignored. Any other keyword throws std::invalid_argument, so a schema cannot silently rely on a
// keyword this validator would skip.

#include <string>
#include <vector>

#include "validation/json.h"

namespace stepcast::testing {

// Returns one message per violation ("records[2].time.median_s: expected a number > 0"); empty
// when `document` conforms.
std::vector<std::string> validate_against_schema(const json::Value& document, const json::Value& schema);

}  // namespace stepcast::testing
