#include "simulator/text_file.h"

#include <fstream>
#include <sstream>
#include <system_error>

#include "simulator/diagnostics.h"

namespace stepcast {

bool names_a_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  return !ec && std::filesystem::exists(status) && !std::filesystem::is_directory(status);
}

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  std::string problem;
  if (ec || !std::filesystem::exists(status)) {
    problem = "no such file";
  } else if (std::filesystem::is_directory(status)) {
    problem = "it is a directory";
  }
  std::ifstream in;
  if (problem.empty()) {
    in.open(path, std::ios::binary);
    if (!in) problem = "permission or I/O error";
  }
  if (!problem.empty()) throw InputError({Diagnostic{path.string(), 0, 0, "", "cannot read the file: " + problem, ""}});
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace stepcast
