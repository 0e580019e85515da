// Inference reports: the JSON contract of DESIGN.md (keys and their meaning), a CSV header that
// matches its rows, and a table that states saturation.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "simulator/inference/inference_predictor.h"
#include "simulator/inference_report.h"
#include "simulator/scenario_loader.h"

namespace stepcast {
namespace {

// Llama 3 8B served on one H100; `inference` is the scenario's inference mapping, inline.
Scenario llama3_8b_serving(const std::string& name, const std::string& inference) {
  return parse_scenario("schema_version: 1\nname: " + name + "\nmodel: llama3-8b\nsystem: {gpu: h100-sxm-80gb, gpus: 1}\n" +
                            "inference: {mode: serving, " + inference + "}\n",
                        name + ".yaml");
}

Scenario serving(const std::string& rate) {
  return llama3_8b_serving("report-test", "arrival_rate: \"" + rate +
                                              "\", requests: 600, input_len: 1024, output_len: 256, "
                                              "slo: {ttft: 200 ms, tpot: 30 ms}");
}

std::size_t commas(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), ',')); }

}  // namespace

TEST_CASE("inference JSON carries DESIGN.md's contract: latency percentiles, throughput, memory, concurrency") {
  const Scenario s = serving("5/s");
  const InferencePrediction p = predict_inference(s);
  const auto j = nlohmann::json::parse(inference_report_json(s, p));
  CHECK(j["schema_version"] == 1);
  CHECK(j["mode"] == "inference");
  for (const char* key : {"ttft_s", "tpot_s", "e2e_latency_s"}) {
    for (const char* stat : {"mean", "p50", "p90", "p99"}) CHECK_MESSAGE(j[key][stat].is_number(), key << "." << stat);
  }
  CHECK(j["ttft_s"]["p99"].get<double>() == doctest::Approx(p.ttft.p99.value()).epsilon(1e-5));
  CHECK(j["output_tokens_per_s"].get<double>() == doctest::Approx(p.output_tokens_per_s).epsilon(1e-5));
  CHECK(j["requests_per_s"].is_number());
  for (const char* key : {"weights", "kv_cache", "activations", "peak"}) {
    CHECK_MESSAGE(j["memory_per_gpu_bytes"][key].is_number_integer(), key);
  }
  CHECK(j["max_concurrent_sequences"] == p.max_concurrent_sequences);
  CHECK(j["fits"] == true);
  // Serving extras: goodput, the saturation flag and a summarised time series.
  CHECK(j["serving"]["goodput_requests_per_s"].is_number());
  CHECK(j["serving"]["saturated"] == false);
  CHECK(j["serving"]["time_series"]["summary"]["queued"]["max"].is_number());
  CHECK(j["serving"]["time_series"]["samples"].size() == p.time_series.size());
}

TEST_CASE("the inference CSV header names every column of the row") {
  const Scenario s = serving("5/s");
  const InferencePrediction p = predict_inference(s);
  CHECK(commas(inference_csv_header()) == commas(inference_csv_row(s, p)));
  const std::string report = inference_report(s, p, ReportFormat::csv);
  CHECK(report.rfind("scenario,mode,", 0) == 0);
  CHECK(report.find("\nreport-test,serving,1,") != std::string::npos);
}

TEST_CASE("the table reports percentiles and says when the arrival rate exceeds capacity") {
  const Scenario s = serving("80/s");
  const InferencePrediction p = predict_inference(s);
  REQUIRE(p.saturated);
  const std::string table = inference_report_table(s, p);
  CHECK(table.find("time to first token") != std::string::npos);
  CHECK(table.find("p99") != std::string::npos);
  CHECK(table.find("! saturated: the arrival rate") != std::string::npos);
  CHECK(table.find("goodput") != std::string::npos);
}

TEST_CASE("the table says up front when requests were dropped for never fitting the KV pool") {
  // A 16M-token prompt cannot fit an 80 GB GPU's KV pool: every request is dropped.
  const Scenario s =
      llama3_8b_serving("drop-test", "arrival_rate: 5/s, requests: 20, input_len: 16000000, output_len: 16");
  const InferencePrediction p = predict_inference(s);
  REQUIRE(p.dropped == 20);
  const std::string table = inference_report_table(s, p);
  const auto warning = table.find("! 20 of 20 requests dropped");
  CHECK(warning != std::string::npos);
  CHECK(warning < table.find("time to first token"));
  CHECK(table.find("none served") != std::string::npos);
}

TEST_CASE("with one output token per request, time per output token is said to be undefined, not left as 0") {
  const Scenario s =
      llama3_8b_serving("one-token", "arrival_rate: 5/s, requests: 50, input_len: 512, output_len: 1");
  const InferencePrediction p = predict_inference(s);
  CHECK(p.tpot.p99.value() == 0.0);
  bool said = false;
  for (const auto& note : p.notes) said = said || note.find("time per output token is undefined") != std::string::npos;
  CHECK(said);
  // Two tokens define it, and the note goes away.
  const Scenario two =
      llama3_8b_serving("two-tokens", "arrival_rate: 5/s, requests: 50, input_len: 512, output_len: 2");
  const InferencePrediction q = predict_inference(two);
  CHECK(q.tpot.p99.value() > 0.0);
  for (const auto& note : q.notes) CHECK(note.find("undefined") == std::string::npos);
}

}  // namespace stepcast
