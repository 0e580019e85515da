#include "simulator/quantity_parse.h"

#include <array>
#include <charconv>
#include <cmath>
#include <vector>

#include "simulator/diagnostics.h"

namespace stepcast {
namespace {

struct UnitDef {
  std::string text;
  double factor;  // SI value of one unit
  Dimension dimension;
};

constexpr double kK = 1e3, kM = 1e6, kG = 1e9, kT = 1e12, kP = 1e15, kE = 1e18;
constexpr double kKi = 1024.0, kMi = kKi * 1024.0, kGi = kMi * 1024.0, kTi = kGi * 1024.0, kPi = kTi * 1024.0;

// Every unit spelling accepted. Formatting prefers the first entry of a dimension whose value
// reads well (see format_quantity), so each dimension lists its preferred spellings first.
const std::vector<UnitDef>& unit_table() {
  static const std::vector<UnitDef> table = [] {
    std::vector<UnitDef> t;
    // Sizes: bytes with decimal and binary prefixes.
    const std::array<std::pair<std::string_view, double>, 13> bytes = {{{"B", 1.0},
                                                                         {"kB", kK},
                                                                         {"KB", kK},
                                                                         {"MB", kM},
                                                                         {"GB", kG},
                                                                         {"TB", kT},
                                                                         {"PB", kP},
                                                                         {"KiB", kKi},
                                                                         {"MiB", kMi},
                                                                         {"GiB", kGi},
                                                                         {"TiB", kTi},
                                                                         {"PiB", kPi},
                                                                         {"bytes", 1.0}}};
    for (const auto& [u, f] : bytes) t.push_back({std::string(u), f, Dimension::size});
    // Bandwidths: bytes per second, and bits per second (network links).
    const std::array<std::string_view, 12> byte_rates = {"B/s",   "kB/s",  "KB/s",  "MB/s",  "GB/s",  "TB/s",
                                                           "PB/s",  "KiB/s", "MiB/s", "GiB/s", "TiB/s", "PiB/s"};
    const std::array<double, 12> byte_rate_factors = {1.0, kK, kK, kM, kG, kT, kP, kKi, kMi, kGi, kTi, kPi};
    for (std::size_t i = 0; i < byte_rates.size(); ++i) {
      t.push_back({std::string(byte_rates[i]), byte_rate_factors[i], Dimension::bandwidth});
    }
    const std::array<std::pair<std::string_view, double>, 10> bit_rates = {{{"b/s", 1.0 / 8},
                                                                            {"kb/s", kK / 8},
                                                                            {"Kb/s", kK / 8},
                                                                            {"Mb/s", kM / 8},
                                                                            {"Gb/s", kG / 8},
                                                                            {"Tb/s", kT / 8},
                                                                            {"bit/s", 1.0 / 8},
                                                                            {"kbit/s", kK / 8},
                                                                            {"Mbit/s", kM / 8},
                                                                            {"Gbit/s", kG / 8}}};
    for (const auto& [u, f] : bit_rates) t.push_back({std::string(u), f, Dimension::bandwidth});
    // Durations.
    const std::array<std::pair<std::string_view, double>, 8> times = {{{"s", 1.0},
                                                                       {"ms", 1e-3},
                                                                       {"us", 1e-6},
                                                                       {"ns", 1e-9},
                                                                       {"min", 60.0},
                                                                       {"h", 3600.0},
                                                                       {"\xC2\xB5s", 1e-6},  // µs
                                                                       {"d", 86400.0}}};
    for (const auto& [u, f] : times) t.push_back({std::string(u), f, Dimension::time});
    // Compute rates and operation counts (FLOP for floating point, OP for integer formats).
    const std::array<std::pair<std::string_view, double>, 7> prefixes = {
        {{"", 1.0}, {"K", kK}, {"M", kM}, {"G", kG}, {"T", kT}, {"P", kP}, {"E", kE}}};
    for (const auto& [p, f] : prefixes) {
      for (std::string_view suffix : {"FLOP/s", "FLOPS", "OP/s", "OPS"}) {
        t.push_back({std::string(p) + std::string(suffix), f, Dimension::flop_rate});
      }
      for (std::string_view suffix : {"FLOP", "OP"}) {
        t.push_back({std::string(p) + std::string(suffix), f, Dimension::flops});
      }
    }
    // Event rates and power.
    t.push_back({"/s", 1.0, Dimension::frequency});
    t.push_back({"/min", 1.0 / 60.0, Dimension::frequency});
    t.push_back({"/h", 1.0 / 3600.0, Dimension::frequency});
    t.push_back({"W", 1.0, Dimension::power});
    t.push_back({"kW", kK, Dimension::power});
    return t;
  }();
  return table;
}

// Units format_quantity may choose, in order of preference, per dimension: the first whose value
// is >= 1 and short wins, so bandwidths read in GB/s and compute rates in TFLOP/s, as datasheets
// quote them.
std::vector<std::pair<std::string_view, double>> format_units(Dimension d) {
  switch (d) {
    case Dimension::size:
      return {{"TiB", kTi}, {"TB", kT}, {"GiB", kGi}, {"GB", kG}, {"MiB", kMi},
              {"MB", kM},   {"KiB", kKi}, {"kB", kK},  {"B", 1.0}};
    case Dimension::bandwidth:
      return {{"GB/s", kG}, {"MB/s", kM}, {"kB/s", kK}, {"B/s", 1.0}};
    case Dimension::time:
      return {{"h", 3600.0}, {"min", 60.0}, {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
    case Dimension::flop_rate:
      return {{"TFLOP/s", kT}, {"GFLOP/s", kG}, {"MFLOP/s", kM}, {"FLOP/s", 1.0}};
    case Dimension::flops:
      return {{"PFLOP", kP}, {"TFLOP", kT}, {"GFLOP", kG}, {"MFLOP", kM}, {"FLOP", 1.0}};
    case Dimension::frequency:
      return {{"/s", 1.0}};
    case Dimension::power:
      return {{"W", 1.0}};
  }
  return {};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string expected_text(Dimension d) {
  return "expected " + std::string(dimension_name(d)) + " with a unit, e.g. " + std::string(dimension_examples(d));
}

}  // namespace

std::string_view dimension_name(Dimension d) {
  switch (d) {
    case Dimension::time: return "a duration";
    case Dimension::size: return "a size in bytes";
    case Dimension::bandwidth: return "a bandwidth";
    case Dimension::flop_rate: return "a compute rate";
    case Dimension::flops: return "an operation count";
    case Dimension::frequency: return "a rate per unit time";
    case Dimension::power: return "a power";
  }
  return "a quantity";
}

std::string_view dimension_examples(Dimension d) {
  switch (d) {
    case Dimension::time: return "\"1.5 us\" or \"500 ms\"";
    case Dimension::size: return "\"80 GiB\" or \"141 GB\"";
    case Dimension::bandwidth: return "\"900 GB/s\" or \"400 Gb/s\"";
    case Dimension::flop_rate: return "\"989.4 TFLOP/s\" or \"2.5 PFLOP/s\"";
    case Dimension::flops: return "\"3.1 PFLOP\" or \"120 TFLOP\"";
    case Dimension::frequency: return "\"8/s\" or \"30/min\"";
    case Dimension::power: return "\"700 W\" or \"1.2 kW\"";
  }
  return "";
}

QuantityParse parse_quantity(std::string_view text, Dimension expected) {
  QuantityParse out;
  const std::string_view s = trim(text);
  std::string quoted(1, '"');  // built by appending: GCC 12 warns falsely on "\"" + std::string
  quoted.append(text);
  quoted.push_back('"');

  // The number: optional sign, digits, fraction, exponent (std::from_chars general format).
  double number = 0.0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (!s.empty() && s.front() == '+') ++begin;
  const auto [ptr, ec] = std::from_chars(begin, end, number, std::chars_format::general);
  if (ec != std::errc() || s.empty()) {
    out.error = expected_text(expected) + ", found " + quoted;
    return out;
  }
  if (!std::isfinite(number)) {
    out.error = expected_text(expected) + ", found " + quoted;
    return out;
  }
  const std::string_view unit = trim(std::string_view(ptr, static_cast<std::size_t>(end - ptr)));
  if (unit.empty()) {
    out.error = expected_text(expected) + ", found the bare number " + std::string(s);
    return out;
  }
  std::vector<std::string> same_dimension;
  std::vector<std::string> all_units;
  for (const UnitDef& u : unit_table()) {
    if (u.text == unit) {
      if (u.dimension != expected) {
        out.error = expected_text(expected) + ", found " + quoted + ", which is " +
                    std::string(dimension_name(u.dimension));
        return out;
      }
      out.value = number * u.factor;
      return out;
    }
    all_units.push_back(u.text);
    if (u.dimension == expected) same_dimension.push_back(u.text);
  }
  out.error = "unknown unit '" + std::string(unit) + "' in " + quoted + "; " + expected_text(expected);
  std::string near = closest_match(std::string(unit), same_dimension);
  if (near.empty()) near = closest_match(std::string(unit), all_units);
  if (!near.empty()) out.suggestion = "did you mean '" + near + "'?";
  return out;
}

namespace {
double parse_or_throw(std::string_view text, Dimension d) {
  QuantityParse q = parse_quantity(text, d);
  if (!q.ok()) {
    throw InputError(q.suggestion.empty() ? q.error : q.error + "; " + q.suggestion);
  }
  return q.value;
}
}  // namespace

Seconds parse_seconds(std::string_view text) { return Seconds(parse_or_throw(text, Dimension::time)); }
Bytes parse_bytes(std::string_view text) { return Bytes(parse_or_throw(text, Dimension::size)); }
Bandwidth parse_bandwidth(std::string_view text) { return Bandwidth(parse_or_throw(text, Dimension::bandwidth)); }
FlopRate parse_flop_rate(std::string_view text) { return FlopRate(parse_or_throw(text, Dimension::flop_rate)); }
Flops parse_flops(std::string_view text) { return Flops(parse_or_throw(text, Dimension::flops)); }
double parse_per_second(std::string_view text) { return parse_or_throw(text, Dimension::frequency); }
double parse_watts(std::string_view text) { return parse_or_throw(text, Dimension::power); }

std::string format_number(double value) {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

std::string thousands(unsigned long long n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_quantity(double si_value, Dimension d) {
  const auto compose = [d](const std::string& number, std::string_view unit) {
    return d == Dimension::frequency ? number + std::string(unit) : number + " " + std::string(unit);
  };
  const auto reads_back = [&](const std::string& text) {
    const QuantityParse q = parse_quantity(text, d);
    return q.ok() && q.value == si_value;
  };
  if (si_value != 0.0 && std::isfinite(si_value)) {
    // First choice: the first preferred unit giving a short number >= 1 ("900 GB/s").
    std::string shortest;
    for (const auto& [unit, factor] : format_units(d)) {
      const std::string number = format_number(si_value / factor);
      if (number.size() > 9 || number.find('e') != std::string::npos) continue;
      const std::string text = compose(number, unit);
      if (!reads_back(text)) continue;
      if (std::fabs(si_value / factor) >= 1.0) return text;
      // Otherwise remember the shortest exact spelling below 1 ("0.6 us").
      if (shortest.empty() || text.size() < shortest.size()) shortest = text;
    }
    if (!shortest.empty()) return shortest;
  }
  // Exact fallback in the SI base unit.
  for (const auto& [unit, factor] : format_units(d)) {
    if (factor == 1.0) return compose(format_number(si_value), unit);
  }
  return format_number(si_value);
}

}  // namespace stepcast
