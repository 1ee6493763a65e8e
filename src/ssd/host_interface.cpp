// Stage: host interface (the general SSD, device_sim.hpp).
//
// Contract. Host flows make requests: a synthetic flow from its generator (open loop at a bandwidth, or closed loop
// at a queue depth, drawn a few requests ahead), a trace flow from its file (replayed Relay_Count times). A request
// enters its flow's NVMe submission queue (IO_Queue_Depth; beyond it the request waits on the host, bounded), its
// command is fetched over PCIe (a 64 B SQE), its data crosses PCIe (a write's before it is cached or programmed, a
// read's after its pages are read) and its completion is posted (a 16 B CQE). The link is one FIFO per direction at
// PCIe_Lane_Bandwidth x PCIe_Lane_Count. A request's device response time runs from its fetch to its completion,
// its end-to-end delay from its arrival. The results are MQSim's per-flow metrics and the device-wide counts.
#include "ssd/device_sim.hpp"

#include <fmt/format.h>

namespace bitline::ssd::detail {

/// Generates one synthetic request of flow f arriving at t (unless the flow has stopped).
void Sim::generate(uint32_t f, Time t) {
  Flow& fl = host_.flows[f];
  const FlowXml& x = *fl.x;
  if (fl.stopped) return;
  if ((x.stop_time > Time{} && t >= x.stop_time) || (x.total_requests > 0 && fl.generated >= x.total_requests)) {
    fl.stopped = true;
    return;
  }
  ++fl.generated;
  Drawn r;
  if (fl.closed_loop) {
    // A closed-loop flow draws only here, so its requests are drawn kAhead early (the same values in the
    // same order) and what they will look up is prefetched meanwhile.
    if (fl.ahead_n == 0)
      for (; fl.ahead_n < kAhead; ++fl.ahead_n) fl.ahead[fl.ahead_n] = draw_ahead(f);
    r = fl.ahead[fl.ahead_i];
    fl.ahead[fl.ahead_i] = draw_ahead(f);
    fl.ahead_i = (fl.ahead_i + 1) % kAhead;
  } else {
    r = draw(f);
  }
  arrive(host_.new_request(f, r.read, r.lba, r.size, t), t);
}

/// Starts loading what the translation and the FTL will touch for logical page lpa (hints only).
void Sim::prefetch_lpa(uint32_t f, uint32_t lpa) const {
  if (!mapping_.ideal) {
    uint32_t page = mapping_.tpage_of(f, lpa);
    mapping_.cmts[mapping_.cmts.size() == 1 ? 0 : f]->prefetch(lpa, page);
    bitline::prefetch(&mapping_.arriving[page]);
    bitline::prefetch(&mapping_.departing[page]);
  }
  ftl_.prefetch(lpa);
  if (host_.flows[f].any_cache) data_cache_.partitions[size_t(data_cache_.partition_of(f))]->prefetch(lpa);
  if (host_.flows[f].write_cache && model_.hot_cold_cache) data_cache_.hot_pages.prefetch(lpa);
  mapping_.partial_bits.prefetch(lpa);
}

/// Draws a synthetic request's direction, address and size from the flow's generator.
Drawn Sim::draw(uint32_t f) {
  Flow& fl = host_.flows[f];
  const FlowXml& x = *fl.x;
  int64_t size = x.avg_size;
  if (fl.normal_size && x.size_variance > 0) {
    double u1 = 1.0 - fl.rng.uniform(), u2 = fl.rng.uniform();
    double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    size = std::max<int64_t>(1, std::llround(double(x.avg_size) + z * std::sqrt(double(x.size_variance))));
  }
  int64_t span = fl.end_lba - fl.start_lba;
  size = std::min(size, span);
  bool read = fl.rng.chance(x.read_ratio);
  // a start in [lo, hi) of the range, uniformly
  auto uniform = [&](int64_t lo, int64_t hi) { return fl.start_lba + lo + int64_t(fl.rng.below(uint64_t(std::max<int64_t>(1, hi - lo)))); };
  int64_t lba = 0;
  switch (x.address_distribution) {
    case AddressDistribution::Streaming:
      if (fl.stream_next + size > span) fl.stream_next = 0;
      lba = fl.start_lba + fl.stream_next;
      fl.stream_next += size;
      break;
    case AddressDistribution::RandomUniform:
      lba = uniform(0, span - size + 1);
      break;
    case AddressDistribution::RandomHotCold: {
      // 90% of the accesses go to the hot region (the first Percentage_of_Hot_Region of the working set)
      int64_t lo = 0, hi = span - size + 1;
      int64_t hot = std::max<int64_t>(1, int64_t(double(span) * x.hot_region));
      if (fl.rng.chance(0.9))
        hi = std::min(hi, hot);
      else
        lo = std::min(hot, hi - 1);
      lba = uniform(lo, hi);
      break;
    }
  }
  if (x.aligned && x.alignment_unit > 1) {
    lba -= lba % x.alignment_unit;
    if (lba < fl.start_lba) lba = fl.start_lba;
  }
  return Drawn{lba, size, read};
}

void Sim::on_arrival(uint32_t f) {
  Flow& fl = host_.flows[f];
  const FlowXml& x = *fl.x;
  Time t = events_.now();
  if (x.kind == FlowKind::Synthetic) {  // BANDWIDTH: Poisson arrivals at Bandwidth / request size
    generate(f, t);
    if (fl.stopped) return;
    double mean_ns = double(x.avg_size * 512) / double(x.bandwidth) * 1e9;
    double gap = -std::log(1.0 - fl.rng.uniform()) * mean_ns;
    events_.push(t + ns(gap), {Ev::Arrival, f});
    return;
  }
  // trace: this event delivers the record read ahead, then schedules the next one
  if (fl.generated > 0) arrive(host_.pending_trace[f], t);
  TraceRecord r;
  while (true) {
    if (fl.trace_done >= fl.trace_limit || !fl.trace->next(r)) {
      if (++fl.replay >= x.relay_count) return;
      fl.replay_offset = fl.last_arrival;
      fl.trace->rewind();
      fl.trace_done = 0;
      continue;
    }
    break;
  }
  ++fl.trace_done;
  ++fl.generated;
  // the reader bounds an arrival to kMaxSimulatedPs; a replay adds the previous replays' span
  const int64_t raw_ps = r.arrival_raw * x.time_unit.raw();
  if (fl.replay_offset.raw() > kMaxSimulatedPs - raw_ps)
    throw ConfigError(
        fmt::format("{}:{}: replay {} of <Relay_Count> {} would arrive at {:.4g} s, past the {:.4g} s (1e18 ps) a run may "
                    "simulate",
                    x.trace_path, fl.trace->line(), fl.replay + 1, x.relay_count, (double(fl.replay_offset.raw()) + double(raw_ps)) * 1e-12,
                    double(kMaxSimulatedPs) * 1e-12));
  Time at = fl.replay_offset + Time(raw_ps);
  if (at < t) at = t;
  fl.last_arrival = at;
  int64_t span = fl.range_end - fl.start_lba;
  int64_t size = std::min(r.sectors, span);
  int64_t lba = fl.start_lba + r.lba % span;
  if (lba + size > fl.range_end) lba = fl.range_end - size;
  if (host_.pending_trace.size() < host_.flows.size()) host_.pending_trace.resize(host_.flows.size());
  host_.pending_trace[f] = host_.new_request(f, r.read, lba, size, at);
  events_.push(at, {Ev::Arrival, f});
}

void Sim::arrive(uint32_t id, Time t) {
  Flow& fl = host_.flows[host_.requests[id].flow];
  fl.first_arrival = std::min(fl.first_arrival, t);
  if (fl.outstanding < host_.submission_queue_depth)
    submit(id);
  else {
    if (fl.backlog.size() >= kMaxBacklog) {
      const FlowXml& x = *fl.x;
      throw ConfigError(fmt::format(
          "flow {}: {} requests wait on the host at {:.6g} s simulated: the flow's arrivals ({}) far exceed what the device "
          "serves (bounded memory: at most {} waiting requests per flow)",
          host_.requests[id].flow, fl.backlog.size(), to_s(t),
          x.kind == FlowKind::Trace ? fmt::format("trace {}", x.trace_path) : fmt::format("<Bandwidth> {} B/s", x.bandwidth), kMaxBacklog));
    }
    fl.backlog.push_back(id);
  }
}

void Sim::on_complete(uint32_t id) {
  Request& r = host_.requests[id];
  Flow& fl = host_.flows[r.flow];
  Time now = events_.now();
  fl.dev.add(now - r.enqueued);
  fl.e2e.add(now - r.arrival);
  (r.read ? fl.dev_read : fl.dev_write).add(now - r.enqueued);
  (r.read ? fl.reads : fl.writes) += 1;
  (r.read ? fl.read_bytes : fl.write_bytes) += r.sectors * 512;
  fl.last_done = now;
  if (host_.series.on()) host_.series.add(now, r.sectors * 512);
  if (fl.io && now >= fl.x->stats_from) {  // fio's view: slat the wait on the host, clat from the submission queue
    DirStats& d = fl.io->dir[r.read ? 0 : 1];
    const uint64_t slat = uint64_t((r.enqueued - r.arrival).raw() / 1000), clat = uint64_t((now - r.enqueued).raw() / 1000),
                   lat = uint64_t((now - r.arrival).raw() / 1000);
    ++d.ios;
    d.bytes += r.sectors * 512;
    d.slat.add(slat);
    d.clat.add(clat);
    d.lat.add(lat);
    d.clat_hist.add(clat);
    d.lat_hist.add(lat);
    fl.io->last_done_ps = now.raw();
    fl.io->bw_samples.add(now.raw(), r.read ? 0 : 1, r.sectors * 512, clat);
    fl.io->iops_samples.add(now.raw(), r.read ? 0 : 1, r.sectors * 512, clat);
    if (fl.x->io_log && !fl.io->log.add(now.raw(), r.read ? 0 : 1, r.sectors * 512, r.lba * 512, slat, clat, lat))
      throw ConfigError(
          fmt::format("flow {}: its I/O log (fio's write_bw_log/write_iops_log/write_lat_log) would pass {} {} at "
                      "{:.6g} s simulated (bounded memory; a longer log_avg_msec makes fewer windows)",
                      r.flow, kMaxIoLogEntries, fl.io->log.window_ps > 0 ? "windows" : "lines", to_s(now)));
  }
  ++host_.completed;
  --fl.outstanding;
  uint32_t f = r.flow;
  host_.free_requests.push_back(id);
  if (!fl.backlog.empty()) {
    uint32_t next = fl.backlog.front();
    fl.backlog.pop_front();
    submit(next);
  }
  if (fl.closed_loop) generate(f, now);
  if (slc_.on) slc_request_done();  // (after the next request of a closed loop entered)
}

namespace {

/// Flow `index`'s MQSim metrics over `secs` simulated seconds (to the last completion of any flow).
void register_flow(StatGroup& g, const Flow& fl, size_t index, double secs) {
  g.derived(
      "flow", [index] { return index; }, "the flow's index in the workload");
  g.derived(
      "kind", [&fl] { return fl.x->kind == FlowKind::Trace ? "trace" : "synthetic"; }, "trace or synthetic");
  g.derived(
      "requests", [&fl] { return fl.reads + fl.writes; }, "requests completed");
  g.add("reads", fl.reads, "read requests completed");
  g.add("writes", fl.writes, "write requests completed");
  g.derived(
      "iops", [&fl, secs] { return double(fl.reads + fl.writes) / secs; }, "requests per simulated second");
  g.derived(
      "iops_read", [&fl, secs] { return double(fl.reads) / secs; }, "reads per simulated second");
  g.derived(
      "iops_write", [&fl, secs] { return double(fl.writes) / secs; }, "writes per simulated second");
  g.derived(
      "bandwidth_Bps", [&fl, secs] { return double(fl.read_bytes + fl.write_bytes) / secs; },
      "bytes read and written per simulated second");
  g.derived(
      "bandwidth_read_Bps", [&fl, secs] { return double(fl.read_bytes) / secs; }, "bytes read per simulated second");
  g.derived(
      "bandwidth_write_Bps", [&fl, secs] { return double(fl.write_bytes) / secs; }, "bytes written per simulated second");
  g.add("bytes_read", fl.read_bytes, "bytes read");
  g.add("bytes_written", fl.write_bytes, "bytes written");
  fl.dev.register_stats(g.group("device_response_time"));  // (MQSim's: from the command's fetch to its completion)
  fl.dev_read.register_stats(g.group("device_response_time_read"));
  fl.dev_write.register_stats(g.group("device_response_time_write"));
  fl.e2e.register_stats(g.group("end_to_end_delay"));  // (from the request's arrival)
}

}  // namespace

void Sim::register_results(StatGroup& g, double wall) const {
  Time end{};
  int64_t total = 0;
  for (const Flow& fl : host_.flows) end = std::max(end, fl.last_done), total += fl.reads + fl.writes;
  const double secs = std::max(1e-12, to_s(end));
  g.derived(
      "flows",
      [this, secs] {
        nlohmann::json flows = nlohmann::json::array();
        for (size_t i = 0; i < host_.flows.size(); ++i)
          flows.push_back(dump_stats([&](StatGroup& f) { register_flow(f, host_.flows[i], i, secs); }));
        return flows;
      },
      "each host flow's metrics, in the workload's order");
  g.derived(
      "simulated_s", [end] { return to_s(end); }, "simulated time to the last completion (s)");
  g.derived(
      "requests", [total] { return total; }, "requests completed, all flows");
  g.derived(
      "iops", [total, secs] { return double(total) / secs; }, "requests per simulated second, all flows");

  StatGroup& ftl = g.group("ftl");
  const FtlStats& fs = ftl_.stats();
  ftl.add("host_page_writes", fs.host_page_writes, "pages (mapping units) the host's writes programmed");
  ftl.add("gc_page_writes", fs.gc_page_writes, "pages (units) garbage collection moved");
  ftl.add("gc_executions", fs.gc_victims, "victim blocks collected");
  ftl.add("erases", fs.erases, "blocks erased");
  ftl.derived(
      "write_amplification", [&fs] { return fs.write_amplification(); }, "(host + GC page writes) / host page writes");
  ftl.derived(
      "max_erase_count", [this] { return ftl_.max_erase_count(); }, "most erases of one block");
  ftl.derived(
      "mean_erase_count", [this] { return ftl_.mean_erase_count(); }, "mean erases per block");
  ftl.derived(
      "mapping_entries", [this] { return ftl_.mapping_entries(); }, "logical pages (units) mapped at the end");
  ftl.add("mapping_page_writes", fs.mapping_page_writes, "translation pages written");
  ftl.add("cmt_hits", stats_.cmt_hits, "read look-ups found in the cached mapping table");
  ftl.add("cmt_misses", stats_.cmt_misses, "read look-ups not found there");
  ftl.add("cmt_write_hits", stats_.cmt_write_hits, "write look-ups found there");
  ftl.add("cmt_write_misses", stats_.cmt_write_misses, "write look-ups not found there");
  ftl.add("translation_reads", stats_.mapping_reads, "translation pages read for misses");
  ftl.add("translation_writebacks", stats_.mapping_writebacks, "dirty translation entries written back on eviction");
  ftl.add("update_reads", stats_.update_reads, "reads of a page's other sectors before a partial write (read-modify-write)");
  ftl.add("cache_merges", stats_.cache_merges, "writes merged into a page already in the write cache");
  ftl.add("cache_read_hits", stats_.cache_read_hits, "reads served from the write cache");
  if (ftl_.units_per_flash_page() > 1) {  // mapping units: the *_page_writes above count units
    ftl.add("mapping_unit_bytes", device_.page_size, "the mapping unit (ssd_device.mapping_unit, bytes)");
    ftl.add("unwritten_units", fs.unwritten_units, "units of programmed flash pages left unwritten");
  }

  StatGroup& flash = g.group("flash");
  flash.add("reads", stats_.flash_reads, "flash page reads (a sensing per plane)");
  flash.add("programs", stats_.flash_programs, "flash page programs");
  flash.add("erases", stats_.flash_erases, "block erases");
  flash.add("multiplane_ops", stats_.multiplane_ops, "operations on more than one plane of a die");

  StatGroup& w = g.group("wall");
  w.derived(
      "seconds", [wall] { return wall; }, "the simulation's wall-clock time (s)");
  w.derived(
      "events", [this] { return events_.executed(); }, "events executed");
  w.derived(
      "requests_per_second", [wall, total] { return wall > 0 ? double(total) / wall : 0.0; }, "requests simulated per wall-clock second");
  if (slc_.on) register_slc_results(g.group("slc"));
  if (host_.series.on())
    g.derived(
        "throughput", [this] { return host_.series.json(); }, "bytes completed per time bin");
}

nlohmann::json Sim::results(double wall) const {
  return dump_stats([&](StatGroup& g) { register_results(g, wall); });
}

}  // namespace bitline::ssd::detail
