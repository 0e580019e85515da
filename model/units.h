#pragma once
// Strong types for the quantities the model computes with, so that a unit mistake does not compile.
//
// Inside the model everything is SI: seconds, bytes, floating-point operations, and per-second
// rates of those. Conversion from user units ("900 GB/s", "1.5 us", "80 GiB") happens only at the
// edges (the scenario loader and the report writers). Each quantity is a thin wrapper over a
// double: it costs nothing at run time.
//
//   Flops / FlopRate  -> Seconds        Bytes / Bandwidth -> Seconds
//   FlopRate * Seconds -> Flops         Bandwidth * Seconds -> Bytes
//   Flops / Seconds   -> FlopRate       Bytes / Seconds   -> Bandwidth
//   Q / Q             -> double (a ratio)

#include <compare>

namespace stepcast {

template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double value) : m_value(value) {}

  [[nodiscard]] constexpr double value() const { return m_value; }

  constexpr Quantity& operator+=(Quantity other) {
    m_value += other.m_value;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity other) {
    m_value -= other.m_value;
    return *this;
  }
  constexpr Quantity& operator*=(double factor) {
    m_value *= factor;
    return *this;
  }
  constexpr Quantity& operator/=(double divisor) {
    m_value /= divisor;
    return *this;
  }

  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.m_value + b.m_value); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.m_value - b.m_value); }
  friend constexpr Quantity operator-(Quantity a) { return Quantity(-a.m_value); }
  friend constexpr Quantity operator*(Quantity a, double f) { return Quantity(a.m_value * f); }
  friend constexpr Quantity operator*(double f, Quantity a) { return Quantity(a.m_value * f); }
  friend constexpr Quantity operator/(Quantity a, double d) { return Quantity(a.m_value / d); }
  friend constexpr double operator/(Quantity a, Quantity b) { return a.m_value / b.m_value; }
  friend constexpr auto operator<=>(Quantity a, Quantity b) = default;

 private:
  double m_value = 0.0;
};

struct SecondsTag {};
struct BytesTag {};
struct FlopsTag {};
struct FlopRateTag {};
struct BandwidthTag {};

using Seconds = Quantity<SecondsTag>;      // s
using Bytes = Quantity<BytesTag>;          // B
using Flops = Quantity<FlopsTag>;          // floating-point (or integer) operations
using FlopRate = Quantity<FlopRateTag>;    // operations per second
using Bandwidth = Quantity<BandwidthTag>;  // bytes per second

constexpr Seconds operator/(Flops f, FlopRate r) { return Seconds(f.value() / r.value()); }
constexpr Seconds operator/(Bytes b, Bandwidth r) { return Seconds(b.value() / r.value()); }
constexpr Flops operator*(FlopRate r, Seconds t) { return Flops(r.value() * t.value()); }
constexpr Flops operator*(Seconds t, FlopRate r) { return Flops(r.value() * t.value()); }
constexpr Bytes operator*(Bandwidth r, Seconds t) { return Bytes(r.value() * t.value()); }
constexpr Bytes operator*(Seconds t, Bandwidth r) { return Bytes(r.value() * t.value()); }
constexpr FlopRate operator/(Flops f, Seconds t) { return FlopRate(f.value() / t.value()); }
constexpr Bandwidth operator/(Bytes b, Seconds t) { return Bandwidth(b.value() / t.value()); }

constexpr Seconds max(Seconds a, Seconds b) { return a < b ? b : a; }
constexpr Seconds min(Seconds a, Seconds b) { return a < b ? a : b; }
constexpr Bytes max(Bytes a, Bytes b) { return a < b ? b : a; }

// Named constructors for the units people write. Decimal prefixes are powers of 1000 (as
// datasheets and nccl-tests use them); binary ones (KiB, MiB, GiB) powers of 1024.
namespace units {
constexpr double kKilo = 1e3;
constexpr double kMega = 1e6;
constexpr double kGiga = 1e9;
constexpr double kTera = 1e12;
constexpr double kKibi = 1024.0;
constexpr double kMebi = 1024.0 * 1024.0;
constexpr double kGibi = 1024.0 * 1024.0 * 1024.0;

constexpr Seconds seconds(double v) { return Seconds(v); }
constexpr Seconds milliseconds(double v) { return Seconds(v * 1e-3); }
constexpr Seconds microseconds(double v) { return Seconds(v * 1e-6); }
constexpr Seconds nanoseconds(double v) { return Seconds(v * 1e-9); }
constexpr Bytes bytes(double v) { return Bytes(v); }
constexpr Bytes kib(double v) { return Bytes(v * kKibi); }
constexpr Bytes mib(double v) { return Bytes(v * kMebi); }
constexpr Bytes gib(double v) { return Bytes(v * kGibi); }
constexpr Bytes gigabytes(double v) { return Bytes(v * kGiga); }
constexpr Bandwidth gigabytes_per_second(double v) { return Bandwidth(v * kGiga); }
constexpr Bandwidth gigabits_per_second(double v) { return Bandwidth(v * kGiga / 8.0); }
constexpr FlopRate teraflops(double v) { return FlopRate(v * kTera); }
}  // namespace units

}  // namespace stepcast
