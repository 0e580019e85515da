// Golden tests of the sweep file loader's error messages: every tests/golden/sweeps/broken/*.yaml
// must fail with exactly the text of its *.expected file (file:line:col, key path, message).
//
// To accept new messages, run with STEPCAST_REGENERATE_GOLDEN=1 (it rewrites the .expected files)
// and review the diff in git.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "simulator/diagnostics.h"
#include "simulator/sweep_file.h"
#include "tests/support/golden.h"

using namespace stepcast;

namespace {

const std::filesystem::path kCases = "tests/golden/sweeps/broken";

std::string message_of(const std::filesystem::path& file) {
  try {
    load_sweep_file(file.generic_string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "<loaded without error>";
}

}  // namespace

TEST_CASE("every broken sweep file fails with exactly its golden message") {
  REQUIRE(std::filesystem::is_directory(kCases));
  std::vector<std::filesystem::path> cases;
  for (const auto& entry : std::filesystem::directory_iterator(kCases)) {
    if (entry.path().extension() == ".yaml") cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  CHECK(cases.size() >= 10);
  const bool regenerate = std::getenv("STEPCAST_REGENERATE_GOLDEN") != nullptr;
  for (const auto& file : cases) {
    const std::string actual = message_of(file);
    auto expected_path = file;
    expected_path.replace_extension(".expected");
    if (regenerate) {
      std::ofstream(expected_path, std::ios::binary) << actual << "\n";
      continue;
    }
    REQUIRE_MESSAGE(std::filesystem::exists(expected_path), "missing " << expected_path.string());
    std::string expected = test::read_file(expected_path);
    if (!expected.empty() && expected.back() == '\n') expected.pop_back();
    CHECK_MESSAGE(actual == expected, file.string() << " differs from its .expected file:\n"
                                                    << test::line_diff(expected, actual));
  }
}
