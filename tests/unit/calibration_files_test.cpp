#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>

#include "json_schema_validator.h"
#include "validation/measurement_json.h"

using namespace stepcast;

namespace {

// scenarios/calibration/<catalog_gpu>/<run>/<file>.json are measurement files;
// scenarios/calibration/<catalog_gpu>/<name>.json are calibration profiles fitted from them
// (checked in tests/fidelity/h200_calibration_test.cpp).
std::vector<std::filesystem::path> calibration_files(int depth) {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path root = std::filesystem::path(STEPCAST_SOURCE_DIR) / "scenarios" / "calibration";
  if (!std::filesystem::exists(root)) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const auto relative = std::filesystem::relative(entry.path(), root);
    if (entry.path().extension() == ".json" && std::distance(relative.begin(), relative.end()) == depth) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::filesystem::path> measurement_files() { return calibration_files(3); }

std::string text_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("every committed measurement file reads back, validates and was measured on the GPU its folder names") {
  const json::Value schema = json::parse(text_of(std::filesystem::path(STEPCAST_SOURCE_DIR) / "validation" /
                                                 "measurement_schema.json"));
  const auto files = measurement_files();
  REQUIRE_FALSE(files.empty());
  for (const auto& path : files) {
    CAPTURE(path.string());
    const MeasurementFile f = read_measurement_file(path);
    CHECK(testing::validate_against_schema(json::parse(text_of(path)), schema).empty());
    // scenarios/calibration/<catalog_gpu>/<run>/<file>.json
    const std::string gpu = path.parent_path().parent_path().filename().string();
    REQUIRE_FALSE(f.provenance.devices.empty());
    CHECK(f.provenance.devices.front().catalog_gpu == gpu);
    // Only checked measurements are committed.
    for (const Measurement& r : f.records) CHECK(r.check.passed);
  }
}

TEST_CASE("each committed run has a passing selftest") {
  std::set<std::filesystem::path> runs;
  for (const auto& path : measurement_files()) runs.insert(path.parent_path());
  REQUIRE_FALSE(runs.empty());
  for (const auto& run : runs) {
    CAPTURE(run.string());
    const MeasurementFile selftest = read_measurement_file(run / "selftest.json");
    REQUIRE(selftest.records.size() == 4);
    for (const Measurement& r : selftest.records) CHECK(std::get<SelftestInputs>(r.inputs).passed);
  }
}

