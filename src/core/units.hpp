// Typed physical quantities: time, bytes, bandwidth, energy, power, energy per bit, area.
//
// Time is an integer number of picoseconds so that event ordering is exact and
// results are bit-for-bit reproducible; the other quantities are doubles in SI
// base units (bytes, bytes/s, joules, watts, joules/bit, square metres). Mixed operations that
// have a physical meaning are provided (bytes / bandwidth = time, power * time =
// energy, ...); everything else does not compile.
//
// Arithmetic is checked: a time or size past 2^63 (about 106 days of picoseconds,
// 8 EiB), or a non-finite energy, power or bandwidth, throws OverflowError
// (core/error.hpp) naming the quantity, never wraps or turns into infinity.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace bitline {

/// Throws OverflowError: "`what` overflow: `how`" (kept out of line so that the header needs no error types).
[[noreturn]] void throw_overflow(std::string_view what, std::string_view how);

/// Largest magnitude of an integer quantity as a double that converts to int64 safely (just below 2^63).
inline constexpr double kMaxIntQuantity = 9.2e18;

/// a * b and a + b on int64 counts (tokens, blocks, bytes); OverflowError naming `what` past 2^63.
constexpr int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw_overflow(what, "a product past 2^63");
  return r;
}
constexpr int64_t checked_add(int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw_overflow(what, "a sum past 2^63");
  return r;
}

template <class Tag, class Rep>
class Quantity {
 public:
  using rep = Rep;
  constexpr Quantity() = default;
  constexpr explicit Quantity(Rep v) : v_(v) {}
  constexpr Rep raw() const { return v_; }

  constexpr Quantity operator+(Quantity o) const {
    Rep r{};
    if constexpr (std::is_integral_v<Rep>) {
      if (__builtin_add_overflow(v_, o.v_, &r)) throw_overflow(Tag::name, Tag::range);
    } else {
      r = v_ + o.v_;
      if (!std::isfinite(r)) throw_overflow(Tag::name, "a sum that is not finite");
    }
    return Quantity(r);
  }
  constexpr Quantity operator-(Quantity o) const {
    Rep r{};
    if constexpr (std::is_integral_v<Rep>) {
      if (__builtin_sub_overflow(v_, o.v_, &r)) throw_overflow(Tag::name, Tag::range);
    } else {
      r = v_ - o.v_;
      if (!std::isfinite(r)) throw_overflow(Tag::name, "a difference that is not finite");
    }
    return Quantity(r);
  }
  constexpr Quantity& operator+=(Quantity o) { return *this = *this + o; }
  constexpr Quantity& operator-=(Quantity o) { return *this = *this - o; }
  constexpr double operator/(Quantity o) const { return double(v_) / double(o.v_); }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  Rep v_{};
};

template <class T, class R>
constexpr Quantity<T, R> operator*(Quantity<T, R> q, double k) {
  if constexpr (std::is_integral_v<R>) {
    const double r = std::round(double(q.raw()) * k);
    if (!(std::fabs(r) < kMaxIntQuantity)) throw_overflow(T::name, T::range);
    return Quantity<T, R>(R(r));
  } else {
    const R r = q.raw() * k;
    if (!std::isfinite(r)) throw_overflow(T::name, "a product that is not finite");
    return Quantity<T, R>(r);
  }
}
template <class T, class R>
constexpr Quantity<T, R> operator*(double k, Quantity<T, R> q) {
  return q * k;
}

struct TimeTag {
  static constexpr const char* name = "time";
  static constexpr const char* range = "past 2^63 ps (about 106 days of simulated time)";
};
struct BytesTag {
  static constexpr const char* name = "size";
  static constexpr const char* range = "past 2^63 bytes";
};
struct BandwidthTag {
  static constexpr const char* name = "bandwidth";
};
struct EnergyTag {
  static constexpr const char* name = "energy";
};
struct PowerTag {
  static constexpr const char* name = "power";
};
struct EnergyPerBitTag {
  static constexpr const char* name = "energy per bit";
};
struct AreaTag {
  static constexpr const char* name = "area";
};

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
/// Square metres of silicon (die and component areas).
using Area = Quantity<AreaTag, double>;

// Constructors with units.
constexpr Time ps(double v) {
  if (!(std::fabs(v) < kMaxIntQuantity)) throw_overflow("time", TimeTag::range);
  return Time(int64_t(std::llround(v)));
}
constexpr Time ns(double v) { return ps(v * 1e3); }
constexpr Time us(double v) { return ps(v * 1e6); }
constexpr Time ms(double v) { return ps(v * 1e9); }
constexpr Time sec(double v) { return ps(v * 1e12); }
constexpr double to_s(Time t) { return double(t.raw()) * 1e-12; }
constexpr double to_us(Time t) { return double(t.raw()) * 1e-6; }
constexpr double to_ns(Time t) { return double(t.raw()) * 1e-3; }

constexpr Bytes bytes(int64_t v) { return Bytes(v); }
constexpr Bytes KiB(int64_t v) { return Bytes(checked_mul(v, int64_t(1) << 10, "size")); }
constexpr Bytes MiB(int64_t v) { return Bytes(checked_mul(v, int64_t(1) << 20, "size")); }
constexpr Bytes GiB(int64_t v) { return Bytes(checked_mul(v, int64_t(1) << 30, "size")); }
constexpr int64_t to_bits(Bytes b) { return checked_mul(b.raw(), 8, "size in bits"); }

constexpr Bandwidth bytes_per_s(double v) { return Bandwidth(v); }
constexpr Bandwidth GBps(double v) { return Bandwidth(v * 1e9); }
constexpr Energy joules(double v) { return Energy(v); }
constexpr Energy pJ(double v) { return Energy(v * 1e-12); }
constexpr Power watts(double v) { return Power(v); }
constexpr Power mW(double v) { return Power(v * 1e-3); }
constexpr EnergyPerBit pJ_per_bit(double v) { return EnergyPerBit(v * 1e-12); }
constexpr Area mm2(double v) { return Area(v * 1e-6); }
constexpr Area um2(double v) { return Area(v * 1e-12); }
constexpr double to_mm2(Area a) { return a.raw() * 1e6; }

// Physically meaningful mixed operations.
/// Time to move `b` at bandwidth `bw`, rounded up to a whole picosecond.
inline Time operator/(Bytes b, Bandwidth bw) {
  const double t = std::ceil(double(b.raw()) / bw.raw() * 1e12 - 1e-6);
  if (!(std::fabs(t) < kMaxIntQuantity)) throw_overflow("time", TimeTag::range);
  return Time(int64_t(t));
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
/// "68.04mm2", "0.021um2" (also mm^2, um^2, µm2, nm2, cm2, m2).
Area parse_area(std::string_view s);

std::string format(Time t);
std::string format(Bytes b);
std::string format(Bandwidth b);
std::string format(Energy e);
std::string format(Power p);
std::string format(EnergyPerBit e);
std::string format(Area a);

// Unit names as shown by `bitline describe` and in the resolved-config JSON.
template <class Q>
constexpr std::string_view unit_name();
template <>
constexpr std::string_view unit_name<Time>() {
  return "time";
}
template <>
constexpr std::string_view unit_name<Bytes>() {
  return "bytes";
}
template <>
constexpr std::string_view unit_name<Bandwidth>() {
  return "bandwidth";
}
template <>
constexpr std::string_view unit_name<Energy>() {
  return "energy";
}
template <>
constexpr std::string_view unit_name<Power>() {
  return "power";
}
template <>
constexpr std::string_view unit_name<EnergyPerBit>() {
  return "energy/bit";
}
template <>
constexpr std::string_view unit_name<Area>() {
  return "area";
}

}  // namespace bitline
