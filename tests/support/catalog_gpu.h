#pragma once
// A GPU of the built-in catalog by name, for tests that price kernels on real parts.

#include <string>

#include <doctest/doctest.h>

#include "model/hardware.h"
#include "simulator/catalog.h"

namespace stepcast::test {

// The catalog's GPU `name`; the test fails (REQUIRE) when the catalog has none.
inline const GpuSpec& catalog_gpu(const std::string& name) {
  const GpuSpec* g = Catalog::builtin().find_gpu(name);
  REQUIRE_MESSAGE(g != nullptr, name);
  return *g;
}

}  // namespace stepcast::test
