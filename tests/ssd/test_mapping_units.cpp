// Mapping units smaller than a flash page (ssd_device.mapping_unit, docs/ssd.md "Mapping units"): 4 KiB writes packed
// into 16 KiB pages and programmed together, the rest of a page programmed short left unwritten, the units of one
// page read with one sensing, each time and count written out by hand; what the key accepts; and the cache program's
// deeper back-pressure (ssd_device.cache_program).
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "ssd/device.hpp"
#include "ssd/mqsim_xml.hpp"
#include "ssd_test_util.hpp"

namespace bitline::ssd {
namespace {

// Host link: 4 lanes x 1 GB/s; channel: 333 MT/s x 1 byte; MLC tR 75 us and tPROG 750 us for every page type
// (MQSim's defaults).
const Bandwidth kPcie = bytes_per_s(4e9);
const Bandwidth kChannel = bytes_per_s(333e6);
const Time kTr = us(75), kProg = us(750);
const Time kSqe = bytes(64) / kPcie, kCqe = bytes(16) / kPcie;

/// One die of two planes, 16 KiB pages, the whole mapping table in DRAM; `unit`: the mapping unit (0: page-level).
DeviceXml one_die(int64_t unit) {
  DeviceXml d = test::die_per_channel(1, 64);
  d.page_size = 16384;
  d.mapping_unit = Bytes(unit);
  return d;
}

FlowXml trace(const std::string& name, const std::string& lines) { return test::trace_flow("bitline_units", name, lines); }

const nlohmann::json& times(const nlohmann::json& j) { return j["flows"][0]["device_response_time"]; }

// A 32 KiB write (eight 4 KiB units) on an idle die: its units are queued together, and one multi-plane program takes
// them, four to each plane's page (the die allocates the planes at program time, each unit into the plane its address
// names where it has room: CWDP stripes 16 KiB of logical space to a plane, units 0-3 to plane 0, 4-7 to plane 1): its
// 32 KiB over the channel, then one tPROG. The write (uncached) completes when the program ends.
TEST(MappingUnits, UnitsOfAWriteArePackedIntoFullPagesOfOneMultiPlaneProgram) {
  const ScenarioXml s{{trace("w32.trace", "0 0 0 64 0\n")}};
  const nlohmann::json j = simulate_scenario(one_die(4096), s);
  EXPECT_EQ(j["ftl"]["host_page_writes"].get<int64_t>(), 8);  // units
  EXPECT_EQ(j["ftl"]["mapping_unit_bytes"].get<int64_t>(), 4096);
  EXPECT_EQ(j["ftl"]["unwritten_units"].get<int64_t>(), 0);
  EXPECT_EQ(j["flash"]["programs"].get<int64_t>(), 2);  // two flash pages
  EXPECT_EQ(j["flash"]["multiplane_ops"].get<int64_t>(), 1);
  const Time expect = kSqe + bytes(32768) / kPcie + bytes(32768) / kChannel + kProg + kCqe;
  EXPECT_NEAR(times(j)["mean_us"].get<double>(), to_us(expect), 1e-6);
}

// A lone 4 KiB write programs a page of its own: the page's other three units stay unwritten (a flash page is
// programmed once). A second write behind it, queued while the die programs, goes into the next page.
TEST(MappingUnits, AShortPageLeavesItsOtherUnitsUnwritten) {
  const ScenarioXml s{{trace("w4.trace", "0 0 0 8 0\n1000 0 8 8 0\n")}};
  const nlohmann::json j = simulate_scenario(one_die(4096), s);
  EXPECT_EQ(j["ftl"]["unwritten_units"].get<int64_t>(), 6);
  EXPECT_EQ(j["flash"]["programs"].get<int64_t>(), 2);
  EXPECT_EQ(j["flash"]["multiplane_ops"].get<int64_t>(), 0);
  const Time first = kSqe + bytes(4096) / kPcie + bytes(4096) / kChannel + kProg;
  EXPECT_NEAR(times(j)["min_us"].get<double>(), to_us(first + kCqe), 1e-6);
  // the second waits for the die: its unit over the channel once the first program ends, then its own program
  EXPECT_NEAR(times(j)["max_us"].get<double>(), to_us(first + bytes(4096) / kChannel + kProg + kCqe - ns(1000)), 1e-6);
}

// Reads sense a flash page once for all of its units that they want: after the 32 KiB write above (units 0-3 on plane
// 0's page, 4-7 on plane 1's), a 16 KiB read of units 2-5 is one multi-plane read: one tR, two sensings (one a plane),
// and its four units over the channel one after the other.
TEST(MappingUnits, UnitsOfOnePageShareOneSensing) {
  const ScenarioXml s{{trace("r16.trace", "0 0 0 64 0\n10000000 0 16 32 1\n")}};
  const nlohmann::json j = simulate_scenario(one_die(4096), s);
  EXPECT_EQ(j["flash"]["reads"].get<int64_t>(), 2);
  EXPECT_EQ(j["flash"]["multiplane_ops"].get<int64_t>(), 2);  // the program and the read
  const Time read = kSqe + kTr + bytes(4096) / kChannel * 4.0 + bytes(16384 + 16) / kPcie;
  EXPECT_NEAR(times(j)["min_us"].get<double>(), to_us(read), 1e-6);
}

// Page-level mapping (MQSim's, the default) on the same die: four 4 KiB writes into one 16 KiB logical page program
// that page four times (each write is a page of its own, with update reads of the rest once it was written).
TEST(MappingUnits, PageLevelMappingProgramsAPagePerWrite) {
  EXPECT_EQ(DeviceXml().mapping_unit.raw(), 0);
  const ScenarioXml s{{trace("p4.trace", "0 0 0 8 0\n1000000 0 8 8 0\n2000000 0 16 8 0\n3000000 0 24 8 0\n")}};
  const nlohmann::json page = simulate_scenario(one_die(0), s);
  EXPECT_EQ(page["flash"]["programs"].get<int64_t>(), 4);
  EXPECT_EQ(page["ftl"]["update_reads"].get<int64_t>(), 3);
  EXPECT_FALSE(page["ftl"].contains("mapping_unit_bytes"));
  // with 4 KiB units, four units in four pages (the writes come one at a time), no update read
  const nlohmann::json units = simulate_scenario(one_die(4096), s);
  EXPECT_EQ(units["flash"]["programs"].get<int64_t>(), 4);
  EXPECT_EQ(units["ftl"]["update_reads"].get<int64_t>(), 0);
  EXPECT_EQ(units["ftl"]["unwritten_units"].get<int64_t>(), 12);
}

// ssd_device.cache_program: the write cache hands the back end one more page per plane (the plane's cache register).
// Four 16 KiB cached writes at once on one die of two planes: at MQSim's one page per plane, two are programmed from
// the cache and the next two wait for a program to end (> tPROG); with cache programs all four enter the cache at once
// and complete after their DRAM writes.
TEST(MappingUnits, CacheProgramLetsTheCacheHandOneMorePagePerPlane) {
  auto slowest = [](bool cache_program) {
    DeviceXml d = one_die(0);
    d.cache_program = cache_program;
    const ScenarioXml s{
        {test::trace_flow("bitline_units", "cp.trace", "0 0 0 32 0\n0 0 32 32 0\n0 0 64 32 0\n0 0 96 32 0\n", CachingMode::WriteCache)}};
    return times(simulate_scenario(d, s))["max_us"].get<double>();
  };
  EXPECT_FALSE(DeviceXml().cache_program);
  EXPECT_GT(slowest(false), to_us(kProg));
  EXPECT_LT(slowest(true), 100.0);
}

// The device file sets the unit in <Bitline_Parameter_Set>; a unit that is not a whole number of sectors dividing the
// page (MQSim's device: 8 KiB pages) is refused naming the key and the page.
TEST(MappingUnits, TheKeyTakesSectorMultiplesThatDivideThePage) {
  const DeviceXml d =
      parse_device_xml(test::device_with("<Bitline_Parameter_Set><mapping_unit>4KiB</mapping_unit></Bitline_Parameter_Set>"), "dev.xml");
  EXPECT_EQ(d.mapping_unit.raw(), 4096);
  const DeviceXml v = mapped_view(d);
  EXPECT_EQ(v.page_size, 4096);
  EXPECT_EQ(v.units_per_flash_page, 2);
  EXPECT_EQ(v.pages_per_block, 2 * d.pages_per_block);
  EXPECT_EQ(mapped_view(DeviceXml()).units_per_flash_page, 1);
  for (const char* bad : {"3000", "6KiB", "16KiB"}) {
    try {
      parse_device_xml(
          test::device_with("<Bitline_Parameter_Set><mapping_unit>" + std::string(bad) + "</mapping_unit></Bitline_Parameter_Set>"),
          "dev.xml");
      ADD_FAILURE() << "accepted mapping_unit " << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("mapping_unit"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace bitline::ssd
