#include "ssd/pipeline.hpp"

#include <algorithm>
#include <deque>
#include "core/error.hpp"
#include "core/event_queue.hpp"

namespace bitline::ssd {
namespace {

enum EvType : uint8_t { kDieStep, kChannelDone, kIspResult, kSlotRelease, kWriteArrive };

// What an event carries through the engine (core::EventHeap orders by time, then scheduling order).
struct Ev {
  uint32_t id;
  uint8_t type;
  int64_t aux;
};

struct Out {
  uint32_t die;
  int64_t bytes;
  Route route;
  bool last_of_job;
  int64_t result_bytes;
  bool first_of_job;     // the job's first page out: for the ISP, it needs a free SRAM slot
  bool data_in = false;  // a write slice into the die's latches (not a page out)
};

enum class DieState : uint8_t { Idle, Busy, WaitC, WaitDataOut, WaitDataIn, Done };

struct DieRun {
  size_t job = 0, step = 0;
  DieState state = DieState::Idle;
  bool c_occupied = false;
  bool programming = false;  // Busy with a program step
  Out pending{};
  uint32_t channel = 0;
  int64_t waiting = 0, loaded = 0;  // write slices for this die in the controller's buffer / in its latches
};

class Engine {
 public:
  Engine(const PipelineSpec& s, const SsdParams& ssd, const HostParams& host, const nand::NandParams& nand)
      : s_(s),
        ssd_(ssd),
        host_(host),
        page_(nand.geometry.page_size),
        io_(nand.energy.io_energy),
        channel_rate_(nand.timing.channel_rate),
        pcie_rate_(ssd.pcie_effective_rate()),
        dies_(s.die_jobs.size()),
        channels_(size_t(ssd.channels)) {
    if (int64_t(s.die_jobs.size()) != ssd.dies()) throw ModelError("pipeline: one job list per die is required");
    for (size_t d = 0; d < dies_.size(); ++d) dies_[d].channel = uint32_t(int64_t(d) / ssd.dies_per_channel);
    for (const auto& t : s.templates) {
      int64_t first = -1, last = -1;
      for (size_t i = 0; i < t.size(); ++i) {
        if (t[i].route != Route::None) last = int64_t(i), first = first < 0 ? int64_t(i) : first;
        if (t[i].route == Route::ToIsp) isp_ = true;
      }
      first_output_.push_back(first);
      last_output_.push_back(last);
    }
    sram_free_ = ssd.isp_sram.raw();
    rr_.assign(channels_.size(), 0);
    if (s.write_slices > 0) {
      if (s.slices_per_program <= 0) throw ModelError("pipeline: a program needs at least one slice");
      write_pages_ = s.slices_per_program;
      for (const auto& t : s.templates)
        for (const Step& st : t)
          if (st.data_in > 0) {
            if (st.data_in != write_pages_) throw ModelError("pipeline: every program step must take slices_per_program slices");
            write_overlap_ = st.overlap;
          }
      slice_bytes_ = nand.geometry.planes_per_die * page_.raw();
      buffer_slices_ = std::max<int64_t>(1, ssd.write_buffer.raw() / slice_bytes_);
    }
  }

  PipelineResult run() {
    if (s_.templates.empty()) return r_;
    // Start dies channel-interleaved, so that a limited resource (ISP SRAM) is
    // spread over the channels rather than filled by the dies of channel 0.
    for (int64_t k = 0; k < ssd_.dies_per_channel; ++k)
      for (int64_t c = 0; c < ssd_.channels; ++c) try_start(uint32_t(c * ssd_.dies_per_channel + k));
    feed_host();
    while (!q_.empty()) {
      const Ev e = q_.pop().payload;
      now_ = q_.now().raw();
      ++r_.events;
      switch (e.type) {
        case kDieStep:
          on_die_step(e.id);
          break;
        case kChannelDone:
          on_channel_done(e.id);
          break;
        case kIspResult:
          on_isp_result(e.aux);
          break;
        case kSlotRelease:
          on_slot_release(e.aux);
          break;
        case kWriteArrive:
          ++dies_[e.id].waiting;
          start_transfer(dies_[e.id].channel);
          break;
      }
    }
    for (const auto& d : dies_)
      if (d.state != DieState::Done) throw ModelError("pipeline: deadlock (a die never finished its jobs)");
    r_.total = Time(std::max(end_, now_));
    r_.isp_sram_peak = sram_peak_;
    finish();
    return r_;
  }

 private:
  void push(int64_t t, uint8_t type, uint32_t id, int64_t aux = 0) { q_.push(Time(t), Ev{id, type, aux}); }

  void try_start(uint32_t di) {
    DieRun& d = dies_[di];
    if (d.state != DieState::Idle) return;
    const auto& jobs = s_.die_jobs[di];
    if (d.job >= jobs.size()) {
      d.state = DieState::Done;
      return;
    }
    const Job& job = jobs[d.job];
    const int64_t active = job.active;
    const Step& st = s_.templates[job.tmpl][d.step];
    if (st.data_in > 0) {  // a program: its slices must be in the latches
      if (d.loaded < st.data_in) {
        d.state = DieState::WaitDataIn;
        return;
      }
      d.loaded -= st.data_in;
      d.programming = true;
      ++r_.programs;
    }
    d.state = DieState::Busy;
    push(after(now_, st.die_time), kDieStep, di);
    r_.die_busy += st.die_time;
    r_.nand_sense += st.energy;
    ++r_.die_steps;
    if (st.sensing) r_.sensings += uint64_t(active);
  }

  void advance(DieRun& d, uint32_t di) {
    if (++d.step == s_.templates[s_.die_jobs[di][d.job].tmpl].size()) {
      d.step = 0;
      ++d.job;
      ++r_.jobs;
    }
  }

  void on_die_step(uint32_t di) {
    DieRun& d = dies_[di];
    const Job& job = s_.die_jobs[di][d.job];
    const Step& st = s_.templates[job.tmpl][d.step];
    if (st.data_in > 0) {  // a program ended: the next one may start, its remaining slices may load
      d.programming = false;
      end_ = std::max(end_, now_);
      advance(d, di);
      d.state = DieState::Idle;
      try_start(di);
      start_transfer(d.channel);
      return;
    }
    if (st.route != Route::None) {
      int64_t active = job.active;
      Out o{di,
            active * page_.raw(),
            st.route,
            int64_t(d.step) == last_output_[job.tmpl],
            active * page_.raw(),
            int64_t(d.step) == first_output_[job.tmpl]};
      if (o.route == Route::ToIsp && o.bytes > ssd_.isp_sram.raw()) throw ModelError("ISP SRAM smaller than one job's partial result");
      if (d.c_occupied) {
        d.pending = o;
        d.state = DieState::WaitC;
        return;
      }
      place(d, o);
      advance(d, di);
      if (!ssd_.cache_read) {
        d.state = DieState::WaitDataOut;
        return;
      }
    } else {
      advance(d, di);
    }
    d.state = DieState::Idle;
    try_start(di);
  }

  void place(DieRun& d, const Out& o) {
    d.c_occupied = true;
    auto& ch = channels_[d.channel];
    ch.queue.push_back(o);
    if (!ch.busy) start_transfer(d.channel);
  }

  /// Starts the first queued transfer that can go. An operand page for the ISP that opens a job needs a free
  /// SRAM slot (its partial result); without one it waits and the transfers of jobs that hold a slot go first.
  void start_transfer(uint32_t c) {
    auto& ch = channels_[c];
    if (ch.busy) return;
    auto it = ch.queue.begin();
    for (; it != ch.queue.end(); ++it)
      if (!(it->route == Route::ToIsp && it->first_of_job) || sram_free_ >= it->bytes) break;
    if (it == ch.queue.end()) {  // no page can move out (none queued, or every one waits for a slot)
      start_data_in(c);
      return;
    }
    if (it->route == Route::ToIsp && it->first_of_job) {
      sram_free_ -= it->bytes;
      sram_peak_ = std::max(sram_peak_, ssd_.isp_sram.raw() - sram_free_);
    }
    ch.busy = true;
    ch.current = *it;
    ch.queue.erase(it);
    Time dur = Bytes(ch.current.bytes) / channel_rate_;
    r_.channel_busy += dur;
    r_.channel_bytes += ch.current.bytes;
    r_.nand_io += io_ * Bytes(ch.current.bytes);
    push(after(now_, dur), kChannelDone, c);
  }

  /// A write slice that may load into a die: the die has one waiting in the buffer, its next program is not
  /// complete, and while it programs only into the latches the program leaves free.
  bool can_load(const DieRun& d) const {
    if (d.waiting == 0 || d.loaded >= write_pages_) return false;
    return !d.programming || d.loaded < write_overlap_;
  }

  /// The channel moves the next write slice into one of its dies, round robin from after the last one served.
  void start_data_in(uint32_t c) {
    if (write_pages_ == 0) return;
    auto& ch = channels_[c];
    const int64_t n = ssd_.dies_per_channel;
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t di = uint32_t(int64_t(c) * n + (rr_[c] + i) % n);
      if (!can_load(dies_[di])) continue;
      rr_[c] = (rr_[c] + i + 1) % n;
      --dies_[di].waiting;
      ch.busy = true;
      ch.current = Out{di, slice_bytes_, Route::None, false, 0, false, true};
      const Time dur = Bytes(slice_bytes_) / channel_rate_;
      r_.channel_busy += dur;
      r_.channel_bytes += slice_bytes_;
      r_.nand_io += io_ * Bytes(slice_bytes_);
      push(after(now_, dur), kChannelDone, c);
      return;
    }
  }

  /// The host streams write slices over PCIe (FIFO) while the controller's write buffer has room.
  void feed_host() {
    while (next_slice_ < s_.write_slices && buffered_ < buffer_slices_) {
      const int64_t arrival = pcie(slice_bytes_);
      r_.dram_access += host_.dram_energy * Bytes(slice_bytes_);  // DMA out of host memory
      ++buffered_;
      push(arrival, kWriteArrive, program_die(next_slice_ / write_pages_, ssd_.channels, ssd_.dies_per_channel));
      ++next_slice_;
    }
  }

  void on_data_in_done(uint32_t c, uint32_t di) {
    channels_[c].busy = false;
    DieRun& d = dies_[di];
    ++d.loaded;
    --buffered_;
    feed_host();
    if (d.state == DieState::WaitDataIn) {
      d.state = DieState::Idle;
      try_start(di);
    }
    start_transfer(c);
  }

  void on_channel_done(uint32_t c) {
    auto& ch = channels_[c];
    if (ch.current.data_in) {
      on_data_in_done(c, ch.current.die);
      return;
    }
    ch.busy = false;
    const Out o = ch.current;
    switch (o.route) {
      case Route::ToHost: {
        int64_t arrival = pcie(o.bytes);
        r_.dram_access += host_.dram_energy * Bytes(o.bytes);  // DMA into host memory
        if (s_.host.combine_operands) host_work(arrival, Bytes(o.bytes) / host_.bitwise_throughput, o.bytes);
        if (o.last_of_job && s_.host.popcount_result) host_work(arrival, Bytes(o.result_bytes) / host_.popcount_throughput, o.result_bytes);
        break;
      }
      case Route::ToIsp: {
        Time dur = Bytes(o.bytes) / ssd_.isp_throughput;
        int64_t start = std::max(now_, isp_free_);
        isp_free_ = after(start, dur);
        r_.isp_busy += dur;
        r_.isp += ssd_.isp_energy * Bytes(o.bytes);
        if (o.last_of_job) push(isp_free_, kIspResult, o.die, o.result_bytes);
        break;
      }
      case Route::Result: {
        int64_t arrival = pcie(o.bytes);
        r_.dram_access += host_.dram_energy * Bytes(o.bytes);
        if (s_.host.popcount_result) host_work(arrival, Bytes(o.bytes) / host_.popcount_throughput, o.bytes);
        break;
      }
      case Route::None:
        break;
    }
    // The C-latch of that die is free again.
    DieRun& d = dies_[o.die];
    d.c_occupied = false;
    if (d.state == DieState::WaitC) {
      place(d, d.pending);
      advance(d, o.die);
      d.state = ssd_.cache_read ? DieState::Idle : DieState::WaitDataOut;
      try_start(o.die);
    } else if (d.state == DieState::WaitDataOut) {
      d.state = DieState::Idle;
      try_start(o.die);
    }
    start_transfer(c);
  }

  /// The job's partial result is complete: its slot now holds a result waiting for the link, and is DMA'd to
  /// the host straight from the SRAM (no copy); while it drains, other slots accumulate (double buffering).
  void on_isp_result(int64_t bytes) {
    const int64_t queued = pcie_free_;
    int64_t arrival = pcie(bytes);
    r_.isp_link_wait += Time(std::max<int64_t>(0, queued - now_));
    r_.dram_access += host_.dram_energy * Bytes(bytes);
    if (s_.host.popcount_result) host_work(arrival, Bytes(bytes) / host_.popcount_throughput, bytes);
    push(pcie_free_, kSlotRelease, 0, bytes);  // the SRAM slot is free once the result has left
  }

  void on_slot_release(int64_t bytes) {
    sram_free_ += bytes;
    for (uint32_t c = 0; c < channels_.size(); ++c) start_transfer(c);
  }

  /// t + d in picoseconds, checked: an overflow throws OverflowError (past 2^63 ps) instead of wrapping.
  static int64_t after(int64_t t, Time d) { return (Time(t) + d).raw(); }

  /// A transfer over PCIe starting no earlier than now; returns the arrival time at the host.
  int64_t pcie(int64_t bytes) {
    Time dur = Bytes(bytes) / pcie_rate_;
    int64_t start = std::max(now_, pcie_free_);
    pcie_free_ = after(start, dur);
    r_.pcie_busy += dur;
    r_.pcie_bytes += bytes;
    r_.pcie += ssd_.pcie_energy * Bytes(bytes);
    int64_t arrival = after(pcie_free_, ssd_.pcie_latency);
    end_ = std::max(end_, arrival);
    return arrival;
  }

  void host_work(int64_t arrival, Time dur, int64_t bytes_read) {
    int64_t start = std::max(arrival, host_free_);
    host_free_ = after(start, dur);
    r_.host_busy += dur;
    r_.host_bytes += bytes_read;
    r_.dram_access += host_.dram_energy * Bytes(bytes_read);
    end_ = std::max(end_, host_free_);
  }

  void finish() {
    r_.ssd_active = Time(std::min(pcie_free_, r_.total.raw()));
    double t = double(r_.total.raw());
    if (t <= 0) return;
    struct U {
      const char* name;
      double util;
    };
    U us[] = {{"dies", double(r_.die_busy.raw()) / (t * double(dies_.size()))},
              {"channels", double(r_.channel_busy.raw()) / (t * double(channels_.size()))},
              {"pcie", double(r_.pcie_busy.raw()) / t},
              {"isp", double(r_.isp_busy.raw()) / t},
              {"host", double(r_.host_busy.raw()) / t}};
    const U* best = &us[0];
    for (const auto& u : us)
      if (u.util > best->util) best = &u;
    r_.bottleneck = best->name;
  }

  struct Channel {
    bool busy = false;
    Out current{};
    std::deque<Out> queue;
  };

  const PipelineSpec& s_;
  const SsdParams& ssd_;
  const HostParams& host_;
  Bytes page_;
  EnergyPerBit io_;
  Bandwidth channel_rate_, pcie_rate_;
  std::vector<DieRun> dies_;
  std::vector<Channel> channels_;
  EventHeap<Ev> q_;
  int64_t now_ = 0, end_ = 0, pcie_free_ = 0, host_free_ = 0, isp_free_ = 0, sram_free_ = 0, sram_peak_ = 0;
  // sequential writes
  int64_t write_pages_ = 0, write_overlap_ = 0, slice_bytes_ = 0, buffer_slices_ = 0, next_slice_ = 0, buffered_ = 0;
  std::vector<int64_t> rr_;  // per channel: the die after the last one loaded
  std::vector<int64_t> first_output_, last_output_;
  bool isp_ = false;
  PipelineResult r_;
};

}  // namespace

PipelineResult run_pipeline(const PipelineSpec& spec, const SsdParams& ssd, const HostParams& host, const nand::NandParams& nand) {
  Engine e(spec, ssd, host, nand);
  return e.run();
}

void PipelineResult::register_stats(StatGroup& g) const {
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

}  // namespace bitline::ssd
