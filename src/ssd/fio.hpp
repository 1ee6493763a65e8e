// fio's job files on the general SSD (bitline ssd fio, docs/ssd.md "fio job files"): the reader of fio's INI format,
// the options bitline models, accepts without effect or refuses (one table, kOptions in fio.cpp), the translation of
// each job into flows of the general SSD (a closed-loop QUEUE_DEPTH flow per clone, as MQSim's synthetic flows), and
// the result in fio's JSON shape (fio 3.x, `--output-format=json`).
//
// Reading follows fio's HOWTO ("Job file format", "Parameter types"): `[global]` and job sections, `key=value` and
// bare flags, everything from a `;` or `#` to the end of a line a comment; sizes with fio's suffixes at kb_base=1024
// (its default: k/K = 1024, m = 1024^2, g, t, p; ki/mi/gi/ti/pi = powers of 1000; an optional trailing b/B; 0x hex),
// or at kb_base=1000 the other way round; times with d, h, m, s (default), ms/msec, us/usec. Every error is a
// ConfigError naming the file, the line and the option.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"
#include "ssd/device.hpp"
#include "ssd/mqsim_xml.hpp"

namespace bitline::ssd::fio {

/// One `key=value` or bare `key` line.
struct Option {
  std::string key, value;
  bool has_value = false;
  int64_t line = 0;
};

/// A `[name]` section and its options in file order.
struct Section {
  std::string name;
  int64_t line = 0;
  std::vector<Option> options;
  bool global() const { return name == "global"; }
};

struct JobFile {
  std::string file;  // for messages
  std::vector<Section> sections;
};

/// At most this many sections and lines' worth of text (a job file is a page, not a trace).
inline constexpr int64_t kMaxSections = 4096;
inline constexpr size_t kMaxFileBytes = size_t(1) << 20;

JobFile parse_job_file(std::string_view text, const std::string& name);
JobFile read_job_file(const std::string& path);

/// fio's `rw`: the direction and the order of the addresses.
enum class Pattern { Read, Write, RandRead, RandWrite, ReadWrite, RandRw };

/// A size or an offset: bytes, or a percentage of the range it is taken from.
struct Amount {
  bool set = false, percent = false;
  int64_t bytes = 0;
  double pct = 0;
};

/// fio's default random seed (its FIO_RANDSEED), the seed of every job that gives none: the same inputs give the same
/// requests (randrepeat=1, fio's default).
inline constexpr uint64_t kDefaultSeed = 0xb1899bedULL;
/// At most this many flows (job clones) run at once: each has a cached mapping table of its own (MQSim's per-flow
/// CMT, ssd_model.cmt_per_flow) and its statistics.
inline constexpr int64_t kMaxFlowsPerGroup = 64;

/// One job section with [global]'s options applied before its own, every value parsed and range-checked.
/// fio's log options, each a file of one kind (write_lat_log: three, lat/clat/slat).
enum class LogOption { Bw, Iops, Lat };
inline constexpr std::array<std::string_view, 3> kLogOptions{"write_bw_log", "write_iops_log", "write_lat_log"};  // by LogOption

struct Job {
  std::string name;
  int64_t line = 0;  // its section's
  Pattern rw = Pattern::Read;
  double rwmixread = 50;  // percent reads of a mixed pattern
  int64_t bs = 4096, iodepth = 1, numjobs = 1;
  Amount size, offset;
  int64_t io_size = 0, number_ios = 0;
  Time runtime{}, ramp_time{};
  bool time_based = false, group_reporting = false, stonewall = false, new_group = false;
  uint64_t seed = kDefaultSeed;
  std::vector<double> percentiles{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
  bool clat_percentiles = true, lat_percentiles = false;
  int64_t kb_base = 1024;
  /// fio's logs, by LogOption (write_bw_log, write_iops_log, write_lat_log): whether each is written, and its file
  /// prefix (the option's value, or the job's name when bare); log_avg_msec: the window the values are averaged over
  /// (0: one line per I/O)
  struct LogRequest {
    bool on = false;
    std::string prefix;
  };
  std::array<LogRequest, kLogOptions.size()> log{};
  int64_t log_avg_msec = 0;
  bool log_offset = false;  // log_offset: the logs' lines carry the I/O's offset (after its block size)
  // bwavgtime, iopsavgtime (ms; 0: not given, fio's 500 ms unless a log sets them): the windows of the JSON's bw_* and
  // iops_* samples; disable_bw_measurement: no per-I/O bandwidth samples (fio's add_bw_sample)
  int64_t bw_avg_msec = 0, iops_avg_msec = 0;
  bool disable_bw = false;
  bool logs() const {
    return std::any_of(log.begin(), log.end(), [](const LogRequest& l) { return l.on; });
  }
  const LogRequest& log_of(LogOption o) const { return log[size_t(o)]; }
  /// option -> the line that set it last (its own section's or a [global]'s), for messages
  std::map<std::string, int64_t> line_of;
  /// option -> "FILE:LINE key=value" as written, for messages
  std::map<std::string, std::string> where;
  std::vector<std::pair<std::string, std::string>> own_options;  // its section's, for the JSON's "job options"

  bool random() const { return rw == Pattern::RandRead || rw == Pattern::RandWrite || rw == Pattern::RandRw; }
  double read_fraction() const;
};

/// The jobs of a file, in order. Notes (options accepted without effect that change something in fio, e.g.
/// direct=0) go to `notes`.
std::vector<Job> resolve_jobs(const JobFile& f, std::vector<std::string>* notes = nullptr);

/// What happens to an option: modelled, accepted without effect (it has no meaning for the simulated device), or a
/// fio option bitline does not model (refused). Unknown names are not fio options at all (refused).
enum class OptionKind { Modelled, Ignored, NotModelled, Unknown };
OptionKind option_kind(std::string_view name);
/// Whether fio 3.x knows the name (its options.c, and the common ioengine options).
bool is_fio_option(std::string_view name);
/// Every option name fio 3.x knows, in its options table's order.
std::vector<std::string_view> fio_option_names();
/// The options of each kind (for docs and tests).
std::vector<std::string_view> options_of(OptionKind k);

/// One job clone as a flow of the general SSD.
struct Clone {
  size_t job = 0;     // index into Plan::jobs
  int64_t clone = 0;  // 0 .. numjobs-1
};

/// Jobs that run at once (up to the next stonewall): one scenario of the general SSD, one flow per clone.
struct RunGroup {
  std::vector<Clone> clones;
  ScenarioXml scenario;
};

struct Plan {
  std::string file;
  std::vector<Job> jobs;
  std::vector<int64_t> groupid;  // per job: fio's reporting group (stonewall or new_group starts the next)
  std::vector<RunGroup> runs;
  std::vector<std::pair<std::string, std::string>> global_options;  // [global]'s, for the JSON's "global options"
};

/// Translates the jobs into runs of the device: each clone a QUEUE_DEPTH flow at iodepth, RANDOM_UNIFORM (rand*) or
/// STREAMING addresses aligned to bs, its range offset..offset+size of its share of the logical space (the space is
/// split equally between the flows of a run, as MQSim's flows), ending after size (or io_size) bytes or number_ios,
/// or at ramp_time + runtime; `occupancy` (0..1): the share already written before the run (analytic
/// preconditioning). ConfigError naming file, line and option for a range beyond the device or a run of more than
/// kMaxFlowsPerGroup flows.
Plan plan_jobs(const JobFile& f, const std::vector<Job>& jobs, const DeviceXml& device, double occupancy = 0);

}  // namespace bitline::ssd::fio
