#pragma once
// SHA-256 (FIPS 180-4) of bytes and of files, as lowercase hex: calibration profiles record the
// digest of every measurement file they were fitted from, so a profile can be traced to the exact
// bytes (and a changed file noticed). Standard C++ only.

#include <filesystem>
#include <string>
#include <string_view>

namespace stepcast {

std::string sha256_hex(std::string_view bytes);
// Throws std::runtime_error when the file cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace stepcast
