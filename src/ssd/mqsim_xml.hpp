// Readers of MQSim's input formats: the device configuration XML
// (Execution_Parameter_Set), the workload XML (MQSim_IO_Scenarios) and the
// ASCII trace (one request a line: arrival time, device, start LBA, size in
// sectors, type 1=read 0=write). bitline's own reader: every element is
// checked by name (an unknown or duplicated element is a ConfigError naming
// the element and the file), every value is parsed completely and
// range-checked, so a hostile number can neither wrap nor allocate terabytes.
// The supported elements are listed in docs/ssd.md.
#pragma once

#include <array>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/registry.hpp"
#include "core/units.hpp"

namespace bitline::ssd {

enum class PageType { LSB = 0, CSB = 1, MSB = 2 };

// ---- MQSim's choices ------------------------------------------------------------------
// An element whose value is one of MQSim's named choices is resolved once, when the file is
// read, to one of these enums; the model switches on the enum and never compares names.
// Each enum has its table (below, defined in mqsim_xml.cpp): the MQSim names bitline models,
// each with its value, and the MQSim names it knows but does not model (refused with an
// error saying so). Names match ignoring case, as in MQSim.

enum class MemoryType { Flash };                                              // Memory_Type
enum class HostInterface { Nvme };                                            // HostInterface_Type
enum class CachingMechanism { Simple, Advanced };                             // Caching_Mechanism
enum class DataCacheSharing { Shared, EqualPartitioning };                    // Data_Cache_Sharing_Mode
enum class AddressMapping { PageLevel };                                      // Address_Mapping
enum class CmtSharing { Shared, EqualSizePartitioning };                      // CMT_Sharing_Mode
enum class Scheduling { OutOfOrder, PriorityOutOfOrder };                     // Transaction_Scheduling_Policy
enum class GcPolicy { Greedy, Rga, Random, Fifo };                            // GC_Block_Selection_Policy
enum class CommProtocol { Nvddr2 };                                           // Flash_Comm_Protocol
enum class FlashTechnology { Slc, Mlc, Tlc };                                 // Flash_Technology
enum class Suspension { None, Program, ProgramErase, Erase };                 // CMD_Suspension_Support
enum class PlaneDim { Channel, Way, Die, Plane };                             // a letter C|W|D|P of Plane_Allocation_Scheme
enum class Priority { Urgent, High, Medium, Low };                            // Priority_Class
enum class CachingMode { TurnedOff, WriteCache, ReadCache, WriteReadCache };  // Device_Level_Data_Caching_Mode
enum class Generator { QueueDepth, Bandwidth };                               // Synthetic_Generator_Type
enum class AddressDistribution { RandomUniform, RandomHotCold, Streaming };   // Address_Distribution
enum class SizeDistribution { Fixed, Normal };                                // Request_Size_Distribution

/// The table of one element's choices: the MQSim names bitline models (a Registry of
/// {name as MQSim spells it, description, value}, in the order error messages list them)
/// and those it refuses as not modelled.
template <class T>
struct MqsimChoices {
  Registry<T> modelled;
  std::vector<std::string_view> unmodelled;

  /// The MQSim name of `v` (for echoing a resolved value back).
  std::string_view name(const T& v) const {
    for (size_t i = 0; i < modelled.size(); ++i)
      if (modelled.value(i) == v) return modelled.names()[i];
    throw std::logic_error(std::string("no ") + std::string(modelled.kind()) + " name for this value");
  }
};

const MqsimChoices<MemoryType>& memory_types();
const MqsimChoices<HostInterface>& host_interfaces();
const MqsimChoices<CachingMechanism>& caching_mechanisms();
const MqsimChoices<DataCacheSharing>& data_cache_sharing_modes();
const MqsimChoices<AddressMapping>& address_mappings();
const MqsimChoices<CmtSharing>& cmt_sharing_modes();
const MqsimChoices<Scheduling>& scheduling_policies();
const MqsimChoices<GcPolicy>& gc_policies();
const MqsimChoices<CommProtocol>& comm_protocols();
const MqsimChoices<FlashTechnology>& flash_technologies();
const MqsimChoices<Suspension>& suspension_supports();
const MqsimChoices<PlaneDim>& plane_dims();
const MqsimChoices<Priority>& priority_classes();
const MqsimChoices<CachingMode>& caching_modes();
const MqsimChoices<Generator>& generators();
const MqsimChoices<AddressDistribution>& address_distributions();
const MqsimChoices<SizeDistribution>& size_distributions();
/// Time_Unit: the value is the unit itself (PICOSECOND = 1 ps, ...).
const MqsimChoices<Time>& time_units();

/// Plane_Allocation_Scheme: the order in which consecutive pages stripe over the dimensions, first the
/// fastest-varying one (CWDP: channel, then way, then die, then plane).
using PlaneAllocation = std::array<PlaneDim, 4>;
/// Its MQSim name, e.g. "CWDP".
std::string plane_allocation_name(const PlaneAllocation& a);

/// The device file: host link, controller options and flash geometry/timing.
struct DeviceXml {
  std::string file;                    // where it came from (for messages)
  std::vector<std::string> defaulted;  // elements absent from the file, at MQSim's default (reported in the results)
  // Host_Parameter_Set
  double pcie_lane_bandwidth_gbps = 1.0;  // GB/s per lane
  int64_t pcie_lane_count = 4;
  // Device_Parameter_Set
  int64_t seed = 321;
  bool preconditioning = true;
  HostInterface host_interface = HostInterface::Nvme;
  int64_t io_queue_depth = 1024;
  int64_t queue_fetch_size = 512;
  CachingMechanism caching_mechanism = CachingMechanism::Advanced;
  DataCacheSharing data_cache_sharing = DataCacheSharing::Shared;
  int64_t data_cache_capacity = 256LL << 20;  // bytes
  int64_t dram_row_size = 8192;
  int64_t dram_data_rate = 800;                          // MT/s
  int64_t dram_burst_size = 4;                           // bytes
  int64_t dram_trcd = 13, dram_tcl = 13, dram_trp = 13;  // ns
  AddressMapping address_mapping = AddressMapping::PageLevel;
  bool ideal_mapping_table = false;
  int64_t cmt_capacity = 2LL << 20;  // bytes
  CmtSharing cmt_sharing = CmtSharing::Shared;
  PlaneAllocation plane_allocation = {PlaneDim::Channel, PlaneDim::Way, PlaneDim::Die, PlaneDim::Plane};  // CWDP
  Scheduling scheduling = Scheduling::PriorityOutOfOrder;
  double overprovisioning = 0.07;
  double gc_exec_threshold = 0.05;
  GcPolicy gc_policy = GcPolicy::Greedy;
  bool gc_copyback = false;
  bool gc_preemptible = false;
  double gc_hard_threshold = 0.005;
  bool dynamic_wl = true, static_wl = true;
  int64_t static_wl_threshold = 100;
  int64_t channels = 8;
  int64_t channel_width = 1;            // bytes
  int64_t channel_transfer_rate = 333;  // MT/s
  int64_t chips_per_channel = 4;
  CommProtocol comm_protocol = CommProtocol::Nvddr2;
  // Flash_Parameter_Set
  FlashTechnology technology = FlashTechnology::Mlc;
  Time read_latency[3] = {us(75), us(75), us(75)};  // LSB, CSB, MSB
  Time program_latency[3] = {us(750), us(750), us(750)};
  Time erase_latency = us(3800);
  int64_t pe_cycles_limit = 10000;
  int64_t dies_per_chip = 2;
  int64_t planes_per_die = 2;
  int64_t blocks_per_plane = 2048;
  int64_t pages_per_block = 256;
  int64_t page_size = 8192;  // bytes
  int64_t page_metadata = 448;

  int64_t bits_per_cell() const;
  int64_t dies() const { return channels * chips_per_channel * dies_per_chip; }
  int64_t planes() const { return dies() * planes_per_die; }
  int64_t blocks() const { return planes() * blocks_per_plane; }
  int64_t pages() const { return blocks() * pages_per_block; }
  int64_t sectors_per_page() const { return page_size / 512; }
  /// Logical pages the host can address (physical pages less over-provisioning).
  int64_t logical_pages() const { return int64_t(double(pages()) * (1.0 - overprovisioning)); }
  /// Bytes of one CMT entry, MQSim's size: (2 log2(pages) + sectors per page) bits, rounded up to bytes.
  int64_t cmt_entry_bytes() const;
};

enum class FlowKind { Synthetic, Trace };

/// One IO_Flow_Parameter_Set_Synthetic or _Trace_Based.
struct FlowXml {
  FlowKind kind = FlowKind::Synthetic;
  Priority priority = Priority::High;
  CachingMode caching_mode = CachingMode::WriteCache;
  std::vector<int64_t> channel_ids, chip_ids, die_ids, plane_ids;  // empty = all
  double initial_occupancy = 0;                                    // fraction 0..1
  // synthetic
  double working_set = 1.0;  // fraction
  Generator generator = Generator::QueueDepth;
  double read_ratio = 0;
  AddressDistribution address_distribution = AddressDistribution::RandomUniform;
  double hot_region = 0;  // fraction
  bool aligned = true;
  int64_t alignment_unit = 8;  // sectors
  SizeDistribution size_distribution = SizeDistribution::Fixed;
  int64_t avg_size = 8;  // sectors
  int64_t size_variance = 0;
  int64_t seed = 1;
  int64_t queue_depth = 1;
  int64_t bandwidth = 0;  // bytes/s
  Time stop_time{};
  int64_t total_requests = 0;
  // trace
  std::string trace_path;  // resolved against the workload file's folder
  std::string trace_file;  // File_Path as written (MQSim names the flow by it)
  double percentage_executed = 1.0;
  int64_t relay_count = 1;
  Time time_unit = ns(1);  // Time_Unit, resolved (time_units())
};

struct ScenarioXml {
  std::vector<FlowXml> flows;
};

struct WorkloadXml {
  std::string file;
  std::vector<ScenarioXml> scenarios;
};

/// A value as an error message echoes it: at most 40 characters (a longer one is cut, with its length).
std::string shown(std::string_view v);

/// The latest arrival a trace may hold and the longest a run may simulate: 1e18 ps (11.6 days), so that
/// every time of the run, sums of them included, stays far below the engine's 2^63 ps.
inline constexpr int64_t kMaxSimulatedPs = 1'000'000'000'000'000'000;

/// Reads a device file; ConfigError (naming the file and element) on anything it does not accept.
DeviceXml read_device_xml(const std::string& path);
DeviceXml parse_device_xml(const std::string& text, const std::string& name);
/// Reads a workload file; notes (e.g. elements MQSim itself ignores) go to `notes`.
WorkloadXml read_workload_xml(const std::string& path, std::vector<std::string>* notes = nullptr);
WorkloadXml parse_workload_xml(const std::string& text, const std::string& name, const std::string& base_dir,
                               std::vector<std::string>* notes = nullptr);
/// Checks a workload against a device (ID lists within the geometry, supported features).
void check_workload(const WorkloadXml& w, const DeviceXml& d);

/// One request of an MQSim ASCII trace.
struct TraceRecord {
  int64_t arrival_raw = 0;  // in the flow's Time_Unit
  int64_t device = 0;
  int64_t lba = 0;  // sectors
  int64_t sectors = 0;
  bool read = false;
};

/// Streams an MQSim ASCII trace line by line (memory independent of its length).
class TraceReader {
 public:
  /// `unit`: the flow's Time_Unit; an arrival past kMaxSimulatedPs in it is an error naming the line.
  explicit TraceReader(const std::string& path, Time unit = ns(1));
  /// Next record; false at the end. ConfigError naming file and line on a malformed line.
  bool next(TraceRecord& r);
  /// Restarts from the first line (for Relay_Count).
  void rewind();
  /// Counts the requests (one pass, for Percentage_To_Be_Executed and the work estimate) and, if asked, their
  /// sectors; also validates every line.
  int64_t count(int64_t* sectors = nullptr);
  const std::string& path() const { return path_; }
  /// The line of the record `next` returned last.
  int64_t line() const { return line_no_; }

 private:
  std::string path_;
  int64_t unit_ps_;  // the flow's Time_Unit
  int64_t max_raw_;  // the latest arrival in it
  std::ifstream in_;
  std::vector<char> buf_;  // 64 KiB read at a time; lines found with memchr
  size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  std::string line_;
  int64_t line_no_ = 0;
  int64_t last_arrival_ = 0;
  /// The next line without its '\n' (a '\r' kept); false at the end. ConfigError past 4096 characters.
  bool read_line(std::string& line);
};

/// Parses one trace line (exposed for tests). False for a blank line.
bool parse_trace_line(const std::string& line, TraceRecord& r, std::string& why);

}  // namespace bitline::ssd
