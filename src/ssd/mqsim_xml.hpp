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
#include "ssd/device_params.hpp"
#include "ssd/mqsim_choices.hpp"

namespace bitline::ssd {

/// The device file: host link, controller options and flash geometry/timing (DeviceParams), where they came from,
/// and what the model derives from them. Default-constructed: every parameter at its declared default (MQSim's).
struct DeviceXml : DeviceParams {
  std::string file;                    // where it came from (for messages)
  std::vector<std::string> defaulted;  // elements absent from the file, at MQSim's default (reported in the results)
  /// Mapping units in a flash page: 1 as read from a file; mapped_view() sets it where the FTL maps units smaller
  /// than a page.
  int64_t units_per_flash_page = 1;

  DeviceXml();
  /// Every parameter at its declared default.
  static const DeviceParams& defaults();
  explicit DeviceXml(const DeviceParams& p) : DeviceParams(p) {}

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

/// The device as the FTL and the engine address it: where ssd_device.mapping_unit maps units of U bytes, k = page /
/// U of them to a flash page, a "page" of the view is a unit (page_size U, pages_per_block x k) and
/// units_per_flash_page is k; the flash timings stay those of a flash page. With page-level mapping, the device itself.
DeviceXml mapped_view(const DeviceXml& d);

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
  // Set only where a flow comes from another format (bitline ssd fio, ssd/fio.hpp); MQSim's files leave the defaults.
  int64_t range_offset = 0;                  // sectors from the start of the flow's share of the logical space to its range
  int64_t range_sectors = 0;                 // sectors of its range (0: Working_Set_Percentage of its share)
  Time stats_from{};                         // RunOptions::io_stats counts the completions from then on (fio's ramp_time)
  bool io_log = false;                       // RunOptions::io_stats also logs the counted I/Os (FlowIoStats::log; fio's logs)
  Time io_log_window{};                      // averaged over windows of this length (fio's log_avg_msec); 0: one record per I/O
  Time bw_sample_window = ms(500);           // RunOptions::io_stats: fio's bandwidth samples every this long (bwavgtime); 0: per I/O,
                                             // below 0: none
  Time iops_sample_window = ms(500);         // and its IOPS samples (iopsavgtime); 0: per I/O
  std::string origin_requests, origin_time;  // what set total_requests / stop_time, named in budget messages
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

/// Reads a device file; ConfigError (naming the file and element) on anything it does not accept. `sets`:
/// overrides of the file's values, `ssd_device.KEY=VALUE` (bitline ssd run --set; other sections are ignored here).
DeviceXml read_device_xml(const std::string& path, const std::vector<std::string>& sets = {});
DeviceXml parse_device_xml(const std::string& text, const std::string& name, const std::vector<std::string>& sets = {});
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
