// Hostile inputs of `bitline ssd run` (issue 27's classes 1, 2, 6, 7, 8, 9, 11), end to end: each is refused with
// exit 2 and a message naming the file, the element and its value, within 1 GB and 10 s (the child runs under
// ulimit -v and timeout), and leaves no result behind. Also the MQSim result file (--mqsim-xml).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../support/run_bitline.hpp"
#include "../support/temp_dir_test.hpp"

namespace fs = std::filesystem;

namespace {

using Result = ::bitline::test::CliRun;
std::string quote(const std::string& s) { return ::bitline::test::shell_quote(s); }
bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

/// One synthetic flow of MQSim's workload file: `body` holds its elements.
std::string synthetic_flow(const std::string& body) {
  return "<IO_Flow_Parameter_Set_Synthetic><Device_Level_Data_Caching_Mode>WRITE_CACHE</Device_Level_Data_Caching_Mode>" + body +
         "</IO_Flow_Parameter_Set_Synthetic>";
}
std::string workload(const std::string& flows) {
  return "<MQSim_IO_Scenarios><IO_Scenario>" + flows + "</IO_Scenario></MQSim_IO_Scenarios>";
}

class SsdHostile : public ::bitline::test::TempDirTest {
 protected:
  SsdHostile() : TempDirTest("bitline-ssd-hostile-") {}
  std::string path(const std::string& f) const { return (dir_ / f).string(); }
  std::string put(const std::string& f, const std::string& text) const {
    std::ofstream(dir_ / f, std::ios::binary) << text;
    return path(f);
  }
  static std::string device_text() { return slurp((fs::path(BITLINE_SOURCE_DIR) / "configs" / "ssd" / "device.xml").string()); }
  /// configs/ssd/device.xml with one element's value changed.
  std::string device(const std::string& element, const std::string& value) const {
    const std::string open = "<" + element + ">";
    std::string t = device_text();
    const size_t a = t.find(open), b = t.find("</" + element + ">");
    EXPECT_NE(a, std::string::npos) << element;
    t.replace(a + open.size(), b - a - open.size(), value);
    return put("dev.xml", t);
  }
  std::string default_device() const { return put("dev.xml", device_text()); }
  std::string args(const std::string& dev, const std::string& wl, const std::string& more = "") const {
    return "ssd run --quiet --device " + quote(dev) + " --workload " + quote(wl) + " --json " + quote(path("out.json")) + " " + more;
  }
  /// Exit 2, every needle in the message, no internal error, a short message, no result file left.
  Result expect_bad_input(const std::string& a, std::initializer_list<std::string> needles) {
    const Result r = ::bitline::test::run_bitline_bounded(a);
    EXPECT_EQ(r.rc, 2) << "bitline " << a << "\n" << r.out.substr(0, 2000);
    for (const auto& n : needles) EXPECT_TRUE(has(r.out, n)) << "expected: " << n << "\ngot: " << r.out.substr(0, 2000);
    EXPECT_FALSE(has(r.out, "internal error")) << r.out;
    EXPECT_LT(r.out.size(), 4000u) << "the message repeats the input: " << r.out.substr(0, 500);
    EXPECT_FALSE(fs::exists(path("out.json")));
    EXPECT_FALSE(fs::exists(path("out.json.partial")));
    return r;
  }
};

const std::string kSmallMixed =
    "<Read_Percentage>50</Read_Percentage><Average_Request_Size>8</Average_Request_Size><Average_No_of_Reqs_in_Queue>4"
    "</Average_No_of_Reqs_in_Queue><Total_Requests_To_Generate>2000</Total_Requests_To_Generate>";

// 1. A CMT below one mapping entry used to crash in the translation; a data cache below one page, with a flow
// that caches its writes, in the destage.
TEST_F(SsdHostile, CachesSmallerThanOneEntryAreRefused) {
  const std::string wl = put("wl.xml", workload(synthetic_flow(kSmallMixed)));
  expect_bad_input(args(device("CMT_Capacity", "8"), wl), {"dev.xml", "<CMT_Capacity> 8 bytes", "below one mapping entry", "9 bytes"});
  expect_bad_input(args(device("Data_Cache_Capacity", "4096"), wl),
                   {"dev.xml", "<Data_Cache_Capacity> 4096 bytes", "no page of 8192 bytes", "WRITE_CACHE"});
  // partitioned among flows: 12 KiB over two flows is 6 KiB each, below a page
  const std::string two = put("wl2.xml", workload(synthetic_flow(kSmallMixed) + synthetic_flow(kSmallMixed)));
  std::string t = replaced(device_text(), "<Data_Cache_Sharing_Mode>SHARED<", "<Data_Cache_Sharing_Mode>EQUAL_PARTITIONING<");
  t = replaced(t, "<Data_Cache_Capacity>268435456<", "<Data_Cache_Capacity>12288<");
  expect_bad_input(args(put("dev.xml", t), two), {"6144 per flow, EQUAL_PARTITIONING over 2 flows"});
  // no CMT at all crashed too: refused as well
  expect_bad_input(args(device("CMT_Capacity", "0"), wl), {"<CMT_Capacity> 0 bytes", "<Ideal_Mapping_Table> true"});
  // what still runs: a CMT of one entry, a one-page cache, an empty cache with writes that bypass it
  for (const auto& [el, v] : std::vector<std::pair<std::string, std::string>>{{"CMT_Capacity", "9"}, {"Data_Cache_Capacity", "8192"}}) {
    const Result r = ::bitline::test::run_bitline_bounded(args(device(el, v), wl));
    EXPECT_EQ(r.rc, 0) << el << "=" << v << "\n" << r.out;
  }
  const std::string off = put("off.xml", workload(replaced(synthetic_flow(kSmallMixed), "WRITE_CACHE", "TURNED_OFF")));
  EXPECT_EQ(::bitline::test::run_bitline_bounded(args(device("Data_Cache_Capacity", "0"), off)).rc, 0);
}

// 2. An arrival of 1e17 ns is 1e20 ps: it wrapped past 2^64 and gave a wrong simulated time with exit 0.
TEST_F(SsdHostile, TraceTimesPastTheEngineRangeAreRefusedInTheTracesUnit) {
  put("far.trace", "0 0 0 8 1\n100000000000000000 0 100 8 1\n");
  const std::string trace_flow =
      "<IO_Flow_Parameter_Set_Trace_Based><File_Path>far.trace</File_Path><Time_Unit>NANOSECOND</Time_Unit>"
      "</IO_Flow_Parameter_Set_Trace_Based>";
  const std::string wl = put("wl.xml", workload(trace_flow));
  expect_bad_input(args(default_device(), wl), {"far.trace:2", "arrival time 100000000000000000", "1e+08 s", "1e18 ps"});
  // the same number of picoseconds is in range
  const std::string ps = put("ps.xml", workload(replaced(trace_flow, "NANOSECOND", "PICOSECOND")));
  const Result r = ::bitline::test::run_bitline_bounded(args(default_device(), ps));
  EXPECT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(slurp(path("out.json")));
  EXPECT_NEAR(j["scenarios"][0]["simulated_s"].get<double>(), 1e5, 1.0);  // 1e17 ps, not a wrapped value
  fs::remove(path("out.json"));
  // replays add up: two replays of an arrival at 6e5 s pass 1e6 s
  put("half.trace", "600000000000000000 0 0 8 1\n");
  const std::string relay =
      put("relay.xml", workload("<IO_Flow_Parameter_Set_Trace_Based><File_Path>half.trace</File_Path><Relay_Count>2"
                                "</Relay_Count><Time_Unit>PICOSECOND</Time_Unit></IO_Flow_Parameter_Set_Trace_Based>"));
  expect_bad_input(args(default_device(), relay), {"half.trace:1", "replay 2 of <Relay_Count> 2", "1.2e+06 s"});
}

// 6. Inputs in range whose work is hours or gigabytes: estimated up front, refused with the estimate.
TEST_F(SsdHostile, WorkPastTheBudgetIsRefusedBeforeItRuns) {
  const std::string dev = default_device();
  expect_bad_input(
      args(dev, put("n.xml", workload(synthetic_flow("<Total_Requests_To_Generate>10000000000</Total_Requests_To_Generate>")))),
      {"n.xml: scenario 1", "estimated work, 10000000000 page transactions", "<Total_Requests_To_Generate> 10000000000",
       "budget of 67108864", "--max-transactions"});
  expect_bad_input(args(dev, put("t.xml", workload(synthetic_flow("<Stop_Time>1000000000000000</Stop_Time>")))),
                   {"estimated work", "<Stop_Time> 1000000000000000 ns at up to"});
  expect_bad_input(
      args(dev, put("b.xml", workload(synthetic_flow("<Synthetic_Generator_Type>BANDWIDTH</Synthetic_Generator_Type>"
                                                     "<Bandwidth>1000000000000</Bandwidth><Stop_Time>1000000000</Stop_Time>")))),
      {"estimated work", "<Bandwidth> 1000000000000 B/s", "2.441e+08 requests/s"});
  // a trace: its lines x Relay_Count, against a budget given on the command line
  std::string lines;
  for (int i = 0; i < 1000; ++i) lines += std::to_string(i * 1000) + " 0 " + std::to_string(i * 8) + " 8 1\n";
  put("k.trace", lines);
  const std::string tr = put("tr.xml", workload("<IO_Flow_Parameter_Set_Trace_Based><File_Path>k.trace</File_Path><Relay_Count>3"
                                                "</Relay_Count></IO_Flow_Parameter_Set_Trace_Based>"));
  expect_bad_input(args(dev, tr, "--max-transactions 2000"), {"3000 requests", "1000 trace requests x <Relay_Count> 3", "budget of 2000"});
  const Result ok = ::bitline::test::run_bitline_bounded(args(dev, tr, "--max-transactions 100000"));
  EXPECT_EQ(ok.rc, 0) << ok.out;
  const auto j = nlohmann::json::parse(slurp(path("out.json")));
  EXPECT_EQ(j["scenarios"][0]["requests"].get<int64_t>(), 3000);
  EXPECT_EQ(j["scenarios"][0]["work_estimate"]["requests"].get<int64_t>(), 3000);
}

// A BANDWIDTH flow within the budget but far faster than the device: its waiting requests are bounded.
TEST_F(SsdHostile, ArrivalsFasterThanTheDeviceAreBoundedInMemory) {
  const std::string wl = put("wl.xml", workload(synthetic_flow("<Synthetic_Generator_Type>BANDWIDTH</Synthetic_Generator_Type>"
                                                               "<Bandwidth>20000000000</Bandwidth><Stop_Time>2000000000</Stop_Time>")));
  expect_bad_input(args(default_device(), wl), {"flow 0", "requests wait on the host", "<Bandwidth> 20000000000 B/s", "262144"});
}

// 8. A 10 MB value is not echoed whole.
TEST_F(SsdHostile, HugeValuesAreCutInMessages) {
  const std::string huge(10 << 20, '7');
  const Result r = expect_bad_input(args(device("Flash_Channel_Count", huge + "x"), put("wl.xml", workload(synthetic_flow(kSmallMixed)))),
                                    {"<Flash_Channel_Count>", "is not an integer", "(10485761 characters)"});
  std::string name(1 << 20, 'A');
  expect_bad_input(args(put("d2.xml", replaced(device_text(), "<Seed>", "<" + name + "/><Seed>")), path("wl.xml")),
                   {"unknown or unsupported element", "(1048576 characters)"});
}

// 11. An id past the device says which ids there are.
TEST_F(SsdHostile, AnIdPastTheDeviceNamesTheRange) {
  const std::string wl = put("wl.xml", workload(synthetic_flow(kSmallMixed + "<Channel_IDs>0,1,2,3,4,5,6,7,8</Channel_IDs>")));
  expect_bad_input(args(default_device(), wl), {"<Channel_IDs> lists 8", "has 8 channels, numbered 0 to 7"});
  const std::string wl2 = put("wl2.xml", workload(synthetic_flow(kSmallMixed + "<Plane_IDs>0,2</Plane_IDs>")));
  expect_bad_input(args(default_device(), wl2), {"<Plane_IDs> lists 2", "2 planes per die, numbered 0 to 1"});
}

// 9. Options that did nothing without a word.
TEST_F(SsdHostile, OptionsThatWouldDoNothingAreRefused) {
  const std::string wl = put("wl.xml", workload(synthetic_flow(kSmallMixed)));
  expect_bad_input("ssd run --device " + quote(default_device()) + " --workload " + quote(wl) + " --json ''", {"--json", "an empty value"});
  expect_bad_input("ssd run --device " + quote(default_device()) + " --workload " + quote(wl) + " --mqsim-xml ''",
                   {"--mqsim-xml", "an empty value"});
  expect_bad_input("cosmos run --workload bmi --system fc --device-scheduling eager", {"--device-scheduling", "--general-device"});
}

// 7. A time past 2^63 ps is a sum of many terms the arithmetic cannot attribute: the message names the values given.
TEST_F(SsdHostile, TimeOverflowNamesTheValuesGiven) {
  // A 1 B/s lane wrapped the pipeline's int64 picoseconds (UBSan); rates now have a physical floor, and what is in range
  // adds through checked Time arithmetic.
  expect_bad_input("cosmos run --workload bmi --system fc --set ssd.pcie_lane_rate=1B/s",
                   {"--set", "ssd.pcie_lane_rate", "at least 1000000 B/s", "got 1 B/s"});
  expect_bad_input("cosmos run --workload bmi --system fc --set ssd.controller_power=1e300W", {"ssd.controller_power", "at most 10000 W"});
  expect_bad_input("cosmos run --workload bmi --system fc --set host.cpu_power=1e308W", {"host.cpu_power", "at most 10000 W"});
  expect_bad_input("cosmos run --workload bmi --system fc --set host.cpu_power=10W", {"host.cpu_power", "below host.idle_power"});
  expect_bad_input("cosmos run --workload bmi --system fc --set ssd.isp_throughput=1e300B/s", {"ssd.isp_throughput", "at most"});
  // A read time this long is refused where it is given (every time parameter has a physical ceiling).
  expect_bad_input("cosmos run --workload bmi --system fc --set nand.timing.t_read_slc=100min", {"t_read_slc", "at most"});
}

// --mqsim-xml: MQSim's <MQSim_Results>, its Host.IO_Flow elements in its formats, from the same results as the JSON.
TEST_F(SsdHostile, MqsimResultFileCarriesTheFlowsInMqsimsFormat) {
  const std::string wl = put("wl.xml", workload(synthetic_flow(kSmallMixed)));
  const Result r = ::bitline::test::run_bitline_bounded(args(default_device(), wl, "--mqsim-xml " + quote(path("res.xml"))));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(slurp(path("out.json")));
  const auto& f = j["scenarios"][0]["flows"][0];
  const std::string x = slurp(path("res.xml"));
  EXPECT_EQ(x.rfind("<?xml version=\"1.0\" encoding=\"us-ascii\"?>\n<MQSim_Results>\n\t<Host>\n\t\t<Host.IO_Flow>\n", 0), 0u) << x;
  EXPECT_TRUE(has(x, "\t\t\t <Name>Host.IO_Flow.Synth.No_0</Name>\n")) << x;
  EXPECT_TRUE(has(x, fmt::format("<Request_Count>{}</Request_Count>", f["requests"].get<int64_t>())));
  EXPECT_TRUE(has(x, fmt::format("<Read_Request_Count>{}</Read_Request_Count>", f["reads"].get<int64_t>())));
  EXPECT_TRUE(has(x, fmt::format("<IOPS>{:.6f}</IOPS>", f["iops"].get<double>())));
  EXPECT_TRUE(has(x, fmt::format("<Bytes_Transferred>{:.6f}</Bytes_Transferred>",
                                 double(f["bytes_read"].get<int64_t>() + f["bytes_written"].get<int64_t>()))));
  EXPECT_TRUE(
      has(x, fmt::format("<Device_Response_Time>{}</Device_Response_Time>", int64_t(f["device_response_time"]["mean_us"].get<double>()))));
  EXPECT_TRUE(has(x, fmt::format("Issued_Flash_Read_CMD=\"{}\"", j["scenarios"][0]["flash"]["reads"].get<int64_t>())));
  EXPECT_TRUE(has(x, "\t</SSDDevice>\n</MQSim_Results>\n")) << x;
  // several scenarios: one file each, named as MQSim names them
  const std::string two = put("two.xml", "<MQSim_IO_Scenarios><IO_Scenario>" + synthetic_flow(kSmallMixed) + "</IO_Scenario><IO_Scenario>" +
                                             synthetic_flow(kSmallMixed) + "</IO_Scenario></MQSim_IO_Scenarios>");
  const Result r2 = ::bitline::test::run_bitline_bounded(args(default_device(), two, "--mqsim-xml " + quote(path("res.xml"))));
  ASSERT_EQ(r2.rc, 0) << r2.out;
  EXPECT_TRUE(fs::exists(path("res_scenario_1.xml")));
  EXPECT_TRUE(fs::exists(path("res_scenario_2.xml")));
}

// Issue 25 item 3: the device file's values are typed parameters (section ssd_device). The result carries them as
// resolved (the file's, MQSim's defaults for what it left out, --set overrides, with units) and the model's switches;
// --set ssd_device.KEY=VALUE overrides a value of the file; a value its declaration refuses names its element (from
// the file) or --set, and the key.
TEST_F(SsdHostile, DeviceParametersAreTypedResolvedAndOverridable) {
  const std::string wl = put("wl.xml", workload(synthetic_flow(kSmallMixed)));
  Result r = ::bitline::test::run_bitline_bounded(args(default_device(), wl));
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = nlohmann::json::parse(slurp(path("out.json")));
  const auto& dev = j["resolved"]["ssd_device"];
  EXPECT_EQ(dev["channels"], 8);                   // configs/ssd/device.xml: <Flash_Channel_Count>8
  EXPECT_EQ(dev["gc_policy"], "RGA");              // its <GC_Block_Selection_Policy>
  EXPECT_EQ(dev["plane_allocation"], "CWDP");      // its <Plane_Allocation_Scheme>
  EXPECT_EQ(dev["read_latency_lsb"], "75us");      // its <Page_Read_Latency_LSB>75000 (ns), with a unit
  EXPECT_EQ(dev["pcie_lane_bandwidth"], "1GB/s");  // <PCIe_Lane_Bandwidth>1.0 (GB/s)
  EXPECT_EQ(j["resolved"]["ssd_model"]["chip_scheduling"], true);
  const double iops = j["scenarios"][0]["flows"][0]["iops"].get<double>();
  fs::remove(path("out.json"));
  r = ::bitline::test::run_bitline_bounded(
      args(default_device(), wl, "--set ssd_device.channels=2 --set ssd_device.read_latency_lsb=20us"));
  ASSERT_EQ(r.rc, 0) << r.out;
  j = nlohmann::json::parse(slurp(path("out.json")));
  EXPECT_EQ(j["resolved"]["ssd_device"]["channels"], 2);
  EXPECT_EQ(j["resolved"]["ssd_device"]["read_latency_lsb"], "20us");
  EXPECT_NE(j["scenarios"][0]["flows"][0]["iops"].get<double>(), iops);  // the override reached the model
  fs::remove(path("out.json"));
  expect_bad_input(args(default_device(), wl, "--set ssd_device.channels=0"), {"--set", "ssd_device.channels", "at least 1"});
  expect_bad_input(args(default_device(), wl, "--set ssd_device.chanels=4"), {"ssd_device.chanels", "unknown key", "channels"});
  expect_bad_input(args(default_device(), wl, "--set ssd_device.gc_policy=LRU"), {"ssd_device.gc_policy", "'LRU'", "GREEDY"});
  expect_bad_input(args(default_device(), wl, "--set nand.x=1"), {"nand", "ssd_device and ssd_model"});
}

}  // namespace

// A GC threshold of one block (GC_Exec_Threshold x Block_No_Per_Plane <= 1, the default 0.05 on a drive of 20 blocks or
// fewer) started GC only with no free block left: the drive stopped and the run ended early with exit 0 and a
// shorter run's numbers.
TEST_F(SsdHostile, AGcThresholdOfOneBlockIsRefused) {
  const std::string wl = put("wl.xml", workload(synthetic_flow(kSmallMixed)));
  expect_bad_input(
      args(device("Block_No_Per_Plane", "256"), wl, "--set ssd_device.gc_exec_threshold=0.001 --set ssd_device.gc_hard_threshold=0"),
      {"dev.xml", "GC_Exec_Threshold 0.001", "= 1 free block", "at least 2"});
  expect_bad_input(args(device("Block_No_Per_Plane", "20"), wl), {"GC_Exec_Threshold 0.05 x Block_No_Per_Plane 20"});
  // 0.001 of 2,048 blocks is 3: that runs
  EXPECT_EQ(::bitline::test::run_bitline_bounded(
                args(default_device(), wl, "--set ssd_device.gc_exec_threshold=0.001 --set ssd_device.gc_hard_threshold=0"))
                .rc,
            0);
}

// A FIFO as a trace blocked the open until a writer came (a hang); a directory was "a trace with no requests".
TEST_F(SsdHostile, ATraceMustBeARegularFile) {
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::filesystem::create_directory(path("adir"));
  std::string t = slurp((fs::path(BITLINE_SOURCE_DIR) / "configs" / "ssd" / "trace.xml").string());
  for (const auto& [name, says] : {std::pair<std::string, std::string>{"fifo", "not a regular file"}, {"adir", "is a directory"}}) {
    std::string w = t;
    const size_t a = w.find("<File_Path>") + 11, b = w.find("</File_Path>");
    w.replace(a, b - a, path(name));
    expect_bad_input(args(default_device(), put("wl.xml", w)), {name, says});
  }
}

// Many scenarios each within the budget are held to twice it over the file: 200 copies of MQSim's read scenario
// (3.6 M page transactions estimated each) stop at the 38th, with no result, instead of running for minutes.
TEST_F(SsdHostile, AWorkloadOfManyScenariosIsHeldToTwiceTheBudget) {
  const std::string r = slurp((fs::path(BITLINE_SOURCE_DIR) / "configs" / "ssd" / "read.xml").string());
  const size_t a = r.find("<IO_Scenario>"), b = r.find("</IO_Scenario>") + std::string("</IO_Scenario>").size();
  std::string many = r.substr(0, a);
  for (int i = 0; i < 200; ++i) many += r.substr(a, b - a);
  many += r.substr(b);
  // a smaller budget keeps the test short: 3 scenarios of ~3.6 M fit 2 x 4 M, the third does not
  expect_bad_input(args(default_device(), put("many.xml", many), "--max-transactions 4000000"),
                   {"many.xml: scenario 3", "the workload's 8000000 (2 x --max-transactions) leaves"});
}

// A NUL in a trace line cut the message at it (no closing quote, no reason); a flow that leaves out elements says
// which, as the device file does.
TEST_F(SsdHostile, ControlCharactersAreShownAndAbsentFlowElementsNamed) {
  put("nul.trace", std::string("100 0 0 8 1\0\n", 13));
  std::string t = slurp((fs::path(BITLINE_SOURCE_DIR) / "configs" / "ssd" / "trace.xml").string());
  const size_t a = t.find("<File_Path>") + 11, b = t.find("</File_Path>");
  t.replace(a, b - a, path("nul.trace"));
  expect_bad_input(args(default_device(), put("wl.xml", t)), {"nul.trace:1: type '1\\x00' is not a non-negative integer"});
  const std::string bare =
      put("bare.xml", workload("<IO_Flow_Parameter_Set_Synthetic><Stop_Time>1000000</Stop_Time></IO_Flow_Parameter_Set_Synthetic>"));
  const Result r =
      ::bitline::test::run_bitline_bounded("ssd run --quiet --device " + quote(default_device()) + " --workload " + quote(bare));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(has(r.out, "a synthetic flow: 19 elements absent, at MQSim's defaults: Address_Alignment_Unit")) << r.out;
  EXPECT_TRUE(has(r.out, "scenario 1:")) << r.out;  // counted from 1, as the messages count them
}
