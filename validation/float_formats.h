#pragma once
// Decoders from the narrow formats GPUs compute in to float, for checking device outputs on the
// host. Bit layouts:
//   fp16 (IEEE 754 binary16): 1 sign, 5 exponent (bias 15), 10 mantissa; subnormals, inf, NaN.
//   bf16: the top 16 bits of an IEEE binary32.
//   FP8 E4M3 (OCP 8-bit floating point spec v1.0, NVIDIA __nv_fp8_e4m3): 1 sign, 4 exponent
//     (bias 7), 3 mantissa; no infinities; S.1111.111 is NaN; largest finite 448.
//   FP8 E5M2: 1 sign, 5 exponent (bias 15), 2 mantissa; IEEE-like inf and NaN; largest 57344.
// Encoders round to nearest even (fp16, bf16) and are used to build test inputs on the host.

#include <cstdint>

namespace stepcast {

float half_to_float(std::uint16_t bits);
float bfloat16_to_float(std::uint16_t bits);
float e4m3_to_float(std::uint8_t bits);
float e5m2_to_float(std::uint8_t bits);

std::uint16_t float_to_bfloat16(float value);
std::uint16_t float_to_half(float value);

}  // namespace stepcast
