// Stage: compute jobs (contract: compute_jobs.hpp): the jobs as transactions of the general SSD's engine
// (device_sim.hpp), their results' stats, the Flash-Cosmos SSD as a general device, and the scheduling choices.
#include "ssd/compute_jobs.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "ssd/device.hpp"
#include "ssd/device_sim.hpp"

namespace bitline::ssd {

void ComputeResult::register_stats(StatGroup& g) const {
  g.add("time_s", total, "end-to-end time of the run")
      .add("events", events, "events the engine ran")
      .add("sensings", sensings, "plane-level sensings")
      .add("bytes_over_channels", channel_bytes, "bytes moved over the flash channels")
      .add("bytes_over_pcie", pcie_bytes, "bytes moved over PCIe")
      .derived(
          "bottleneck", [this] { return std::string(to_string(bottleneck)); }, "the most utilised resource");
  g.group("busy_s")
      .add("dies_sum", die_busy, "die busy time, summed over dies")
      .add("channels_sum", channel_busy, "channel busy time, summed over channels")
      .add("pcie", pcie_busy, "PCIe busy time")
      .add("isp", isp_busy, "in-storage accelerator busy time")
      .add("host", host_busy, "host computation busy time");
  g.group("isp")
      .add("sram_peak_bytes", isp_sram_peak, "most ISP SRAM held at once (partial results + results waiting for PCIe)")
      .add("link_wait_s", isp_link_wait, "time finished ISP results waited for PCIe, summed over results");
  g.add("ssd_active_s", ssd_active, "time the SSD is active (until its last transfer to the host)");
}

const char* to_string(Bottleneck b) {
  switch (b) {
    case Bottleneck::None:
      return "none";
    case Bottleneck::Dies:
      return "dies";
    case Bottleneck::Channels:
      return "channels";
    case Bottleneck::Pcie:
      return "pcie";
    case Bottleneck::Isp:
      return "isp";
    case Bottleneck::Host:
      return "host";
  }
  return "none";
}

const Registry<DeviceScheduling>& device_schedulings() {
  static const Registry<DeviceScheduling> r(
      "general-device scheduling",
      {{"mqsim", "a chip starts an operation only while its channel is idle (MQSim's transaction scheduler)", DeviceScheduling::Mqsim},
       {"eager", "a chip starts an operation as soon as it is free (the Flash-Cosmos SSD's own)", DeviceScheduling::Eager}});
  return r;
}

SsdModelOptions model_options(DeviceScheduling s) {
  SsdModelOptions m;
  switch (s) {
    case DeviceScheduling::Mqsim:
      m.issue_on_idle_channel = true;
      break;
    case DeviceScheduling::Eager:
      m.issue_on_idle_channel = false;
      break;
  }
  return m;
}

DeviceXml device_of(const SsdParams& ssd, const nand::NandParams& nand) {
  DeviceXml d;
  d.file = "(the Flash-Cosmos SSD as a general device)";
  d.preconditioning = false;
  d.channels = ssd.channels;
  d.chips_per_channel = ssd.dies_per_channel;
  d.dies_per_chip = 1;
  const auto& g = nand.geometry;
  d.planes_per_die = g.planes_per_die;
  d.blocks_per_plane = g.blocks_per_plane;
  d.pages_per_block = g.subblocks_per_block * g.wordlines_per_string;  // SLC: a page per wordline
  d.page_size = g.page_size.raw();
  d.technology = FlashTechnology::Slc;
  // the channel: 1 byte wide at channel_rate (MT/s, rounded to a whole number as MQSim's XML has it)
  d.channel_width = 1;
  d.channel_transfer_rate = std::max<int64_t>(1, std::llround(nand.timing.channel_rate.raw() / 1e6));
  d.pcie_lane_count = std::max<int64_t>(1, ssd.pcie_lanes);
  d.pcie_lane_bandwidth = Bandwidth(ssd.pcie_effective_rate().raw() / 1e9 / double(d.pcie_lane_count) * 1e9);
  if (g.page_size.raw() < 512 || g.page_size.raw() % 512 != 0)
    throw ConfigError(
        fmt::format("nand.geometry.page_size = {} B: the SSD (its FTL and host interface) addresses pages in "
                    "512-byte sectors; a page must be a whole number of them (512 B or more)",
                    g.page_size.raw()));
  if (d.pages() >= int64_t(0xFFFFFFFFll))
    throw ConfigError(
        fmt::format("the SSD has {} pages (ssd.channels {} x ssd.dies_per_channel {} x nand.geometry.planes_per_die "
                    "{} x blocks_per_plane {} x subblocks_per_block {} x wordlines_per_string {}): more than "
                    "32-bit page numbers hold (2^32 - 1)",
                    d.pages(), ssd.channels, ssd.dies_per_channel, g.planes_per_die, g.blocks_per_plane, g.subblocks_per_block,
                    g.wordlines_per_string));
  return d;
}

ComputeResult run_jobs(const JobSpec& spec, const SsdParams& ssd, const HostParams& host, const nand::NandParams& nand,
                       DeviceScheduling scheduling) {
  SsdModelOptions model = model_options(scheduling);
  model.cache_read = ssd.cache_read;
  return run_compute(spec, device_of(ssd, nand), model, ComputeRates::of(ssd, host, nand));
}

}  // namespace bitline::ssd

namespace bitline::ssd::detail {

void Sim::setup_compute() {
  const JobSpec& s = *jobs_.spec;
  if (int64_t(s.die_jobs.size()) != device_.dies())
    throw ModelError(fmt::format("general device: the jobs are for {} dies, the device has {}", s.die_jobs.size(), device_.dies()));
  for (const auto& t : s.templates) {
    std::vector<Segment> segs;
    Segment cur;
    bool any_out = false;
    for (const Step& st : t) {
      if (st.data_in > 0) {  // a program is a segment of its own
        if (cur.steps > 0) segs.push_back(cur), cur = Segment{};
        Segment p;
        p.die_time = st.die_time;
        p.energy = st.energy;
        p.steps = 1;
        p.data_in = st.data_in;
        p.overlap = st.overlap;
        segs.push_back(p);
        continue;
      }
      cur.die_time += st.die_time;
      cur.energy += st.energy;
      ++cur.steps;
      cur.sensings += st.sensing ? 1 : 0;
      if (st.route != Route::None) {
        cur.route = st.route;
        cur.first_out = !any_out;
        any_out = true;
        segs.push_back(cur);
        cur = Segment{};
      }
    }
    if (cur.steps > 0 || segs.empty()) segs.push_back(cur);
    for (size_t k = segs.size(); k-- > 0;)
      if (segs[k].route != Route::None) {
        segs[k].last_out = true;
        break;
      }
    for (const Segment& g : segs) {
      if (g.route == Route::ToIsp && (jobs_.rates.isp.raw() <= 0 || jobs_.rates.isp_sram <= 0))
        throw ModelError("general device: the read sends pages to the ISP, but no ISP throughput and SRAM were given");
      if (g.route == Route::ToHost && s.host.combine_operands && jobs_.rates.host_bitwise.raw() <= 0)
        throw ModelError("general device: the host combines operands, but no host throughput was given");
      if (g.data_in > 0) {
        if (s.write_slices <= 0) throw ModelError("general device: a program step, but the jobs stream no write slices");
        if (g.data_in != s.slices_per_program) throw ModelError("general device: every program step must take slices_per_program slices");
        writes_.overlap_slices = g.overlap;
      }
    }
    if (s.host.popcount_result && jobs_.rates.host_popcount.raw() <= 0)
      throw ModelError("general device: the host counts result bits, but no host popcount throughput was given");
    if (segs.size() > 0xFFFFFFFFu) throw ModelError("general device: too many steps in a job");
    jobs_.segments.push_back(std::move(segs));
  }
  for (const auto& jobs : s.die_jobs)
    for (const Job& j : jobs) {
      if (j.tmpl >= jobs_.segments.size()) throw ModelError("general device: a job names a step template that does not exist");
      if (j.active == 0 || j.active > device_.planes_per_die)
        throw ModelError(fmt::format("general device: a job on {} planes (a die has {})", j.active, device_.planes_per_die));
      if (int64_t(j.active) * device_.page_size > jobs_.rates.isp_sram && jobs_.rates.isp_sram > 0 &&
          std::any_of(jobs_.segments[j.tmpl].begin(), jobs_.segments[j.tmpl].end(),
                      [](const Segment& g) { return g.route == Route::ToIsp; }))
        throw ModelError("general device: ISP SRAM smaller than one job's partial result");
    }
  for (int64_t active = 0; active <= device_.planes_per_die; ++active)
    jobs_.page_costs.push_back(page_costs_of(active * device_.page_size));
  const size_t dies = s.die_jobs.size();
  jobs_.cursor.resize(dies);
  std::vector<bool> programs(jobs_.segments.size(), false);  // per template: whether it programs
  for (size_t t = 0; t < jobs_.segments.size(); ++t)
    for (const Segment& g : jobs_.segments[t]) programs[t] = programs[t] || g.data_in > 0;
  const bool own_unit = !model_.chip_scheduling || device_.dies_per_chip == 1;
  for (size_t d = 0; d < dies; ++d) {
    const std::vector<Job>& jobs = s.die_jobs[d];
    const bool reads = std::none_of(jobs.begin(), jobs.end(), [&](const Job& j) { return programs[j.tmpl]; });
    jobs_.cursor[d] = ComputeJobState::DieCursor{jobs.data(), jobs.data() + jobs.size(), 0, 0, own_unit && reads};
  }
  jobs_.sram_free_bytes = jobs_.rates.isp_sram;
  if (s.write_slices > 0) {
    if (s.slices_per_program <= 0) throw ModelError("general device: a program needs at least one slice");
    writes_.slices_per_program = s.slices_per_program;
    writes_.slice_bytes = device_.planes_per_die * device_.page_size;
    writes_.buffer_slices = std::max<int64_t>(1, jobs_.rates.write_buffer / writes_.slice_bytes);
    writes_.waiting.assign(dies, 0);
    writes_.loaded.assign(dies, 0);
    writes_.claimed.assign(dies, 0);
    writes_.programming.assign(dies, 0);
    writes_.held.assign(dies, 0);
    writes_.loading_die.assign(size_t(device_.channels), kNone);
    writes_.next_turn.assign(size_t(device_.channels), 0);
  }
}

PageCosts Sim::page_costs_of(int64_t bytes) const {
  const ComputeRates& r = jobs_.rates;
  PageCosts c;
  c.bytes = bytes;
  c.channel = scheduler_.channel_time(bytes);
  c.pcie = host_.pcie_data_time(bytes);
  if (r.isp.raw() > 0) c.isp = Bytes(bytes) / r.isp;
  if (r.host_bitwise.raw() > 0) c.host_bitwise = Bytes(bytes) / r.host_bitwise;
  if (r.host_popcount.raw() > 0) c.host_popcount = Bytes(bytes) / r.host_popcount;
  c.channel_io = r.channel_io * Bytes(bytes);
  c.pcie_io = r.pcie * Bytes(bytes);
  c.dram = r.dram * Bytes(bytes);
  c.isp_ops = r.isp_bit * Bytes(bytes);
  return c;
}

/// Queues the next segment of `die` (if any) on the die's first plane: one transaction for all the job's planes.
/// A program waits (held) until its slices are in the die's latches. Returns whether it queued one.
bool Sim::issue_job(uint32_t die) {
  const uint32_t tx = next_segment(die);
  if (tx == kNone) return false;
  enqueue(tx);
  return true;
}

/// The transaction of the next segment of `die`, the cursor moved past it (kNone: none, or a program held).
uint32_t Sim::next_segment(uint32_t die) {
  ComputeJobState::DieCursor& cur = jobs_.cursor[die];
  if (cur.next == cur.end) return kNone;
  const Job& j = *cur.next;
  const uint32_t k = cur.segment;
  const Segment& g = jobs_.segments[j.tmpl][k];
  if (g.data_in > 0) {
    if (writes_.loaded[die] - writes_.claimed[die] < g.data_in) {
      writes_.held[die] = 1;
      return kNone;
    }
    writes_.held[die] = 0;
    writes_.claimed[die] += g.data_in;
  }
  const uint32_t tx = new_tx_from([&] {
    return Tx::compute(JobSegment{die, k, j.tmpl, j.active}, int64_t(die) * device_.planes_per_die,
                       g.route == Route::None ? 0 : int64_t(j.active) * device_.page_size);
  });
  if (k == 0) ++jobs_.result.jobs;
  ++cur.queued;
  if (++cur.segment == jobs_.segments[j.tmpl].size()) {
    cur.segment = 0;
    ++cur.next;
    // A die's jobs are read in order, 64 dies at once: more streams than the hardware prefetcher follows, so the
    // next cache line of this die's jobs is asked for ahead (a hint; past the end it is never read).
    if (cur.end - cur.next > 16) bitline::prefetch(cur.next + 16);
  }
  return tx;
}

/// A segment's page leaves the die over the channel; a job's first page for the ISP needs an SRAM slot (its
/// partial result) first, and waits in the latches for one (the die stays busy).
void Sim::compute_out(uint32_t tx) {
  const Tx& t = scheduler_.transactions[tx];
  const Segment& g = jobs_.segment_of(t);
  if (g.route == Route::ToIsp && g.first_out) {
    if (jobs_.sram_free_bytes < t.bytes) {
      jobs_.sram_waiters.push_back(tx);
      if (model_.cache_read) scheduler_.units[unit_of(t.plane)].latch_until = Time(-1);  // (when it leaves is not known)
      return;
    }
    jobs_.sram_free_bytes -= t.bytes;
    jobs_.result.isp_sram_peak = std::max(jobs_.result.isp_sram_peak, jobs_.rates.isp_sram - jobs_.sram_free_bytes);
  }
  const Time end = channel_xfer(t.plane, jobs_.page_costs[t.job.active]);
  if (model_.cache_read) scheduler_.units[unit_of(t.plane)].latch_until = end;
  events_.push(end, {Ev::XferDone, tx});
}

/// Cache read: a sensed page enters the cache latch if it is empty, and the die is free for its next operation;
/// otherwise the page waits in the die (busy) for the latch.
void Sim::sensed_to_cache(int64_t unit, uint32_t tx) {
  Die& D = scheduler_.units[unit];
  if (D.c_tx != UINT32_MAX) {
    D.s_tx = tx;
    return;
  }
  D.c_tx = tx;
  D.busy = false;
  D.group.clear();
  compute_out(tx);
  start_die(unit);
}

/// Cache read: the latch's page has left: it goes on by its route, and a page waiting in the die takes the latch.
void Sim::cache_emptied(int64_t unit, uint32_t tx) {
  Die& D = scheduler_.units[unit];
  D.c_tx = UINT32_MAX;
  read_done(tx);
  if (D.s_tx != UINT32_MAX) {
    const uint32_t next = D.s_tx;
    D.s_tx = UINT32_MAX;
    sensed_to_cache(unit, next);
  } else {
    start_die(unit);
  }
}

/// Over the PCIe link (its FIFO `busy`, one per direction); returns the arrival, pcie_latency after the end.
Time Sim::over_pcie(Time& busy, const PageCosts& c) {
  const Time end = link(busy, c.pcie);
  jobs_.result.pcie_bytes += c.bytes;
  jobs_.result.pcie_busy += c.pcie;
  jobs_.result.pcie += c.pcie_io;
  jobs_.result.dram_access += c.dram;  // the DMA into (or out of) host memory
  jobs_.ssd_end = std::max(jobs_.ssd_end, end);
  const Time arrival = end + jobs_.rates.pcie_latency;
  jobs_.result.total = std::max(jobs_.result.total, arrival);
  return arrival;
}

/// A segment has ended (its page crossed the channel, or it had none): the page goes on by its route, and the
/// die's next segment is queued.
void Sim::job_done(const Tx& t) {
  const Segment& g = jobs_.segment_of(t);
  const PageCosts& c = jobs_.page_costs[t.job.active];  // the page, when one left (t.bytes > 0)
  const bool popcount = jobs_.spec->host.popcount_result;
  switch (t.bytes > 0 ? g.route : Route::None) {
    case Route::Result: {
      const Time at = to_host(c);
      if (popcount) host_work(at, c.host_popcount, c);
      break;
    }
    case Route::ToHost: {
      const Time at = to_host(c);
      if (jobs_.spec->host.combine_operands) host_work(at, c.host_bitwise, c);
      if (g.last_out && popcount) host_work(at, c.host_popcount, c);
      break;
    }
    case Route::ToIsp: {
      jobs_.isp_free = std::max(events_.now(), jobs_.isp_free) + c.isp;
      jobs_.result.isp_busy += c.isp;
      jobs_.result.isp += c.isp_ops;
      if (g.last_out) events_.push(jobs_.isp_free, {Ev::IspResult, uint32_t(t.job.active)});  // the job's result is ready
      break;
    }
    case Route::None:
      jobs_.result.total = std::max(jobs_.result.total, events_.now());
      break;
  }
  const uint32_t die = t.job.die;
  if (g.data_in > 0) writes_.programming[die] = 0;  // a program ended
  --jobs_.cursor[die].queued;
  fill_jobs(die);
  if (writes_.slices_per_program > 0) try_data_in(uint32_t(channel_of_plane(t.plane)));
}

// Sequential writes: the host streams slices over PCIe while the controller's write buffer has room; a channel
// with no page to move out loads them into its dies round robin.
void Sim::feed_host() {
  while (writes_.next_slice < jobs_.spec->write_slices && writes_.buffered_slices < writes_.buffer_slices) {
    const Time arrival = over_pcie(host_.link_down_free, slice_costs());
    ++writes_.buffered_slices;
    const int64_t per_channel = device_.chips_per_channel * device_.dies_per_chip;
    events_.push(arrival, {Ev::WriteArrive, program_die(writes_.next_slice / writes_.slices_per_program, device_.channels, per_channel)});
    ++writes_.next_slice;
  }
}

/// The channel, idle, moves the next write slice into one of its dies, round robin from after the last one served.
void Sim::try_data_in(uint32_t ch) {
  if (writes_.loading_die[ch] != kNone || scheduler_.channel_free[ch] > events_.now()) return;
  const int64_t n = device_.chips_per_channel * device_.dies_per_chip;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t die = uint32_t(int64_t(ch) * n + (writes_.next_turn[ch] + i) % n);
    if (!writes_.can_load(die)) continue;
    writes_.next_turn[ch] = (writes_.next_turn[ch] + i + 1) % n;
    --writes_.waiting[die];
    writes_.loading_die[ch] = die;
    events_.push(channel_xfer(int64_t(die) * device_.planes_per_die, slice_costs()), {Ev::DataInDone, ch});
    return;
  }
}

void Sim::on_data_in_done(uint32_t ch) {
  const uint32_t die = writes_.loading_die[ch];
  writes_.loading_die[ch] = kNone;
  ++writes_.loaded[die];
  --writes_.buffered_slices;
  feed_host();
  if (writes_.held[die]) fill_jobs(die);
  try_data_in(ch);
}

/// The run's totals: the time, the SSD's active part, the busiest resource.
void Sim::finish_compute() {
  jobs_.result.events = events_.executed();
  jobs_.result.total = std::max(jobs_.result.total, events_.now());
  jobs_.result.ssd_active = std::min(jobs_.ssd_end, jobs_.result.total);
  const double t = double(jobs_.result.total.raw());
  if (t <= 0) return;
  const std::pair<Bottleneck, double> us[] = {
      {Bottleneck::Dies, double(jobs_.result.die_busy.raw()) / (t * double(device_.dies()))},
      {Bottleneck::Channels, double(jobs_.result.channel_busy.raw()) / (t * double(device_.channels))},
      {Bottleneck::Pcie, double(jobs_.result.pcie_busy.raw()) / t},
      {Bottleneck::Isp, double(jobs_.result.isp_busy.raw()) / t},
      {Bottleneck::Host, double(jobs_.result.host_busy.raw()) / t}};
  const auto* best = &us[0];
  for (const auto& u : us)
    if (u.second > best->second) best = &u;
  jobs_.result.bottleneck = best->first;
}

}  // namespace bitline::ssd::detail
