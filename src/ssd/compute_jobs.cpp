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
      .add("bottleneck", bottleneck, "the most utilised resource");
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
  const JobSpec& s = *cs_;
  if (int64_t(s.die_jobs.size()) != d_.dies())
    throw ModelError(fmt::format("general device: the jobs are for {} dies, the device has {}", s.die_jobs.size(), d_.dies()));
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
      if (g.route == Route::ToIsp && (rates_.isp.raw() <= 0 || rates_.isp_sram <= 0))
        throw ModelError("general device: the read sends pages to the ISP, but no ISP throughput and SRAM were given");
      if (g.route == Route::ToHost && s.host.combine_operands && rates_.host_bitwise.raw() <= 0)
        throw ModelError("general device: the host combines operands, but no host throughput was given");
      if (g.data_in > 0) {
        if (s.write_slices <= 0) throw ModelError("general device: a program step, but the jobs stream no write slices");
        if (g.data_in != s.slices_per_program) throw ModelError("general device: every program step must take slices_per_program slices");
        write_overlap_ = g.overlap;
      }
    }
    if (s.host.popcount_result && rates_.host_popcount.raw() <= 0)
      throw ModelError("general device: the host counts result bits, but no host popcount throughput was given");
    if (segs.size() > 0xFFFFFFFFu) throw ModelError("general device: too many steps in a job");
    segs_.push_back(std::move(segs));
  }
  for (const auto& jobs : s.die_jobs)
    for (const Job& j : jobs) {
      if (j.tmpl >= segs_.size()) throw ModelError("general device: a job names a step template that does not exist");
      if (j.active == 0 || j.active > d_.planes_per_die)
        throw ModelError(fmt::format("general device: a job on {} planes (a die has {})", j.active, d_.planes_per_die));
      if (int64_t(j.active) * d_.page_size > rates_.isp_sram && rates_.isp_sram > 0 &&
          std::any_of(segs_[j.tmpl].begin(), segs_[j.tmpl].end(), [](const Segment& g) { return g.route == Route::ToIsp; }))
        throw ModelError("general device: ISP SRAM smaller than one job's partial result");
    }
  const size_t dies = s.die_jobs.size();
  cnext_.assign(dies, 0);
  cseg_.assign(dies, 0);
  cpending_.assign(dies, 0);
  sram_free_ = rates_.isp_sram;
  if (s.write_slices > 0) {
    if (s.slices_per_program <= 0) throw ModelError("general device: a program needs at least one slice");
    write_pages_ = s.slices_per_program;
    slice_bytes_ = d_.planes_per_die * d_.page_size;
    buffer_slices_ = std::max<int64_t>(1, rates_.write_buffer / slice_bytes_);
    wwait_.assign(dies, 0);
    wloaded_.assign(dies, 0);
    wclaimed_.assign(dies, 0);
    wprog_.assign(dies, 0);
    wheld_.assign(dies, 0);
    din_.assign(size_t(d_.channels), kNone);
    din_rr_.assign(size_t(d_.channels), 0);
  }
}

/// Queues the next segment of `die` (if any) on the die's first plane: one transaction for all the job's planes.
/// A program waits (held) until its slices are in the die's latches. Returns whether it queued one.
bool Sim::issue_job(uint32_t die) {
  const auto& jobs = cs_->die_jobs[die];
  if (cnext_[die] >= jobs.size()) return false;
  const Job& j = jobs[cnext_[die]];
  const uint32_t k = cseg_[die];
  const Segment& g = segs_[j.tmpl][k];
  if (g.data_in > 0) {
    if (wloaded_[die] - wclaimed_[die] < g.data_in) {
      wheld_[die] = 1;
      return false;
    }
    wheld_[die] = 0;
    wclaimed_[die] += g.data_in;
  }
  const Tx t = Tx::compute(JobSegment{die, k, j.tmpl, j.active}, int64_t(die) * d_.planes_per_die,
                           g.route == Route::None ? 0 : int64_t(j.active) * d_.page_size);
  if (k == 0) ++cr_.jobs;
  if (++cseg_[die] == segs_[j.tmpl].size()) cseg_[die] = 0, ++cnext_[die];
  ++cpending_[die];
  enqueue(new_tx(t));
  return true;
}

/// A segment's page leaves the die over the channel; a job's first page for the ISP needs an SRAM slot (its
/// partial result) first, and waits in the latches for one (the die stays busy).
void Sim::compute_out(uint32_t tx) {
  const Tx& t = txs_[tx];
  const Segment& g = segment_of(t);
  if (g.route == Route::ToIsp && g.first_out) {
    if (sram_free_ < t.bytes) {
      sram_wait_.push_back(tx);
      return;
    }
    sram_free_ -= t.bytes;
    cr_.isp_sram_peak = std::max(cr_.isp_sram_peak, rates_.isp_sram - sram_free_);
  }
  ev_.push(channel_xfer(t.plane, t.bytes), {Ev::XferDone, tx});
}

/// Cache read: a sensed page enters the cache latch if it is empty, and the die is free for its next operation;
/// otherwise the page waits in the die (busy) for the latch.
void Sim::sensed_to_cache(int64_t unit, uint32_t tx) {
  Die& D = dies_[unit];
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
  Die& D = dies_[unit];
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
Time Sim::over_pcie(Time& busy, int64_t bytes) {
  const Time d = pcie_data_(bytes);
  const Time end = link(busy, d);
  cr_.pcie_bytes += bytes;
  cr_.pcie_busy += d;
  cr_.pcie += rates_.pcie * Bytes(bytes);
  cr_.dram_access += rates_.dram * Bytes(bytes);  // the DMA into (or out of) host memory
  ssd_end_ = std::max(ssd_end_, end);
  const Time arrival = end + rates_.pcie_latency;
  cr_.total = std::max(cr_.total, arrival);
  return arrival;
}

/// A segment has ended (its page crossed the channel, or it had none): the page goes on by its route, and the
/// die's next segment is queued.
void Sim::job_done(const Tx& t) {
  const Segment& g = segment_of(t);
  const bool popcount = cs_->host.popcount_result;
  switch (t.bytes > 0 ? g.route : Route::None) {
    case Route::Result: {
      const Time at = to_host(t.bytes);
      if (popcount) host_work(at, Bytes(t.bytes) / rates_.host_popcount, t.bytes);
      break;
    }
    case Route::ToHost: {
      const Time at = to_host(t.bytes);
      if (cs_->host.combine_operands) host_work(at, Bytes(t.bytes) / rates_.host_bitwise, t.bytes);
      if (g.last_out && popcount) host_work(at, Bytes(t.bytes) / rates_.host_popcount, t.bytes);
      break;
    }
    case Route::ToIsp: {
      const Time d = Bytes(t.bytes) / rates_.isp;
      isp_free_ = std::max(ev_.now(), isp_free_) + d;
      cr_.isp_busy += d;
      cr_.isp += rates_.isp_bit * Bytes(t.bytes);
      if (g.last_out) ev_.push(isp_free_, {Ev::IspResult, uint32_t(t.job.active)});  // the job's result is ready
      break;
    }
    case Route::None:
      cr_.total = std::max(cr_.total, ev_.now());
      break;
  }
  const uint32_t die = t.job.die;
  if (g.data_in > 0) wprog_[die] = 0;  // a program ended
  --cpending_[die];
  fill_jobs(die);
  if (write_pages_ > 0) try_data_in(uint32_t(channel_of_plane(t.plane)));
}

// Sequential writes: the host streams slices over PCIe while the controller's write buffer has room; a channel
// with no page to move out loads them into its dies round robin.
void Sim::feed_host() {
  while (next_slice_ < cs_->write_slices && buffered_ < buffer_slices_) {
    const Time arrival = over_pcie(down_free_, slice_bytes_);
    ++buffered_;
    const int64_t per_channel = d_.chips_per_channel * d_.dies_per_chip;
    ev_.push(arrival, {Ev::WriteArrive, program_die(next_slice_ / write_pages_, d_.channels, per_channel)});
    ++next_slice_;
  }
}

/// The channel, idle, moves the next write slice into one of its dies, round robin from after the last one served.
void Sim::try_data_in(uint32_t ch) {
  if (din_[ch] != kNone || channel_free_[ch] > ev_.now()) return;
  const int64_t n = d_.chips_per_channel * d_.dies_per_chip;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t die = uint32_t(int64_t(ch) * n + (din_rr_[ch] + i) % n);
    if (!can_load(die)) continue;
    din_rr_[ch] = (din_rr_[ch] + i + 1) % n;
    --wwait_[die];
    din_[ch] = die;
    ev_.push(channel_xfer(int64_t(die) * d_.planes_per_die, slice_bytes_), {Ev::DataInDone, ch});
    return;
  }
}

void Sim::on_data_in_done(uint32_t ch) {
  const uint32_t die = din_[ch];
  din_[ch] = kNone;
  ++wloaded_[die];
  --buffered_;
  feed_host();
  if (wheld_[die]) fill_jobs(die);
  try_data_in(ch);
}

/// The run's totals: the time, the SSD's active part, the busiest resource.
void Sim::finish_compute() {
  cr_.events = ev_.executed();
  cr_.total = std::max(cr_.total, ev_.now());
  cr_.ssd_active = std::min(ssd_end_, cr_.total);
  const double t = double(cr_.total.raw());
  if (t <= 0) return;
  const std::pair<const char*, double> us[] = {{"dies", double(cr_.die_busy.raw()) / (t * double(d_.dies()))},
                                               {"channels", double(cr_.channel_busy.raw()) / (t * double(d_.channels))},
                                               {"pcie", double(cr_.pcie_busy.raw()) / t},
                                               {"isp", double(cr_.isp_busy.raw()) / t},
                                               {"host", double(cr_.host_busy.raw()) / t}};
  const auto* best = &us[0];
  for (const auto& u : us)
    if (u.second > best->second) best = &u;
  cr_.bottleneck = best->first;
}

}  // namespace bitline::ssd::detail
