#pragma once
// A model of the built-in catalog by name, for tests that build layers from real shapes.

#include <string>

#include <doctest/doctest.h>

#include "model/transformer.h"
#include "simulator/catalog.h"

namespace stepcast::test {

// The catalog's model `name`; the test fails (REQUIRE) when the catalog has none.
inline const TransformerSpec& catalog_model(const std::string& name) {
  const TransformerSpec* m = Catalog::builtin().find_model(name);
  REQUIRE_MESSAGE(m != nullptr, name);
  return *m;
}

}  // namespace stepcast::test
