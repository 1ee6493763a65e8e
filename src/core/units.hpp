// Typed physical quantities: time, bytes, bandwidth, energy, power, energy per bit.
//
// Time is an integer number of picoseconds so that event ordering is exact and
// results are bit-for-bit reproducible; the other quantities are doubles in SI
// base units (bytes, bytes/s, joules, watts, joules/bit). Mixed operations that
// have a physical meaning are provided (bytes / bandwidth = time, power * time =
// energy, ...); everything else does not compile.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace bitline {

template <class Tag, class Rep>
class Quantity {
 public:
  using rep = Rep;
  constexpr Quantity() = default;
  constexpr explicit Quantity(Rep v) : v_(v) {}
  constexpr Rep raw() const { return v_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(v_ + o.v_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(v_ - o.v_); }
  constexpr Quantity& operator+=(Quantity o) { v_ += o.v_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { v_ -= o.v_; return *this; }
  constexpr double operator/(Quantity o) const { return double(v_) / double(o.v_); }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  Rep v_{};
};

template <class T, class R>
constexpr Quantity<T, R> operator*(Quantity<T, R> q, double k) {
  if constexpr (std::is_integral_v<R>) return Quantity<T, R>(R(std::llround(double(q.raw()) * k)));
  else return Quantity<T, R>(q.raw() * k);
}
template <class T, class R>
constexpr Quantity<T, R> operator*(double k, Quantity<T, R> q) { return q * k; }

struct TimeTag {};
struct BytesTag {};
struct BandwidthTag {};
struct EnergyTag {};
struct PowerTag {};
struct EnergyPerBitTag {};

/// Simulated time, integer picoseconds.
using Time = Quantity<TimeTag, int64_t>;
/// A size in bytes.
using Bytes = Quantity<BytesTag, int64_t>;
/// Bytes per second.
using Bandwidth = Quantity<BandwidthTag, double>;
/// Joules.
using Energy = Quantity<EnergyTag, double>;
/// Watts.
using Power = Quantity<PowerTag, double>;
/// Joules per bit moved or sensed.
using EnergyPerBit = Quantity<EnergyPerBitTag, double>;

// Constructors with units.
constexpr Time ps(double v) { return Time(int64_t(std::llround(v))); }
constexpr Time ns(double v) { return ps(v * 1e3); }
constexpr Time us(double v) { return ps(v * 1e6); }
constexpr Time ms(double v) { return ps(v * 1e9); }
constexpr Time sec(double v) { return ps(v * 1e12); }
constexpr double to_s(Time t) { return double(t.raw()) * 1e-12; }
constexpr double to_us(Time t) { return double(t.raw()) * 1e-6; }
constexpr double to_ns(Time t) { return double(t.raw()) * 1e-3; }

constexpr Bytes bytes(int64_t v) { return Bytes(v); }
constexpr Bytes KiB(int64_t v) { return Bytes(v << 10); }
constexpr Bytes MiB(int64_t v) { return Bytes(v << 20); }
constexpr Bytes GiB(int64_t v) { return Bytes(v << 30); }
constexpr int64_t to_bits(Bytes b) { return b.raw() * 8; }

constexpr Bandwidth bytes_per_s(double v) { return Bandwidth(v); }
constexpr Bandwidth GBps(double v) { return Bandwidth(v * 1e9); }
constexpr Energy joules(double v) { return Energy(v); }
constexpr Energy pJ(double v) { return Energy(v * 1e-12); }
constexpr Power watts(double v) { return Power(v); }
constexpr Power mW(double v) { return Power(v * 1e-3); }
constexpr EnergyPerBit pJ_per_bit(double v) { return EnergyPerBit(v * 1e-12); }

// Physically meaningful mixed operations.
/// Time to move `b` at bandwidth `bw`, rounded up to a whole picosecond.
inline Time operator/(Bytes b, Bandwidth bw) {
  return Time(int64_t(std::ceil(double(b.raw()) / bw.raw() * 1e12 - 1e-6)));
}
inline Bandwidth operator/(Bytes b, Time t) { return Bandwidth(double(b.raw()) / to_s(t)); }
inline Energy operator*(Power p, Time t) { return Energy(p.raw() * to_s(t)); }
inline Energy operator*(Time t, Power p) { return p * t; }
inline Energy operator*(EnergyPerBit e, Bytes b) { return Energy(e.raw() * double(to_bits(b))); }
inline Power operator/(Energy e, Time t) { return Power(e.raw() / to_s(t)); }

// ---- Parsing and printing with units --------------------------------------
// Each parser accepts "<number><unit>" with optional whitespace, e.g. "22.5us",
// "16 KiB", "1.2GB/s", "8pJ/bit", "82.5mW". It throws std::invalid_argument with
// a message that lists the accepted units.
Time parse_time(std::string_view s);
Bytes parse_bytes(std::string_view s);
Bandwidth parse_bandwidth(std::string_view s);
Energy parse_energy(std::string_view s);
Power parse_power(std::string_view s);
EnergyPerBit parse_energy_per_bit(std::string_view s);

std::string format(Time t);
std::string format(Bytes b);
std::string format(Bandwidth b);
std::string format(Energy e);
std::string format(Power p);
std::string format(EnergyPerBit e);

// Unit names as shown by `bitline describe` and in the resolved-config JSON.
template <class Q> constexpr std::string_view unit_name();
template <> constexpr std::string_view unit_name<Time>() { return "time"; }
template <> constexpr std::string_view unit_name<Bytes>() { return "bytes"; }
template <> constexpr std::string_view unit_name<Bandwidth>() { return "bandwidth"; }
template <> constexpr std::string_view unit_name<Energy>() { return "energy"; }
template <> constexpr std::string_view unit_name<Power>() { return "power"; }
template <> constexpr std::string_view unit_name<EnergyPerBit>() { return "energy/bit"; }

}  // namespace bitline
