// --constant NAME=VALUE (simulator/constant_overrides.h): parsing, applying to the cost and NCCL
// constants by name, and the errors for every bad input.
#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "model/cost_parameters.h"
#include "model/inference_parameters.h"
#include "model/nccl_parameters.h"
#include "simulator/constant_overrides.h"
#include "simulator/diagnostics.h"

using namespace stepcast;

namespace {

std::string error_of(const std::vector<std::string>& texts) {
  CostParameters cost;
  NcclParameters nccl;
  try {
    (void)apply_constant_overrides(texts, cost, nccl);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a cost constant is set by name and the previous value is kept for the report") {
  CostParameters cost;
  NcclParameters nccl;
  const double before = cost.sustained_derate_blackwell;
  const auto set = apply_constant_overrides({"compute.sustained_derate.blackwell = 0.95"}, cost, nccl);
  REQUIRE(set.size() == 1);
  CHECK(set[0].name == "compute.sustained_derate.blackwell");
  CHECK(set[0].previous == before);
  CHECK(set[0].value == 0.95);
  CHECK(cost.sustained_derate_blackwell == 0.95);
  CHECK(describe_constants_set(set).find("compute.sustained_derate.blackwell=0.95 (was 0.853)") != std::string::npos);
}

TEST_CASE("every constant the model names can be set, cost and NCCL alike, and nothing else moves") {
  CostParameters probe;
  NcclParameters nccl_probe;
  std::vector<double> defaults;  // every cost constant's default, in visiting order
  probe.for_each_constant([&](std::string_view, double& value, std::string_view) { defaults.push_back(value); });
  int checked = 0;
  probe.for_each_constant([&](std::string_view name, double& value, std::string_view) {
    CostParameters cost;
    NcclParameters nccl;
    (void)apply_constant_overrides({std::string(name) + "=" + std::to_string(value + 1.0)}, cost, nccl);
    std::vector<std::string> changed;
    std::size_t i = 0;
    cost.for_each_constant([&](std::string_view other, double& v, std::string_view) {
      if (v != defaults[i++]) changed.emplace_back(other);
    });
    CHECK_MESSAGE(changed == std::vector<std::string>{std::string(name)}, name);
    ++checked;
  });
  nccl_probe.for_each_parameter([&](std::string_view name, double& value, std::string_view, std::string_view) {
    CostParameters cost;
    NcclParameters nccl;
    const auto set = apply_constant_overrides({std::string(name) + "=" + std::to_string(value + 1.0)}, cost, nccl);
    REQUIRE(set.size() == 1);
    double now = -1.0;
    nccl.for_each_parameter([&](std::string_view n, double& v, std::string_view, std::string_view) {
      if (n == name) now = v;
    });
    CHECK_MESSAGE(now == doctest::Approx(value + 1.0), name);
    ++checked;
  });
  CHECK(checked > 50);
}

TEST_CASE("no model constant is negative by default, so refusing negative values refuses no real setting") {
  CostParameters cost;
  NcclParameters nccl;
  cost.for_each_constant([](std::string_view name, double& value, std::string_view) { CHECK_MESSAGE(value >= 0.0, name); });
  nccl.for_each_parameter(
      [](std::string_view name, double& value, std::string_view, std::string_view) { CHECK_MESSAGE(value >= 0.0, name); });
}

TEST_CASE("bad --constant input is a clear error, never a silent default") {
  CHECK(error_of({"gemm.eta.fp8"}).find("expected NAME=VALUE") != std::string::npos);
  CHECK(error_of({"=0.7"}).find("name is missing") != std::string::npos);
  CHECK(error_of({"gemm.eta.fp8="}).find("is not a finite number") != std::string::npos);
  CHECK(error_of({"gemm.eta.fp8=0.7x"}).find("is not a finite number") != std::string::npos);
  CHECK(error_of({"gemm.eta.fp8=nan"}).find("is not a finite number") != std::string::npos);
  CHECK(error_of({"gemm.eta.fp8=inf"}).find("is not a finite number") != std::string::npos);
  CHECK(error_of({"gemm.eta.fp8=1e999"}).find("is not a finite number") != std::string::npos);
  CHECK(error_of({"gemm.eta.fp8=-0.1"}).find("is negative") != std::string::npos);
  CHECK(error_of({"gemm.eta.fp8=0.7", "gemm.eta.fp8=0.8"}).find("set twice") != std::string::npos);
  CHECK(error_of({"gemm.eta.fp9=0.7"}).find("did you mean 'gemm.eta.fp8'") != std::string::npos);
  CHECK(error_of({"no.such.thing.at.all=1"}).find("no constant of that name") != std::string::npos);
  CHECK(error_of({}).empty());
}

TEST_CASE("inference-only constants are set where the caller prices inference, and unknown where it does not") {
  CostParameters cost;
  NcclParameters nccl;
  InferenceCostParameters inference;
  const double before = inference.weight_only_int4_compute_factor;
  const auto set =
      apply_constant_overrides({"inference.weight_only_int4_compute_factor=0.6"}, cost, nccl, &inference);
  REQUIRE(set.size() == 1);
  CHECK(set[0].previous == before);
  CHECK(inference.weight_only_int4_compute_factor == 0.6);
  CHECK(error_of({"inference.weight_only_int4_compute_factor=0.6"}).find("no constant of that name") !=
        std::string::npos);
  InferenceCostParameters probe;
  probe.for_each_constant([](std::string_view name, double& value, std::string_view) {
    CHECK_MESSAGE(value >= 0.0, name);
  });
}
