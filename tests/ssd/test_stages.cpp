// The general SSD's stages, one contract each (the header of each stage file under src/ssd states it; device_sim.hpp
// lists them): small hand-checked cases on an idle MQSim-default device, each asserting what the stage promises.
// The compute-jobs stage has its own specification (test_compute_jobs.cpp); end-to-end figures are test_device.cpp's.
#include <gtest/gtest.h>

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

// Host link: 4 lanes x 1 GB/s; channel: 333 MT/s x 1 byte (MQSim's defaults).
const Bandwidth kPcie = bytes_per_s(4e9);
const Bandwidth kChannel = bytes_per_s(333e6);
const Time kRead = bytes(64) / kPcie + us(75) + bytes(4096) / kChannel + bytes(4096 + 16) / kPcie;  // an idle 4 KiB read

DeviceXml idle_device() {
  DeviceXml d;  // MQSim's default geometry and timing
  d.file = "test";
  d.ideal_mapping_table = true;
  d.dram_data_rate = 100;  // MQSim's shipped DRAM cache: 100 MT/s, 1-byte bursts
  d.dram_burst_size = Bytes(1);
  return d;
}

/// A trace flow of `lines` ("time_ns device lba sectors type", type 1 = read, 0 = write).
FlowXml trace(const std::string& name, const std::string& lines, CachingMode caching = CachingMode::TurnedOff) {
  return test::trace_flow("bitline_stages", name, lines, caching);
}

const nlohmann::json& times(const nlohmann::json& j, const char* which = "device_response_time") { return j["flows"][0][which]; }

// Host interface: a request waits on the host while its flow's submission queue is full, and enters it when a
// request completes; its device response time runs from there, its end-to-end delay from its arrival.
TEST(HostInterface, AFullSubmissionQueueHoldsRequestsOnTheHost) {
  DeviceXml d = idle_device();
  d.io_queue_depth = 1;
  const ScenarioXml s{{trace("sq.trace", "0 0 0 8 1\n0 0 16 8 1\n")}};  // two reads on two channels, together
  const nlohmann::json j = simulate_scenario(d, s);
  EXPECT_EQ(j["requests"].get<int64_t>(), 2);
  EXPECT_NEAR(times(j)["max_us"].get<double>(), to_us(kRead), 1e-6);  // each alone on the device
  EXPECT_NEAR(times(j, "end_to_end_delay")["max_us"].get<double>(), to_us(kRead * 2.0), 1e-6);
  // With room for both they overlap on the flash; only the host link queues the second's data.
  d.io_queue_depth = 16;
  const nlohmann::json deep = simulate_scenario(d, s);
  EXPECT_NEAR(times(deep, "end_to_end_delay")["max_us"].get<double>(), to_us(kRead + bytes(4096 + 16) / kPcie), 1e-6);
}

// Data cache: a read of a page the write cache holds is served from the cache DRAM, not the flash. (A page written
// once in the window is cold, programmed at once and not kept; written again it is hot and its copy stays.)
TEST(DataCache, AReadOfACachedPageIsServedFromDram) {
  const DeviceXml d = idle_device();
  const ScenarioXml s{{trace("cache.trace", "0 0 0 8 0\n500000 0 0 8 0\n1000000 0 0 8 1\n", CachingMode::WriteCache)}};
  const nlohmann::json j = simulate_scenario(d, s);
  EXPECT_EQ(j["ftl"]["cache_read_hits"].get<int64_t>(), 1);
  EXPECT_EQ(j["flash"]["reads"].get<int64_t>(), 0);
  EXPECT_EQ(j["flash"]["programs"].get<int64_t>(), 2);  // both writes still reach the flash; the cache keeps a copy
  // MQSim's DRAM time: tRCD + tCL + (bytes / burst / 2) bursts of 1/(100 MT/s)
  const Time dram = ns(13 + 13 + 4096 / 1 / 2 * 10.0);
  EXPECT_NEAR(times(j, "device_response_time_read")["max_us"].get<double>(), to_us(bytes(64) / kPcie + dram + bytes(4096 + 16) / kPcie),
              1e-6);
  // With the cache off the same read goes to the flash.
  const ScenarioXml off{{trace("nocache.trace", "0 0 0 8 0\n500000 0 0 8 0\n1000000 0 0 8 1\n")}};
  const nlohmann::json f = simulate_scenario(d, off);
  EXPECT_EQ(f["ftl"]["cache_read_hits"].get<int64_t>(), 0);
  EXPECT_EQ(f["flash"]["reads"].get<int64_t>(), 1);
}

// Address mapping: a read whose entry misses the CMT reads its translation page first (one more flash read, before
// the data's); the entry is then cached, and a later read of the page hits.
TEST(AddressMapping, ACmtMissReadsTheTranslationPageFirstAndTheNextReadHits) {
  DeviceXml d = idle_device();
  d.ideal_mapping_table = false;
  const ScenarioXml s{{trace("cmt.trace", "0 0 0 8 1\n1000000 0 0 8 1\n")}};
  const nlohmann::json j = simulate_scenario(d, s);
  EXPECT_EQ(j["ftl"]["cmt_misses"].get<int64_t>(), 1);
  EXPECT_EQ(j["ftl"]["cmt_hits"].get<int64_t>(), 1);
  EXPECT_EQ(j["ftl"]["translation_reads"].get<int64_t>(), 1);
  EXPECT_EQ(j["flash"]["reads"].get<int64_t>(), 3);
  // the hit is an idle read; the miss adds a whole sensing and a transfer before it
  EXPECT_NEAR(times(j)["min_us"].get<double>(), to_us(kRead), 1e-6);
  EXPECT_GT(times(j)["max_us"].get<double>(), to_us(kRead + us(75)));
  // The ideal mapping table reads no translation pages.
  d.ideal_mapping_table = true;
  const nlohmann::json ideal = simulate_scenario(d, s);
  EXPECT_EQ(ideal["ftl"]["translation_reads"].get<int64_t>(), 0);
  EXPECT_EQ(ideal["flash"]["reads"].get<int64_t>(), 2);
}

// Transaction scheduling: reads queued for the two planes of one die run as one multi-plane operation (one sensing
// for both, then their pages one after the other over the channel); reads for one plane wait for each other.
TEST(TransactionScheduler, ReadsQueuedForTheTwoPlanesOfADieShareOneSensing) {
  const DeviceXml d = idle_device();
  RunOptions opt;
  opt.model.multiplane_same_page = false;  // the pages' offsets in their planes do not matter here
  // CWDP striping over 8 channels x 4 chips x 2 dies x 2 planes: logical page 0 and 128 are on plane 0 of die 0, 64 on
  // its plane 1. The first read finds the die idle and starts alone; the other two queue behind it and go together.
  const ScenarioXml s{{trace("mp.trace", "0 0 0 16 1\n0 0 2048 16 1\n0 0 1024 16 1\n")}};
  const nlohmann::json j = simulate_scenario(d, s, opt);
  EXPECT_EQ(j["flash"]["multiplane_ops"].get<int64_t>(), 1);
  EXPECT_EQ(j["flash"]["reads"].get<int64_t>(), 3);
  const Time page = bytes(8192) / kChannel;
  const Time alone = bytes(64) / kPcie + us(75) + page + bytes(8192 + 16) / kPcie;
  EXPECT_NEAR(times(j)["min_us"].get<double>(), to_us(alone), 1e-6);
  EXPECT_NEAR(times(j)["max_us"].get<double>(), to_us(alone + us(75) + page * 2.0), 1e-6);
  // Two reads for plane 0 alone: no multi-plane operation, the second sensing waits for the first page to leave.
  const ScenarioXml one{{trace("sp.trace", "0 0 0 16 1\n0 0 2048 16 1\n")}};
  const nlohmann::json k = simulate_scenario(d, one, opt);
  EXPECT_EQ(k["flash"]["multiplane_ops"].get<int64_t>(), 0);
  EXPECT_NEAR(times(k)["max_us"].get<double>(), to_us(alone + us(75) + page), 1e-6);
}

// Garbage collection: once a plane runs short of free blocks, victims are relocated and erased, one job at a time;
// every host write still completes, and the flash programs are the host's plus GC's.
TEST(GarbageCollection, RewritesOfAFullPlaneAreServedByRelocationAndErase) {
  DeviceXml d = idle_device();
  d.channels = 1;
  d.chips_per_channel = 1;
  d.dies_per_chip = 1;
  d.planes_per_die = 1;
  d.blocks_per_plane = 16;
  d.pages_per_block = 8;
  d.overprovisioning = 0.25;
  d.gc_exec_threshold = 0.2;
  std::string lines;
  const int64_t writes = 600;
  for (int64_t i = 0; i < writes; ++i)  // 600 writes over the 96 logical pages, at 1 ms intervals
    lines += std::to_string(i * 1000000) + " 0 " + std::to_string((i * 37 % 96) * 16) + " 16 0\n";
  const ScenarioXml s{{trace("gc.trace", lines)}};
  const nlohmann::json j = simulate_scenario(d, s);
  const nlohmann::json& ftl = j["ftl"];
  EXPECT_EQ(j["requests"].get<int64_t>(), writes);
  EXPECT_EQ(ftl["host_page_writes"].get<int64_t>(), writes);
  EXPECT_GT(ftl["gc_executions"].get<int64_t>(), 0);
  EXPECT_EQ(ftl["erases"], ftl["gc_executions"]);
  EXPECT_EQ(j["flash"]["erases"], ftl["erases"]);
  EXPECT_EQ(j["flash"]["programs"].get<int64_t>(), ftl["host_page_writes"].get<int64_t>() + ftl["gc_page_writes"].get<int64_t>());
  EXPECT_GE(ftl["write_amplification"].get<double>(), 1.0);
}

}  // namespace
}  // namespace bitline::ssd
