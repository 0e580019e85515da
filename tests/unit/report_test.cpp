#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "simulator/diagnostics.h"
#include "simulator/report.h"
#include "simulator/training_predictor.h"
#include "tests/support/gpt3_scenario.h"

using namespace stepcast;

namespace {
std::size_t count(const std::string& text, char c) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), c)); }
}  // namespace

TEST_CASE("the JSON report carries every field DESIGN.md promises, and its breakdown sums to the step time") {
  const Scenario sc = test::gpt3_175b(1024, 8, 8, 3, 1536, 1);
  const TrainingPrediction p = predict_training(sc);
  const auto j = nlohmann::json::parse(training_report_json(sc, p));
  CHECK(j["schema_version"] == 1);
  CHECK(j["mode"] == "training");
  for (const char* key : {"step_time_s", "tokens_per_s", "mfu", "hfu"}) CHECK(j[key].is_number());
  CHECK(j["fits"].is_boolean());
  double sum = 0.0;
  for (const char* key : {"compute", "recompute", "tp_comm_exposed", "cp_comm_exposed", "ep_comm_exposed", "pp_bubble",
                          "pp_comm_exposed", "dp_comm_exposed", "optimizer", "other"}) {
    REQUIRE(j["time_breakdown_s"].contains(key));
    sum += j["time_breakdown_s"][key].get<double>();
  }
  sum += j["time_breakdown_s"]["offload_exposed"].get<double>();
  CHECK(sum == doctest::Approx(j["step_time_s"].get<double>()).epsilon(1e-5));
  std::uint64_t memory = 0;
  for (const char* key : {"weights", "gradients", "optimizer_states", "activations", "buffers"}) {
    REQUIRE(j["memory_per_gpu_bytes"][key].is_number_unsigned());
    memory += j["memory_per_gpu_bytes"][key].get<std::uint64_t>();
  }
  memory += j["memory_per_gpu_bytes"]["fragmentation"].get<std::uint64_t>();
  CHECK(static_cast<double>(memory) == doctest::Approx(j["memory_per_gpu_bytes"]["peak"].get<double>()).epsilon(1e-6));
  CHECK(j["memory_per_stage_bytes"].size() == 8);
}

TEST_CASE("the CSV report has one header and one row with the same number of columns") {
  const Scenario sc = test::gpt3_175b(64, 8, 8, 1, 64, 1);
  const std::string csv = training_report(sc, predict_training(sc), ReportFormat::csv);
  const auto newline = csv.find('\n');
  const std::string header = csv.substr(0, newline);
  const std::string row = csv.substr(newline + 1, csv.size() - newline - 2);
  CHECK(count(header, ',') == count(row, ','));
  CHECK(header.rfind("scenario,gpus,tp,pp,dp", 0) == 0);
  CHECK(row.rfind("gpt3-175b-test,64,8,8,1,", 0) == 0);
}

TEST_CASE("the table report states units and whether the step fits") {
  const Scenario sc = test::gpt3_175b(8, 8, 1, 1, 8, 1);
  const std::string table = training_report(sc, predict_training(sc), ReportFormat::table);
  CHECK(table.find("step time") != std::string::npos);
  CHECK(table.find(" s\n") != std::string::npos);
  CHECK(table.find("GiB") != std::string::npos);
  CHECK(table.find("DOES NOT FIT") != std::string::npos);  // 175B on 8 GPUs
}

TEST_CASE("report numbers keep six significant digits") {
  CHECK(round_significant(13.712345678) == 13.7123);
  CHECK(round_significant(0.000123456789) == doctest::Approx(0.000123457));
  CHECK(round_significant(0.0) == 0.0);
  CHECK_THROWS_AS(parse_report_format("xml"), UsageError);
}
