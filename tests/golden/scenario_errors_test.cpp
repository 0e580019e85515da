// Golden tests of the scenario loader's error messages: every file in
// tests/golden/scenarios/broken/*.yaml is loaded and must fail with exactly the text of its
// *.expected file. Lines "# set: key.path=value" at the top of a case apply `--set` overrides.
//
// To accept new messages, run with STEPCAST_REGENERATE_GOLDEN=1 (it rewrites the .expected files)
// and review the diff in git. A mismatch prints both texts line by line.

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"
#include "tests/support/golden.h"

using namespace stepcast;

namespace {

const std::filesystem::path kCases = "tests/golden/scenarios/broken";

std::vector<Override> overrides_in(const std::string& text) {
  std::vector<Override> out;
  for (const auto& line : test::lines_of(text)) {
    const std::string prefix = "# set: ";
    if (line.rfind(prefix, 0) == 0) out.push_back(parse_override(line.substr(prefix.size())));
  }
  return out;
}

// The loader's message for one case, or a note that it loaded.
std::string message_of(const std::filesystem::path& file) {
  const std::string text = test::read_file(file);
  try {
    parse_scenario(text, file.generic_string(), overrides_in(text));
  } catch (const InputError& e) {
    return e.what();
  }
  return "<loaded without error>";
}

}  // namespace

TEST_CASE("every broken scenario fails with exactly its golden message") {
  test::check_golden_messages(kCases, ".yaml", 20, message_of);
}
