#pragma once
// Helpers for golden tests: read a file, show where two texts differ line by line, and check a
// folder of broken inputs against their *.expected messages.
//
// check_golden_messages regenerates the .expected files instead when STEPCAST_REGENERATE_GOLDEN
// is set (review the diff in git before committing). Include after <doctest/doctest.h>.

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace stepcast::test {

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// "- expected" / "+ actual" for each differing line, "  " for equal ones.
inline std::string line_diff(const std::string& expected, const std::string& actual) {
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

// Every `extension` file in `folder` (sorted by name) must produce exactly the text of the file of
// the same name with extension ".expected"; at least `minimum_cases` must be there.
inline void check_golden_messages(const std::filesystem::path& folder, const std::string& extension,
                                  std::size_t minimum_cases,
                                  const std::function<std::string(const std::filesystem::path&)>& message_of) {
  REQUIRE(std::filesystem::is_directory(folder));
  std::vector<std::filesystem::path> cases;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() == extension) cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  CHECK(cases.size() >= minimum_cases);
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
    std::string expected = read_file(expected_path);
    if (!expected.empty() && expected.back() == '\n') expected.pop_back();
    CHECK_MESSAGE(actual == expected,
                  file.string() << " differs from its .expected file:\n" << line_diff(expected, actual));
  }
}

}  // namespace stepcast::test
