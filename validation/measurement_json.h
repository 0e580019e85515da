#pragma once
// Measurement files on disk: JSON text <-> MeasurementFile (validation/measurement.h), following
// validation/SCHEMA.md and validation/measurement_schema.json.
//
// The reader is strict, because a bad file must give a clear error and not a bad fit: it checks
// the schema name and version, every required key, every type and range (times > 0, min <= median
// <= max, integer counts), rejects unknown keys (with a suggestion for typos), and checks that
// record kinds match their inputs and that device indices exist. Errors throw
// MeasurementFileError carrying file:line:column and the key path of the offending value
// ("records[3].time.median_s"); `stepcast` turns them into input errors (exit code 1).

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "validation/json.h"
#include "validation/measurement.h"

namespace stepcast {

class MeasurementFileError : public std::runtime_error {
 public:
  MeasurementFileError(std::string source, int line, int column, std::string key_path, std::string message);
  [[nodiscard]] const std::string& source() const { return m_source; }
  [[nodiscard]] int line() const { return m_line; }
  [[nodiscard]] int column() const { return m_column; }
  [[nodiscard]] const std::string& key_path() const { return m_key_path; }
  [[nodiscard]] const std::string& message() const { return m_message; }

 private:
  std::string m_source;
  int m_line;
  int m_column;
  std::string m_key_path;
  std::string m_message;
};

json::Value to_json(const MeasurementFile& file);
json::Value to_json(const Measurement& record);

// Pretty-printed JSON text of the whole file.
std::string write_measurement_text(const MeasurementFile& file);

// Writes to a temporary file next to `path`, then renames, so a crash never leaves half a file.
// Throws std::runtime_error when the file cannot be written.
void write_measurement_file(const std::filesystem::path& path, const MeasurementFile& file);

// `source` names the text in error messages (usually the path).
MeasurementFile parse_measurement_text(std::string_view text, const std::string& source);
MeasurementFile read_measurement_file(const std::filesystem::path& path);

}  // namespace stepcast
