#include "core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <stdexcept>
#include <utility>

#include "core/error.hpp"
#include "core/text.hpp"

namespace bitline {

void throw_overflow(std::string_view what, std::string_view how) { throw OverflowError(fmt::format("{} overflow: {}", what, how)); }

namespace {

struct UnitEntry {
  std::string_view name;
  double scale;  // multiply the number by this to get the SI base value
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <size_t N>
double parse_with(std::string_view text, const std::array<UnitEntry, N>& units, std::string_view what, bool unit_required) {
  std::string_view s = trim(text);
  if (s.empty()) throw std::invalid_argument(fmt::format("empty {} value", what));
  // Number prefix.
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == 'e' || s[i] == 'E' ||
                          ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E')))) {
    // Do not eat the 'e' of a unit such as "e" (none here) - but "1e3us" is fine.
    ++i;
  }
  std::string num(s.substr(0, i));
  std::string_view unit = trim(s.substr(i));
  double v = 0;
  std::string accepted;
  for (const auto& u : units) accepted += (accepted.empty() ? "" : ", ") + std::string(u.name);
  if (!parse_decimal_number(num, v))
    throw std::invalid_argument(fmt::format("'{}' is not a {} (expected a number with a unit: {})", text, what, accepted));
  if (unit.empty()) {
    if (unit_required || v != 0) throw std::invalid_argument(fmt::format("'{}' has no unit (a {} needs one of: {})", text, what, accepted));
    return 0.0;
  }
  for (const auto& u : units)
    if (u.name == unit) {
      const double si = v * u.scale;
      if (!std::isfinite(si)) throw std::invalid_argument(fmt::format("'{}' is too large for a {}", text, what));
      return si;
    }
  throw std::invalid_argument(fmt::format("'{}': unknown {} unit '{}' (expected one of: {})", text, what, unit, accepted));
}

constexpr std::array<UnitEntry, 7> kTimeUnits{
    {{"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"µs", 1e-6}, {"ms", 1e-3}, {"s", 1.0}, {"min", 60.0}}};
constexpr std::array<UnitEntry, 11> kByteUnits{{{"B", 1.0},
                                                {"KB", 1e3},
                                                {"MB", 1e6},
                                                {"GB", 1e9},
                                                {"TB", 1e12},
                                                {"KiB", 1024.0},
                                                {"MiB", 1048576.0},
                                                {"GiB", 1073741824.0},
                                                {"TiB", 1099511627776.0},
                                                {"bit", 0.125},
                                                {"b", 0.125}}};
constexpr std::array<UnitEntry, 8> kBandwidthUnits{{{"B/s", 1.0},
                                                    {"KB/s", 1e3},
                                                    {"MB/s", 1e6},
                                                    {"GB/s", 1e9},
                                                    {"TB/s", 1e12},
                                                    {"KiB/s", 1024.0},
                                                    {"MiB/s", 1048576.0},
                                                    {"GiB/s", 1073741824.0}}};
constexpr std::array<UnitEntry, 7> kEnergyUnits{
    {{"fJ", 1e-15}, {"pJ", 1e-12}, {"nJ", 1e-9}, {"uJ", 1e-6}, {"µJ", 1e-6}, {"mJ", 1e-3}, {"J", 1.0}}};
constexpr std::array<UnitEntry, 6> kPowerUnits{{{"nW", 1e-9}, {"uW", 1e-6}, {"µW", 1e-6}, {"mW", 1e-3}, {"W", 1.0}, {"kW", 1e3}}};
constexpr std::array<UnitEntry, 6> kEnergyPerBitUnits{
    {{"fJ/bit", 1e-15}, {"pJ/bit", 1e-12}, {"nJ/bit", 1e-9}, {"pJ/B", 1e-12 / 8}, {"nJ/B", 1e-9 / 8}, {"J/bit", 1.0}}};
constexpr std::array<UnitEntry, 13> kAreaUnits{{{"nm2", 1e-18},
                                                {"nm^2", 1e-18},
                                                {"um2", 1e-12},
                                                {"um^2", 1e-12},
                                                {"µm2", 1e-12},
                                                {"µm^2", 1e-12},
                                                {"mm2", 1e-6},
                                                {"mm^2", 1e-6},
                                                {"cm2", 1e-4},
                                                {"cm^2", 1e-4},
                                                {"m2", 1.0},
                                                {"m^2", 1.0},
                                                {"mm²", 1e-6}}};

}  // namespace

Time parse_time(std::string_view s) {
  double v = parse_with(s, kTimeUnits, "time", false);
  double p = v * 1e12;
  if (std::fabs(p) > 9.0e18)
    throw std::invalid_argument(fmt::format("'{}' is out of the representable time range (at most about 106 days)", s));
  return ps(p);
}

Bytes parse_bytes(std::string_view s) {
  double v = parse_with(s, kByteUnits, "size", false);
  double r = std::round(v);
  // The tolerance absorbs decimal units (0.1KB is 100.00000000000001 B); a non-zero size within it of 0 is not 0 B.
  if (std::fabs(v - r) > 1e-6 * std::max(1.0, std::fabs(v)) || (r == 0 && v != 0))
    throw std::invalid_argument(fmt::format("'{}' is not a whole number of bytes", s));
  if (std::fabs(r) > 9.0e18) throw std::invalid_argument(fmt::format("'{}' is too large", s));
  return Bytes(int64_t(r));
}

Bandwidth parse_bandwidth(std::string_view s) { return Bandwidth(parse_with(s, kBandwidthUnits, "bandwidth", false)); }
Energy parse_energy(std::string_view s) { return Energy(parse_with(s, kEnergyUnits, "energy", false)); }
Power parse_power(std::string_view s) { return Power(parse_with(s, kPowerUnits, "power", false)); }
EnergyPerBit parse_energy_per_bit(std::string_view s) { return EnergyPerBit(parse_with(s, kEnergyPerBitUnits, "energy per bit", false)); }
Area parse_area(std::string_view s) { return Area(parse_with(s, kAreaUnits, "area", false)); }

std::string format(Time t) {
  double p = double(t.raw());
  double a = std::fabs(p);
  if (a >= 1e12) return fmt::format("{:.6g}s", p * 1e-12);
  if (a >= 1e9) return fmt::format("{:.6g}ms", p * 1e-9);
  if (a >= 1e6) return fmt::format("{:.6g}us", p * 1e-6);
  if (a >= 1e3) return fmt::format("{:.6g}ns", p * 1e-3);
  return fmt::format("{}ps", t.raw());
}

std::string format(Bytes b) {
  int64_t v = b.raw();
  const std::pair<int64_t, const char*> units[] = {
      {int64_t(1) << 40, "TiB"}, {int64_t(1) << 30, "GiB"}, {int64_t(1) << 20, "MiB"}, {int64_t(1) << 10, "KiB"}};
  for (auto [sz, name] : units)
    if (v != 0 && v % sz == 0) return fmt::format("{}{}", v / sz, name);
  return fmt::format("{}B", v);
}

std::string format(Bandwidth b) {
  double v = b.raw();
  if (std::fabs(v) >= 1e12) return fmt::format("{:.6g}TB/s", v * 1e-12);
  if (std::fabs(v) >= 1e9) return fmt::format("{:.6g}GB/s", v * 1e-9);
  if (std::fabs(v) >= 1e6) return fmt::format("{:.6g}MB/s", v * 1e-6);
  return fmt::format("{:.6g}B/s", v);
}

std::string format(Energy e) {
  double v = e.raw(), a = std::fabs(v);
  if (a >= 1 || a == 0) return fmt::format("{:.6g}J", v);
  if (a >= 1e-3) return fmt::format("{:.6g}mJ", v * 1e3);
  if (a >= 1e-6) return fmt::format("{:.6g}uJ", v * 1e6);
  if (a >= 1e-9) return fmt::format("{:.6g}nJ", v * 1e9);
  return fmt::format("{:.6g}pJ", v * 1e12);
}

std::string format(Power p) {
  double v = p.raw(), a = std::fabs(v);
  if (a >= 1 || a == 0) return fmt::format("{:.6g}W", v);
  if (a >= 1e-3) return fmt::format("{:.6g}mW", v * 1e3);
  return fmt::format("{:.6g}uW", v * 1e6);
}

std::string format(EnergyPerBit e) { return fmt::format("{:.6g}pJ/bit", e.raw() * 1e12); }

std::string format(Area a) {
  double v = a.raw(), m = std::fabs(v);
  if (m >= 1e-9 || m == 0) return fmt::format("{:.6g}mm2", v * 1e6);
  if (m >= 1e-15) return fmt::format("{:.6g}um2", v * 1e12);
  return fmt::format("{:.6g}nm2", v * 1e18);
}

}  // namespace bitline
