// The SLC write cache (src/ssd/slc_cache.cpp, docs/ssd.md "SLC caching"): hand-timed cases on a one-plane TLC device
// whose every program, read and erase is serial, so that each time and count below is written out from the
// parameters; and the device file's <Bitline_Parameter_Set>, which sets the cache of a drive.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "ssd/device.hpp"
#include "ssd/mqsim_xml.hpp"
#include "ssd_test_util.hpp"

namespace bitline::ssd {
namespace {

namespace fs = std::filesystem;

const Bandwidth kPcie = bytes_per_s(4e9);       // 4 lanes x 1 GB/s (MQSim's defaults)
const Bandwidth kChannel = bytes_per_s(333e6);  // 333 MT/s x 1 byte
const Time kSlcProg = us(200), kSlcRead = us(25), kErase = us(3800);
const Time kProg[3] = {us(500), us(600), us(700)};  // TLC LSB, CSB, MSB: page k of a block is type k % 3
/// An idle 4 KiB write without the DRAM cache, up to its program: command, data over PCIe, data over the channel.
const Time kWriteIn = bytes(64) / kPcie + bytes(4096) / kPcie + bytes(4096) / kChannel;
const Time kCqe = bytes(16) / kPcie;

/// One channel, one chip, one die, one plane of 16 blocks of 12 TLC pages of 4 KiB (an SLC block: 4 pages): every
/// operation is serial. 25% over-provisioning leaves 144 logical pages; GC never runs in these runs.
DeviceXml one_plane(SlcCache mode, int64_t static_pages) {
  DeviceXml d = test::die_per_channel(1, 16);
  d.planes_per_die = 1;
  d.pages_per_block = 12;
  d.page_size = 4096;
  d.technology = FlashTechnology::Tlc;
  for (int i = 0; i < 3; ++i) {
    d.program_latency[i] = kProg[i];
    d.read_latency[i] = us(50);
  }
  d.erase_latency = kErase;
  d.gc_exec_threshold = 0.125;
  d.overprovisioning = 0.25;
  d.slc_cache = mode;
  d.slc_static_bytes = Bytes(static_pages * 4096);
  d.slc_program_latency = kSlcProg;
  d.slc_read_latency = kSlcRead;
  d.slc_idle_delay = ms(1);
  return d;
}

/// A trace flow of uncached writes, one 4 KiB page each: write i at arrival_ns[i], logical page i.
FlowXml writes(const std::string& name, const std::vector<int64_t>& arrival_ns) {
  const fs::path dir = fs::temp_directory_path() / ("bitline_slc_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream out(p);
  for (size_t i = 0; i < arrival_ns.size(); ++i) out << arrival_ns[i] << " 0 " << 8 * i << " 8 0\n";
  FlowXml f;
  f.kind = FlowKind::Trace;
  f.trace_path = p.string();
  f.caching_mode = CachingMode::TurnedOff;
  return f;
}

std::vector<int64_t> spaced(int n, int64_t gap_ns) {
  std::vector<int64_t> v;
  for (int i = 0; i < n; ++i) v.push_back(i * gap_ns);
  return v;
}

double us_of(const nlohmann::json& j, const char* which) { return j["flows"][0]["device_response_time"][which].get<double>(); }
int64_t count(const nlohmann::json& j, const char* section, const char* key) { return j[section][key].get<int64_t>(); }

// N page writes fill a static region of N pages at the SLC program time; the next ones go directly to TLC at their
// page type's program time (pages 8 and 9 of the block: MSB, then LSB). Folding waits for the host to be idle
// (slc_idle_delay 1 s: after the run), then moves the 8 cached pages: 8 SLC reads, 8 TLC programs, 2 SLC blocks erased.
TEST(SlcCache, WritesFillTheRegionAtSlcTimeThenGoToTlcAtTlcTime) {
  DeviceXml d = one_plane(SlcCache::Static, 8);
  d.slc_idle_delay = ms(1000);
  const nlohmann::json j = simulate_scenario(d, ScenarioXml{{writes("fill.trace", spaced(10, 10'000'000))}});
  const Time slc = kWriteIn + kSlcProg + kCqe, msb = kWriteIn + kProg[2] + kCqe, lsb = kWriteIn + kProg[0] + kCqe;
  EXPECT_NEAR(us_of(j, "min_us"), to_us(slc), 1e-6);
  EXPECT_NEAR(us_of(j, "max_us"), to_us(msb), 1e-6);
  EXPECT_NEAR(us_of(j, "mean_us"), to_us(slc * 8.0 + msb + lsb) / 10.0, 1e-6);
  const nlohmann::json& s = j["slc"];
  EXPECT_EQ(s["slc_programs"].get<int64_t>(), 8);
  EXPECT_EQ(s["direct_programs"].get<int64_t>(), 2);
  // the 9th write found the region full when its program started: its arrival at 80 ms, command and data in
  EXPECT_NEAR(s["full_at_s"].get<double>(), to_s(ms(80) + bytes(64) / kPcie + bytes(4096) / kPcie), 1e-15);
  EXPECT_EQ(s["fold_reads"].get<int64_t>(), 8);
  EXPECT_EQ(s["fold_programs"].get<int64_t>(), 8);
  EXPECT_EQ(s["fold_erases"].get<int64_t>(), 2);
  EXPECT_EQ(s["slc_bytes_in_use_at_end"].get<double>(), 0.0);
  EXPECT_EQ(count(j, "flash", "programs"), 10 + 8);
  EXPECT_EQ(count(j, "flash", "reads"), 8);
  EXPECT_EQ(count(j, "flash", "erases"), 2);
  EXPECT_EQ(count(j, "ftl", "host_page_writes"), 10);  // the FTL's counts are the run's without the cache
  // After the last write (at 90 ms, LSB) the host is idle; 1 s later the folds run back to back: page k is
  // folded by an SLC read and a program of type k % 3, and pages 0-3 and 4-7 each free a block (an erase).
  Time folds{};
  for (int k = 0; k < 8; ++k) folds += kSlcRead + kProg[k % 3];
  EXPECT_NEAR(s["last_fold_end_s"].get<double>(), to_s(ms(90) + lsb + ms(1000) + folds + kErase * 2.0), 1e-12);
}

// Folding runs when the host is idle and gives the room back: four writes fill a 4-page region (one SLC block);
// 1 ms after the last completes, its four pages are folded and the block erased, so a write 20 ms later is cached
// again at the SLC time. Without the idle time to fold (slc_idle_delay 1 s) the same write goes to TLC (page 4: CSB).
TEST(SlcCache, IdleFoldingMovesTheDataAndFreesTheRegion) {
  std::vector<int64_t> at = spaced(4, 10'000'000);
  at.push_back(50'000'000);
  const DeviceXml d = one_plane(SlcCache::Static, 4);
  const nlohmann::json j = simulate_scenario(d, ScenarioXml{{writes("idle.trace", at)}});
  const Time slc = kWriteIn + kSlcProg + kCqe;
  EXPECT_NEAR(us_of(j, "max_us"), to_us(slc), 1e-6);  // every write at the SLC time
  const nlohmann::json& s = j["slc"];
  EXPECT_EQ(s["slc_programs"].get<int64_t>(), 5);
  EXPECT_EQ(s["direct_programs"].get<int64_t>(), 0);
  EXPECT_TRUE(s["full_at_s"].is_null());
  // Each write's page is folded in the idle time after it (1 ms after it completes): 5 folds; the 4th completes the
  // SLC block (erased: its room comes back), the 5th stays in the next, open block (folded, its room still in use).
  EXPECT_EQ(s["fold_reads"].get<int64_t>(), 5);
  EXPECT_EQ(s["fold_programs"].get<int64_t>(), 5);
  EXPECT_EQ(s["fold_erases"].get<int64_t>(), 1);
  EXPECT_EQ(s["slc_bytes_in_use_at_end"].get<double>(), 4096.0);
  EXPECT_EQ(count(j, "flash", "programs"), 5 + 5);
  EXPECT_EQ(count(j, "flash", "reads"), 5);
  EXPECT_EQ(count(j, "flash", "erases"), 1);
  EXPECT_NEAR(s["last_fold_end_s"].get<double>(), to_s(ms(50) + slc + ms(1) + kSlcRead + kProg[1]), 1e-12);

  DeviceXml busy = d;
  busy.slc_idle_delay = ms(1000);
  const nlohmann::json b = simulate_scenario(busy, ScenarioXml{{writes("busy.trace", at)}});
  EXPECT_NEAR(us_of(b, "max_us"), to_us(kWriteIn + kProg[1] + kCqe), 1e-6);
  EXPECT_EQ(b["slc"]["slc_programs"].get<int64_t>(), 4);
  EXPECT_EQ(b["slc"]["direct_programs"].get<int64_t>(), 1);
  EXPECT_EQ(b["slc"]["fold_programs"].get<int64_t>(), 4);  // after the run: the 4 cached pages, one block erased
  EXPECT_EQ(b["slc"]["fold_erases"].get<int64_t>(), 1);
}

// TurboWrite's dynamic region grows with free space: with no static region and a large dynamic maximum, the region
// holds (144 logical pages - pages written) / 3 pages, so after k fresh writes it is full when k >= (144 - k) / 3:
// 36 writes go to SLC, the 37th onwards directly to TLC. The static mode with 36 pages does the same.
TEST(SlcCache, TheDynamicRegionShrinksAsTheDriveFills) {
  DeviceXml d = one_plane(SlcCache::TurboWrite, 0);
  d.slc_dynamic_max_bytes = Bytes(int64_t(1) << 30);
  d.slc_idle_delay = ms(1000);
  const nlohmann::json j = simulate_scenario(d, ScenarioXml{{writes("dyn.trace", spaced(40, 2'000'000))}});
  EXPECT_EQ(j["slc"]["slc_programs"].get<int64_t>(), 36);
  EXPECT_EQ(j["slc"]["direct_programs"].get<int64_t>(), 4);
  EXPECT_NEAR(j["slc"]["full_at_s"].get<double>(), to_s(ms(72) + bytes(64) / kPcie + bytes(4096) / kPcie), 1e-15);
  // capped by the maximum: 10 pages
  d.slc_dynamic_max_bytes = Bytes(10 * 4096);
  const nlohmann::json capped = simulate_scenario(d, ScenarioXml{{writes("cap.trace", spaced(40, 2'000'000))}});
  EXPECT_EQ(capped["slc"]["slc_programs"].get<int64_t>(), 10);
}

// Off (the default), nothing changes: no `slc` section, every program at its page type's time.
TEST(SlcCache, OffByDefault) {
  const DeviceXml d = one_plane(SlcCache::Off, 8);
  EXPECT_EQ(*DeviceXml().slc_cache, SlcCache::Off);
  const nlohmann::json j = simulate_scenario(d, ScenarioXml{{writes("off.trace", spaced(3, 10'000'000))}});
  EXPECT_FALSE(j.contains("slc"));
  EXPECT_NEAR(us_of(j, "min_us"), to_us(kWriteIn + kProg[0] + kCqe), 1e-6);
  EXPECT_NEAR(us_of(j, "max_us"), to_us(kWriteIn + kProg[2] + kCqe), 1e-6);
}

// The device file sets the cache in <Bitline_Parameter_Set> (MQSim ignores the element), one element per key.
TEST(SlcCache, TheDeviceFileSetsTheCacheInItsBitlineSection) {
  const DeviceXml d = parse_device_xml(test::device_with("<Bitline_Parameter_Set><slc_cache>turbowrite</slc_cache>"
                                                         "<slc_static_bytes>6GB</slc_static_bytes>"
                                                         "<slc_dynamic_max_bytes>36GB</slc_dynamic_max_bytes>"
                                                         "<slc_program_latency>150us</slc_program_latency></Bitline_Parameter_Set>"),
                                       "dev.xml");
  EXPECT_EQ(*d.slc_cache, SlcCache::TurboWrite);
  EXPECT_EQ(d.slc_static_bytes.raw(), int64_t(6e9));
  EXPECT_EQ(d.slc_dynamic_max_bytes.raw(), int64_t(36e9));
  EXPECT_EQ(d.slc_program_latency, us(150));
  // --set overrides the file
  const DeviceXml o =
      parse_device_xml(test::device_with("<Bitline_Parameter_Set><slc_cache>turbowrite</slc_cache></Bitline_Parameter_Set>"), "dev.xml",
                       {"ssd_device.slc_cache=off"});
  EXPECT_EQ(*o.slc_cache, SlcCache::Off);
}

TEST(SlcCache, RefusesWhatItCannotModel) {
  auto refused = [](const std::string& extra, const std::string& words) {
    try {
      parse_device_xml(test::device_with(extra), "dev.xml");
      ADD_FAILURE() << "accepted: " << extra;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  // an MQSim element's key belongs to that element
  refused("<Bitline_Parameter_Set><channels>4</channels></Bitline_Parameter_Set>", "<Flash_Channel_Count>");
  refused("<Bitline_Parameter_Set><slc_cahce>static</slc_cahce></Bitline_Parameter_Set>", "slc_cahce");
  refused("<Bitline_Parameter_Set><slc_cache>dynamic</slc_cache></Bitline_Parameter_Set>", "slc_cache");
  // MQSim's device: 8 x 4 x 2 x 2 planes x 2048 x 256 pages of 8 KiB, 7% spare (~38.5 GB): a static region of
  // 20 GB needs 40 GB of MLC
  refused("<Bitline_Parameter_Set><slc_cache>static</slc_cache><slc_static_bytes>20GB</slc_static_bytes></Bitline_Parameter_Set>",
          "slc_static_bytes");
}

}  // namespace
}  // namespace bitline::ssd
