#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>

#include "validation/float_formats.h"

using namespace stepcast;

TEST_CASE("fp16 decodes normals, subnormals and specials") {
  CHECK(half_to_float(0x3C00) == 1.0f);
  CHECK(half_to_float(0xC000) == -2.0f);
  CHECK(half_to_float(0x7BFF) == 65504.0f);                   // largest finite
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));      // smallest subnormal
  CHECK(std::isinf(half_to_float(0x7C00)));
  CHECK(std::isnan(half_to_float(0x7E00)));
}

TEST_CASE("bf16 is the top half of a float") {
  CHECK(bfloat16_to_float(0x3F80) == 1.0f);
  CHECK(bfloat16_to_float(0x4049) == 3.140625f);
}

TEST_CASE("FP8 E4M3 follows the OCP spec: bias 7, no infinity, 448 largest") {
  CHECK(e4m3_to_float(0x38) == 1.0f);                  // 0.0111.000: 2^(7-7)
  CHECK(e4m3_to_float(0x7E) == 448.0f);                // 0.1111.110: 1.75 x 2^8
  CHECK(e4m3_to_float(0x01) == std::ldexp(1.0f, -9));  // smallest subnormal: 1/8 x 2^-6
  CHECK(e4m3_to_float(0xB8) == -1.0f);
  CHECK(std::isnan(e4m3_to_float(0x7F)));
}

TEST_CASE("FP8 E5M2 follows the OCP spec: bias 15, IEEE specials, 57344 largest") {
  CHECK(e5m2_to_float(0x3C) == 1.0f);                   // 0.01111.00
  CHECK(e5m2_to_float(0x7B) == 57344.0f);               // 0.11110.11: 1.75 x 2^15
  CHECK(e5m2_to_float(0x01) == std::ldexp(1.0f, -16));  // 1/4 x 2^-14
  CHECK(std::isinf(e5m2_to_float(0x7C)));
  CHECK(std::isnan(e5m2_to_float(0x7D)));
}

TEST_CASE("encoders round to nearest even and decode back") {
  CHECK(float_to_bfloat16(1.0f) == 0x3F80);
  // 1 + 2^-8 is exactly halfway between bf16 1.0 and 1 + 2^-7: ties to even (1.0).
  CHECK(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);
  CHECK(float_to_bfloat16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3F82);
  CHECK(float_to_half(1.0f) == 0x3C00);
  CHECK(float_to_half(65504.0f) == 0x7BFF);
  CHECK(float_to_half(65520.0f) == 0x7C00);  // rounds past the largest finite
  CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);
  // 1 + 2^-11 is halfway between half 1.0 and 1 + 2^-10: ties to even.
  CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);
  for (float v : {0.1f, -3.75f, 1000.5f, 0.0003f}) {
    CHECK(half_to_float(float_to_half(v)) == doctest::Approx(v).epsilon(1e-3));
  }
}
