// fio's job files on the general SSD: reader, options table, translation into flows, fio's JSON (ssd/fio.hpp).
#include "ssd/fio.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.hpp"
#include "core/param_dump.hpp"
#include "core/registry.hpp"

namespace bitline::ssd::fio {

namespace {

// ---- the options table ------------------------------------------------------------------------------------------
// Every option name fio 3.x knows (its options.c and the common ioengine options), each with what bitline does with
// it. Modelled: read into Job (resolve_jobs). Ignored: accepted without effect, because nothing of it reaches the
// simulated device (the host's engine, threads, CPUs, files, buffers' contents, fio's own reporting switches).
// Everything else fio knows is refused as not modelled; a name fio does not know is refused as unknown, with the
// nearest known name.
constexpr const char* kModelled[] = {"allrandrepeat",
                                     "blocksize",
                                     "bs",
                                     "clat_percentiles",
                                     "description",
                                     "group_reporting",
                                     "io_limit",
                                     "io_size",
                                     "iodepth",
                                     "kb_base",
                                     "lat_percentiles",
                                     "log_avg_msec",
                                     "name",
                                     "new_group",
                                     "number_ios",
                                     "numjobs",
                                     "offset",
                                     "percentile_list",
                                     "ramp_time",
                                     "randrepeat",
                                     "randseed",
                                     "readwrite",
                                     "runtime",
                                     "rw",
                                     "rwmixread",
                                     "rwmixwrite",
                                     "size",
                                     "stonewall",
                                     "time_based",
                                     "timeout",
                                     "wait_for_previous",
                                     "write_bw_log",
                                     "write_iops_log",
                                     "write_lat_log"};
constexpr const char* kIgnored[] = {"allow_file_create",
                                    "allow_mounted_write",
                                    "buffer_compress_chunk",
                                    "buffer_compress_percentage",
                                    "buffer_pattern",
                                    "buffered",
                                    "busy_poll",
                                    "clocksource",
                                    "cmd_type",
                                    "cpumask",
                                    "cpus_allowed",
                                    "cpus_allowed_policy",
                                    "create_on_open",
                                    "create_serialize",
                                    "dedupe_percentage",
                                    "direct",
                                    "disable_bw_measurement",
                                    "disable_bw",
                                    "disable_clat",
                                    "disable_lat",
                                    "disable_slat",
                                    "fadvise_hint",
                                    "filename",
                                    "filename_format",
                                    "fixedbufs",
                                    "force_async",
                                    "gtod_cpu",
                                    "gtod_reduce",
                                    "hipri",
                                    "hugepage-size",
                                    "invalidate",
                                    "iodepth_batch",
                                    "iodepth_batch_complete",
                                    "iodepth_batch_complete_max",
                                    "iodepth_batch_complete_min",
                                    "iodepth_batch_submit",
                                    "ioengine",
                                    "ioscheduler",
                                    "iomem",
                                    "iomem_align",
                                    "lockmem",
                                    "mem",
                                    "mem_align",
                                    "nice",
                                    "norandommap",
                                    "nowait",
                                    "numa_cpu_nodes",
                                    "numa_mem_policy",
                                    "overwrite",
                                    "per_job_logs",
                                    "prio",
                                    "prioclass",
                                    "random_generator",
                                    "refill_buffers",
                                    "registerfiles",
                                    "scramble_buffers",
                                    "significant_figures",
                                    "softrandommap",
                                    "sqthread_poll",
                                    "sqthread_poll_cpu",
                                    "thread",
                                    "unique_filename",
                                    "userspace_reap",
                                    "zero_buffers"};
// every fio option name (fio 3.x options.c, and the ioengine options above)
constexpr const char* kFioOptions[] = {"allow_file_create",
                                       "allow_mounted_write",
                                       "allrandrepeat",
                                       "atomic",
                                       "ba",
                                       "block_error_percentiles",
                                       "blockalign",
                                       "blocksize",
                                       "blocksize_range",
                                       "blocksize_unaligned",
                                       "bs",
                                       "bs_is_seq_rand",
                                       "bs_unaligned",
                                       "bsrange",
                                       "bssplit",
                                       "buffer_compress_chunk",
                                       "buffer_compress_percentage",
                                       "buffer_pattern",
                                       "buffered",
                                       "busy_poll",
                                       "bwavgtime",
                                       "cgroup",
                                       "cgroup_nodelete",
                                       "cgroup_weight",
                                       "clat_percentiles",
                                       "clocksource",
                                       "cmd_type",
                                       "comm",
                                       "continue_on_error",
                                       "cpumask",
                                       "cpus_allowed",
                                       "cpus_allowed_policy",
                                       "create_fsync",
                                       "create_on_open",
                                       "create_only",
                                       "create_serialize",
                                       "data_placement",
                                       "dataplacement",
                                       "dedupe_global",
                                       "dedupe_mode",
                                       "dedupe_percentage",
                                       "dedupe_working_set_percentage",
                                       "description",
                                       "direct",
                                       "directory",
                                       "disable_bw",
                                       "disable_bw_measurement",
                                       "disable_clat",
                                       "disable_lat",
                                       "disable_slat",
                                       "disk_util",
                                       "do_verify",
                                       "dp_scheme",
                                       "end_fsync",
                                       "end_syncfs",
                                       "error_dump",
                                       "exec_postrun",
                                       "exec_prerun",
                                       "exit_what",
                                       "exitall",
                                       "exitall_on_error",
                                       "experimental_verify",
                                       "fadvise_hint",
                                       "fallocate",
                                       "fdatasync",
                                       "fdp",
                                       "fdp_pli",
                                       "fdp_pli_select",
                                       "file_append",
                                       "file_service_type",
                                       "filename",
                                       "filename_format",
                                       "fileoffset",
                                       "filesize",
                                       "filetype",
                                       "fill_device",
                                       "fill_fs",
                                       "fixedbufs",
                                       "flow",
                                       "flow_id",
                                       "flow_sleep",
                                       "flow_watermark",
                                       "force_async",
                                       "fsync",
                                       "fsync_on_close",
                                       "gid",
                                       "gpu_dev_id",
                                       "group_reporting",
                                       "gtod_cpu",
                                       "gtod_reduce",
                                       "hipri",
                                       "hipri_percentage",
                                       "hugepage-size",
                                       "ignore_error",
                                       "ignore_zone_limits",
                                       "invalidate",
                                       "io_limit",
                                       "io_size",
                                       "io_submit_mode",
                                       "iodepth",
                                       "iodepth_batch",
                                       "iodepth_batch_complete",
                                       "iodepth_batch_complete_max",
                                       "iodepth_batch_complete_min",
                                       "iodepth_batch_submit",
                                       "iodepth_low",
                                       "ioengine",
                                       "iomem",
                                       "iomem_align",
                                       "iopsavgtime",
                                       "ioscheduler",
                                       "job_max_open_zones",
                                       "job_start_clock_id",
                                       "kb_base",
                                       "lat_percentiles",
                                       "latency_percentile",
                                       "latency_run",
                                       "latency_target",
                                       "latency_window",
                                       "lockfile",
                                       "lockmem",
                                       "log_alternate_epoch",
                                       "log_alternate_epoch_clock_id",
                                       "log_avg_msec",
                                       "log_compression",
                                       "log_compression_cpus",
                                       "log_entries",
                                       "log_hist_coarseness",
                                       "log_hist_msec",
                                       "log_issue_time",
                                       "log_max_value",
                                       "log_offset",
                                       "log_prio",
                                       "log_store_compressed",
                                       "log_unix_epoch",
                                       "log_window_value",
                                       "loops",
                                       "max_latency",
                                       "max_open_zones",
                                       "mem",
                                       "mem_align",
                                       "merge_blktrace_file",
                                       "merge_blktrace_iters",
                                       "merge_blktrace_scalars",
                                       "name",
                                       "new_group",
                                       "nice",
                                       "norandommap",
                                       "nowait",
                                       "nr_files",
                                       "nrfiles",
                                       "num_range",
                                       "numa_cpu_nodes",
                                       "numa_mem_policy",
                                       "number_ios",
                                       "numjobs",
                                       "offset",
                                       "offset_align",
                                       "offset_increment",
                                       "opendir",
                                       "openfiles",
                                       "overwrite",
                                       "per_job_logs",
                                       "percentage_random",
                                       "percentage_sequential",
                                       "percentile_list",
                                       "plid_select",
                                       "plids",
                                       "pre_read",
                                       "prio",
                                       "prioclass",
                                       "priohint",
                                       "profile",
                                       "ramp_size",
                                       "ramp_time",
                                       "random_distribution",
                                       "random_generator",
                                       "random_sequence_stride",
                                       "randrepeat",
                                       "randseed",
                                       "rate",
                                       "rate_cycle",
                                       "rate_ignore_thinktime",
                                       "rate_iops",
                                       "rate_iops_min",
                                       "rate_min",
                                       "rate_process",
                                       "ratecycle",
                                       "ratemin",
                                       "read_beyond_wp",
                                       "read_iolog",
                                       "read_iolog_chunked",
                                       "readfua",
                                       "readwrite",
                                       "recover_zbd_write_error",
                                       "refill_buffers",
                                       "registerfiles",
                                       "replay_align",
                                       "replay_no_stall",
                                       "replay_redirect",
                                       "replay_scale",
                                       "replay_skip",
                                       "replay_time_scale",
                                       "runtime",
                                       "rw",
                                       "rw_sequencer",
                                       "rwmixcycle",
                                       "rwmixread",
                                       "rwmixwrite",
                                       "scramble_buffers",
                                       "serialize_overlap",
                                       "significant_figures",
                                       "size",
                                       "slat_percentiles",
                                       "softrandommap",
                                       "spr_cs",
                                       "spr_num_regions",
                                       "spr_op",
                                       "sprandom",
                                       "sqthread_poll",
                                       "sqthread_poll_cpu",
                                       "ss",
                                       "ss_dur",
                                       "ss_interval",
                                       "ss_ramp",
                                       "startdelay",
                                       "stats",
                                       "steadystate",
                                       "steadystate_check_interval",
                                       "steadystate_duration",
                                       "steadystate_ramp_time",
                                       "stonewall",
                                       "sync",
                                       "sync_file_range",
                                       "thinkcycles",
                                       "thinktime",
                                       "thinktime_blocks",
                                       "thinktime_blocks_type",
                                       "thinktime_iotime",
                                       "thinktime_spin",
                                       "thread",
                                       "time_based",
                                       "timeout",
                                       "trim_backlog",
                                       "trim_backlog_batch",
                                       "trim_percentage",
                                       "trim_verify_zero",
                                       "uid",
                                       "uncached",
                                       "unified_rw_reporting",
                                       "unique_filename",
                                       "unit_base",
                                       "unlink",
                                       "unlink_each_loop",
                                       "userspace_reap",
                                       "verify",
                                       "verify_async",
                                       "verify_async_cpus",
                                       "verify_backlog",
                                       "verify_backlog_batch",
                                       "verify_dump",
                                       "verify_fatal",
                                       "verify_header_seed",
                                       "verify_interval",
                                       "verify_offset",
                                       "verify_only",
                                       "verify_pattern",
                                       "verify_pattern_interval",
                                       "verify_policy",
                                       "verify_state_load",
                                       "verify_state_save",
                                       "verify_write_sequence",
                                       "verifysort",
                                       "verifysort_nr",
                                       "wait_for",
                                       "wait_for_previous",
                                       "write_barrier",
                                       "write_bw_log",
                                       "write_hint",
                                       "write_hist_log",
                                       "write_iolog",
                                       "write_iops_log",
                                       "write_lat_log",
                                       "write_zone_remainder",
                                       "writefua",
                                       "zero_buffers",
                                       "zone_reset_frequency",
                                       "zone_reset_threshold",
                                       "zonecapacity",
                                       "zonemode",
                                       "zonerange",
                                       "zonesize",
                                       "zoneskip"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.front())) || std::iscntrl(static_cast<unsigned char>(s.front()))))
    s.remove_prefix(1);
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.back())) || std::iscntrl(static_cast<unsigned char>(s.back()))))
    s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = char(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

template <class A>
bool contains(const A& a, std::string_view n) {
  return std::find(std::begin(a), std::end(a), n) != std::end(a);
}

/// "FILE:LINE: " for messages.
std::string at(const std::string& file, int64_t line) { return fmt::format("{}:{}: ", file, line); }

}  // namespace

OptionKind option_kind(std::string_view name) {
  if (contains(kModelled, name)) return OptionKind::Modelled;
  if (contains(kIgnored, name)) return OptionKind::Ignored;
  if (contains(kFioOptions, name)) return OptionKind::NotModelled;
  return OptionKind::Unknown;
}

bool is_fio_option(std::string_view name) { return contains(kFioOptions, name); }

std::vector<std::string_view> options_of(OptionKind k) {
  std::vector<std::string_view> out;
  for (std::string_view n : kFioOptions)
    if (option_kind(n) == k) out.push_back(n);
  if (k == OptionKind::Modelled || k == OptionKind::Ignored)
    for (std::string_view n : (k == OptionKind::Modelled ? std::vector<std::string_view>(std::begin(kModelled), std::end(kModelled))
                                                         : std::vector<std::string_view>(std::begin(kIgnored), std::end(kIgnored))))
      if (!contains(out, n)) out.push_back(n);
  std::sort(out.begin(), out.end());
  return out;
}

// ---- reading ------------------------------------------------------------------------------------------------------

JobFile parse_job_file(std::string_view text, const std::string& name) {
  JobFile f;
  f.file = name;
  if (text.size() > kMaxFileBytes)
    throw ConfigError(fmt::format("{}: {} bytes: a job file may hold at most {} bytes", name, text.size(), kMaxFileBytes));
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view raw = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (raw.find('\0') != std::string_view::npos) throw ConfigError(at(name, line_no) + "a NUL byte: a job file is text");
    // fio: everything from the first ';' or '#' on is a comment (its strip_blank_end)
    const size_t c = raw.find_first_of(";#");
    std::string_view s = trim(raw.substr(0, c));
    if (s.empty()) {
      if (nl == text.size()) break;
      continue;
    }
    if (s.front() == '[') {
      if (s.back() != ']') throw ConfigError(at(name, line_no) + fmt::format("'{}': a section header is [name]", shown(s)));
      std::string_view n = trim(s.substr(1, s.size() - 2));
      if (n.empty()) throw ConfigError(at(name, line_no) + "an empty section name []");
      if (int64_t(f.sections.size()) >= kMaxSections)
        throw ConfigError(at(name, line_no) + fmt::format("more than {} sections", kMaxSections));
      f.sections.push_back(Section{std::string(n), line_no, {}});
    } else {
      Option o;
      o.line = line_no;
      const size_t eq = s.find('=');
      o.key = std::string(trim(s.substr(0, eq)));
      if (eq != std::string_view::npos) {
        o.has_value = true;
        o.value = std::string(trim(s.substr(eq + 1)));
      }
      if (o.key.rfind("include", 0) == 0 && (o.key.size() == 7 || std::isspace(static_cast<unsigned char>(o.key[7]))))
        throw ConfigError(at(name, line_no) + "'include' directives are not supported: put the options in this file");
      if (o.key.empty() || o.key.find_first_of(" \t[]") != std::string::npos)
        throw ConfigError(at(name, line_no) + fmt::format("'{}': not an option line (key=value, or a bare key)", shown(s)));
      if (o.has_value && o.value.empty()) throw ConfigError(at(name, line_no) + fmt::format("option '{}' has no value", shown(o.key)));
      if (o.value.find('$') != std::string::npos || (!o.value.empty() && o.value.front() == '('))
        throw ConfigError(at(name, line_no) + fmt::format("option '{}': '{}': environment variables, $keywords and arithmetic "
                                                          "expressions are not supported: give the value",
                                                          shown(o.key), shown(o.value)));
      if (f.sections.empty())
        throw ConfigError(at(name, line_no) + fmt::format("option '{}' outside of a section ([global] or [job name])", shown(o.key)));
      f.sections.back().options.push_back(std::move(o));
    }
    if (nl == text.size()) break;
  }
  bool any_job = false;
  for (const auto& s : f.sections) any_job = any_job || !s.global();
  if (!any_job) throw ConfigError(fmt::format("{}: no job section (a [name] other than [global])", name));
  return f;
}

JobFile read_job_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("{}: cannot read the job file", path));
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, size_t(in.gcount()));
    if (text.size() > kMaxFileBytes)
      throw ConfigError(fmt::format("{}: more than {} bytes: a job file may hold at most {} bytes", path, kMaxFileBytes, kMaxFileBytes));
  }
  return parse_job_file(text, path);
}

// ---- values -------------------------------------------------------------------------------------------------------

namespace {

struct Ctx {
  const std::string& file;
  const Option& o;
  [[noreturn]] void fail(const std::string& why) const {
    throw ConfigError(at(file, o.line) + fmt::format("{}={}: {}", o.key, shown(o.value), why));
  }
};

/// An integer with fio's optional 0x prefix and its size suffix (kb_base 1024: k = 1024, ki = 1000; 1000: the
/// other way round); an optional b/B. Refuses overflow past 2^62.
int64_t parse_size(const Ctx& c, std::string_view v, int64_t kb_base) {
  std::string s = lower(trim(v));
  if (s.empty()) c.fail("no value");
  uint64_t n = 0;
  size_t i = 0;
  const bool hex = s.size() > 2 && s[0] == '0' && s[1] == 'x';
  if (hex) i = 2;
  const size_t digits_start = i;
  for (; i < s.size(); ++i) {
    const char ch = s[i];
    int d = -1;
    if (ch >= '0' && ch <= '9')
      d = ch - '0';
    else if (hex && ch >= 'a' && ch <= 'f')
      d = ch - 'a' + 10;
    if (d < 0) break;
    if (n > (uint64_t(1) << 62) / 16) c.fail("too large (at most 2^62)");
    n = n * (hex ? 16 : 10) + uint64_t(d);
  }
  if (i == digits_start) c.fail("not a whole number with an optional size suffix (4k, 1m, 2g, 0x1000)");
  std::string suf = s.substr(i);
  if (!suf.empty() && suf.back() == 'b') suf.pop_back();
  const char* units = "kmgtp";
  uint64_t mult = 1;
  if (!suf.empty()) {
    const char* u = std::strchr(units, suf[0]);
    const bool iec = suf.size() == 2 && suf[1] == 'i';
    if (!u || suf[0] == '\0' || (suf.size() > 1 && !iec))
      c.fail(fmt::format("'{}' is not a size suffix (k, m, g, t, p with kb_base={}; ki, mi, gi, ti, pi; an optional b)", shown(s.substr(i)),
                         kb_base));
    const uint64_t base = (kb_base == 1024) != iec ? 1024 : 1000;
    for (const char* p = units; p <= u; ++p) mult *= base;
  }
  if (mult > 1 && n > (uint64_t(1) << 62) / mult) c.fail("too large (at most 2^62 bytes)");
  return int64_t(n * mult);
}

/// A time: a whole number with d, h, m, s (the default), ms/msec, us/usec (fio's "time" type).
Time parse_time(const Ctx& c, std::string_view v) {
  std::string s = lower(trim(v));
  size_t i = 0;
  uint64_t n = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (n > uint64_t(1e15)) c.fail("too large");
    n = n * 10 + uint64_t(s[i] - '0');
  }
  if (i == 0) c.fail("not a time (a whole number with an optional unit: d, h, m, s, ms, us; seconds without)");
  const std::string u = s.substr(i);
  double unit_s = 0;
  if (u.empty() || u == "s" || u == "sec")
    unit_s = 1;
  else if (u == "ms" || u == "msec")
    unit_s = 1e-3;
  else if (u == "us" || u == "usec")
    unit_s = 1e-6;
  else if (u == "m")
    unit_s = 60;
  else if (u == "h")
    unit_s = 3600;
  else if (u == "d")
    unit_s = 86400;
  else
    c.fail(fmt::format("'{}' is not a time unit (d, h, m, s, ms, us)", shown(u)));
  const double secs = double(n) * unit_s;
  if (secs * 1e12 > double(kMaxSimulatedPs)) c.fail(fmt::format("{:.4g} s is more than a run may simulate (1e6 s)", secs));
  return ps(secs * 1e12);
}

int64_t parse_int(const Ctx& c, std::string_view v, int64_t lo, int64_t hi, const char* what) {
  const int64_t n = parse_size(c, v, 1024);
  if (n < lo || n > hi) c.fail(fmt::format("{} must be {} to {}", what, lo, hi));
  return n;
}

bool parse_bool(const Ctx& c) {
  if (!c.o.has_value) return true;
  const std::string v = lower(c.o.value);
  if (v == "1") return true;
  if (v == "0") return false;
  c.fail("a boolean is 1 or 0 (or the bare option for 1)");
}

/// A size or a percentage (size=20%, offset=10%).
Amount parse_amount(const Ctx& c, int64_t kb_base, double lo_pct) {
  Amount a;
  a.set = true;
  std::string_view v = trim(c.o.value);
  if (!v.empty() && v.back() == '%') {
    a.percent = true;
    std::string num(trim(v.substr(0, v.size() - 1)));
    char* end = nullptr;
    a.pct = std::strtod(num.c_str(), &end);
    if (num.empty() || *end != '\0' || !std::isfinite(a.pct) || a.pct < lo_pct || a.pct > 100)
      c.fail(fmt::format("a percentage must be {:g} to 100", lo_pct));
    return a;
  }
  a.bytes = parse_size(c, v, kb_base);
  return a;
}

std::vector<double> parse_percentiles(const Ctx& c) {
  std::vector<double> out;
  std::string_view v = c.o.value;
  while (true) {
    const size_t colon = v.find(':');
    std::string num(trim(v.substr(0, colon)));
    char* end = nullptr;
    const double p = std::strtod(num.c_str(), &end);
    if (num.empty() || *end != '\0' || !std::isfinite(p) || p <= 0 || p > 100)
      c.fail("a list of percentiles in (0, 100] separated by ':' (99:99.9)");
    out.push_back(p);
    if (out.size() > 20) c.fail("at most 20 percentiles (fio's FIO_IO_U_LIST_MAX_LEN)");
    if (colon == std::string_view::npos) break;
    v = v.substr(colon + 1);
  }
  std::sort(out.begin(), out.end());  // fio sorts the list
  return out;
}

/// Applies one option to a job (its kind already checked: Modelled or Ignored).
void apply(Job& j, const std::string& file, const Option& o, std::vector<std::string>* notes) {
  const Ctx c{file, o};
  const std::string& k = o.key;
  auto need_value = [&] {
    if (!o.has_value) throw ConfigError(at(file, o.line) + fmt::format("option '{}' needs a value ({}=...)", k, k));
  };
  j.line_of[k] = o.line;
  j.where[k] = fmt::format("{}:{} {}{}{}", file, o.line, k, o.has_value ? "=" : "", shown(o.value));
  if (option_kind(k) == OptionKind::Ignored) {
    if (k == "direct" && o.has_value && trim(o.value) == "0" && notes)
      notes->push_back(at(file, o.line) + "direct=0: no host page cache is modelled; every I/O reaches the device as with direct=1");
    if (k == "buffered" && (!o.has_value || trim(o.value) != "0") && notes)
      notes->push_back(at(file, o.line) + "buffered: no host page cache is modelled; every I/O reaches the device as with direct=1");
    return;
  }
  if (k == "rw" || k == "readwrite") {
    need_value();
    const std::string v = lower(trim(o.value));
    if (v.find(':') != std::string::npos) c.fail("an offset modifier (rw=...:N) is not modelled");
    if (v == "read")
      j.rw = Pattern::Read;
    else if (v == "write")
      j.rw = Pattern::Write;
    else if (v == "randread")
      j.rw = Pattern::RandRead;
    else if (v == "randwrite")
      j.rw = Pattern::RandWrite;
    else if (v == "rw" || v == "readwrite")
      j.rw = Pattern::ReadWrite;
    else if (v == "randrw")
      j.rw = Pattern::RandRw;
    else if (v == "trim" || v == "randtrim" || v == "trimwrite" || v == "randtrimwrite")
      c.fail("trims are not modelled (read, write, randread, randwrite, rw/readwrite, randrw)");
    else
      c.fail("not one of read, write, randread, randwrite, rw, readwrite, randrw");
  } else if (k == "rwmixread") {
    need_value();
    j.rwmixread = double(parse_int(c, o.value, 0, 100, "a percentage"));
  } else if (k == "rwmixwrite") {
    need_value();
    j.rwmixread = 100.0 - double(parse_int(c, o.value, 0, 100, "a percentage"));
  } else if (k == "bs" || k == "blocksize") {
    need_value();
    if (o.value.find_first_of(",/") != std::string::npos) c.fail("different block sizes per direction (bs=R,W) are not modelled");
    if (o.value.find_first_of(":-") != std::string::npos) c.fail("a block size range is not modelled (bsrange, bssplit neither)");
    j.bs = parse_size(c, o.value, j.kb_base);
    if (j.bs < 512 || j.bs % 512 != 0 || j.bs > (int64_t(1) << 25))
      c.fail("the block size must be a multiple of 512 B (the device's sector), 512 B to 32 MiB");
  } else if (k == "iodepth") {
    need_value();
    j.iodepth = parse_int(c, o.value, 1, 65536, "iodepth");
  } else if (k == "numjobs") {
    need_value();
    j.numjobs =
        parse_int(c, o.value, 1, kMaxFlowsPerGroup, "numjobs (the clones of a run are flows of the simulated device; at most 64 at once)");
  } else if (k == "size") {
    need_value();
    j.size = parse_amount(c, j.kb_base, 1);
    if (!j.size.percent && j.size.bytes == 0) c.fail("size must be above 0");
  } else if (k == "offset") {
    need_value();
    j.offset = parse_amount(c, j.kb_base, 0);
  } else if (k == "io_size" || k == "io_limit") {
    need_value();
    j.io_size = parse_size(c, o.value, j.kb_base);
    if (j.io_size == 0) c.fail("io_size must be above 0");
  } else if (k == "number_ios") {
    need_value();
    j.number_ios = parse_int(c, o.value, 0, int64_t(1) << 50, "number_ios");
  } else if (k == "runtime" || k == "timeout") {
    need_value();
    j.runtime = parse_time(c, o.value);
  } else if (k == "ramp_time") {
    need_value();
    j.ramp_time = parse_time(c, o.value);
  } else if (k == "time_based") {
    j.time_based = parse_bool(c);
  } else if (k == "group_reporting") {
    j.group_reporting = parse_bool(c);
  } else if (k == "stonewall" || k == "wait_for_previous") {
    j.stonewall = parse_bool(c);
  } else if (k == "new_group") {
    j.new_group = parse_bool(c);
  } else if (k == "randrepeat" || k == "allrandrepeat") {
    if (!parse_bool(c) && notes)
      notes->push_back(at(file, o.line) +
                       fmt::format("{}=0: bitline is deterministic; the jobs' seed (randseed, default {:#x}) is used", k, kDefaultSeed));
  } else if (k == "randseed") {
    need_value();
    j.seed = uint64_t(parse_size(c, o.value, 1024));
  } else if (k == "percentile_list") {
    need_value();
    j.percentiles = parse_percentiles(c);
  } else if (k == "clat_percentiles") {
    j.clat_percentiles = parse_bool(c);
  } else if (k == "lat_percentiles") {
    j.lat_percentiles = parse_bool(c);
  } else if (k == "kb_base") {
    need_value();
    const std::string v(trim(o.value));
    if (v != "1024" && v != "1000") c.fail("kb_base is 1024 or 1000");
    j.kb_base = v == "1024" ? 1024 : 1000;
  } else if (k == "name") {
    need_value();
    j.name = o.value;
  } else if (k == "description") {
    // text only
  } else if (const auto* l = std::find(kLogOptions.begin(), kLogOptions.end(), k); l != kLogOptions.end()) {
    // bare: fio names the files after the job (its name as resolve_jobs finally has it)
    Job::LogRequest& r = j.log[size_t(l - kLogOptions.begin())];
    r.on = true;
    r.prefix = o.has_value ? std::string(trim(o.value)) : std::string();
    if (o.has_value && r.prefix.empty()) c.fail("an empty log file prefix (give a name, or the bare option for the job's name)");
  } else if (k == "log_avg_msec") {
    need_value();
    j.log_avg_msec = parse_int(c, o.value, 0, int64_t(1) << 30, "log_avg_msec (ms)");
  }
}

void check_kind(const std::string& file, const Option& o) {
  switch (option_kind(o.key)) {
    case OptionKind::Modelled:
    case OptionKind::Ignored:
      return;
    case OptionKind::NotModelled:
      throw ConfigError(at(file, o.line) +
                        fmt::format("fio option '{}' is not modelled by bitline ssd fio (docs/ssd.md, \"fio job files\", lists "
                                    "what is)",
                                    shown(o.key)));
    case OptionKind::Unknown: {
      std::vector<std::string_view> known(std::begin(kFioOptions), std::end(kFioOptions));
      const std::string_view near = closest_name(o.key, known);
      throw ConfigError(at(file, o.line) + fmt::format("unknown option '{}' (not a fio option){}", shown(o.key),
                                                       near.empty() ? std::string() : fmt::format("; did you mean '{}'?", near)));
    }
  }
}

}  // namespace

double Job::read_fraction() const {
  switch (rw) {
    case Pattern::Read:
    case Pattern::RandRead:
      return 1.0;
    case Pattern::Write:
    case Pattern::RandWrite:
      return 0.0;
    case Pattern::ReadWrite:
    case Pattern::RandRw:
      return rwmixread / 100.0;
  }
  return 1.0;
}

std::vector<Job> resolve_jobs(const JobFile& f, std::vector<std::string>* notes) {
  std::vector<Option> global;  // every [global] option so far, in order: a job takes those above it
  std::vector<Job> jobs;
  for (const Section& s : f.sections) {
    for (const Option& o : s.options) check_kind(f.file, o);
    if (s.global()) {
      global.insert(global.end(), s.options.begin(), s.options.end());
      continue;
    }
    Job j;
    j.name = s.name;
    j.line = s.line;
    // kb_base first: it changes how the sizes before it read
    for (const std::vector<Option>* list : {static_cast<const std::vector<Option>*>(&global), &s.options})
      for (const Option& o : *list)
        if (o.key == "kb_base") apply(j, f.file, o, nullptr);
    for (const Option& o : global) apply(j, f.file, o, notes);
    for (const Option& o : s.options) {
      apply(j, f.file, o, notes);
      j.own_options.emplace_back(o.key, o.has_value ? o.value : std::string());
    }
    for (Job::LogRequest& r : j.log)
      if (r.prefix.empty()) r.prefix = j.name;
    if (j.time_based && j.runtime == Time{})
      throw ConfigError(at(f.file, j.line_of.at("time_based")) +
                        fmt::format("job '{}': time_based without a runtime runs until it is stopped: give runtime=", shown(j.name)));
    jobs.push_back(std::move(j));
  }
  return jobs;
}

// ---- translation --------------------------------------------------------------------------------------------------

namespace {

std::string where_of(const Job& j, const std::string& key, const std::string& file) {
  auto it = j.where.find(key);
  return it != j.where.end() ? it->second : fmt::format("{}:{} [{}]", file, j.line, j.name);
}

int64_t line_of(const Job& j, const std::string& key) {
  auto it = j.line_of.find(key);
  return it != j.line_of.end() ? it->second : j.line;
}

}  // namespace

Plan plan_jobs(const JobFile& f, const std::vector<Job>& jobs, const DeviceXml& d, double occupancy) {
  Plan p;
  p.file = f.file;
  p.jobs = jobs;
  for (const Section& s : f.sections)
    if (s.global())
      for (const Option& o : s.options) p.global_options.emplace_back(o.key, o.has_value ? o.value : std::string());
  int64_t gid = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    if (i > 0 && (j.stonewall || j.new_group)) ++gid;
    p.groupid.push_back(gid);
    if (p.runs.empty() || j.stonewall) p.runs.emplace_back();
    for (int64_t c = 0; c < j.numjobs; ++c) p.runs.back().clones.push_back(Clone{i, c});
  }
  const int64_t logical_bytes = d.logical_pages() * d.page_size;
  int64_t unaveraged = 0;  // I/Os the unaveraged logs of the file keep
  for (RunGroup& r : p.runs) {
    const int64_t n = int64_t(r.clones.size());
    const Job& first = p.jobs[r.clones.front().job];
    if (n > kMaxFlowsPerGroup)
      throw ConfigError(at(f.file, first.line) +
                        fmt::format("the jobs that run at once from job '{}' on (up to the next stonewall) are {} clones; the "
                                    "simulated device runs at most {} flows at once (each job clone is one; put a stonewall "
                                    "between jobs or lower numjobs)",
                                    shown(first.name), n, kMaxFlowsPerGroup));
    // as MQSim's flows (and the engine's mapping domains): the logical space split equally between the run's flows
    const int64_t share_bytes = d.logical_pages() * d.sectors_per_page() / n * 512;
    const std::string split =
        n > 1 ? fmt::format("; the {} job clones that run at once each have 1/{} of it, {} bytes", n, n, share_bytes) : std::string();
    for (const Clone& c : r.clones) {
      const Job& j = p.jobs[c.job];
      auto fail = [&](const std::string& key, const std::string& why) {
        throw ConfigError(at(f.file, line_of(j, key)) + fmt::format("job '{}': {}", shown(j.name), why));
      };
      int64_t off = 0;
      if (j.offset.set) {
        off = j.offset.percent ? int64_t(j.offset.pct / 100.0 * double(share_bytes)) : j.offset.bytes;
        if (j.offset.percent) off = (off + j.bs - 1) / j.bs * j.bs;  // fio aligns a percentage offset to the block size
        if (off % 512 != 0) fail("offset", fmt::format("offset={} is not a multiple of the device's 512 B sector", off));
      }
      if (off >= share_bytes)
        fail("offset", fmt::format("offset={} B is past the device's logical space ({} bytes, {}'s pages less over-provisioning{})", off,
                                   logical_bytes, d.file, split));
      int64_t size = share_bytes - off;  // fio's default: the whole device from the offset
      if (j.size.set) size = j.size.percent ? int64_t(j.size.pct / 100.0 * double(share_bytes)) : j.size.bytes;
      size -= size % j.bs;
      if (size < j.bs) fail(j.size.set ? "size" : "bs", fmt::format("the range, {} B, holds no block of bs={} B", size, j.bs));
      if (off + size > share_bytes)
        fail("size", fmt::format("size={} B at offset={} B ends past the device's logical space ({} bytes, {}'s pages less "
                                 "over-provisioning{})",
                                 size, off, logical_bytes, d.file, split));
      FlowXml x;
      x.kind = FlowKind::Synthetic;
      x.initial_occupancy = occupancy;
      x.working_set = 1.0;
      x.generator = Generator::QueueDepth;
      x.read_ratio = j.read_fraction();
      x.address_distribution = j.random() ? AddressDistribution::RandomUniform : AddressDistribution::Streaming;
      x.aligned = true;
      x.alignment_unit = j.bs / 512;
      x.size_distribution = SizeDistribution::Fixed;
      x.avg_size = j.bs / 512;
      x.seed = int64_t(j.seed & 0x7FFFFFFFFFFFFFFFULL);
      x.queue_depth = j.iodepth;
      x.range_offset = off / 512;
      x.range_sectors = size / 512;
      x.stats_from = j.ramp_time;
      if (j.runtime > Time{}) {
        if (j.ramp_time.raw() > kMaxSimulatedPs - j.runtime.raw())
          fail("runtime", "ramp_time + runtime is more than a run may simulate (1e6 s)");
        x.stop_time = j.ramp_time + j.runtime;
        x.origin_time = fmt::format("job '{}' ({}{}): runs for {:.6g} s", shown(j.name), where_of(j, "runtime", f.file),
                                    j.ramp_time > Time{} ? ", " + where_of(j, "ramp_time", f.file) : std::string(), to_s(x.stop_time));
      }
      std::string set_by;
      if (!j.time_based) {
        const int64_t io = j.io_size > 0 ? j.io_size : size;
        x.total_requests = std::max<int64_t>(1, io / j.bs);
        set_by = j.io_size > 0 ? where_of(j, "io_size", f.file)
                               : (j.size.set ? where_of(j, "size", f.file)
                                             : fmt::format("{}:{} [{}]: size not given: the whole range", f.file, j.line, shown(j.name)));
      }
      if (j.number_ios > 0 && (x.total_requests == 0 || j.number_ios < x.total_requests)) {
        x.total_requests = j.number_ios;
        set_by = where_of(j, "number_ios", f.file);
      }
      if (x.total_requests > 0)
        x.origin_requests = fmt::format("job '{}' ({}): {} I/Os of {} B", shown(j.name), set_by, x.total_requests, j.bs);
      if (j.logs()) {
        x.io_log = true;
        x.io_log_window = ms(double(j.log_avg_msec));
        const auto first = std::find_if(j.log.begin(), j.log.end(), [](const Job::LogRequest& l) { return l.on; });
        const std::string key(kLogOptions[size_t(first - j.log.begin())]);
        if (j.log_avg_msec == 0) {
          // one line per I/O: bounded before the run (the lines each clone's logs will have, and all of them together)
          if (x.total_requests == 0)
            fail(key, fmt::format("{} without log_avg_msec writes a line per I/O, and a time_based job's I/Os are not known "
                                  "before it runs: give log_avg_msec= (lines per window) or number_ios=",
                                  key));
          if (x.total_requests > kMaxIoLogEntries)
            fail(key, fmt::format("{} without log_avg_msec writes a line per I/O: {} I/Os, more than the {} (2^22) lines a log "
                                  "may have; give log_avg_msec= (lines per window)",
                                  key, x.total_requests, kMaxIoLogEntries));
          unaveraged += x.total_requests;
          if (unaveraged > kMaxIoLogEntries)
            fail(key, fmt::format("{} without log_avg_msec: the job file's unaveraged logs would keep {} I/Os' lines, more than the "
                                  "{} (2^22) all of them together may; give log_avg_msec= (lines per window)",
                                  key, unaveraged, kMaxIoLogEntries));
        } else if (x.stop_time > Time{} && x.stop_time.raw() / x.io_log_window.raw() >= kMaxIoLogEntries) {
          fail("log_avg_msec", fmt::format("log_avg_msec={} over the job's {:.6g} s makes more than the {} (2^22) windows a log may "
                                           "have; give a longer log_avg_msec",
                                           j.log_avg_msec, to_s(x.stop_time), kMaxIoLogEntries));
        }
      }
      r.scenario.flows.push_back(std::move(x));
    }
  }
  return p;
}

// ---- fio's JSON ---------------------------------------------------------------------------------------------------

namespace {

nlohmann::ordered_json lat_json(const IoMoments& m, const IoHist& h, bool percentiles, const std::vector<double>& ps) {
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  o["min"] = m.n ? m.min : 0;
  o["max"] = m.n ? m.max : 0;
  o["mean"] = m.n ? m.mean : 0.0;
  o["stddev"] = m.stddev();
  o["N"] = m.n;
  if (percentiles && m.n > 0) {
    const std::vector<uint64_t> v = h.percentiles(ps, m.n);
    nlohmann::ordered_json pj = nlohmann::ordered_json::object();
    for (size_t i = 0; i < ps.size(); ++i) pj[fmt::format("{:f}", ps[i])] = v[i];
    o["percentile"] = pj;
  }
  return o;
}

nlohmann::ordered_json dir_json(const DirStats& d, int64_t runtime_ps, const Job& j) {
  const double secs = d.ios > 0 ? double(runtime_ps) * 1e-12 : 0.0;
  const int64_t bw_bytes = secs > 0 ? int64_t(std::floor(double(d.bytes) / secs)) : 0;
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  o["io_bytes"] = d.bytes;
  o["io_kbytes"] = d.bytes >> 10;
  o["bw_bytes"] = bw_bytes;
  o["bw"] = bw_bytes / 1024;
  o["iops"] = secs > 0 ? double(d.ios) / secs : 0.0;
  o["runtime"] = d.ios > 0 ? std::llround(double(runtime_ps) * 1e-9) : 0;
  o["total_ios"] = d.ios;
  o["short_ios"] = 0;
  o["drop_ios"] = 0;
  o["slat_ns"] = lat_json(d.slat, d.clat_hist, false, j.percentiles);
  o["clat_ns"] = lat_json(d.clat, d.clat_hist, j.clat_percentiles && !j.lat_percentiles, j.percentiles);
  o["lat_ns"] = lat_json(d.lat, d.lat_hist, j.lat_percentiles, j.percentiles);
  return o;
}

nlohmann::ordered_json ordered(const nlohmann::json& j) { return nlohmann::ordered_json::parse(j.dump()); }

nlohmann::ordered_json options_json(const std::vector<std::pair<std::string, std::string>>& opts) {
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  for (const auto& [k, v] : opts) o[k] = v;
  return o;
}

}  // namespace

nlohmann::ordered_json fio_json(const Plan& plan, const std::vector<ScenarioRun>& runs) {
  if (runs.size() != plan.runs.size()) throw ModelError("fio_json: one ScenarioRun per run of the plan");
  struct Entry {
    size_t job;
    int64_t gid, clones = 0;
    bool merging;
    FlowIoStats io;
    int64_t runtime_ps = 0;
  };
  std::vector<Entry> entries;
  nlohmann::ordered_json run_info = nlohmann::ordered_json::array();
  for (size_t r = 0; r < plan.runs.size(); ++r) {
    const RunGroup& g = plan.runs[r];
    if (runs[r].flows.size() != g.clones.size())
      throw ModelError("fio_json: a run without its flows' I/O statistics (RunOptions::io_stats)");
    nlohmann::ordered_json names = nlohmann::ordered_json::array();
    for (size_t i = 0; i < g.clones.size(); ++i) {
      const Clone& c = g.clones[i];
      const Job& j = plan.jobs[c.job];
      if (c.clone == 0) names.push_back(j.name);
      const FlowIoStats& s = runs[r].flows[i];
      const int64_t gid = plan.groupid[c.job];
      if (!(j.group_reporting && !entries.empty() && entries.back().merging && entries.back().gid == gid))
        entries.push_back(Entry{c.job, gid, 0, j.group_reporting, {}, 0});
      Entry& e = entries.back();
      ++e.clones;
      for (int d = 0; d < 2; ++d) e.io.dir[size_t(d)].merge(s.dir[size_t(d)]);
      e.runtime_ps = std::max(e.runtime_ps, s.runtime_ps());
    }
    const nlohmann::json& res = runs[r].result;
    run_info.push_back({{"jobs", names},
                        {"flows", g.clones.size()},
                        {"simulated_s", res.value("simulated_s", 0.0)},
                        {"requests", res.value("requests", int64_t(0))},
                        {"events", res.contains("wall") ? res["wall"].value("events", int64_t(0)) : res.value("events", int64_t(0))},
                        {"work_estimate", ordered(res.value("work_estimate", nlohmann::json::object()))},
                        {"ftl", ordered(res.value("ftl", nlohmann::json::object()))}});
    // the SLC cache's counts (a device with one) and the bandwidth over time (RunOptions::throughput_bin), as ssd run
    // writes them
    for (const char* key : {"slc", "throughput"})
      if (res.contains(key)) run_info.back()[key] = ordered(res[key]);
  }
  nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
  for (const Entry& e : entries) {
    const Job& j = plan.jobs[e.job];
    DirStats none;
    jobs.push_back({{"jobname", j.name},
                    {"groupid", e.gid},
                    {"error", 0},
                    {"job options", options_json(j.own_options)},
                    {"read", dir_json(e.io.dir[0], e.runtime_ps, j)},
                    {"write", dir_json(e.io.dir[1], e.runtime_ps, j)},
                    {"trim", dir_json(none, 0, j)},
                    {"job_runtime", std::llround(double(e.runtime_ps) * 1e-9)},
                    {"bitline", {{"clones", e.clones}}}});
  }
  return {{"fio version", "bitline-fio"},
          {"global options", options_json(plan.global_options)},
          {"jobs", jobs},
          {"bitline", {{"job_file", plan.file}, {"runs", run_info}}}};
}

namespace {

/// One log file of a clone: which values it has (bw, iops, lat, clat, slat).
enum class LogKind { Bw, Iops, Lat, Clat, Slat };
struct LogOf {
  size_t run = 0, flow = 0;  // where its clone's FlowIoStats are
  const Job* job = nullptr;
  LogKind kind = LogKind::Bw;
  std::string name;
};

std::vector<LogOf> logs_of(const Plan& plan) {
  std::vector<LogOf> out;
  int64_t number = 0;  // fio's thread number: the clones of every job, in file order, from 1
  for (size_t r = 0; r < plan.runs.size(); ++r)
    for (size_t i = 0; i < plan.runs[r].clones.size(); ++i) {
      const Job& j = plan.jobs[plan.runs[r].clones[i].job];
      ++number;
      auto add = [&](LogKind k, const std::string& prefix, const char* what) {
        out.push_back(LogOf{r, i, &j, k, fmt::format("{}_{}.{}.log", prefix, what, number)});
      };
      if (const auto& l = j.log_of(LogOption::Bw); l.on) add(LogKind::Bw, l.prefix, "bw");
      if (const auto& l = j.log_of(LogOption::Iops); l.on) add(LogKind::Iops, l.prefix, "iops");
      if (const auto& l = j.log_of(LogOption::Lat); l.on) {
        add(LogKind::Lat, l.prefix, "lat");
        add(LogKind::Clat, l.prefix, "clat");
        add(LogKind::Slat, l.prefix, "slat");
      }
    }
  return out;
}

std::string log_text(const LogOf& l, const IoLog& log) {
  std::string out;
  auto line = [&](int64_t t_ms, uint64_t value, int dir, int64_t bs, int64_t offset) {
    out += fmt::format("{}, {}, {}, {}, {}\n", t_ms, value, dir, bs, offset);
  };
  auto latency = [&](uint64_t slat, uint64_t clat, uint64_t lat) {
    return l.kind == LogKind::Lat ? lat : l.kind == LogKind::Clat ? clat : slat;
  };
  if (log.window_ps <= 0) {
    for (const IoLogRecord& r : log.records) {
      uint64_t v = 1;  // iops: one I/O
      if (l.kind == LogKind::Bw)
        v = r.lat > 0 ? uint64_t(std::floor(double(r.bytes) / 1024.0 / (double(r.lat) * 1e-9))) : 0;
      else if (l.kind != LogKind::Iops)
        v = latency(r.slat, r.clat, r.lat);
      line(r.t_ps / 1000000000, v, r.dir, r.bytes, r.offset);
    }
    return out;
  }
  const double window_s = double(log.window_ps) * 1e-12;
  const double rf = l.job->read_fraction();
  for (size_t w = 0; w < log.windows.size(); ++w) {
    const int64_t t_ms = (int64_t(w) + 1) * log.window_ps / 1000000000;
    for (int d = 0; d < 2; ++d) {
      const IoLogWindow& x = log.windows[w][size_t(d)];
      if (l.kind == LogKind::Bw || l.kind == LogKind::Iops) {
        if ((d == 0 && rf <= 0) || (d == 1 && rf >= 1)) continue;  // a direction the job does not do
        const double v = l.kind == LogKind::Bw ? double(x.bytes) / 1024.0 / window_s : double(x.ios) / window_s;
        line(t_ms, uint64_t(std::floor(v)), d, 0, 0);
      } else if (x.ios > 0) {
        const double n = double(x.ios);
        line(t_ms, uint64_t(std::floor(latency(uint64_t(x.slat / n), uint64_t(x.clat / n), uint64_t(x.lat / n)))), d, 0, 0);
      }
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> log_names(const Plan& plan) {
  std::vector<std::string> out;
  for (const LogOf& l : logs_of(plan)) out.push_back(l.name);
  return out;
}

std::vector<std::string> log_texts(const Plan& plan, const std::vector<ScenarioRun>& runs) {
  if (runs.size() != plan.runs.size()) throw ModelError("log_texts: one ScenarioRun per run of the plan");
  std::vector<std::string> out;
  for (const LogOf& l : logs_of(plan)) {
    if (runs[l.run].flows.size() != plan.runs[l.run].clones.size())
      throw ModelError("log_texts: a run without its flows' I/O statistics (RunOptions::io_stats)");
    out.push_back(log_text(l, runs[l.run].flows[l.flow].log));
  }
  return out;
}

std::string summary(const nlohmann::ordered_json& r) {
  std::string out;
  for (const auto& j : r["jobs"]) {
    out += fmt::format("{}: (groupid={}, jobs={}): {}\n", j["jobname"].get<std::string>(), j["groupid"].get<int64_t>(),
                       j["bitline"]["clones"].get<int64_t>(), r["fio version"].get<std::string>());
    for (const char* dir : {"read", "write"}) {
      const auto& d = j[dir];
      if (d["total_ios"].get<int64_t>() == 0) continue;
      const double bw = d["bw_bytes"].get<double>();
      out += fmt::format("  {}: IOPS={:.0f}, BW={:.1f}MiB/s ({:.1f}MB/s)({:.1f}MiB/{}ms)\n", dir, d["iops"].get<double>(), bw / 1048576.0,
                         bw / 1e6, d["io_bytes"].get<double>() / 1048576.0, d["runtime"].get<int64_t>());
      for (const char* lat : {"slat_ns", "clat_ns", "lat_ns"}) {
        const auto& l = d[lat];
        out += fmt::format("    {:>4} (usec): min={:.1f}, max={:.1f}, avg={:.2f}, stdev={:.2f}\n",
                           std::string(lat).substr(0, std::string(lat).find('_')), l["min"].get<double>() / 1e3,
                           l["max"].get<double>() / 1e3, l["mean"].get<double>() / 1e3, l["stddev"].get<double>() / 1e3);
      }
      for (const char* lat : {"clat_ns", "lat_ns"}) {
        if (!d[lat].contains("percentile")) continue;
        std::vector<std::string> parts;
        for (const auto& [k, v] : d[lat]["percentile"].items())
          parts.push_back(fmt::format("{:.2f}th=[{:.1f}]", std::stod(k), v.get<double>() / 1e3));
        out +=
            fmt::format("    {} percentiles (usec): {}\n", std::string(lat).substr(0, std::string(lat).find('_')), fmt::join(parts, ", "));
      }
    }
  }
  return out;
}

}  // namespace bitline::ssd::fio
