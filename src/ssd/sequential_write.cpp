#include "ssd/sequential_write.hpp"

#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "core/event_queue.hpp"
#include "nand/cost_model.hpp"

namespace bitline::ssd {
namespace {

/// The shape of one program operation in `mode`.
struct ProgramShape {
  int64_t pages = 1;    // pages per plane programmed together (one wordline's bits in one-shot mode)
  int64_t overlap = 0;  // of those, how many the next operation may load while this one programs
  Time t_prog{};
};

ProgramShape shape_of(const SsdParams& ssd, const nand::NandParams& nand, nand::ProgramMode mode) {
  ProgramShape s;
  s.pages = *nand.timing.multi_bit_program == nand::MultiBitProgram::OneShot ? nand::bits_per_cell(mode) : 1;
  const int64_t latches = nand.command.data_latches + 1;  // data latches + the C-latch (the S-latch verifies)
  if (s.pages > latches)
    throw ModelError("nand.command.data_latches: a one-shot program of " + std::to_string(s.pages) +
                     " pages needs that many latches besides the S-latch");
  s.overlap = ssd.cache_program ? std::min(s.pages, latches - s.pages) : 0;
  s.t_prog = nand::CostModel(nand.timing, nand.energy, nand.geometry.page_size).t_prog(mode);
  return s;
}

enum EvKind : uint8_t { kArrive, kChannelDone, kProgramDone };
struct Ev {
  uint8_t kind;
  uint32_t die;
};

class Writer {
 public:
  Writer(const SsdParams& ssd, const nand::NandParams& nand, nand::ProgramMode mode, Bytes total)
      : ssd_(ssd), shape_(shape_of(ssd, nand, mode)) {
    slice_ = nand.geometry.planes_per_die * nand.geometry.page_size.raw();
    const int64_t op_bytes = shape_.pages * slice_;
    ops_ = (total.raw() + op_bytes - 1) / op_bytes;
    slices_ = ops_ * shape_.pages;
    t_chan_ = Bytes(slice_) / nand.timing.channel_rate;
    t_pcie_ = Bytes(slice_) / ssd.pcie_effective_rate();
    buffer_slices_ = std::max<int64_t>(1, ssd.write_buffer.raw() / slice_);
    dies_.resize(size_t(ssd.dies()));
    chan_busy_.assign(size_t(ssd.channels), false);
    rr_.assign(size_t(ssd.channels), 0);
    r_.bytes = ops_ * op_bytes;
  }

  WriteResult run() {
    feed_host();
    while (!q_.empty()) {
      const auto e = q_.pop();
      now_ = e.t;
      ++r_.events;
      const uint32_t d = e.payload.die;
      switch (e.payload.kind) {
        case kArrive:
          ++dies_[d].waiting;
          try_channel(channel_of(d));
          break;
        case kChannelDone:
          on_channel_done(d);
          break;
        case kProgramDone:
          dies_[d].programming = false;
          end_ = std::max(end_, now_);
          try_program(d);
          try_channel(channel_of(d));
          break;
      }
    }
    r_.total = end_;
    const double t = double(end_.raw());
    if (t > 0) {
      const double du = double(r_.die_busy.raw()) / (t * double(dies_.size()));
      const double cu = double(r_.channel_busy.raw()) / (t * double(ssd_.channels));
      const double pu = double(r_.pcie_busy.raw()) / t;
      r_.bottleneck = pu >= du && pu >= cu ? "pcie" : (cu >= du ? "channels" : "dies");
    }
    return r_;
  }

 private:
  struct Die {
    int64_t waiting = 0;  // slices in the controller's buffer for this die
    int64_t loaded = 0;   // slices of the next program in the die's latches
    bool programming = false;
  };

  uint32_t channel_of(uint32_t d) const { return uint32_t(int64_t(d) / ssd_.dies_per_channel); }
  /// Die of program operation `op`: round robin over the dies, channel-interleaved.
  uint32_t die_of(int64_t op) const {
    const int64_t k = op % int64_t(dies_.size());
    return uint32_t((k % ssd_.channels) * ssd_.dies_per_channel + k / ssd_.channels);
  }

  /// The host streams slices over PCIe (FIFO) while the write buffer has room.
  void feed_host() {
    while (next_slice_ < slices_ && buffered_ < buffer_slices_) {
      const Time start = std::max(now_, pcie_free_);
      pcie_free_ = start + t_pcie_;
      r_.pcie_busy += t_pcie_;
      ++buffered_;
      q_.push(pcie_free_ + ssd_.pcie_latency, Ev{kArrive, die_of(next_slice_ / shape_.pages)});
      ++next_slice_;
    }
  }

  bool can_load(const Die& d) const {
    if (d.waiting == 0 || d.loaded >= shape_.pages) return false;
    return !d.programming || d.loaded < shape_.overlap;
  }

  void try_channel(uint32_t c) {
    if (chan_busy_[c]) return;
    const int64_t n = ssd_.dies_per_channel;
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t d = uint32_t(int64_t(c) * n + (rr_[c] + i) % n);
      if (!can_load(dies_[d])) continue;
      rr_[c] = (rr_[c] + i + 1) % n;
      --dies_[d].waiting;
      chan_busy_[c] = true;
      r_.channel_busy += t_chan_;
      q_.push(now_ + t_chan_, Ev{kChannelDone, d});
      return;
    }
  }

  void on_channel_done(uint32_t d) {
    const uint32_t c = channel_of(d);
    chan_busy_[c] = false;
    ++dies_[d].loaded;
    --buffered_;
    feed_host();
    try_program(d);
    try_channel(c);
  }

  void try_program(uint32_t d) {
    Die& die = dies_[d];
    if (die.programming || die.loaded < shape_.pages) return;
    die.programming = true;
    die.loaded = 0;
    ++r_.programs;
    r_.die_busy += shape_.t_prog;
    q_.push(now_ + shape_.t_prog, Ev{kProgramDone, d});
  }

  const SsdParams& ssd_;
  ProgramShape shape_;
  int64_t slice_ = 0, ops_ = 0, slices_ = 0, next_slice_ = 0, buffered_ = 0, buffer_slices_ = 0;
  Time t_chan_{}, t_pcie_{}, now_{}, pcie_free_{}, end_{};
  std::vector<Die> dies_;
  std::vector<bool> chan_busy_;
  std::vector<int64_t> rr_;
  EventHeap<Ev> q_;
  WriteResult r_;
};

}  // namespace

WriteResult run_sequential_write(const SsdParams& ssd, const nand::NandParams& nand, nand::ProgramMode mode, Bytes total) {
  if (total.raw() <= 0) throw ModelError("sequential write: the size must be positive");
  return Writer(ssd, nand, mode, total).run();
}

double sequential_write_steady_state(const SsdParams& ssd, const nand::NandParams& nand, nand::ProgramMode mode) {
  const ProgramShape s = shape_of(ssd, nand, mode);
  const double slice = double(nand.geometry.planes_per_die * nand.geometry.page_size.raw());
  const double t_chan = slice / nand.timing.channel_rate.raw();
  const double cycle = to_s(s.t_prog) + double(s.pages - s.overlap) * t_chan;  // data-in that cannot overlap the program
  const double dies = double(ssd.dies()) * double(s.pages) * slice / cycle;
  const double channels = double(ssd.channels) * nand.timing.channel_rate.raw();
  return std::min({ssd.pcie_effective_rate().raw(), channels, dies});
}

}  // namespace bitline::ssd
