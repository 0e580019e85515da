#include <doctest/doctest.h>

#include "simulator/diagnostics.h"

using namespace stepcast;

TEST_CASE("a diagnostic names file, line, column and key path") {
  Diagnostic d{"run.yaml", 12, 5, "parallel.tpp", "unknown key 'tpp'", "did you mean 'tp'?"};
  CHECK(d.to_string() == "run.yaml:12:5: error: parallel.tpp: unknown key 'tpp'; did you mean 'tp'?");
}

TEST_CASE("an input error joins all its diagnostics, one per line") {
  InputError e({{"a.yaml", 1, 1, "x", "bad", ""}, {"a.yaml", 2, 3, "y", "worse", ""}});
  CHECK(std::string(e.what()) == "a.yaml:1:1: error: x: bad\na.yaml:2:3: error: y: worse");
  CHECK(e.diagnostics().size() == 2);
}

TEST_CASE("closest_match suggests near typos and nothing for distant words") {
  const std::vector<std::string> keys = {"tp", "pp", "dp", "sequence_parallel", "schedule"};
  CHECK(closest_match("sequence_paralel", keys) == "sequence_parallel");
  CHECK(closest_match("schedul", keys) == "schedule");
  CHECK(closest_match("completely_different", keys).empty());
}
