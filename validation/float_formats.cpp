#include "validation/float_formats.h"

#include <bit>
#include <cmath>
#include <limits>

namespace stepcast {

namespace {

// A float with the given sign from a magnitude mantissa * 2^exponent (exact for these formats).
float signed_value(bool negative, double magnitude) {
  const auto f = static_cast<float>(magnitude);
  return negative ? -f : f;
}

// Decodes a small binary float: `exp_bits` exponent bits with `bias`, `man_bits` mantissa bits.
float decode_minifloat(std::uint32_t bits, int exp_bits, int man_bits, int bias) {
  const bool negative = (bits >> (exp_bits + man_bits)) & 1U;
  const std::uint32_t exponent = (bits >> man_bits) & ((1U << exp_bits) - 1U);
  const std::uint32_t mantissa = bits & ((1U << man_bits) - 1U);
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^(1 - bias - man_bits)
    return signed_value(negative, std::ldexp(static_cast<double>(mantissa), 1 - bias - man_bits));
  }
  const double significand = 1.0 + std::ldexp(static_cast<double>(mantissa), -man_bits);
  return signed_value(negative, std::ldexp(significand, static_cast<int>(exponent) - bias));
}

}  // namespace

float half_to_float(std::uint16_t bits) {
  const std::uint32_t exponent = (bits >> 10) & 0x1FU;
  if (exponent == 0x1F) {
    if ((bits & 0x3FFU) != 0) return std::numeric_limits<float>::quiet_NaN();
    return (bits & 0x8000U) ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  return decode_minifloat(bits, 5, 10, 15);
}

float bfloat16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

float e4m3_to_float(std::uint8_t bits) {
  if ((bits & 0x7FU) == 0x7FU) return std::numeric_limits<float>::quiet_NaN();  // S.1111.111
  return decode_minifloat(bits, 4, 3, 7);
}

float e5m2_to_float(std::uint8_t bits) {
  const std::uint32_t exponent = (bits >> 2) & 0x1FU;
  if (exponent == 0x1F) {
    if ((bits & 0x3U) != 0) return std::numeric_limits<float>::quiet_NaN();
    return (bits & 0x80U) ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  return decode_minifloat(bits, 5, 2, 15);
}

std::uint16_t float_to_bfloat16(float value) {
  const auto u = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((u >> 16) | 0x40U);  // keep it a quiet NaN
  const std::uint32_t rounding = 0x7FFFU + ((u >> 16) & 1U);                     // round to nearest even
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

std::uint16_t float_to_half(float value) {
  const auto u = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (u >> 16) & 0x8000U;
  const std::uint32_t abs = u & 0x7FFFFFFFU;
  if (abs >= 0x7F800000U) return static_cast<std::uint16_t>(sign | 0x7C00U | (abs > 0x7F800000U ? 0x200U : 0U));
  if (abs >= 0x477FF000U) return static_cast<std::uint16_t>(sign | 0x7C00U);  // rounds past 65504: inf
  const int exponent = static_cast<int>(abs >> 23) - 127;
  if (exponent < -24) {
    // Below half the smallest subnormal (2^-25) rounds to zero; exactly 2^-25 rounds to even (0).
    if (exponent == -25 && (abs & 0x7FFFFFU) != 0) return static_cast<std::uint16_t>(sign | 1U);
    return static_cast<std::uint16_t>(sign);
  }
  std::uint32_t mantissa = (abs & 0x7FFFFFU) | 0x800000U;  // 24-bit significand with the implicit 1
  int shift = 13;                                          // 23 -> 10 mantissa bits
  std::uint32_t half_exponent = static_cast<std::uint32_t>(exponent + 15);
  if (exponent < -14) {  // subnormal half: shift further right
    shift += -14 - exponent;
    half_exponent = 0;
  }
  const std::uint32_t kept = mantissa >> shift;
  const std::uint32_t rest = mantissa & ((1U << shift) - 1U);
  const std::uint32_t halfway = 1U << (shift - 1);
  std::uint32_t result = (half_exponent << 10) + (half_exponent == 0 ? kept : (kept & 0x3FFU));
  if (rest > halfway || (rest == halfway && (kept & 1U))) ++result;  // carries into the exponent as needed
  return static_cast<std::uint16_t>(sign | result);
}

}  // namespace stepcast
