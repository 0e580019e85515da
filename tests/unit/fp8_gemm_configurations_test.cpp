#include <doctest/doctest.h>

#include <set>
#include <string>

#include "validation/fp8_gemm_configurations.h"

using namespace stepcast;

TEST_CASE("the first FP8 set-up tried is PyTorch's scaled_gemm: requested output, C nullptr, scales, no fast accumulation") {
  const auto list = fp8_gemm_configurations("bf16");
  REQUIRE(!list.empty());
  CHECK(list[0].output == "bf16");
  CHECK(list[0].scale_pointers);
  CHECK_FALSE(list[0].fast_accumulation);
  CHECK_FALSE(list[0].c_is_d);
  CHECK(describe(list[0]) == "D bf16, C bf16 = nullptr (beta 0), A/B scale pointers (1.0), fast accumulation off");
}

TEST_CASE("the FP8 fallbacks change one thing at a time, then the output format, and never repeat a set-up") {
  const auto list = fp8_gemm_configurations("bf16");
  // 1 base, fast accumulation, C = D, no scale pointers, fp16 and fp32 output = 6.
  REQUIRE(list.size() == 6);
  CHECK(list[1].fast_accumulation);
  CHECK(list[2].c_is_d);
  CHECK_FALSE(list[3].scale_pointers);
  CHECK(list[4].output == "fp16");
  CHECK(list[5].output == "fp32");
  std::set<std::string> seen;
  for (const auto& c : list) CHECK(seen.insert(describe(c)).second);
  // Every output format is one cuBLASLt documents for FP8 inputs with a non-FP8 D.
  for (const auto& c : list) CHECK((c.output == "bf16" || c.output == "fp16" || c.output == "fp32"));
}

TEST_CASE("an FP32 request is not tried twice as a fallback format") {
  const auto list = fp8_gemm_configurations("fp32");
  CHECK(list.size() == 5);
  CHECK(list.back().output == "fp16");
}
