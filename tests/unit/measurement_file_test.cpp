#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "json_schema_validator.h"
#include "validation/harness_grids.h"
#include "validation/measurement_json.h"
#include "validation/measurement_records.h"
#include "tests/support/harness_file.h"

using namespace stepcast;

namespace {

json::Value load_schema() {
  std::ifstream in(std::string(STEPCAST_SOURCE_DIR) + "/validation/measurement_schema.json");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

TimingResult timing(std::vector<double> samples, const char* mode = "cold") {
  TimingResult t;
  t.samples = std::move(samples);
  t.mode = mode;
  t.wall_s = 0.8;
  t.stop_reason = StopReason::converged;
  t.sm_clock_mhz = 1755.0;
  return t;
}

// A file like the harness writes: built through the same record builders, one record per kind,
// with the optional provenance and device fields set (cuDNN, clocks, ECC) or null (NCCL).
MeasurementFile sample_file() {
  MeasurementFile f = test::harness_file("NVIDIA H200", "h200-sxm-141gb", 132);
  f.provenance.cudnn = "9.19.0";
  f.provenance.nccl = std::nullopt;
  DeviceInfo& d = f.provenance.devices.front();
  d.l2_cache_bytes = 52'428'800;
  d.memory_bus_width_bits = 6144;
  d.max_memory_clock_mhz = 3201;
  d.theoretical_memory_bandwidth_bytes_per_s = 4.9e12;
  d.ecc_enabled = true;
  d.clocks_at_start.source = "nvml";
  d.clocks_at_start.sm_mhz = 1980;
  d.clocks_at_start.throttle_reasons = {"gpu_idle"};
  d.clocks_at_end.note = "libnvidia-ml.so.1 not found";

  Measurement gemm = make_measurement(gemm_point(DataType::bf16, "TN", 4096, 8192, 4096, "qkv"),
                                      timing({1.1e-4, 1.0e-4, 1.2e-4}), test::passed_check());
  // The kernel the harness read back (schema_version 2); values exercise every key, not measured.
  GemmAlgorithm algorithm;
  algorithm.id = 66;
  algorithm.tile_id = 23;
  algorithm.tile = "128x256";
  algorithm.stages_id = 35;
  algorithm.stages = "64xAUTO";
  algorithm.inner_shape_id = 0;
  algorithm.inner_shape = "undefined";
  algorithm.cluster_shape_id = std::nullopt;  // not reported
  algorithm.heuristic_results = 8;
  algorithm.workspace_bytes = 1 << 20;
  algorithm.waves_count = 0.97;
  gemm.algorithm = algorithm;
  f.records.push_back(gemm);
  AttentionInputs a;
  a.impl = "stepcast_flash";
  a.direction = AttentionDirection::backward;
  a.batch = 4;
  a.heads = 32;
  a.kv_heads = 8;
  a.seq_q = a.seq_kv = 4096;
  a.causal = true;
  f.records.push_back(make_measurement(a, timing({2e-3, 2.1e-3}), test::passed_check()));
  f.records.push_back(make_measurement(ElementwiseInputs{"rmsnorm", DataType::bf16, 16384, 4096},
                                       timing({3e-5, 3.1e-5}, "hot"), test::passed_check()));
  f.records.push_back(make_measurement(MemoryInputs{"triad", DataType::fp32, 1 << 28}, timing({1e-3}), test::passed_check()));
  CollectiveInputs c;
  c.op = CollectiveOp::all_reduce;
  c.size_bytes = 1 << 30;
  c.count = (1 << 30) / 4;
  c.ranks = 8;
  c.ranks_per_node = 8;
  Measurement coll = make_measurement(c, timing({5e-3, 5.2e-3}, "host_timer"), test::passed_check());
  coll.collective = CollectiveResult{2.1e11, 3.7e11, 1.75, 4.9e-3};
  f.records.push_back(coll);
  SelftestInputs s{"spin_kernel", 1e-3, 1.004e-3, 0.025, true};
  f.records.push_back(make_measurement(s, timing({1.004e-3, 1.003e-3}), test::passed_check()));
  f.skipped.push_back({"gemm", "gemm fp8 TN m=1024 n=1024 k=1024", "FP8 GEMMs need compute capability 8.9 or newer"});
  return f;
}

std::string errors_text(const std::vector<std::string>& errors) {
  std::string s;
  for (const auto& e : errors) s += e + "\n";
  return s;
}

// Replaces the first occurrence of `from` in the written text, to make a corrupt file.
std::string corrupt(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("a written measurement file validates against the documented JSON schema") {
  const json::Value schema = load_schema();
  const json::Value written = json::parse(write_measurement_text(sample_file()));
  const auto errors = testing::validate_against_schema(written, schema);
  CHECK_MESSAGE(errors.empty(), errors_text(errors));
}

TEST_CASE("the schema check can fail: a record with a negative time and an unknown key is rejected") {
  const json::Value schema = load_schema();
  const std::string text = write_measurement_text(sample_file());
  const json::Value bad = json::parse(corrupt(corrupt(text, "\"median_s\": 0.00011", "\"median_s\": -1"),
                                              "\"role\": \"qkv\"", "\"role\": \"qkv\", \"colour\": \"blue\""));
  const auto errors = testing::validate_against_schema(bad, schema);
  REQUIRE(errors.size() >= 2);
  CHECK(errors_text(errors).find("records[0].time.median_s") != std::string::npos);
  CHECK(errors_text(errors).find("records[0].inputs.colour") != std::string::npos);
  const auto algorithm_errors = testing::validate_against_schema(
      json::parse(corrupt(text, "\"heuristic_results\": 8", "\"heuristic_results\": 0")), schema);
  CHECK(errors_text(algorithm_errors).find("records[0].algorithm.heuristic_results") != std::string::npos);
}

TEST_CASE("the reader reads back exactly what the writer wrote") {
  const MeasurementFile f = sample_file();
  const MeasurementFile back = parse_measurement_text(write_measurement_text(f), "sample.json");
  CHECK(back == f);
  REQUIRE(back.records.size() == 6);
  CHECK(back.records[0].kind() == MeasurementKind::gemm);
  // 2 m n k = 2 x 4096 x 8192 x 4096 FLOPs; median of {1.0, 1.1, 1.2} x 1e-4 s.
  CHECK(back.records[0].flops.value() == doctest::Approx(2.0 * 4096 * 8192 * 4096));
  CHECK(back.records[0].time.median_s == doctest::Approx(1.1e-4));
  CHECK(back.records[4].collective->nccl_estimate_s == doctest::Approx(4.9e-3));
  CHECK(back.provenance.devices[0].catalog_gpu == "h200-sxm-141gb");
}

TEST_CASE("files round-trip through disk") {
  const auto path = std::filesystem::temp_directory_path() / "stepcast_measurement_roundtrip.json";
  write_measurement_file(path, sample_file());
  CHECK(read_measurement_file(path) == sample_file());
  std::filesystem::remove(path);
}

TEST_CASE("corrupt or mismatched files give errors that point at the problem") {
  const std::string text = write_measurement_text(sample_file());
  const auto error_of = [](const std::string& t) -> std::string {
    try {
      parse_measurement_text(t, "run.json");
    } catch (const MeasurementFileError& e) {
      return e.what();
    }
    return "no error";
  };
  SUBCASE("truncated JSON names the line and column") {
    const std::string truncated = text.substr(0, text.size() / 2);
    const std::string e = error_of(truncated);
    CHECK(e.rfind("run.json:", 0) == 0);
    CHECK(e.find("not valid JSON") != std::string::npos);
  }
  SUBCASE("a newer schema version asks for a newer stepcast") {
    const std::string e = error_of(corrupt(text, "\"schema_version\": 2", "\"schema_version\": 3"));
    CHECK(e.find("schema_version 3") != std::string::npos);
    CHECK(e.find("update stepcast") != std::string::npos);
  }
  SUBCASE("another JSON file is not mistaken for measurements") {
    CHECK(error_of(R"({"step_time_s": 1.0})").find("not a stepcast-harness measurement file") != std::string::npos);
  }
  SUBCASE("an nccl-tests log passed as harness JSON says what it looks like") {
    CHECK(error_of("# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592\n").find("nccl-tests log") != std::string::npos);
  }
  SUBCASE("a negative time names its key path and position") {
    const std::string e = error_of(corrupt(text, "\"median_s\": 0.00011", "\"median_s\": -1"));
    CHECK(e.find("records[0].time.median_s: expected a number > 0") != std::string::npos);
    CHECK(e.find("run.json:") == 0);
  }
  SUBCASE("statistics that contradict each other are rejected") {
    const std::string e = error_of(corrupt(text, "\"median_s\": 0.00011", "\"median_s\": 0.5"));
    CHECK(e.find("inconsistent statistics") != std::string::npos);
  }
  SUBCASE("a misspelt key is named next to the key it should be") {
    const std::string e = error_of(corrupt(text, "\"batch\": 1,", "\"bacth\": 1,"));
    CHECK(e.find("records[0].inputs: missing required key 'batch' (is 'bacth' a typo for it?)") != std::string::npos);
  }
  SUBCASE("an unknown key is an error, not silently ignored") {
    const std::string e = error_of(corrupt(text, "\"role\": \"qkv\"", "\"role\": \"qkv\", \"colour\": \"blue\""));
    CHECK(e.find("records[0].inputs.colour: unknown key 'colour'") != std::string::npos);
  }
  SUBCASE("a record pointing at a device that is not listed") {
    const std::string e = error_of(corrupt(text, "\"device\": 0", "\"device\": 3"));
    CHECK(e.find("records[0].device: device 3 is not in provenance.devices") != std::string::npos);
  }
  SUBCASE("a collective record without bandwidths") {
    json::Value v = json::parse(text);
    json::Value records = json::Value::array();
    for (const json::Value& r : v.find("records")->items()) {
      if (r.find("kind")->as_string() != "collective") {
        records.push_back(r);
        continue;
      }
      json::Value copy = json::Value::object();
      for (const json::Member& m : r.members()) {
        if (m.key != "collective") copy.set(m.key, m.value);
      }
      records.push_back(copy);
    }
    v.set("records", records);
    CHECK(error_of(json::write(v)).find("needs a 'collective' object") != std::string::npos);
  }
}
