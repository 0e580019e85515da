#include <doctest/doctest.h>

#include <string>

#include "simulator/diagnostics.h"
#include "simulator/quantity_parse.h"

using namespace stepcast;

TEST_CASE("bandwidths in bytes and in bits per second") {
  // 900 GB/s is 900e9 bytes per second (decimal prefix, as datasheets use it).
  CHECK(parse_bandwidth("900 GB/s").value() == 900e9);
  // 400 Gb/s is a NIC rate in bits: 400e9 / 8 = 50e9 bytes per second.
  CHECK(parse_bandwidth("400 Gb/s").value() == 50e9);
  CHECK(parse_bandwidth("3.35 TB/s").value() == doctest::Approx(3.35e12));
  CHECK(parse_bandwidth("12.5 GiB/s").value() == 12.5 * 1024.0 * 1024.0 * 1024.0);
  CHECK(parse_bandwidth("100 Gbit/s").value() == 12.5e9);
}

TEST_CASE("sizes use decimal prefixes for kB..PB and binary ones for KiB..PiB") {
  CHECK(parse_bytes("80 GiB").value() == 80.0 * 1073741824.0);
  CHECK(parse_bytes("141 GB").value() == 141e9);
  CHECK(parse_bytes("40 MiB").value() == 41943040.0);  // the A100's L2 as deviceQuery reports it
  CHECK(parse_bytes("2 TB").value() == 2e12);
  CHECK(parse_bytes("1 KB").value() == 1000.0);
  CHECK(parse_bytes("1 kB").value() == 1000.0);
  CHECK(parse_bytes("512 B").value() == 512.0);
}

TEST_CASE("durations from hours to nanoseconds") {
  CHECK(parse_seconds("1.5 us").value() == doctest::Approx(1.5e-6));
  CHECK(parse_seconds("500 ms").value() == doctest::Approx(0.5));
  CHECK(parse_seconds("2 h").value() == 7200.0);
  CHECK(parse_seconds("3 min").value() == 180.0);
  CHECK(parse_seconds("100 ns").value() == doctest::Approx(1e-7));
  CHECK(parse_seconds("0 s").value() == 0.0);
}

TEST_CASE("compute rates, rates per second and power") {
  CHECK(parse_flop_rate("989.4 TFLOP/s").value() == doctest::Approx(989.4e12));
  CHECK(parse_flop_rate("2.5 PFLOP/s").value() == doctest::Approx(2.5e15));
  CHECK(parse_flop_rate("624 TOP/s").value() == doctest::Approx(624e12));  // integer formats
  CHECK(parse_flop_rate("312 TFLOPS").value() == doctest::Approx(312e12));
  CHECK(parse_per_second("8/s") == 8.0);
  CHECK(parse_per_second("120/min") == doctest::Approx(2.0));
  CHECK(parse_watts("700 W") == 700.0);
  CHECK(parse_watts("1.2 kW") == doctest::Approx(1200.0));
  CHECK(parse_flops("3 PFLOP").value() == doctest::Approx(3e15));
}

TEST_CASE("spaces around the number and unit are optional") {
  CHECK(parse_bandwidth("900GB/s").value() == 900e9);
  CHECK(parse_bandwidth("  900   GB/s  ").value() == 900e9);
  CHECK(parse_bytes("1e3 B").value() == 1000.0);
}

TEST_CASE("a bare number for a dimensioned quantity is an error naming the dimension") {
  const QuantityParse q = parse_quantity("900", Dimension::bandwidth);
  CHECK_FALSE(q.ok());
  CHECK(q.error == "expected a bandwidth with a unit, e.g. \"900 GB/s\" or \"400 Gb/s\", found the bare number 900");
  CHECK_THROWS_AS(parse_seconds("5"), InputError);
}

TEST_CASE("a unit of another dimension is an error saying what was found") {
  const QuantityParse q = parse_quantity("80 GiB", Dimension::bandwidth);
  CHECK(q.error ==
        "expected a bandwidth with a unit, e.g. \"900 GB/s\" or \"400 Gb/s\", found \"80 GiB\", which is a size in "
        "bytes");
  CHECK(parse_quantity("1.5 us", Dimension::size).error ==
        "expected a size in bytes with a unit, e.g. \"80 GiB\" or \"141 GB\", found \"1.5 us\", which is a duration");
}

TEST_CASE("a misspelt unit gets a suggestion") {
  const QuantityParse q = parse_quantity("900 GBs", Dimension::bandwidth);
  CHECK(q.error == "unknown unit 'GBs' in \"900 GBs\"; expected a bandwidth with a unit, e.g. \"900 GB/s\" or "
                   "\"400 Gb/s\"");
  CHECK(q.suggestion == "did you mean 'GB/s'?");
  // Case matters where it carries meaning: mb is neither MB nor Mb.
  CHECK_FALSE(parse_quantity("8 mb", Dimension::size).ok());
}

TEST_CASE("text that is not a number is rejected") {
  CHECK(parse_quantity("fast", Dimension::bandwidth).error ==
        "expected a bandwidth with a unit, e.g. \"900 GB/s\" or \"400 Gb/s\", found \"fast\"");
  CHECK_FALSE(parse_quantity("", Dimension::time).ok());
  CHECK_FALSE(parse_quantity("inf s", Dimension::time).ok());
}

TEST_CASE("formatted quantities read back to exactly the same value") {
  const double values[] = {900e9, 50e9, 2039e9, 3.35e12, 1.5e-6, 0.5, 989.4e12, 1978.9e12, 80e9,
                           85899345920.0, 141e9, 1e-9 * 3.0, 7.25, 123456789.123, 0.0};
  const Dimension dims[] = {Dimension::bandwidth, Dimension::size, Dimension::time, Dimension::flop_rate,
                            Dimension::frequency, Dimension::power};
  for (double v : values) {
    for (Dimension d : dims) {
      const std::string text = format_quantity(v, d);
      const QuantityParse back = parse_quantity(text, d);
      INFO(text);
      REQUIRE(back.ok());
      CHECK(back.value == v);
    }
  }
}

TEST_CASE("formatting picks the unit datasheets use") {
  CHECK(format_quantity(900e9, Dimension::bandwidth) == "900 GB/s");
  CHECK(format_quantity(85899345920.0, Dimension::size) == "80 GiB");
  CHECK(format_quantity(141e9, Dimension::size) == "141 GB");
  CHECK(format_quantity(1.5e-6, Dimension::time) == "1.5 us");
  CHECK(format_quantity(989.4e12, Dimension::flop_rate) == "989.4 TFLOP/s");
  CHECK(format_quantity(8.0, Dimension::frequency) == "8/s");
  CHECK(format_quantity(700.0, Dimension::power) == "700 W");
}
