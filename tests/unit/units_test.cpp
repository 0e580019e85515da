#include <doctest/doctest.h>

#include "model/datatype.h"
#include "model/units.h"

using namespace stepcast;

TEST_CASE("dividing work by a rate gives seconds") {
  // 312 TFLOP of work at 312 TFLOP/s takes one second.
  CHECK((Flops(312e12) / units::teraflops(312)).value() == doctest::Approx(1.0));
  // 2 GB over a 50 GB/s link (a 400 Gb/s NIC) takes 40 ms.
  CHECK((units::gigabytes(2) / units::gigabits_per_second(400)).value() == doctest::Approx(0.04));
}

TEST_CASE("binary and decimal prefixes differ") {
  CHECK(units::gib(1).value() == 1073741824.0);
  CHECK(units::gigabytes(1).value() == 1e9);
  CHECK(units::microseconds(1.5).value() == doctest::Approx(1.5e-6));
}

TEST_CASE("ratios of like quantities are plain numbers") {
  const double r = units::milliseconds(5) / units::milliseconds(20);
  CHECK(r == doctest::Approx(0.25));
  CHECK(max(units::seconds(1), units::seconds(2)) == units::seconds(2));
}

TEST_CASE("bytes per element follow the format definitions") {
  CHECK(bytes_per_element(DataType::bf16) == 2.0);
  CHECK(bytes_per_element(DataType::tf32) == 4.0);  // TF32 is a compute mode over FP32 storage
  CHECK(bytes_per_element(DataType::int4) == 0.5);
  // OCP MX v1.0: 32 FP8 elements share one 8-bit scale.
  CHECK(bytes_per_element(DataType::mxfp8) == doctest::Approx(33.0 / 32.0));
  CHECK(parse_datatype("fp8") == DataType::fp8);
  CHECK_FALSE(parse_datatype("fp9").has_value());
}
