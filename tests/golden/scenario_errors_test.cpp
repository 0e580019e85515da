// Golden tests of the scenario loader's error messages: every file in
// tests/golden/scenarios/broken/*.yaml is loaded and must fail with exactly the text of its
// *.expected file. Lines "# set: key.path=value" at the top of a case apply `--set` overrides.
//
// To accept new messages, run with STEPCAST_REGENERATE_GOLDEN=1 (it rewrites the .expected files)
// and review the diff in git. A mismatch prints both texts line by line.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"

using namespace stepcast;

namespace {

const std::filesystem::path kCases = "tests/golden/scenarios/broken";

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// "- expected" / "+ actual" for each differing line.
std::string line_diff(const std::string& expected, const std::string& actual) {
  const auto e = lines_of(expected);
  const auto a = lines_of(actual);
  std::string out;
  for (std::size_t i = 0; i < std::max(e.size(), a.size()); ++i) {
    const std::string el = i < e.size() ? e[i] : "<none>";
    const std::string al = i < a.size() ? a[i] : "<none>";
    if (el == al) {
      out += "  " + el + "\n";
    } else {
      out += "- " + el + "\n+ " + al + "\n";
    }
  }
  return out;
}

std::vector<Override> overrides_in(const std::string& text) {
  std::vector<Override> out;
  for (const auto& line : lines_of(text)) {
    const std::string prefix = "# set: ";
    if (line.rfind(prefix, 0) == 0) out.push_back(parse_override(line.substr(prefix.size())));
  }
  return out;
}

// The loader's message for one case, or a note that it loaded.
std::string message_of(const std::filesystem::path& file) {
  const std::string text = read(file);
  try {
    parse_scenario(text, file.generic_string(), overrides_in(text));
  } catch (const InputError& e) {
    return e.what();
  }
  return "<loaded without error>";
}

}  // namespace

TEST_CASE("every broken scenario fails with exactly its golden message") {
  REQUIRE(std::filesystem::is_directory(kCases));
  std::vector<std::filesystem::path> cases;
  for (const auto& entry : std::filesystem::directory_iterator(kCases)) {
    if (entry.path().extension() == ".yaml") cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  CHECK(cases.size() >= 20);
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
    std::string expected = read(expected_path);
    if (!expected.empty() && expected.back() == '\n') expected.pop_back();
    CHECK_MESSAGE(actual == expected, file.string() << " differs from its .expected file:\n"
                                                    << line_diff(expected, actual));
  }
}
