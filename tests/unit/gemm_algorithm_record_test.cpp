// A GEMM record's `algorithm` (validation/SCHEMA.md, schema_version 2): the cuBLASLt kernel the
// harness ran, written, read back, rejected when malformed, absent from version 1 files (which
// must load as before), and shown by `stepcast validate` beside each point. That the committed
// version 1 files still calibrate and validate to the same figures is held by
// tests/fidelity/h200_calibration_test.cpp, unchanged.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "validation/calibration.h"
#include "validation/harness_grids.h"
#include "validation/kernel_points.h"
#include "validation/measurement_json.h"
#include "validation/measurement_records.h"
#include "validation/validation_report.h"
#include "tests/support/harness_file.h"

using namespace stepcast;

namespace {

TimingResult timing_of(double seconds) {
  TimingResult t;
  t.samples = {seconds * 0.999, seconds, seconds * 1.001};
  t.wall_s = 0.5;
  return t;
}

// What the harness would record for a Hopper tf32 GEMM run by cuBLASLt's second-ranked algorithm
// with a 2-way in-place split-K and 2x1x1 clusters (values chosen to exercise every key, not
// measured).
GemmAlgorithm hopper_algorithm() {
  GemmAlgorithm a;
  a.id = 66;
  a.tile_id = 23;
  a.tile = "128x256";
  a.stages_id = 35;
  a.stages = "64xAUTO";
  a.splitk_num = 2;
  a.reduction_scheme = "inplace";
  a.cta_swizzling = 1;
  a.custom_option = 3;
  a.inner_shape_id = 0;
  a.inner_shape = "undefined";
  a.cluster_shape_id = 3;
  a.cluster_shape = "2x1x1";
  a.heuristic_rank = 2;
  a.heuristic_results = 8;
  a.workspace_bytes = 4'194'304;
  a.waves_count = 1.25;
  return a;
}

// Two GEMM records (one with an algorithm, one without, as after an unknown reduction scheme)
// and an attention record.
MeasurementFile file_with_algorithm() {
  MeasurementFile f = test::harness_file("NVIDIA H200", "h200-sxm-141gb", 132);
  Measurement g = make_measurement(gemm_point(DataType::tf32, "TN", 1000, 1000, 1000, ""), timing_of(2e-4),
                                   test::passed_check());
  g.algorithm = hopper_algorithm();
  f.records.push_back(g);
  f.records.push_back(make_measurement(gemm_point(DataType::tf32, "TN", 1024, 1024, 1024, ""), timing_of(2e-4),
                                       test::passed_check()));
  AttentionInputs a;
  a.impl = "cudnn_sdpa";
  a.heads = a.kv_heads = 8;
  a.seq_q = a.seq_kv = 1024;
  f.records.push_back(make_measurement(a, timing_of(1e-4), test::passed_check()));
  return f;
}

std::string corrupt(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) {
  try {
    parse_measurement_text(text, "gemm.json");
  } catch (const MeasurementFileError& e) {
    return e.what();
  }
  return "no error";
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("a GEMM record's algorithm round-trips through the writer, the reader and the JSON schema") {
  const MeasurementFile f = file_with_algorithm();
  const std::string text = write_measurement_text(f);
  CHECK(text.find("\"schema_version\": 2") != std::string::npos);
  const MeasurementFile back = parse_measurement_text(text, "gemm.json");
  CHECK(back == f);
  REQUIRE(back.records[0].algorithm.has_value());
  CHECK(*back.records[0].algorithm == hopper_algorithm());
  CHECK_FALSE(back.records[1].algorithm.has_value());
  CHECK_FALSE(back.records[2].algorithm.has_value());
  // Nulls survive: a kernel whose inner and cluster shapes cuBLASLt did not report, no waves.
  MeasurementFile nulls = f;
  nulls.records[0].algorithm->inner_shape_id.reset();
  nulls.records[0].algorithm->inner_shape.clear();
  nulls.records[0].algorithm->cluster_shape_id.reset();
  nulls.records[0].algorithm->cluster_shape.clear();
  nulls.records[0].algorithm->waves_count.reset();
  nulls.records[0].algorithm->tile.clear();  // an id the header did not name
  CHECK(parse_measurement_text(write_measurement_text(nulls), "gemm.json") == nulls);

  // The JSON schema (validation/measurement_schema.json) is checked on a file with an algorithm
  // by measurement_file_test.cpp.
}

TEST_CASE("a schema_version 1 file without algorithms loads as it did: the committed H200 GEMM run") {
  const auto path = std::filesystem::path(STEPCAST_SOURCE_DIR) /
                    "scenarios/calibration/h200-sxm-141gb/run-084f22936c86/gemm.json";
  const std::string text = read_text(path);
  REQUIRE(text.find("\"schema_version\": 1") != std::string::npos);
  REQUIRE(text.find("\"algorithm\"") == std::string::npos);
  const MeasurementFile f = read_measurement_file(path);
  CHECK(f.schema_version == 1);
  REQUIRE(f.records.size() > 100);
  for (const Measurement& r : f.records) CHECK_FALSE(r.algorithm.has_value());
  for (const KernelPoint& p : kernel_points(f)) CHECK(p.kernel.empty());
  // Written again it is a version 1 file still, byte for byte what was committed.
  CHECK(write_measurement_text(f) == text);
}

TEST_CASE("a malformed algorithm is an error that names its key") {
  const std::string text = write_measurement_text(file_with_algorithm());
  CHECK(error_of(corrupt(text, "\"splitk_num\": 2", "\"splitk_num\": 0"))
            .find("records[0].algorithm.splitk_num: expected an integer >= 1") != std::string::npos);
  CHECK(error_of(corrupt(text, "\"id\": 66", "\"id\": -1")).find("records[0].algorithm.id") != std::string::npos);
  CHECK(error_of(corrupt(text, "\"tile_id\": 23", "\"tile_id\": \"23\"")).find("algorithm.tile_id: expected a number") !=
        std::string::npos);
  CHECK(error_of(corrupt(text, "\"reduction_scheme\": \"inplace\"", "\"reduction_scheme\": \"sum\""))
            .find("'sum' is not one of: none, inplace, compute_type, output_type") != std::string::npos);
  CHECK(error_of(corrupt(text, "\"cta_swizzling\": 1", "\"cta_swizzling\": 2")).find("expected 0 or 1") !=
        std::string::npos);
  CHECK(error_of(corrupt(text, "\"heuristic_rank\": 2", "\"heuristic_rank\": 9"))
            .find("rank 9 is past the heuristic's 8 results") != std::string::npos);
  CHECK(error_of(corrupt(text, "\"tile\": \"128x256\"", "\"tile\": \"\"")).find("algorithm.tile: expected a name or null") !=
        std::string::npos);
  CHECK(error_of(corrupt(text, "\"cluster_shape_id\": 3", "\"cluster_shape_id\": null"))
            .find("algorithm.cluster_shape: a name without a cluster_shape_id") != std::string::npos);
  CHECK(error_of(corrupt(text, "\"waves_count\": 1.25", "\"waves_count\": -1")).find("algorithm.waves_count") !=
        std::string::npos);
  CHECK(error_of(corrupt(text, "\"library\": \"cublasLt\"", "\"library\": \"cutlass\"")).find("algorithm.library") !=
        std::string::npos);
  CHECK(error_of(corrupt(text, "\"library\": \"cublasLt\"", "\"library\": \"cublasLt\", \"tile_size\": 1"))
            .find("algorithm.tile_size: unknown key 'tile_size'") != std::string::npos);
  CHECK(error_of(corrupt(text, "\"custom_option\": 3,", "")).find("missing required key 'custom_option'") !=
        std::string::npos);
  CHECK(error_of(corrupt(text, "\"algorithm\": {", "\"algorithm\": [")).find("not valid JSON") != std::string::npos);
  // Only GEMM records carry one, and only version 2 files.
  json::Value v = json::parse(text);
  json::Value records = json::Value::array();
  for (const json::Value& r : v.find("records")->items()) {
    json::Value copy = r;
    if (r.find("kind")->as_string() == "attention") copy.set("algorithm", *v.find("records")->items()[0].find("algorithm"));
    records.push_back(copy);
  }
  v.set("records", records);
  CHECK(error_of(json::write(v)).find("records[2].algorithm: only gemm records have an 'algorithm' object") !=
        std::string::npos);
  CHECK(error_of(corrupt(text, "\"schema_version\": 2", "\"schema_version\": 1"))
            .find("records[0].algorithm: 'algorithm' is a schema_version 2 key") != std::string::npos);
}

TEST_CASE("validate shows each GEMM point's kernel where the file recorded it, and only then") {
  const MeasurementFile f = file_with_algorithm();
  const std::vector<KernelPoint> points = kernel_points(f);
  REQUIRE(points.size() == 3);
  CHECK(points[0].kernel == "algo 66 tile 128x256 splitK 2 inplace cluster 2x1x1");
  CHECK(points[1].kernel.empty());
  CHECK(points[2].kernel.empty());
  GemmAlgorithm plain = hopper_algorithm();
  plain.splitk_num = 1;
  plain.reduction_scheme = "none";
  plain.cluster_shape = "1x1x1";
  plain.tile.clear();
  CHECK(describe_kernel(plain) == "algo 66 tile #23 splitK 1");

  const auto path = std::filesystem::temp_directory_path() / "stepcast_gemm_algorithm.json";
  write_measurement_file(path, f);
  CalibrationRequest request;
  request.inputs = {path};
  ValidationReport report;
  validate_measurements(load_measurements(request), datasheet_variant(), Holdout{}, request, report);
  std::filesystem::remove(path);
  summarize(report);
  const std::string text = format_validation(report, ReportFormat::table);
  CHECK(text.find("  kernel\n") != std::string::npos);
  CHECK(text.find("%  algo 66 tile 128x256 splitK 2 inplace cluster 2x1x1\n") != std::string::npos);
  const std::string csv = format_validation(report, ReportFormat::csv);
  CHECK(csv.find(",error,kernel\n") != std::string::npos);
  CHECK(csv.find(",algo 66 tile 128x256 splitK 2 inplace cluster 2x1x1\n") != std::string::npos);
  CHECK(format_validation(report, ReportFormat::json).find("\"kernel\": \"algo 66 tile 128x256") != std::string::npos);

  // Without any recorded kernel the report is what it was: no kernel column.
  for (auto& r : report.rows) r.kernel.clear();
  CHECK(format_validation(report, ReportFormat::table).find("kernel") == std::string::npos);
  CHECK(format_validation(report, ReportFormat::csv).find("kernel") == std::string::npos);
  CHECK(format_validation(report, ReportFormat::json).find("kernel") == std::string::npos);
}
