// The general SSD end to end: hand-computed latencies on an idle device, channel
// contention, determinism, and every class of bad input in both XML files and the trace.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/run_bitline.hpp"
#include "core/error.hpp"
#include "ssd/device.hpp"
#include "ssd/mqsim_xml.hpp"

namespace bitline::ssd {
namespace {

namespace fs = std::filesystem;

std::string temp_file(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / ("bitline_ssd_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

DeviceXml idle_device() {
  DeviceXml d;  // MQSim's default geometry and timing
  d.file = "test";
  d.ideal_mapping_table = true;  // no translation reads: the read path alone
  d.dram_data_rate = 100;        // MQSim's shipped DRAM cache: 100 MT/s, 1-byte bursts
  d.dram_burst_size = Bytes(1);
  return d;
}

FlowXml one_request(bool read, CachingMode caching = CachingMode::TurnedOff) {
  FlowXml f;
  f.read_ratio = read ? 1.0 : 0.0;
  f.caching_mode = caching;
  f.avg_size = 8;  // 4 KiB
  f.alignment_unit = 16;
  f.queue_depth = 1;
  f.total_requests = 1;
  return f;
}

double mean_us(const nlohmann::json& j) { return j["flows"][0]["device_response_time"]["mean_us"].get<double>(); }

// Host link: 4 lanes x 1 GB/s; channel: 333 MT/s x 1 byte.
const Bandwidth kPcie = bytes_per_s(4e9);
const Bandwidth kChannel = bytes_per_s(333e6);

TEST(SsdDevice, IdleReadIsCommandFetchSenseTransferAndDataToHost) {
  ScenarioXml s{{one_request(true)}};
  auto j = simulate_scenario(idle_device(), s);
  Time expect = bytes(64) / kPcie + us(75) + bytes(4096) / kChannel + bytes(4096 + 16) / kPcie;
  EXPECT_NEAR(mean_us(j), to_us(expect), 1e-6);
  EXPECT_EQ(j["flash"]["reads"].get<int64_t>(), 1);
}

TEST(SsdDevice, IdleWriteWithoutCacheIsFetchDmaTransferProgramCompletion) {
  ScenarioXml s{{one_request(false)}};
  auto j = simulate_scenario(idle_device(), s);
  Time expect = bytes(64) / kPcie + bytes(4096) / kPcie + bytes(4096) / kChannel + us(750) + bytes(16) / kPcie;
  EXPECT_NEAR(mean_us(j), to_us(expect), 1e-6);
}

TEST(SsdDevice, IdleCachedWriteCompletesAfterTheDramWrite) {
  ScenarioXml s{{one_request(false, CachingMode::WriteCache)}};
  auto j = simulate_scenario(idle_device(), s);
  // MQSim's DRAM time: tRCD + tCL + (bytes / burst / 2) bursts of 1/(100 MT/s)
  Time dram = ns(13 + 13 + 4096 / 1 / 2 * 10.0);
  Time expect = bytes(64) / kPcie + bytes(4096) / kPcie + dram + bytes(16) / kPcie;
  EXPECT_NEAR(mean_us(j), to_us(expect), 1e-6);
  EXPECT_EQ(j["flash"]["programs"].get<int64_t>(), 1);  // still flushed to flash
}

/// Two 4 KiB reads arriving together at logical pages a and b (a trace flow).
nlohmann::json two_reads(int64_t lpa_a, int64_t lpa_b) {
  std::string tr = temp_file("two.trace", "0 0 " + std::to_string(lpa_a * 16) + " 8 1\n0 0 " + std::to_string(lpa_b * 16) + " 8 1\n");
  FlowXml f;
  f.kind = FlowKind::Trace;
  f.trace_path = tr;
  f.caching_mode = CachingMode::TurnedOff;
  ScenarioXml s{{f}};
  return simulate_scenario(idle_device(), s);
}

TEST(SsdDevice, TwoReadsOnOneChannelSerialiseTheirTransfers) {
  // CWDP: logical pages 0 and 8 are chips 0 and 1 of channel 0 (senses overlap, transfers queue)
  auto j = two_reads(0, 8);
  Time alone = bytes(64) / kPcie + us(75) + bytes(4096) / kChannel + bytes(4096 + 16) / kPcie;
  auto& r = j["flows"][0]["device_response_time"];
  EXPECT_NEAR(r["min_us"].get<double>(), to_us(alone), 1e-6);
  EXPECT_NEAR(r["max_us"].get<double>(), to_us(alone + bytes(4096) / kChannel), 1e-6);
}

TEST(SsdDevice, TwoReadsOnTwoChannelsProceedInParallel) {
  auto j = two_reads(0, 1);  // channels 0 and 1
  Time alone = bytes(64) / kPcie + us(75) + bytes(4096) / kChannel + bytes(4096 + 16) / kPcie;
  auto& r = j["flows"][0]["device_response_time"];
  // flash in parallel; only the host link queues: the second's data follows the first's to the host
  EXPECT_NEAR(r["min_us"].get<double>(), to_us(alone), 1e-6);
  EXPECT_NEAR(r["max_us"].get<double>(), to_us(alone + bytes(4096 + 16) / kPcie), 1e-6);
}

TEST(SsdDevice, TwoReadsOnOnePlaneWaitForTheSense) {
  // logical pages 0 and 128 share plane 0 (128 planes): the second sense starts when the first data is out
  auto j = two_reads(0, 128);
  Time alone = bytes(64) / kPcie + us(75) + bytes(4096) / kChannel + bytes(4096 + 16) / kPcie;
  auto& r = j["flows"][0]["device_response_time"];
  EXPECT_GT(r["max_us"].get<double>(), to_us(alone + us(75)));
}

/// A trace flow of the given lines on the idle device with model options m.
nlohmann::json trace_run(const std::string& lines, const SsdModelOptions& m, DeviceXml d = idle_device(),
                         CachingMode caching = CachingMode::TurnedOff) {
  FlowXml f;
  f.kind = FlowKind::Trace;
  f.trace_path = temp_file("t.trace", lines);
  f.caching_mode = caching;
  ScenarioXml s{{f}};
  RunOptions o;
  o.model = m;
  return simulate_scenario(d, s, o);
}

TEST(SsdModel, DiesOfOneChipRunOneOperationAtATimeUnderChipScheduling) {
  // CWDP: logical pages 0 and 32 are dies 0 and 1 of chip 0 on channel 0
  std::string two = "0 0 0 8 1\n0 0 512 8 1\n";
  Time alone = bytes(64) / kPcie + us(75) + bytes(4096) / kChannel + bytes(4096 + 16) / kPcie;
  SsdModelOptions m;
  auto chip = trace_run(two, m)["flows"][0]["device_response_time"];
  // the second die starts when the first's data is out: a whole sense + transfer later
  EXPECT_NEAR(chip["max_us"].get<double>(), to_us(alone + us(75) + bytes(4096) / kChannel), 1e-6);
  m.chip_scheduling = false;
  auto die = trace_run(two, m)["flows"][0]["device_response_time"];
  EXPECT_NEAR(die["max_us"].get<double>(), to_us(alone + bytes(4096) / kChannel), 1e-6);  // only the channel queues
}

TEST(SsdModel, AChipStartsOnlyWhileItsChannelIsIdle) {
  // page 0 on chip 0; page 8 on chip 1 of the same channel arrives at 80 us, while page 0's data is on the
  // channel (75 us + 12.3 us): with issue_on_idle_channel its sense starts when that transfer ends
  std::string two = "0 0 0 8 1\n80000 0 128 8 1\n";
  Time alone = bytes(64) / kPcie + us(75) + bytes(4096) / kChannel + bytes(4096 + 16) / kPcie;
  SsdModelOptions m;
  auto gated = trace_run(two, m)["flows"][0]["device_response_time"];
  EXPECT_NEAR(gated["min_us"].get<double>(), to_us(alone), 1e-6);
  EXPECT_NEAR(gated["max_us"].get<double>(), to_us(alone + us(75) + bytes(4096) / kChannel - us(80)), 1e-6);
  m.issue_on_idle_channel = false;
  auto free = trace_run(two, m)["flows"][0]["device_response_time"];
  EXPECT_NEAR(free["max_us"].get<double>(), to_us(alone), 1e-6);  // its sense overlaps the transfer
}

TEST(SsdModel, PartialPageWriteReadsTheSectorsItDoesNotCover) {
  // first half, then second half of logical page 0 (written later, so the first program has landed)
  std::string lines = "0 0 0 8 0\n5000000 0 8 8 0\n";
  SsdModelOptions m;
  auto j = trace_run(lines, m);
  EXPECT_EQ(j["ftl"]["update_reads"].get<int64_t>(), 1);
  EXPECT_EQ(j["flash"]["reads"].get<int64_t>(), 1);
  // the same half twice covers what was written: no update read
  EXPECT_EQ(trace_run("0 0 0 8 0\n5000000 0 0 8 0\n", m)["ftl"]["update_reads"].get<int64_t>(), 0);
  m.update_reads = false;
  EXPECT_EQ(trace_run(lines, m)["flash"]["reads"].get<int64_t>(), 0);
}

TEST(SsdModel, CachedWriteMissReadsItsTranslationPageWithoutDelayingTheHost) {
  DeviceXml d = idle_device();
  d.ideal_mapping_table = false;
  SsdModelOptions m;
  auto j = trace_run("0 0 0 8 0\n", m, d, CachingMode::WriteCache);
  Time dram = ns(13 + 13 + 4096 / 1 / 2 * 10.0);
  EXPECT_NEAR(mean_us(j), to_us(bytes(64) / kPcie + bytes(4096) / kPcie + dram + bytes(16) / kPcie), 1e-6);
  EXPECT_EQ(j["ftl"]["translation_reads"].get<int64_t>(), 1);
  EXPECT_EQ(j["flash"]["reads"].get<int64_t>(), 1);
  EXPECT_EQ(j["flash"]["programs"].get<int64_t>(), 1);
  // two writes to pages of one translation page: the second joins the first's translation read
  auto two = trace_run("0 0 0 8 0\n0 0 16 8 0\n", m, d, CachingMode::WriteCache);
  EXPECT_EQ(two["ftl"]["translation_reads"].get<int64_t>(), 1);
  m.write_translation = false;
  EXPECT_EQ(trace_run("0 0 0 8 0\n", m, d, CachingMode::WriteCache)["flash"]["reads"].get<int64_t>(), 0);
}

TEST(SsdModel, SharedCmtGivesEachFlowATableOfTheWholeCapacity) {
  // a CMT of one entry; flow 0 reads its page 0 twice, flow 1 reads its own page 0 in between
  DeviceXml d = idle_device();
  d.ideal_mapping_table = false;
  d.cmt_sharing = CmtSharing::Shared;
  d.cmt_capacity = Bytes(int64_t(std::ceil((2 * std::log2(double(d.pages())) + double(d.sectors_per_page())) / 8)));
  auto flow = [](const std::string& name, const std::string& lines) {
    FlowXml f;
    f.kind = FlowKind::Trace;
    f.trace_path = temp_file(name, lines);
    f.caching_mode = CachingMode::TurnedOff;
    return f;
  };
  ScenarioXml s{{flow("f0.trace", "0 0 0 8 1\n5000000 0 0 8 1\n"), flow("f1.trace", "1000000 0 0 8 1\n")}};
  RunOptions o;
  auto j = simulate_scenario(d, s, o);  // MQSim: a table per flow, so flow 1 does not evict flow 0's entry
  EXPECT_EQ(j["ftl"]["cmt_hits"].get<int64_t>(), 1);
  EXPECT_EQ(j["ftl"]["cmt_misses"].get<int64_t>(), 2);
  EXPECT_EQ(j["ftl"]["translation_writebacks"].get<int64_t>(), 0);
  // one table: flow 1's miss evicts flow 0's dirty entry (a write-back, its page stays in memory), then
  // flow 0's miss evicts flow 1's (a second write-back)
  o.model.cmt_per_flow = false;
  auto one = simulate_scenario(d, s, o);
  EXPECT_EQ(one["ftl"]["cmt_hits"].get<int64_t>(), 0);
  EXPECT_EQ(one["ftl"]["cmt_misses"].get<int64_t>(), 3);
  EXPECT_EQ(one["ftl"]["translation_writebacks"].get<int64_t>(), 2);
}

TEST(SsdModel, DestageBackPressureHoldsWritesUntilProgramsEnd) {
  // 1 page per plane of back-pressure on a device of 2 planes: the third 8 KiB write waits for a program
  DeviceXml d = idle_device();
  d.channels = 1;
  d.chips_per_channel = 1;
  d.dies_per_chip = 1;
  std::string lines = "0 0 0 16 0\n0 0 16 16 0\n0 0 32 16 0\n";
  SsdModelOptions m;
  auto j = trace_run(lines, m, d, CachingMode::WriteCache);
  EXPECT_GT(j["flows"][0]["device_response_time"]["max_us"].get<double>(), 750.0);
  m.destage_pages_per_plane = 0;  // unlimited: all three complete after their DRAM writes
  auto u = trace_run(lines, m, d, CachingMode::WriteCache);
  EXPECT_LT(u["flows"][0]["device_response_time"]["max_us"].get<double>(), 200.0);
}

TEST(SsdDevice, DeeperQueueRaisesThroughputAndLatency) {
  auto run_qd = [](int64_t qd) {
    FlowXml f = one_request(true);
    f.queue_depth = qd;
    f.total_requests = 4000;
    ScenarioXml s{{f}};
    return simulate_scenario(idle_device(), s);
  };
  auto q1 = run_qd(1), q64 = run_qd(64);
  // far from 64x: random pages collide on chips, and a chip waits for its channel to be idle before it starts
  EXPECT_GT(q64["iops"].get<double>(), 15 * q1["iops"].get<double>());
  EXPECT_GT(mean_us(q64), mean_us(q1));
}

TEST(SsdDevice, SameInputsGiveIdenticalResults) {
  DeviceXml d;
  d.file = "test";
  d.preconditioning = true;
  FlowXml f = one_request(false, CachingMode::WriteCache);
  f.read_ratio = 0.3;
  f.initial_occupancy = 0.75;
  f.total_requests = 20000;
  f.queue_depth = 8;
  ScenarioXml s{{f}};
  auto a = simulate_scenario(d, s), b = simulate_scenario(d, s);
  a.erase("wall");
  b.erase("wall");
  EXPECT_EQ(a.dump(), b.dump());
}

// ---- garbage collection at steady state ------------------------------------------------

// Found against MQSim on a small device (configs/ssd/device-gc.xml: 2 chips of 2 planes, 256 blocks each, written at
// random from empty for 200 s by gc-write.xml, so that GC runs all the time after the first fill): (1) a program
// found blocked for want of a free page started GC from inside the die's scheduling loop, whose reads started the
// (still idle) die again from inside that loop, so one relocation was lost and the victim was erased with a valid
// page ("erasing a block that still holds valid pages", under RGA); (2) host writes filled the frontier GC had opened
// from the last free block, so GC could not empty its victim and the run stopped before its end (GREEDY, RANDOM);
// (3) GC went after host writes, where MQSim's non-preemptive GC goes first (+14% IOPS). Every policy must run to
// the stop time with each GC ending in its erase, and GREEDY, RGA and RANDOM must give MQSim's IOPS (measured with
// MQSim on these files, docs/ssd.md) within 3%. MQSim aborts on FIFO ("Inconsistent status in the
// Invalidate_page_in_block function"), so FIFO is only checked to run.
TEST(SsdGc, EveryPolicyAtSteadyStateOnTheSmallDeviceAgreesWithMqsim) {
  const std::string dir = std::string(BITLINE_SOURCE_DIR) + "/configs/ssd/";
  std::ifstream in(dir + "device-gc.xml");
  std::stringstream text;
  text << in.rdbuf();
  const WorkloadXml w = read_workload_xml(dir + "gc-write.xml");
  ASSERT_EQ(w.scenarios.size(), 1u);
  const struct {
    GcPolicy policy;
    double mqsim_iops;  // 0: not compared
  } cases[] = {{GcPolicy::Greedy, 1645.7}, {GcPolicy::Rga, 1620.2}, {GcPolicy::Random, 1439.2}, {GcPolicy::Fifo, 0}};
  for (const auto& c : cases) {
    SCOPED_TRACE(int(c.policy));
    DeviceXml d = parse_device_xml(text.str(), "device-gc.xml");
    d.gc_policy = c.policy;
    nlohmann::json j;
    ASSERT_NO_THROW(j = simulate_scenario(d, w.scenarios[0]));
    EXPECT_GE(j["simulated_s"].get<double>(), 199.9);
    const auto& ftl = j["ftl"];
    EXPECT_GT(ftl["gc_executions"].get<int64_t>(), 400);
    EXPECT_EQ(ftl["erases"], ftl["gc_executions"]);
    if (c.mqsim_iops > 0) {
      EXPECT_NEAR(j["iops"].get<double>(), c.mqsim_iops, 0.03 * c.mqsim_iops);
    }
  }
}

// ---- bad input ---------------------------------------------------------------------

std::string device_text(const std::string& replace_from = "", const std::string& replace_to = "") {
  std::ifstream in(std::string(BITLINE_SOURCE_DIR) + "/configs/ssd/device.xml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string t = ss.str();
  if (!replace_from.empty()) {
    auto pos = t.find(replace_from);
    EXPECT_NE(pos, std::string::npos) << replace_from;
    if (pos != std::string::npos) t.replace(pos, replace_from.size(), replace_to);
  }
  return t;
}

void expect_device_error(const std::string& text, const std::string& words) {
  try {
    parse_device_xml(text, "dev.xml");
    ADD_FAILURE() << "accepted; expected an error with: " << words;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dev.xml"), std::string::npos) << e.what();
  }
}

TEST(SsdBadInput, DeviceXml) {
  EXPECT_NO_THROW(parse_device_xml(device_text(), "dev.xml"));
  expect_device_error(device_text("<Seed>321</Seed>", "<Sed>321</Sed>"), "<Sed>");
  expect_device_error(device_text("<Flash_Channel_Count>8<", "<Flash_Channel_Count>eight<"), "not an integer");
  expect_device_error(device_text("<Flash_Channel_Count>8<", "<Flash_Channel_Count>99999999999999999999<"), "Flash_Channel_Count");
  expect_device_error(device_text("<Block_No_Per_Plane>2048<", "<Block_No_Per_Plane>1000000<"), "blocks");
  expect_device_error(device_text("<Page_Capacity>8192<", "<Page_Capacity>1000<"), "multiple");
  expect_device_error(device_text("<Overprovisioning_Ratio>0.07<", "<Overprovisioning_Ratio>0.01<"), "no room");
  expect_device_error(device_text("<Overprovisioning_Ratio>0.07<", "<Overprovisioning_Ratio>nan<"), "not a number");
  expect_device_error(device_text("<Plane_Allocation_Scheme>CWDP<", "<Plane_Allocation_Scheme>CWD<"), "CWD");
  expect_device_error(device_text("<GC_Block_Selection_Policy>RGA<", "<GC_Block_Selection_Policy>RANDOM_PP<"), "does not model");
  expect_device_error(device_text("<GC_Block_Selection_Policy>RGA<", "<GC_Block_Selection_Policy>random_p<"),
                      "<GC_Block_Selection_Policy> inside <Device_Parameter_Set>: 'random_p' is an MQSim choice that bitline "
                      "does not model (supported: GREEDY, RGA, RANDOM, FIFO)");
  expect_device_error(device_text("<GC_Block_Selection_Policy>RGA<", "<GC_Block_Selection_Policy>GREEDYY<"),
                      "'GREEDYY' is not one of GREEDY, RGA, RANDOM, FIFO");
  expect_device_error(device_text("<Transaction_Scheduling_Policy>PRIORITY_OUT_OF_ORDER<", "<Transaction_Scheduling_Policy>FLIN<"),
                      "'FLIN' is an MQSim choice that bitline does not model");
  expect_device_error(device_text("<Plane_Allocation_Scheme>CWDP<", "<Plane_Allocation_Scheme>CWDD<"), "'CWDD' is not supported");
  expect_device_error(device_text("<Seed>321</Seed>", "<Seed>321</Seed><Seed>1</Seed>"), "twice");
  expect_device_error(device_text("<Enabled_Preconditioning>false<", "<Enabled_Preconditioning>maybe<"), "true or false");
  expect_device_error(device_text("</Execution_Parameter_Set>", ""), "not well-formed");
  expect_device_error("<Other/>", "root element");
  expect_device_error("<Execution_Parameter_Set/>", "no <Device_Parameter_Set>");
}

// Each MQSim choice is resolved to its enum when the file is read, its name matched ignoring case.
TEST(SsdXml, ChoicesResolveOnceToEnumsIgnoringCase) {
  DeviceXml d = parse_device_xml(device_text(), "dev.xml");
  EXPECT_EQ(d.gc_policy, GcPolicy::Rga);  // as configs/ssd/device.xml says
  EXPECT_EQ(d.scheduling, Scheduling::PriorityOutOfOrder);
  EXPECT_EQ(d.technology, FlashTechnology::Mlc);
  EXPECT_EQ(d.bits_per_cell(), 2);
  EXPECT_EQ(plane_allocation_name(*d.plane_allocation), "CWDP");
  d = parse_device_xml(device_text("<GC_Block_Selection_Policy>RGA<", "<GC_Block_Selection_Policy>fifo<"), "dev.xml");
  EXPECT_EQ(d.gc_policy, GcPolicy::Fifo);
  EXPECT_EQ(gc_policies().name(*d.gc_policy), "FIFO");  // echoed back as MQSim spells it
  d = parse_device_xml(device_text("<Plane_Allocation_Scheme>CWDP<", "<Plane_Allocation_Scheme>wPcD<"), "dev.xml");
  EXPECT_EQ(*d.plane_allocation, (PlaneAllocation{PlaneDim::Way, PlaneDim::Plane, PlaneDim::Channel, PlaneDim::Die}));
  EXPECT_EQ(plane_allocation_name(*d.plane_allocation), "WPCD");
  d = parse_device_xml(device_text("<Flash_Technology>MLC<", "<Flash_Technology>Tlc<"), "dev.xml");
  EXPECT_EQ(d.bits_per_cell(), 3);

  WorkloadXml w = parse_workload_xml(
      "<MQSim_IO_Scenarios><IO_Scenario><IO_Flow_Parameter_Set_Synthetic><Stop_Time>1000</Stop_Time>"
      "<Priority_Class>urgent</Priority_Class><Device_Level_Data_Caching_Mode>Read_Cache</Device_Level_Data_Caching_Mode>"
      "<Synthetic_Generator_Type>bandwidth</Synthetic_Generator_Type><Bandwidth>1000</Bandwidth>"
      "<Address_Distribution>streaming</Address_Distribution><Request_Size_Distribution>normal</Request_Size_Distribution>"
      "</IO_Flow_Parameter_Set_Synthetic><IO_Flow_Parameter_Set_Trace_Based><File_Path>x.trace</File_Path>"
      "<Time_Unit>microsecond</Time_Unit></IO_Flow_Parameter_Set_Trace_Based></IO_Scenario></MQSim_IO_Scenarios>",
      "wl.xml", ".");
  const FlowXml& f = w.scenarios.at(0).flows.at(0);
  EXPECT_EQ(f.priority, Priority::Urgent);
  EXPECT_EQ(f.caching_mode, CachingMode::ReadCache);
  EXPECT_EQ(f.generator, Generator::Bandwidth);
  EXPECT_EQ(f.address_distribution, AddressDistribution::Streaming);
  EXPECT_EQ(f.size_distribution, SizeDistribution::Normal);
  EXPECT_EQ(w.scenarios[0].flows.at(1).time_unit, us(1));
  EXPECT_EQ(time_units().name(ns(1)), "NANOSECOND");
}

// Every value of every choice has its MQSim name (a value added to an enum without a table row fails here).
template <class T>
void expect_every_value_named(const MqsimChoices<T>& t, int n) {
  ASSERT_EQ(int(t.modelled.size()), n) << t.modelled.kind();
  for (int i = 0; i < n; ++i) EXPECT_EQ(t.modelled.find(t.name(T(i))), i) << t.modelled.kind();
}

TEST(SsdXml, EveryChoiceHasItsMqsimName) {
  expect_every_value_named(memory_types(), 1);
  expect_every_value_named(host_interfaces(), 1);
  expect_every_value_named(caching_mechanisms(), 2);
  expect_every_value_named(data_cache_sharing_modes(), 2);
  expect_every_value_named(address_mappings(), 1);
  expect_every_value_named(cmt_sharing_modes(), 2);
  expect_every_value_named(scheduling_policies(), 2);
  expect_every_value_named(gc_policies(), 4);
  expect_every_value_named(comm_protocols(), 1);
  expect_every_value_named(flash_technologies(), 3);
  expect_every_value_named(suspension_supports(), 4);
  expect_every_value_named(plane_dims(), 4);
  expect_every_value_named(priority_classes(), 4);
  expect_every_value_named(caching_modes(), 4);
  expect_every_value_named(generators(), 2);
  expect_every_value_named(address_distributions(), 3);
  expect_every_value_named(size_distributions(), 2);
}

void expect_workload_error(const std::string& text, const std::string& words) {
  try {
    parse_workload_xml(text, "wl.xml", ".");
    ADD_FAILURE() << "accepted; expected an error with: " << words;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

std::string synth(const std::string& body) {
  return "<MQSim_IO_Scenarios><IO_Scenario><IO_Flow_Parameter_Set_Synthetic>" + body +
         "</IO_Flow_Parameter_Set_Synthetic></IO_Scenario></MQSim_IO_Scenarios>";
}

TEST(SsdBadInput, WorkloadXml) {
  EXPECT_NO_THROW(parse_workload_xml(synth("<Stop_Time>1000</Stop_Time>"), "wl.xml", "."));
  expect_workload_error(synth("<Stop_Time>1000</Stop_Time><Read_Percentage>101</Read_Percentage>"), "out of range");
  expect_workload_error(synth("<Stop_Time>1000</Stop_Time><Reads>5</Reads>"), "<Reads>");
  expect_workload_error(synth("<Read_Percentage>50</Read_Percentage>"), "never ends");
  expect_workload_error(synth("<Stop_Time>1000</Stop_Time><Synthetic_Generator_Type>BANDWIDTH</Synthetic_Generator_Type>"), "Bandwidth");
  expect_workload_error(synth("<Stop_Time>1000</Stop_Time><Address_Distribution>ZIPF</Address_Distribution>"), "ZIPF");
  expect_workload_error(synth("<Stop_Time>1000</Stop_Time><Channel_IDs>0,0</Channel_IDs>"), "twice");
  expect_workload_error(synth("<Stop_Time>-5</Stop_Time>"), "out of range");
  expect_workload_error(
      "<MQSim_IO_Scenarios><IO_Scenario><IO_Flow_Parameter_Set_Trace_Based><Time_Unit>NANOSECOND</Time_Unit>"
      "</IO_Flow_Parameter_Set_Trace_Based></IO_Scenario></MQSim_IO_Scenarios>",
      "File_Path");
  expect_workload_error("<MQSim_IO_Scenarios><IO_Scenario/></MQSim_IO_Scenarios>", "without flows");
  expect_workload_error("<MQSim_IO_Scenarios/>", "no <IO_Scenario>");
  // a flow confined to part of the device is refused against the device, not silently widened
  WorkloadXml w = parse_workload_xml(synth("<Stop_Time>1000</Stop_Time><Channel_IDs>0,1</Channel_IDs>"), "wl.xml", ".");
  DeviceXml d;
  d.file = "dev.xml";
  EXPECT_THROW(check_workload(w, d), ConfigError);
}

TEST(SsdBadInput, TraceLines) {
  TraceRecord r;
  std::string why;
  EXPECT_TRUE(parse_trace_line("938513000 4 264719034 16 0", r, why));
  EXPECT_EQ(r.lba, 264719034);
  EXPECT_FALSE(r.read);
  for (std::string bad :
       {"1 2 3 4", "1 2 3 4 1 9", "1 2 x 8 1", "1 2 3 0 1", "1 2 3 8 2", "-1 2 3 8 1", "99999999999999999999999 0 0 8 1"}) {
    why.clear();
    EXPECT_FALSE(parse_trace_line(bad, r, why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
  std::string p = temp_file("back.trace", "100 0 0 8 1\n50 0 0 8 1\n");
  TraceReader tr(p);
  EXPECT_TRUE(tr.next(r));
  try {
    tr.next(r);
    ADD_FAILURE() << "time going backwards accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(":2:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TraceReader("/nonexistent/x.trace"), ConfigError);
}

TEST(SsdBadInput, CliExitsWithTwoAndNamesTheFile) {
  std::string bad_dev = temp_file("bad_dev.xml", device_text("<Seed>321</Seed>", "<Sead>321</Sead>"));
  auto r = test::run_bitline("ssd run --device " + test::shell_quote(bad_dev) + " --workload " +
                             test::shell_quote(std::string(BITLINE_SOURCE_DIR) + "/configs/ssd/read.xml"));
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("bad_dev.xml"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("<Sead>"), std::string::npos) << r.out;
  std::string bad_trace = temp_file("bad.trace", "0 0 0 8 1\n10 0 0 8 7\n");
  std::string wl = temp_file("trace_wl.xml",
                             "<MQSim_IO_Scenarios><IO_Scenario><IO_Flow_Parameter_Set_Trace_Based><File_Path>bad.trace</File_Path>"
                             "</IO_Flow_Parameter_Set_Trace_Based></IO_Scenario></MQSim_IO_Scenarios>");
  r = test::run_bitline("ssd run --device " + test::shell_quote(std::string(BITLINE_SOURCE_DIR) + "/configs/ssd/device.xml") +
                        " --workload " + test::shell_quote(wl) + " --json " + test::shell_quote(wl + ".json"));
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("bad.trace:2"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(wl + ".json"));
}

}  // namespace
}  // namespace bitline::ssd
