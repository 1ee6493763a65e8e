// Deep host queues and multi-plane reads (docs/ssd.md, "Host queues and multi-plane reads"): how random reads scale
// with the requests in flight, up to what the dies can serve, and what a multi-plane read of independent pages
// (ssd_device.independent_plane_reads) costs, each time written out by hand.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ssd/device.hpp"
#include "ssd/mqsim_xml.hpp"
#include "ssd_test_util.hpp"

namespace bitline::ssd {
namespace {

namespace fs = std::filesystem;

// Host link: 4 lanes x 1 GB/s; channel: 333 MT/s x 1 byte; tR 75 us (MQSim's defaults).
const Bandwidth kPcie = bytes_per_s(4e9);
const Bandwidth kChannel = bytes_per_s(333e6);
const Time kTr = us(75);
const Time kPage = bytes(4096) / kChannel;                                       // a 4 KiB read's page over the channel
const Time kAlone = bytes(64) / kPcie + kTr + kPage + bytes(4096 + 16) / kPcie;  // an idle 4 KiB read

/// MQSim's default device with the whole mapping table in DRAM; `dies` channels of one chip of one die of two planes.
DeviceXml small_device(int64_t dies, bool independent) {
  DeviceXml d = test::die_per_channel(dies, 64);
  d.independent_plane_reads = independent;
  return d;
}

/// One closed-loop flow of 4 KiB random reads, `depth` of them in flight, `n` in all.
ScenarioXml random_reads(int64_t depth, int64_t n) {
  FlowXml f;
  f.generator = Generator::QueueDepth;
  f.read_ratio = 1.0;
  f.address_distribution = AddressDistribution::RandomUniform;
  f.avg_size = 8;
  f.alignment_unit = 8;
  f.queue_depth = depth;
  f.total_requests = n;
  f.seed = 7;
  return ScenarioXml{{f}};
}

const nlohmann::json& times(const nlohmann::json& j) { return j["flows"][0]["device_response_time"]; }

FlowXml trace(const std::string& name, const std::string& lines) { return test::trace_flow("bitline_queues", name, lines); }

// A multi-plane read of independent pages: one sensing (tR) for the die's two planes, then the two pages over the
// channel one after the other. On one die of two planes (CWDP: logical page 2k on plane 0, 2k + 1 on plane 1; 8 KiB
// pages, 16 sectors), logical page 0 (offset 0 of its block) and page 3 (plane 1, offset 1) differ in their page
// offsets: with MQSim's rule (the same offset in every plane) the second waits for the first; with independent plane
// reads the two share one sensing. A third read, queued behind a busy die, is what pairs: the first starts alone.
TEST(MultiPlaneRead, IndependentPagesShareOneSensingByHand) {
  const ScenarioXml s{{trace("mp.trace", "0 0 0 8 1\n0 0 64 8 1\n0 0 48 8 1\n")}};  // pages 0 (plane 0), 4 (plane 0), 3 (plane 1)
  // independent: page 0 alone, then pages 4 and 3 together (one tR, two pages over the channel)
  const nlohmann::json on = simulate_scenario(small_device(1, true), s);
  EXPECT_EQ(on["flash"]["multiplane_ops"].get<int64_t>(), 1);
  EXPECT_EQ(on["flash"]["reads"].get<int64_t>(), 3);
  EXPECT_NEAR(times(on)["min_us"].get<double>(), to_us(kAlone), 1e-6);
  // the pair starts when the first's page has left the die; its second page leaves after its first
  EXPECT_NEAR(times(on)["max_us"].get<double>(), to_us(kAlone + kTr + kPage * 2.0), 1e-6);
  // MQSim's rule: pages 4 (offset 2) and 3 (offset 1) cannot pair: three sensings one after the other
  const nlohmann::json off = simulate_scenario(small_device(1, false), s);
  EXPECT_EQ(off["flash"]["multiplane_ops"].get<int64_t>(), 0);
  EXPECT_NEAR(times(off)["max_us"].get<double>(), to_us(kAlone + (kTr + kPage) * 2.0), 1e-6);
  // Programs keep the same-offset rule: the key is about reads only (and it is off on MQSim's device).
  EXPECT_FALSE(DeviceXml().independent_plane_reads);
}

// Queue-depth scaling: IOPS of 4 KiB random reads on 4 dies of 2 planes at 1, 2, 4, ..., 256 requests in flight never
// fall, start at one read's latency and saturate at the dies' bound. A die busy with a multi-plane read of its two
// planes is free again when its second page has left: dies x planes / (tR + planes x page transfer) =
// 4 x 2 / (75 + 2 x 12.30) us = 80,321 IOPS (PCIe carries 4 KiB in 1.0 us and each die has a channel of its own, so
// neither binds; the run's end and the die operations that find one plane's reads only keep it 2% short). With
// MQSim's rule, pages at random offsets rarely pair, and the bound is nearer one plane at a time:
// dies / (tR + page) = 45,819 IOPS.
TEST(HostQueues, RandomReadIopsRiseWithDepthToTheDiesBound) {
  const int64_t dies = 4, planes = 2, n = 160000;
  const double bound = double(dies * planes) / to_s(kTr + kPage * double(planes));
  const double one_plane = double(dies) / to_s(kTr + kPage);
  EXPECT_NEAR(bound, 80321, 1);
  EXPECT_NEAR(one_plane, 45819, 1);
  for (bool independent : {true, false}) {
    std::vector<double> iops;
    for (int64_t q = 1; q <= 256; q *= 2) {
      const nlohmann::json j = simulate_scenario(small_device(dies, independent), random_reads(q, n));
      iops.push_back(j["iops"].get<double>());
      SCOPED_TRACE(testing::Message() << "independent " << independent << " depth " << q << ": " << iops.back() << " IOPS");
      if (iops.size() > 1) {
        EXPECT_GE(iops.back(), iops[iops.size() - 2]);
      }
      EXPECT_LE(iops.back(), bound * 1.0001);
    }
    // one request in flight: one read's latency at a time
    EXPECT_NEAR(iops.front(), 1.0 / to_s(kAlone), 0.002 / to_s(kAlone));
    if (independent) {
      // saturated: nearly every die operation reads both planes (98% of them here; a die that frees with reads for one
      // plane only in the first 32 of its queue reads it alone) and the run's last requests drain: within 2.5%
      EXPECT_NEAR(iops.back(), bound, 0.025 * bound);
    } else {
      EXPECT_GT(iops.back(), one_plane * 0.97);  // saturated one plane at a time, with a few same-offset pairs
      EXPECT_LT(iops.back(), one_plane * 1.15);
    }
  }
}

}  // namespace
}  // namespace bitline::ssd
