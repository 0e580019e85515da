#pragma once
// Reading a whole input file (scenario, sweep, catalog, result table, calibration profile) as
// bytes, with one error that says why it cannot be read.

#include <filesystem>
#include <string>

namespace stepcast {

// The file's bytes. Regular files, pipes (`<(generate)`) and character devices (/dev/stdin) are
// read; otherwise throws InputError naming the path: "cannot read the file: no such file",
// "... it is a directory", or "... permission or I/O error".
std::string read_text_file(const std::filesystem::path& path);

// True when `path` names something read_text_file would try to read (it exists and is not a
// directory); lets a caller tell a file from a catalog name before reading.
bool names_a_file(const std::filesystem::path& path);

}  // namespace stepcast
