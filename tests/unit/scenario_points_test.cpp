#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "simulator/diagnostics.h"
#include "simulator/scenario_loader.h"
#include "validation/harness_grids.h"
#include "validation/measurement_input.h"
#include "validation/measurement_json.h"
#include "validation/scenario_points.h"

using namespace stepcast;

namespace {

const ScenarioPoint* find_op(const std::vector<ScenarioPoint>& points, const std::string& op) {
  const auto it = std::find_if(points.begin(), points.end(), [&](const ScenarioPoint& p) {
    return std::find(p.ops.begin(), p.ops.end(), op) != p.ops.end();
  });
  return it == points.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("a scenario's GEMMs become harness points for one tensor-parallel rank") {
  // Llama 3 70B at TP 8, 8192-token sequences, micro-batch 1 (scenarios/examples/llama3-70b-h100.yaml):
  // QKV out = 64/8 x 128 + 2 x (8/8) x 128 = 1280 features, in = 8192, over 8192 tokens.
  const auto points = scenario_points(load_scenario("scenarios/examples/llama3-70b-h100.yaml"));
  const ScenarioPoint* qkv = find_op(points, "qkv_proj");
  REQUIRE(qkv != nullptr);
  const auto& g = std::get<GemmInputs>(qkv->inputs);
  CHECK(g.layout == "TN");
  CHECK(g.m == 1280);
  CHECK(g.n == 8192);
  CHECK(g.k == 8192);
  CHECK(g.precision == DataType::bf16);
  // Its weight gradient sums over the tokens: NT, k = 8192 tokens, m x n = 8192 x 1280.
  const auto& w = std::get<GemmInputs>(find_op(points, "qkv_proj.wgrad")->inputs);
  CHECK(w.layout == "NT");
  CHECK(w.m == 8192);
  CHECK(w.n == 1280);
  // fc2's data gradient produces the 28672 / 8 = 3584 FFN columns of this rank.
  const auto& d = std::get<GemmInputs>(find_op(points, "fc2.dgrad")->inputs);
  CHECK(d.layout == "NN");
  CHECK(d.m == 3584);
}

TEST_CASE("a scenario's attention and norms map to the fused kernels at this rank's shape") {
  const auto points = scenario_points(load_scenario("scenarios/examples/llama3-70b-h100.yaml"));
  const auto& a = std::get<AttentionInputs>(find_op(points, "flash_attention.backward")->inputs);
  CHECK(a.direction == AttentionDirection::backward);
  CHECK(a.heads == 8);      // 64 / TP 8
  CHECK(a.kv_heads == 1);   // 8 / TP 8
  CHECK(a.seq_q == 8192);
  CHECK(a.causal);
  // With sequence parallelism the norms see 8192 / 8 = 1024 tokens; all three share one point.
  const ScenarioPoint* norm = find_op(points, "input_norm");
  const auto& e = std::get<ElementwiseInputs>(norm->inputs);
  CHECK(e.op == "rmsnorm");
  CHECK(e.rows == 1024);
  CHECK(e.cols == 8192);
  CHECK(describe_ops(norm->ops) == "input_norm, post_attention_norm, final_norm");
}

TEST_CASE("FP8 scenarios run every GEMM in TN with E5M2 gradients") {
  const auto points = scenario_points(load_scenario("scenarios/examples/llama3-8b-fp8.yaml"));
  for (const auto& p : points) {
    if (const auto* g = std::get_if<GemmInputs>(&p.inputs); g && g->precision == DataType::fp8) {
      CHECK(g->layout == "TN");
      const bool gradient = p.ops.front().find("grad") != std::string::npos;
      CHECK(g->b_type == (gradient ? "e5m2" : "e4m3"));
    }
  }
}

TEST_CASE("inference scenarios are refused with a clear message") {
  CHECK_THROWS_WITH_AS(scenario_points(load_scenario("scenarios/examples/llama3-70b-serving.yaml")),
                       doctest::Contains("inference scenarios are not mapped"), InputError);
}

TEST_CASE("a corrupt measurement file is an input error naming the file and position") {
  const auto path = std::filesystem::temp_directory_path() / "stepcast_corrupt_measurements.json";
  {
    std::ofstream out(path);
    out << "{\"schema\": \"stepcast.harness.measurements\", \"schema_version\": 1, \"complete\": tru";
  }
  try {
    load_measurement_file(path);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    CHECK(e.diagnostics()[0].file == path.string());
    CHECK(e.diagnostics()[0].line == 1);
    CHECK(std::string(e.what()).find("not valid JSON") != std::string::npos);
  }
  std::filesystem::remove(path);
}
