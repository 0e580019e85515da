#pragma once
// Quantities written with their unit, as in scenario and catalog files: "900 GB/s", "400 Gb/s",
// "80 GiB", "141 GB", "1.5 us", "500 ms", "8/s", "989.4 TFLOP/s", "2.5 PFLOP/s", "700 W".
//
// A quantity is a decimal number, optional spaces, and a unit. Decimal prefixes (k, M, G, T, P)
// are powers of 1000, binary ones (KiB, MiB, GiB, TiB, PiB) powers of 1024. `B` is a byte and
// `b` (or `bit`) a bit: "400 Gb/s" is 50e9 bytes per second. Units are case-sensitive where case
// carries meaning (MB vs Mb); "KB" and "kB" both mean 1000 bytes. Results are SI: seconds, bytes,
// bytes/s, FLOP/s, operations, 1/s, watts.
//
// A bare number where a dimensioned quantity is expected is an error, and so is a unit of
// another dimension; the error text names the expected dimension with examples.

#include <string>
#include <string_view>

#include "model/units.h"

namespace stepcast {

enum class Dimension { time, size, bandwidth, flop_rate, flops, frequency, power };

// "a bandwidth", "a size in bytes", ...
std::string_view dimension_name(Dimension d);
// Two examples in quotes, e.g. "900 GB/s" or "400 Gb/s".
std::string_view dimension_examples(Dimension d);

struct QuantityParse {
  double value = 0.0;       // SI value when ok()
  std::string error;        // what is wrong, without location; empty when ok()
  std::string suggestion;   // "did you mean 'GB/s'?" for a misspelt unit; may be empty
  [[nodiscard]] bool ok() const { return error.empty(); }
};

// Parses `text` as a quantity of dimension `expected`. Never throws.
QuantityParse parse_quantity(std::string_view text, Dimension expected);

// Convenience forms that throw InputError (simulator/diagnostics.h) with the parse error.
Seconds parse_seconds(std::string_view text);
Bytes parse_bytes(std::string_view text);
Bandwidth parse_bandwidth(std::string_view text);
FlopRate parse_flop_rate(std::string_view text);
Flops parse_flops(std::string_view text);
double parse_per_second(std::string_view text);  // "8/s" -> 8.0
double parse_watts(std::string_view text);       // "700 W" -> 700.0

// Writes an SI value with a readable unit, e.g. 9e11 bytes/s -> "900 GB/s", 85899345920 bytes ->
// "80 GiB". parse_quantity() of the result gives back exactly `si_value` (same double).
std::string format_quantity(double si_value, Dimension d);

// The shortest decimal text that reads back as exactly `value`.
std::string format_number(double value);

// A count with a comma between each group of three digits, for people: 1234567 -> "1,234,567".
std::string thousands(unsigned long long n);

}  // namespace stepcast
