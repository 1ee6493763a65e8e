// Area, the typed quantity of the HBF area model (core/units.hpp): parsing with units, printing, the config loader.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/param_dump.hpp"
#include "core/params.hpp"
#include "core/units.hpp"

namespace bitline {
namespace {

TEST(AreaUnits, ParsesEveryUnitSpelling) {
  EXPECT_DOUBLE_EQ(parse_area("68.04mm2").raw(), 68.04e-6);
  EXPECT_DOUBLE_EQ(parse_area("68.04 mm^2").raw(), 68.04e-6);
  EXPECT_DOUBLE_EQ(parse_area("0.021um2").raw(), 0.021e-12);
  EXPECT_DOUBLE_EQ(parse_area("1600 um^2").raw(), 1600e-12);
  EXPECT_DOUBLE_EQ(parse_area("0.074µm2").raw(), 0.074e-12);
  EXPECT_DOUBLE_EQ(parse_area("2000nm2").raw(), 2000e-18);
  EXPECT_DOUBLE_EQ(parse_area("1cm2").raw(), 1e-4);
  EXPECT_DOUBLE_EQ(parse_area("0").raw(), 0.0);
  EXPECT_DOUBLE_EQ(to_mm2(mm2(858)), 858.0);
  EXPECT_DOUBLE_EQ(um2(1600).raw(), mm2(0.0016).raw());
}

TEST(AreaUnits, RefusesAMissingOrWrongUnit) {
  EXPECT_THROW(parse_area("10"), std::invalid_argument);    // no unit
  EXPECT_THROW(parse_area("10mm"), std::invalid_argument);  // a length
  EXPECT_THROW(parse_area("10GB"), std::invalid_argument);  // another quantity
  EXPECT_THROW(parse_area("1e999mm2"), std::invalid_argument);
}

TEST(AreaUnits, PrintsWhatReadsBack) {
  for (Area a : {mm2(68.04), mm2(858), um2(1600), um2(0.074), um2(0.021), Area(2e-18), mm2(0)}) {
    EXPECT_DOUBLE_EQ(parse_area(format(a)).raw(), a.raw()) << format(a);
    EXPECT_DOUBLE_EQ(parse_area(param_json(a).get<std::string>()).raw(), a.raw()) << param_json(a);
  }
  EXPECT_EQ(format(mm2(68.04)), "68.04mm2");
  EXPECT_EQ(format(um2(0.074)), "0.074um2");
}

struct WithArea {
  Area a{};
  template <class V>
  void visit(V& v) {
    v(a, {.name = "a", .def = "1mm2", .desc = "an area", .source = "test", .min = 0});
  }
};

TEST(AreaUnits, TheLoaderChecksUnitAndRange) {
  ConfigTree t;
  t.load_text("s:\n  a: 2.5mm2\n", "t.yaml");
  EXPECT_DOUBLE_EQ(load_params<WithArea>(t, "s").a.raw(), 2.5e-6);
  t.apply_set("s.a=-1um2");
  EXPECT_THROW(load_params<WithArea>(t, "s"), ConfigError);
  EXPECT_EQ(describe_params<WithArea>("s").front().type, "area");
}

}  // namespace
}  // namespace bitline
