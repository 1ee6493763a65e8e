// The real-drive configurations (configs/ssd/drives/, docs/ssd.md "Against real drives"): each fio-shaped workload's
// result pinned at the model's value in a narrow band (+-1%), so that a change of the model that moves a row of the
// table fails here and the table is regenerated (make ssd-drives) with the reason. These are the model's values,
// not the measured ones: the gaps to the measurements are explained in the docs, never tuned away.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "ssd/device.hpp"
#include "ssd/mqsim_xml.hpp"

namespace bitline::ssd {
namespace {

struct Pinned {
  const char* drive;
  const char* workload;
  double iops;  // the model's value
};

// bitline's values of the table (IOPS; MB/s = IOPS x request size / 10^6), with the drives' SLC cache (TurboWrite,
// docs/ssd.md "SLC caching"), independent multi-plane reads (docs/ssd.md "Host queues and multi-plane reads"), 4 KiB mapping
// units and cache programs (docs/ssd.md "Mapping units"): the writes of these workloads all fit in the cache. The steady-state
// random writes are not pinned here: 1,000,000 writes with garbage collection take about 8 s each of this machine (make
// ssd-drives runs them); nor are the 64 GB fills past the cache (about 4 s each; make ssd-drives, scripts/ssd_slc_cache.py).
const Pinned kPinned[] = {
    {"samsung-980pro-1tb", "randread-4k-qd1", 20612},
    {"samsung-980pro-1tb", "randread-4k-qd32", 440451},
    {"samsung-980pro-1tb", "seqread-128k-qd32", 54012},
    {"samsung-980pro-1tb", "seqwrite-128k-qd32", 35814},
    {"samsung-980pro-1tb", "randwrite-4k-qd1", 1048996},
    {"samsung-980pro-1tb", "randwrite-4k-qd32-fresh", 1058729},
    {"samsung-970evoplus-1tb", "randread-4k-qd1", 18482},
    {"samsung-970evoplus-1tb", "randread-4k-qd32", 396612},
    {"samsung-970evoplus-1tb", "seqread-128k-qd32", 27007},
    {"samsung-970evoplus-1tb", "seqwrite-128k-qd32", 26998},
    {"samsung-970evoplus-1tb", "randwrite-4k-qd1", 726993},
    {"samsung-970evoplus-1tb", "randwrite-4k-qd32-fresh", 851055},
    {"samsung-990pro-1tb", "randread-4k-qd1", 20992},
    {"samsung-990pro-1tb", "randread-4k-qd32", 407326},
    {"samsung-990pro-1tb", "seqread-128k-qd32", 54013},
    {"samsung-990pro-1tb", "seqwrite-128k-qd32", 34375},
    {"samsung-990pro-1tb", "randwrite-4k-qd1", 596172},
    {"samsung-990pro-1tb", "randwrite-4k-qd32-fresh", 591828},
    // the data sheets' conditions of the QD32 random-read ratings: 16 and 4 host queues of 32 (docs/ssd.md, "Host queues
    // and multi-plane reads"), with the drives' independent multi-plane reads
    {"samsung-980pro-1tb", "randread-4k-qd32-t16", 889260},
    {"samsung-970evoplus-1tb", "randread-4k-qd32-t4", 708597},
    {"samsung-990pro-1tb", "randread-4k-qd32-t16", 979712},
};

TEST(SsdDrives, EveryWorkloadOnEveryDriveStaysAtTheModelsValue) {
  const std::string dir = std::string(BITLINE_SOURCE_DIR) + "/configs/ssd/drives/";
  for (const Pinned& p : kPinned) {
    const DeviceXml d = read_device_xml(dir + p.drive + ".xml");
    const WorkloadXml w = read_workload_xml(dir + "fio/" + p.workload + ".xml");
    ASSERT_TRUE(d.defaulted.empty()) << p.drive << ": every element is given, with its source";
    const nlohmann::json j = simulate_workload(d, w);
    const double iops = j["scenarios"][0]["iops"].get<double>();
    EXPECT_NEAR(iops, p.iops, 0.01 * p.iops) << p.drive << " " << p.workload;
  }
}

// The 990 PRO's file (configs/ssd/drives/samsung-990pro-1tb.xml): its sourced geometry, read as written: 8 channels
// (assumption) x 2 dies of 512 Gb (V-NAND v7) x 4 planes (the die's four-plane design), 2,000 MT/s (v7's Toggle
// interface), and 1 TiB of flash to 0.1% (the 176-layer block of the file's assumption rounds down), with the 980 PRO's
// TurboWrite sizes (an assumption: none published for it was found).
TEST(SsdDrives, The990ProFileHasItsSourcedGeometry) {
  const DeviceXml d = read_device_xml(std::string(BITLINE_SOURCE_DIR) + "/configs/ssd/drives/samsung-990pro-1tb.xml");
  EXPECT_TRUE(d.defaulted.empty());
  EXPECT_EQ(d.dies(), 16);
  EXPECT_EQ(d.planes(), 64);
  EXPECT_EQ(d.channel_transfer_rate, 2000);
  EXPECT_EQ(d.bits_per_cell(), 3);
  const double bytes = double(d.pages()) * double(d.page_size);
  EXPECT_NEAR(bytes / double(int64_t(1) << 40), 1.0, 0.002);
  EXPECT_DOUBLE_EQ(double(d.slc_static_bytes.raw()) + double(d.slc_dynamic_max_bytes.raw()), 42e9);
}

}  // namespace
}  // namespace bitline::ssd
