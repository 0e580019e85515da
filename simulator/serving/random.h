#pragma once
// Seeded random numbers for the serving simulator, identical on every platform.
//
// The standard library's distributions (std::normal_distribution, std::gamma_distribution, ...)
// are specified by their results, not their algorithms, so libstdc++, libc++ and MSVC draw
// different numbers from the same engine and seed. Everything here is our own, with the
// algorithm named, so a scenario's seed gives the same requests everywhere (IEEE-754 doubles and
// a libm with correctly rounded log/exp/sqrt/cos, as glibc's are in practice):
//
//   SplitMix64     Steele, Lea, Flood 2014 (the public-domain reference of Vigna, splitmix64.c):
//                  expands the 64-bit seed into the generator's state.
//   xoshiro256**   Blackman & Vigna 2018 ("Scrambled linear pseudorandom number generators",
//                  the public-domain reference xoshiro256starstar.c).
//   uniform01      the top 53 bits of a draw times 2^-53: [0, 1).
//   exponential    inversion, -log(1 - u).
//   normal         Box-Muller (one value per pair of uniforms; the sine partner is discarded so
//                  that a draw never depends on an earlier one).
//   gamma          Marsaglia & Tsang 2000 ("A simple method for generating gamma variables",
//                  ACM TOMS 26(3)); shape < 1 by Gamma(k + 1) U^(1/k) (ibid., Sec. 6).

#include <cmath>
#include <cstdint>
#include <numbers>

namespace stepcast::serving {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t m_state;
};

class Random {
 public:
  explicit Random(std::uint64_t seed) {
    SplitMix64 init(seed);
    for (auto& word : m_s) word = init.next();
  }

  // xoshiro256**.
  std::uint64_t next() {
    const std::uint64_t result = rotl(m_s[1] * 5, 7) * 9;
    const std::uint64_t t = m_s[1] << 17;
    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3] = rotl(m_s[3], 45);
    return result;
  }

  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  double exponential(double mean) { return -mean * std::log1p(-uniform01()); }
  double normal() {
    const double u1 = 1.0 - uniform01();  // (0, 1]: log is finite
    const double u2 = uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  // Gamma with shape k and scale theta (mean k theta).
  double gamma(double k, double theta) {
    if (k < 1.0) {
      const double u = 1.0 - uniform01();
      return gamma(k + 1.0, theta) * std::pow(u, 1.0 / k);
    }
    const double d = k - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x = 0.0;
      double v = 0.0;
      do {
        x = normal();
        v = 1.0 + c * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = uniform01();
      if (u < 1.0 - 0.0331 * x * x * x * x) return d * v * theta;
      if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v * theta;
    }
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t m_s[4]{};
};

}  // namespace stepcast::serving
