#pragma once
// Helpers for golden tests: read a file, and show where two texts differ line by line.

#include <algorithm>
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

}  // namespace stepcast::test
