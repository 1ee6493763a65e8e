// fio's JSON, log files and summary of a job file's runs on the general SSD (ssd/fio_report.hpp).
#include "ssd/fio_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace bitline::ssd::fio {

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

/// A runtime in ps as fio writes it: whole ms, rounded.
int64_t runtime_ms(int64_t ps) { return int64_t(std::llround(double(ps) * 1e-9)); }

/// fio's bw or iops figures of a reporting entry (stat.c): its clones' samples summed ("pure sum": min, max, mean,
/// sum of squares and count each added up, so the mean is the group's aggregate rate); none: zeros.
struct SampleSums {
  int64_t n = 0;
  double min = 0, max = 0, mean = 0, m2 = 0;
  void add(const IoMoments& m) {
    if (m.n == 0) return;
    n += m.n;
    min += double(m.min);
    max += double(m.max);
    mean += m.mean;
    m2 += m.m2;
  }
  double dev() const { return n > 1 ? std::sqrt(m2 / double(n - 1)) : 0.0; }
};

/// A reporting entry's samples, per direction: bw and iops.
struct EntrySamples {
  std::array<SampleSums, 2> bw, iops;
};

nlohmann::ordered_json dir_json(const DirStats& d, int64_t runtime_ps, const Job& j, const SampleSums& bw, const SampleSums& iops,
                                int64_t group_bw) {
  const double secs = d.ios > 0 ? double(runtime_ps) * 1e-12 : 0.0;
  const int64_t bw_bytes = secs > 0 ? int64_t(std::floor(double(d.bytes) / secs)) : 0;
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  o["io_bytes"] = d.bytes;
  o["io_kbytes"] = d.bytes >> 10;
  o["bw_bytes"] = bw_bytes;
  o["bw"] = bw_bytes / 1024;
  o["iops"] = secs > 0 ? double(d.ios) / secs : 0.0;
  o["runtime"] = d.ios > 0 ? runtime_ms(runtime_ps) : 0;
  o["total_ios"] = d.ios;
  o["short_ios"] = 0;
  o["drop_ios"] = 0;
  o["slat_ns"] = lat_json(d.slat, d.clat_hist, false, j.percentiles);
  o["clat_ns"] = lat_json(d.clat, d.clat_hist, j.clat_percentiles && !j.lat_percentiles, j.percentiles);
  o["lat_ns"] = lat_json(d.lat, d.lat_hist, j.lat_percentiles, j.percentiles);
  // the share of the reporting group's bandwidth (its bytes over its longest runtime) that the mean sample is, in
  // percent, at most 100 (stat.c convert_agg_kbytes_percent; the mean truncated to an integer as fio passes it)
  double agg = 0;
  if (bw.n > 0) agg = group_bw > 1024 ? std::min(100.0, double(int64_t(bw.mean)) * 100.0 / (double(group_bw) / 1024.0)) : 100.0;
  o["bw_min"] = int64_t(bw.min);
  o["bw_max"] = int64_t(bw.max);
  o["bw_agg"] = agg;
  o["bw_mean"] = bw.mean;
  o["bw_dev"] = bw.dev();
  o["bw_samples"] = bw.n;
  o["iops_min"] = int64_t(iops.min);
  o["iops_max"] = int64_t(iops.max);
  o["iops_mean"] = iops.mean;
  o["iops_stddev"] = iops.dev();
  o["iops_samples"] = iops.n;
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
    EntrySamples samples;
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
        entries.push_back(Entry{c.job, gid, 0, j.group_reporting, {}, 0, {}});
      Entry& e = entries.back();
      ++e.clones;
      for (int d = 0; d < 2; ++d) e.io.dir[size_t(d)].merge(s.dir[size_t(d)]);
      e.runtime_ps = std::max(e.runtime_ps, s.runtime_ps());
      const std::array<IoMoments, 2> bw = s.bw_samples.at_end(s.last_done_ps), iops = s.iops_samples.at_end(s.last_done_ps);
      for (size_t d = 0; d < 2; ++d) e.samples.bw[d].add(bw[d]), e.samples.iops[d].add(iops[d]);
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
  // each reporting group's bandwidth per direction (stat.c: its entries' bytes x 1000 / the longest runtime in ms)
  std::map<int64_t, std::array<std::pair<int64_t, int64_t>, 2>> group;  // gid -> per direction (bytes, longest ms)
  for (const Entry& e : entries)
    for (size_t d = 0; d < 2; ++d) {
      if (e.io.dir[d].ios == 0) continue;
      auto& [bytes, longest] = group[e.gid][d];
      bytes += e.io.dir[d].bytes;
      longest = std::max(longest, runtime_ms(e.runtime_ps));
    }
  const auto group_bw = [&](int64_t gid, size_t d) {
    const auto it = group.find(gid);
    if (it == group.end() || it->second[d].second <= 0) return int64_t(0);
    return it->second[d].first * 1000 / it->second[d].second;
  };
  nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
  for (const Entry& e : entries) {
    const Job& j = plan.jobs[e.job];
    DirStats none;
    const SampleSums zero;
    jobs.push_back({{"jobname", j.name},
                    {"groupid", e.gid},
                    {"error", 0},
                    {"job options", options_json(j.own_options)},
                    {"read", dir_json(e.io.dir[0], e.runtime_ps, j, e.samples.bw[0], e.samples.iops[0], group_bw(e.gid, 0))},
                    {"write", dir_json(e.io.dir[1], e.runtime_ps, j, e.samples.bw[1], e.samples.iops[1], group_bw(e.gid, 1))},
                    {"trim", dir_json(none, 0, j, zero, zero, 0)},
                    {"job_runtime", runtime_ms(e.runtime_ps)},
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
  // fio's line (iolog.c flush_samples): time, value, direction, block size, the offset with log_offset, and the
  // command priority: 0, an I/O outside the real-time class (bitline models no I/O priorities)
  auto line = [&](int64_t t_ms, uint64_t value, int dir, int64_t bs, int64_t offset) {
    if (l.job->log_offset)
      out += fmt::format("{}, {}, {}, {}, {}, 0\n", t_ms, value, dir, bs, offset);
    else
      out += fmt::format("{}, {}, {}, {}, 0\n", t_ms, value, dir, bs);
  };
  auto latency = [&](uint64_t slat, uint64_t clat, uint64_t lat) {
    return l.kind == LogKind::Lat ? lat : l.kind == LogKind::Clat ? clat : slat;
  };
  if (log.window_ps <= 0) {
    for (const IoLogRecord& r : log.records) {
      uint64_t v = 1;             // iops: one I/O
      if (l.kind == LogKind::Bw)  // fio's add_bw_sample: bytes x 10^6 / clat in ns (bytes per ms)
        v = r.clat > 0 ? uint64_t(r.bytes) * 1000000 / r.clat : 0;
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
      // fio's lines of the samples (stat.c show_ddir_status), where there are any
      if (d["bw_samples"].get<int64_t>() > 0)
        out += fmt::format("   bw (  KiB/s): min={}, max={}, per={:.2f}%, avg={:.2f}, stdev={:.2f}, samples={}\n",
                           d["bw_min"].get<int64_t>(), d["bw_max"].get<int64_t>(), d["bw_agg"].get<double>(), d["bw_mean"].get<double>(),
                           d["bw_dev"].get<double>(), d["bw_samples"].get<int64_t>());
      if (d["iops_samples"].get<int64_t>() > 0)
        out += fmt::format("   iops        : min={}, max={}, avg={:.2f}, stdev={:.2f}, samples={}\n", d["iops_min"].get<int64_t>(),
                           d["iops_max"].get<int64_t>(), d["iops_mean"].get<double>(), d["iops_stddev"].get<double>(),
                           d["iops_samples"].get<int64_t>());
    }
  }
  return out;
}

}  // namespace bitline::ssd::fio
