// Typed quantities: unit-aware parsing, rejects, mixed operations, printing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ostream>
#include <stdexcept>
#include <string>

#include "../support/quantity_print.hpp"
#include "core/units.hpp"

using namespace bitline;

namespace {

// Expects parse to throw std::invalid_argument whose message contains `needle`.
template <class F>
void expect_reject(F&& parse, const std::string& text, const std::string& needle) {
  try {
    parse(text);
    ADD_FAILURE() << "'" << text << "' was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message for '" << text << "' was: " << e.what() << " (expected to contain: " << needle << ")";
  }
}

}  // namespace

// ---- parsing, hand-computed values -------------------------------------------

TEST(UnitsParse, TimeEveryUnit) {
  EXPECT_EQ(parse_time("22.5us").raw(), 22'500'000);
  EXPECT_EQ(parse_time("22.5 us").raw(), 22'500'000);
  EXPECT_EQ(parse_time("  22.5us\t").raw(), 22'500'000);
  EXPECT_EQ(parse_time("22.5µs").raw(), 22'500'000);
  EXPECT_EQ(parse_time("1ps").raw(), 1);
  EXPECT_EQ(parse_time("750ps").raw(), 750);
  EXPECT_EQ(parse_time("1ns").raw(), 1'000);
  EXPECT_EQ(parse_time("2.5ns").raw(), 2'500);
  EXPECT_EQ(parse_time("60us").raw(), 60'000'000);
  EXPECT_EQ(parse_time("3.5ms").raw(), 3'500'000'000);
  EXPECT_EQ(parse_time("2s").raw(), 2'000'000'000'000);
  EXPECT_EQ(parse_time("1min").raw(), 60'000'000'000'000);
  EXPECT_EQ(parse_time("1e3us").raw(), 1'000'000'000);  // exponent notation
  EXPECT_EQ(parse_time("1.5e-3s").raw(), 1'500'000'000);
  EXPECT_EQ(parse_time("-5us").raw(), -5'000'000);  // sign is kept; ranges are checked by ParamLoader
  EXPECT_EQ(parse_time("0").raw(), 0);              // zero needs no unit
  EXPECT_EQ(parse_time(".5us").raw(), 500'000);
  // Constructors agree with the parser.
  EXPECT_EQ(us(22.5), parse_time("22.5us"));
  EXPECT_EQ(ms(3.5), parse_time("3.5ms"));
  EXPECT_EQ(ns(1), ps(1000));
  EXPECT_EQ(sec(1), ms(1000));
}

TEST(UnitsParse, BytesEveryUnit) {
  EXPECT_EQ(parse_bytes("16KiB").raw(), 16384);
  EXPECT_EQ(parse_bytes("16 KiB").raw(), 16384);
  EXPECT_EQ(parse_bytes("1B").raw(), 1);
  EXPECT_EQ(parse_bytes("2KB").raw(), 2000);
  EXPECT_EQ(parse_bytes("3MB").raw(), 3'000'000);
  EXPECT_EQ(parse_bytes("1.2GB").raw(), 1'200'000'000);
  EXPECT_EQ(parse_bytes("2TB").raw(), 2'000'000'000'000);
  EXPECT_EQ(parse_bytes("1MiB").raw(), 1'048'576);
  EXPECT_EQ(parse_bytes("2GiB").raw(), 2'147'483'648);
  EXPECT_EQ(parse_bytes("1TiB").raw(), 1'099'511'627'776);
  EXPECT_EQ(parse_bytes("0.5KiB").raw(), 512);
  EXPECT_EQ(parse_bytes("0.1KB").raw(), 100);  // 0.1 * 1e3 is not exact in binary; still 100 bytes
  EXPECT_EQ(parse_bytes("64bit").raw(), 8);
  EXPECT_EQ(parse_bytes("16b").raw(), 2);
  EXPECT_EQ(parse_bytes("-16KiB").raw(), -16384);
  EXPECT_EQ(parse_bytes("0").raw(), 0);
  // The tolerance for decimal units (1e-6 of a byte near 0) made 1e-7 B a size of 0 B.
  EXPECT_THROW(parse_bytes("1e-7B"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("-1e-9B"), std::invalid_argument);
  EXPECT_EQ(KiB(16), parse_bytes("16KiB"));
  EXPECT_EQ(MiB(1), parse_bytes("1024KiB"));
  EXPECT_EQ(GiB(1), parse_bytes("1GiB"));
  EXPECT_EQ(to_bits(KiB(16)), 131072);
}

TEST(UnitsParse, BandwidthEveryUnit) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("1.2GB/s").raw(), 1.2e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1.2 GB/s").raw(), 1.2e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("100B/s").raw(), 100.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("5KB/s").raw(), 5e3);
  EXPECT_DOUBLE_EQ(parse_bandwidth("800MB/s").raw(), 8e8);
  EXPECT_DOUBLE_EQ(parse_bandwidth("2TB/s").raw(), 2e12);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1KiB/s").raw(), 1024.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1MiB/s").raw(), 1048576.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1GiB/s").raw(), 1073741824.0);
  EXPECT_DOUBLE_EQ(GBps(1.2).raw(), parse_bandwidth("1.2GB/s").raw());
}

TEST(UnitsParse, EnergyPowerAndEnergyPerBit) {
  EXPECT_DOUBLE_EQ(parse_energy_per_bit("8pJ/bit").raw(), 8e-12);
  EXPECT_DOUBLE_EQ(parse_energy_per_bit("5 pJ/bit").raw(), 5e-12);
  EXPECT_DOUBLE_EQ(parse_energy_per_bit("100fJ/bit").raw(), 1e-13);
  EXPECT_DOUBLE_EQ(parse_energy_per_bit("2nJ/bit").raw(), 2e-9);
  EXPECT_DOUBLE_EQ(parse_energy_per_bit("8pJ/B").raw(), 1e-12);  // 8 pJ per byte = 1 pJ per bit
  EXPECT_DOUBLE_EQ(parse_energy_per_bit("8nJ/B").raw(), 1e-9);
  EXPECT_DOUBLE_EQ(parse_energy_per_bit("1J/bit").raw(), 1.0);
  EXPECT_DOUBLE_EQ(pJ_per_bit(8).raw(), 8e-12);

  EXPECT_DOUBLE_EQ(parse_power("82.5mW").raw(), 0.0825);
  EXPECT_DOUBLE_EQ(parse_power("3nW").raw(), 3e-9);
  EXPECT_DOUBLE_EQ(parse_power("4uW").raw(), 4e-6);
  EXPECT_DOUBLE_EQ(parse_power("4µW").raw(), 4e-6);
  EXPECT_DOUBLE_EQ(parse_power("1.5W").raw(), 1.5);
  EXPECT_DOUBLE_EQ(parse_power("2kW").raw(), 2000.0);
  EXPECT_DOUBLE_EQ(mW(82.5).raw(), 0.0825);

  EXPECT_DOUBLE_EQ(parse_energy("7fJ").raw(), 7e-15);
  EXPECT_DOUBLE_EQ(parse_energy("8pJ").raw(), 8e-12);
  EXPECT_DOUBLE_EQ(parse_energy("3nJ").raw(), 3e-9);
  EXPECT_DOUBLE_EQ(parse_energy("1.72576uJ").raw(), 1.72576e-6);
  EXPECT_DOUBLE_EQ(parse_energy("2µJ").raw(), 2e-6);
  EXPECT_DOUBLE_EQ(parse_energy("4mJ").raw(), 4e-3);
  EXPECT_DOUBLE_EQ(parse_energy("1J").raw(), 1.0);
  EXPECT_DOUBLE_EQ(pJ(8).raw(), 8e-12);
}

// ---- rejects ----------------------------------------------------------------

TEST(UnitsParse, RejectsUnknownUnitAndListsAccepted) {
  expect_reject(parse_time, "22.5uss", "unknown time unit 'uss'");
  expect_reject(parse_time, "22.5uss", "ps, ns, us");  // the accepted units are listed
  expect_reject(parse_time, "22.5 sec", "unknown time unit 'sec'");
  expect_reject(parse_time, "5KiB", "unknown time unit");          // right syntax, wrong family
  expect_reject(parse_bytes, "16kib", "unknown size unit 'kib'");  // units are case-sensitive
  expect_reject(parse_bytes, "16KiB/s", "unknown size unit");
  expect_reject(parse_bandwidth, "1.2GB", "unknown bandwidth unit 'GB'");
  expect_reject(parse_bandwidth, "1.2Gb/s", "unknown bandwidth unit");
  expect_reject(parse_energy_per_bit, "8pJ", "unknown energy per bit unit 'pJ'");
  expect_reject(parse_energy, "8pJ/bit", "unknown energy unit");
  expect_reject(parse_power, "82.5mJ", "unknown power unit 'mJ'");
}

TEST(UnitsParse, RejectsNonNumbers) {
  expect_reject(parse_time, "abc", "'abc' is not a time");
  expect_reject(parse_time, "us", "is not a time");
  expect_reject(parse_time, "", "empty time value");
  expect_reject(parse_time, "   ", "empty time value");
  expect_reject(parse_time, "1.2.3us", "is not a time");
  expect_reject(parse_time, "--5us", "is not a time");
  expect_reject(parse_time, "1e400s", "is not a time");  // overflows a double
  expect_reject(parse_time, "nan", "is not a time");
  expect_reject(parse_time, "inf s", "is not a time");
  expect_reject(parse_bytes, "lots", "is not a size");
  expect_reject(parse_bandwidth, "fast", "is not a bandwidth");
  expect_reject(parse_power, "x mW", "is not a power");
}

TEST(UnitsParse, RejectsMissingUnitOnNonzeroValue) {
  expect_reject(parse_time, "22.5", "has no unit");
  expect_reject(parse_time, "-1", "has no unit");
  expect_reject(parse_bytes, "16384", "has no unit");
  expect_reject(parse_bandwidth, "1.2e9", "has no unit");
  expect_reject(parse_energy, "1", "has no unit");
  expect_reject(parse_power, "0.0825", "has no unit");
  expect_reject(parse_energy_per_bit, "8e-12", "has no unit");
  // Zero is zero in every unit, so it needs none.
  EXPECT_EQ(parse_bytes("0").raw(), 0);
  EXPECT_EQ(parse_power("0").raw(), 0.0);
  EXPECT_EQ(parse_time("0.0").raw(), 0);
}

TEST(UnitsParse, RejectsFractionalBytesAndOutOfRange) {
  expect_reject(parse_bytes, "1.5B", "not a whole number of bytes");
  expect_reject(parse_bytes, "12bit", "not a whole number of bytes");   // 1.5 bytes
  expect_reject(parse_bytes, "0.3KiB", "not a whole number of bytes");  // 307.2 bytes
  expect_reject(parse_bytes, "1e19B", "too large");
  expect_reject(parse_time, "1e7s", "out of the representable time range");  // 1e19 ps > INT64_MAX
  EXPECT_EQ(parse_time("1e6s").raw(), 1'000'000'000'000'000'000);            // 1e18 ps still fits
}

// ---- quantity arithmetic and mixed operations -------------------------------

TEST(UnitsOps, SameKindArithmeticAndComparison) {
  EXPECT_EQ(us(1) + ns(500), ps(1'500'000));
  EXPECT_EQ(us(1) - ns(500), ns(500));
  Time t = us(1);
  t += ns(1);
  t -= ps(1);
  EXPECT_EQ(t.raw(), 1'000'999);
  EXPECT_LT(ns(999), us(1));
  EXPECT_GT(ms(1), us(999));
  EXPECT_DOUBLE_EQ(us(3) / us(2), 1.5);       // a ratio of two times is a plain number
  EXPECT_EQ((us(1) * 1.5).raw(), 1'500'000);  // integer time scaled and rounded to the nearest ps
  EXPECT_EQ((ps(3) * 0.5).raw(), 2);          // 1.5 ps rounds to 2 ps (half away from zero)
  EXPECT_EQ((2.0 * KiB(8)), KiB(16));
  EXPECT_DOUBLE_EQ((mW(10) * 2.0).raw(), 0.02);
  EXPECT_DOUBLE_EQ(to_us(us(22.5)), 22.5);
  EXPECT_DOUBLE_EQ(to_ns(ns(7)), 7.0);
  EXPECT_DOUBLE_EQ(to_s(ms(250)), 0.25);
}

TEST(UnitsOps, BytesOverBandwidthIsTimeRoundedUp) {
  // 16 KiB at 1.2 GB/s: 16384 / 1.2e9 s = 13653333.33 ps -> 13653334 ps.
  EXPECT_EQ((KiB(16) / GBps(1.2)).raw(), 13'653'334);
  // 1 B at 3 B/s = 333333333333.33 ps -> rounded up, never down.
  EXPECT_EQ((bytes(1) / bytes_per_s(3)).raw(), 333'333'333'334);
  // Exact results are not bumped up by floating-point noise: 1200 B at 1.2 GB/s is exactly 1 us.
  EXPECT_EQ((bytes(1200) / GBps(1.2)).raw(), 1'000'000);
  EXPECT_EQ((bytes(1) / GBps(1)).raw(), 1'000);
  EXPECT_EQ((bytes(0) / GBps(1)).raw(), 0);
  // 3 B at 1 TB/s = 3 ps exactly.
  EXPECT_EQ((bytes(3) / parse_bandwidth("1TB/s")).raw(), 3);
}

TEST(UnitsOps, OtherMixedOperations) {
  // power * time = energy: 82.5 mW for 22.5 us = 1.85625 uJ.
  Energy e = mW(82.5) * us(22.5);
  EXPECT_NEAR(e.raw(), 1.85625e-6, 1e-18);
  EXPECT_DOUBLE_EQ((us(22.5) * mW(82.5)).raw(), e.raw());
  // energy / time = power.
  EXPECT_NEAR((e / us(22.5)).raw(), 0.0825, 1e-15);
  // energy per bit * bytes = energy: 8 pJ/bit over 16 KiB = 8e-12 * 131072 J.
  EXPECT_NEAR((pJ_per_bit(8) * KiB(16)).raw(), 1.048576e-6, 1e-18);
  // bytes / time = bandwidth: 1200 B in 1 us = 1.2 GB/s.
  EXPECT_NEAR((bytes(1200) / us(1)).raw(), 1.2e9, 1e-3);
}

// ---- printing and round trips --------------------------------------------------

TEST(UnitsFormat, ReadableOutput) {
  EXPECT_EQ(format(us(22.5)), "22.5us");
  EXPECT_EQ(format(us(60)), "60us");
  EXPECT_EQ(format(ms(3.5)), "3.5ms");
  EXPECT_EQ(format(sec(2)), "2s");
  EXPECT_EQ(format(ns(1.5)), "1.5ns");
  EXPECT_EQ(format(ps(999)), "999ps");
  EXPECT_EQ(format(ps(0)), "0ps");
  EXPECT_EQ(format(KiB(16)), "16KiB");
  EXPECT_EQ(format(bytes(16384 + 1024)), "17KiB");
  EXPECT_EQ(format(bytes(1000)), "1000B");
  EXPECT_EQ(format(bytes(0)), "0B");
  EXPECT_EQ(format(GiB(3)), "3GiB");
  EXPECT_EQ(format(MiB(5)), "5MiB");
  EXPECT_EQ(format(Bytes(int64_t(1) << 41)), "2TiB");
  EXPECT_EQ(format(bytes(-16384)), "-16KiB");
  EXPECT_EQ(format(GBps(1.2)), "1.2GB/s");
  EXPECT_EQ(format(bytes_per_s(8e8)), "800MB/s");
  EXPECT_EQ(format(bytes_per_s(2e12)), "2TB/s");
  EXPECT_EQ(format(mW(82.5)), "82.5mW");
  EXPECT_EQ(format(watts(1.5)), "1.5W");
  EXPECT_EQ(format(pJ_per_bit(8)), "8pJ/bit");
  EXPECT_EQ(format(pJ(8)), "8pJ");
  EXPECT_EQ(format(joules(0)), "0J");
  EXPECT_EQ(format(joules(1.72576e-6)), "1.72576uJ");
}

TEST(UnitsFormat, RoundTripsOfConfigValues) {
  for (const char* s : {"22.5us", "60us", "3.5ms", "1ps", "750ps", "2.5ns", "2s", "0ps", "1000s"}) EXPECT_EQ(format(parse_time(s)), s) << s;
  for (const char* s : {"16KiB", "1000B", "2GiB", "0B", "7B"}) EXPECT_EQ(format(parse_bytes(s)), s) << s;
  for (const char* s : {"1.2GB/s", "800MB/s", "100B/s"}) EXPECT_EQ(format(parse_bandwidth(s)), s) << s;
  for (const char* s : {"82.5mW", "1.5W", "165mW"}) EXPECT_EQ(format(parse_power(s)), s) << s;
  for (const char* s : {"8pJ/bit", "5pJ/bit"}) EXPECT_EQ(format(parse_energy_per_bit(s)), s) << s;
  for (const char* s : {"8pJ", "3nJ", "4mJ", "1.5J"}) EXPECT_EQ(format(parse_energy(s)), s) << s;
}

TEST(UnitsFormat, ComputedValuesKeepSixSignificantDigits) {
  // format() is for people: 6 significant digits (ParamDumper writes exact
  // values; see test_config.cpp). Reading the text back is within 5e-6.
  for (int64_t p : {int64_t(13'653'334), int64_t(1'234'567'891), int64_t(22'500'001), int64_t(999'999'999'999),
                    int64_t(123'456'789'012'345), int64_t(-7'654'321)}) {
    Time t(p);
    EXPECT_NEAR(double(parse_time(format(t)).raw()), double(p), 5e-6 * std::abs(double(p))) << p << " -> " << format(t);
  }
  EXPECT_EQ(format(Time(13'653'334)), "13.6533us");
  EXPECT_EQ(format(Time(999)), "999ps");  // below 1 ns: exact integer picoseconds
  for (double v : {1.23456789e9, 1.0 / 3.0 * 1e9, 12345.678}) {
    Bandwidth bw(v);
    EXPECT_NEAR(parse_bandwidth(format(bw)).raw(), v, 5e-6 * v) << format(bw);
  }
  for (double v : {1.85625e-6, 1.0 / 3.0 * 1e-6, 3.45151234e-6, 7.5e-13, 2.5}) {
    Energy e(v);
    EXPECT_NEAR(parse_energy(format(e)).raw(), v, 5e-6 * v) << format(e);
  }
  for (double v : {0.0825 * 1.033, 1.0 / 7.0, 12.3456789, 3e-7}) {
    Power w(v);
    EXPECT_NEAR(parse_power(format(w)).raw(), v, 5e-6 * v) << format(w);
  }
  for (double v : {1.0 / 3.0 * 1e-12, 8.123456789e-12}) {
    EnergyPerBit e(v);
    EXPECT_NEAR(parse_energy_per_bit(format(e)).raw(), v, 5e-6 * v) << format(e);
  }
  // Bytes are always exact.
  for (int64_t b : {int64_t(16'385), int64_t(123'456'789), int64_t(1) << 50, int64_t(3) << 40, int64_t(-5)})
    EXPECT_EQ(parse_bytes(format(Bytes(b))), Bytes(b)) << b << " -> " << format(Bytes(b));
}

TEST(UnitsFormat, UnitNames) {
  EXPECT_EQ(unit_name<Time>(), "time");
  EXPECT_EQ(unit_name<Bytes>(), "bytes");
  EXPECT_EQ(unit_name<Bandwidth>(), "bandwidth");
  EXPECT_EQ(unit_name<Energy>(), "energy");
  EXPECT_EQ(unit_name<Power>(), "power");
  EXPECT_EQ(unit_name<EnergyPerBit>(), "energy/bit");
}
