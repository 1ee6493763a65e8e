// fio's job files on the general SSD: reader, options table, translation into flows (ssd/fio.hpp; its results: fio_report.cpp).
#include "ssd/fio.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string_view>

#include "core/error.hpp"
#include "core/param_dump.hpp"
#include "core/registry.hpp"

namespace bitline::ssd::fio {

namespace {

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

/// "FILE:LINE: " for messages.
std::string at(const std::string& file, int64_t line) { return fmt::format("{}:{}: ", file, line); }

}  // namespace

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

/// fio's switches that set a flag of the job (bare = 1), by their names and aliases.
struct FlagOption {
  std::string_view name;
  bool Job::*flag;
};
constexpr FlagOption kFlagOptions[] = {{"time_based", &Job::time_based},
                                       {"group_reporting", &Job::group_reporting},
                                       {"stonewall", &Job::stonewall},
                                       {"wait_for_previous", &Job::stonewall},
                                       {"new_group", &Job::new_group},
                                       {"log_offset", &Job::log_offset},
                                       {"disable_bw_measurement", &Job::disable_bw},
                                       {"disable_bw", &Job::disable_bw}};

/// fio's options that set a whole number of the job, by their names and aliases: the member, its range, and what the
/// number is (named in the message of a value out of range).
struct IntOption {
  std::string_view name;
  int64_t Job::*value;
  int64_t lo, hi;
  const char* what;
};
constexpr IntOption kIntOptions[] = {
    {"iodepth", &Job::iodepth, 1, 65536, "iodepth"},
    {"numjobs", &Job::numjobs, 1, kMaxFlowsPerGroup, "numjobs (the clones of a run are flows of the simulated device; at most 64 at once)"},
    {"number_ios", &Job::number_ios, 0, int64_t(1) << 50, "number_ios"},
    {"log_avg_msec", &Job::log_avg_msec, 0, int64_t(1) << 30, "log_avg_msec (ms)"},
    {"bwavgtime", &Job::bw_avg_msec, 1, int64_t(1) << 30, "bwavgtime (ms)"},
    {"iopsavgtime", &Job::iops_avg_msec, 1, int64_t(1) << 30, "iopsavgtime (ms)"}};

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
  } else if (const auto* n = std::find_if(std::begin(kIntOptions), std::end(kIntOptions), [&](const IntOption& x) { return x.name == k; });
             n != std::end(kIntOptions)) {
    need_value();
    j.*(n->value) = parse_int(c, o.value, n->lo, n->hi, n->what);
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
  } else if (k == "runtime" || k == "timeout") {
    need_value();
    j.runtime = parse_time(c, o.value);
  } else if (k == "ramp_time") {
    need_value();
    j.ramp_time = parse_time(c, o.value);
  } else if (const auto* f =
                 std::find_if(std::begin(kFlagOptions), std::end(kFlagOptions), [&](const FlagOption& x) { return x.name == k; });
             f != std::end(kFlagOptions)) {
    j.*(f->flag) = parse_bool(c);
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
      const std::vector<std::string_view> known = fio_option_names();
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

/// A clone's fio logs (FlowXml::io_log, its window) and its bw and iops samples' windows; `fail(option, why)` refuses
/// naming the option's line, `unaveraged` counts the file's unaveraged log lines so far.
template <class Fail>
void plan_logs(const Job& j, FlowXml& x, const Fail& fail, int64_t& unaveraged) {
  // fio's bw and iops samples (init.c, stat.c): every bwavgtime / iopsavgtime ms (500 unless given), or, where the job
  // writes that log, every log_avg_msec unless the avgtime is given; a log without log_avg_msec (a line per I/O)
  // takes a sample per I/O instead (none for bw with disable_bw_measurement)
  const auto sample_window = [&](LogOption log, int64_t avg, const char* key) {
    if (!j.log_of(log).on) return ms(double(avg > 0 ? avg : 500));
    if (j.log_avg_msec == 0) return Time{};
    if (avg > 0 && avg < j.log_avg_msec)
      fail(key, fmt::format("{}={} below log_avg_msec={} averages fio's {} log over {} ms and its other logs over {}: "
                            "logs at two windows are not modelled; give {} >= log_avg_msec",
                            key, avg, j.log_avg_msec, log == LogOption::Bw ? "bw" : "iops", avg, j.log_avg_msec, key));
    return ms(double(avg > 0 ? avg : j.log_avg_msec));
  };
  x.bw_sample_window = sample_window(LogOption::Bw, j.bw_avg_msec, "bwavgtime");
  if (x.bw_sample_window == Time{} && j.disable_bw) x.bw_sample_window = Time(-1);
  x.iops_sample_window = sample_window(LogOption::Iops, j.iops_avg_msec, "iopsavgtime");
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
      plan_logs(j, x, fail, unaveraged);
      r.scenario.flows.push_back(std::move(x));
    }
  }
  return p;
}

}  // namespace bitline::ssd::fio
