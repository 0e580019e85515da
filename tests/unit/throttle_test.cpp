#include <doctest/doctest.h>

#include "validation/throttle.h"

using namespace stepcast;

TEST_CASE("a sample is throttled below 75 percent of the reference clock") {
  // H100 SXM's default boost clock is 1980 MHz: 0.75 x 1980 = 1485 MHz is the threshold.
  CHECK(is_throttled(1400.0, 1980.0, 0.75));
  CHECK_FALSE(is_throttled(1485.0, 1980.0, 0.75));
  CHECK_FALSE(is_throttled(1755.0, 1980.0, 0.75));
  // Unknown clocks (0) never count as throttled.
  CHECK_FALSE(is_throttled(0.0, 1980.0, 0.75));
  CHECK_FALSE(is_throttled(1000.0, 0.0, 0.75));
}

TEST_CASE("the recovery pause grows after repeated throttled samples") {
  ThrottleMonitor m(ThrottleRule{}, 1980.0);
  // First three throttled samples keep the 50 ms pause; the fourth grows it by min(1.5 x 0.05, 0.5).
  CHECK(m.should_discard(1000.0));
  CHECK(m.should_discard(1000.0));
  CHECK(m.should_discard(1000.0));
  CHECK(m.pause().value() == doctest::Approx(0.05));
  CHECK(m.should_discard(1000.0));
  CHECK(m.pause().value() == doctest::Approx(0.05 + 0.075));
  CHECK(m.discarded() == 4);
  // A healthy sample is kept and resets the run of throttled ones (not the grown pause).
  CHECK_FALSE(m.should_discard(1900.0));
  CHECK(m.discarded() == 4);
}
