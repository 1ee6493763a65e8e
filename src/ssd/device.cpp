#include "ssd/device.hpp"
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <new>
#include <numeric>
#include <stdexcept>

#include "core/error.hpp"
#include "core/event_queue.hpp"
#include "core/param_dump.hpp"
#include "core/rng.hpp"
#include "ssd/cmt.hpp"
#include "ssd/ftl.hpp"

namespace bitline::ssd {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr int64_t kSqeBytes = 64, kCqeBytes = 16;

/// Latency histogram: exact count, sum, min and max; percentiles to within 1/64 (log-linear buckets of ns).
class LatencyHist {
 public:
  void add(Time t) {
    int64_t v = std::max<int64_t>(0, t.raw() / 1000);  // ns
    ++n_;
    sum_ += double(t.raw());
    min_ = std::min(min_, t.raw());
    max_ = std::max(max_, t.raw());
    ++buckets_[index(v)];
  }
  int64_t count() const { return n_; }
  double mean_us() const { return n_ ? sum_ / double(n_) * 1e-6 : 0; }
  double percentile_us(double q) const {
    if (!n_) return 0;
    int64_t target = int64_t(std::ceil(q * double(n_))), seen = 0;
    for (size_t i = 0; i < buckets_.size(); ++i) {
      seen += buckets_[i];
      if (seen >= target) return double(upper(i)) * 1e-3;
    }
    return double(max_) * 1e-6;
  }
  nlohmann::json json() const {
    return {{"mean_us", mean_us()},         {"min_us", n_ ? double(min_) * 1e-6 : 0}, {"max_us", n_ ? double(max_) * 1e-6 : 0},
            {"p50_us", percentile_us(0.5)}, {"p99_us", percentile_us(0.99)},          {"p999_us", percentile_us(0.999)}};
  }

 private:
  static size_t index(int64_t v) {
    if (v < 64) return size_t(v);
    int e = 63 - __builtin_clzll(uint64_t(v));
    return size_t((e - 5) * 64 + ((v >> (e - 6)) & 63));
  }
  static int64_t upper(size_t i) {
    if (i < 64) return int64_t(i);
    int64_t e = int64_t(i / 64) + 5, sub = int64_t(i % 64);
    return ((64 + sub + 1) << (e - 6)) - 1;
  }
  std::array<int64_t, 64 * 60> buckets_{};
  int64_t n_ = 0;
  double sum_ = 0;
  int64_t min_ = INT64_MAX, max_ = 0;
};

/// MQSim's write cache (ADVANCED): page slots in LRU order, each holding the sectors written to it and
/// whether its data is still to be written back (dirty) or is being programmed (writeback).
class WriteCache {
 public:
  struct Slot {
    uint32_t lpa, bits, version;
    bool writeback;
    uint32_t prev, next;
  };
  explicit WriteCache(int64_t capacity_pages) : cap_(size_t(std::max<int64_t>(0, capacity_pages))) {}
  size_t capacity() const { return cap_; }
  Slot* find(uint32_t lpa) {
    uint32_t* s = index_.find(lpa);
    return s ? &slots_[*s] : nullptr;
  }
  bool full() const { return used_ >= cap_; }
  void prefetch(uint32_t lpa) const { index_.prefetch(lpa); }
  void touch(Slot& sl) {
    uint32_t s = uint32_t(&sl - slots_.data());
    unlink(s);
    push_front(s);
  }
  Slot evict() {
    Slot out = slots_[tail_];
    remove(tail_);
    return out;
  }
  Slot& insert(uint32_t lpa, uint32_t bits) {
    uint32_t s;
    if (!free_.empty()) {
      s = free_.back();
      free_.pop_back();
    } else {
      s = uint32_t(slots_.size());
      slots_.emplace_back();
    }
    slots_[s] = Slot{lpa, bits, 0, false, kNone, kNone};
    index_.set(lpa, s);
    push_front(s);
    ++used_;
    return slots_[s];
  }
  void erase(Slot& sl) { remove(uint32_t(&sl - slots_.data())); }
  size_t bytes() const { return index_.bytes() + slots_.capacity() * sizeof(Slot); }

 private:
  void remove(uint32_t s) {
    unlink(s);
    index_.erase(slots_[s].lpa);
    free_.push_back(s);
    --used_;
  }
  void unlink(uint32_t s) {
    Slot& x = slots_[s];
    if (x.prev != kNone)
      slots_[x.prev].next = x.next;
    else
      head_ = x.next;
    if (x.next != kNone)
      slots_[x.next].prev = x.prev;
    else
      tail_ = x.prev;
  }
  void push_front(uint32_t s) {
    slots_[s].prev = kNone;
    slots_[s].next = head_;
    if (head_ != kNone) slots_[head_].prev = s;
    head_ = s;
    if (tail_ == kNone) tail_ = s;
  }
  size_t cap_, used_ = 0;
  FlatMap32 index_{1024};
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  uint32_t head_ = kNone, tail_ = kNone;
};

/// Times to move b bytes at a rate (bytes / rate), computed once for each multiple of 512 B up to kSectors
/// sectors, plus a fixed `extra` (a completion after the data).
class XferTimes {
 public:
  static constexpr int64_t kSectors = 256;
  XferTimes() = default;
  XferTimes(Bandwidth rate, int64_t extra) : rate_(rate), extra_(extra) {
    for (int64_t k = 0; k <= kSectors; ++k) t_.push_back(bytes(k * 512 + extra) / rate);
  }
  Time operator()(int64_t b) const {
    if (b % 512 == 0 && b / 512 <= kSectors) return t_[size_t(b / 512)];
    return bytes(b + extra_) / rate_;
  }

 private:
  Bandwidth rate_{};
  int64_t extra_ = 0;
  std::vector<Time> t_;
};

// Compute: an operation of a Flash-Cosmos job (compute_jobs.hpp: a segment of its steps on its planes, then its page).
enum class TxKind : uint8_t { Read, Program, Erase, Compute };
// User: a host request's page (req = request); Cache: a page written back from the write cache (req =
// cache version); Update: the read of a partial write's other sectors (req = its program);
// Mapping: translation-page read (lpa = translation page) or program; Gc: relocation and erase (req = plane);
// Compute: a Flash-Cosmos job (req = its die, block = its step template, sectors = its active planes).
enum class TxSource : uint8_t { User, Cache, Update, Mapping, Gc, Compute };

struct Tx {
  TxKind kind;
  TxSource src;
  uint16_t flow;
  uint32_t req;
  uint32_t lpa;
  uint32_t ppa;  // read / erase target (block's first page) / GC read source
  int64_t plane;
  int64_t bytes;        // over the channel
  int64_t sectors = 0;  // user read: sectors of the page it serves; program: sectors written
  uint32_t bits = 0;    // program: written-sector groups
  int64_t block = -1;
};

struct Request {
  uint32_t flow;
  bool read;
  int64_t lba, sectors;
  Time arrival, enqueued;
  int32_t pending = 0;   // flash reads and DRAM accesses (read), programs (uncached write), DRAM writes (cached)
  int64_t admitted = 0;  // cached write: sectors taken into the cache so far
};

enum class Ev : uint8_t {
  Arrival,
  SqeFetched,
  WriteDmaDone,
  DramWriteDone,
  DramReadDone,
  EvictionRead,
  Complete,
  ReadSensed,
  XferDone,
  DieOpDone,
  ChannelIdle,
  IspResult,
  SlotRelease,
  WriteArrive,  // a write slice reached the controller's buffer (a = its die)
  DataInDone    // a write slice is in its die's latches (a = the channel)
};
struct Payload {
  Ev kind;
  uint32_t a;
};

/// A FIFO of transaction ids in a ring buffer (a power-of-two capacity that doubles when full), with
/// indexing and removal from the middle: what a die's queues need, without std::deque's block bookkeeping.
class TxQueue {
 public:
  bool empty() const { return head_ == tail_; }
  size_t size() const { return tail_ - head_; }
  uint32_t front() const { return buf_[head_ & mask_]; }
  uint32_t operator[](size_t i) const { return buf_[(head_ + i) & mask_]; }
  void push_back(uint32_t x) {
    if (size() == buf_.size()) grow();
    buf_[tail_++ & mask_] = x;
  }
  void pop_front() { ++head_; }
  /// Removes the i-th entry, keeping the order of the others.
  void erase(size_t i) {
    if (i < size() / 2) {
      for (size_t j = i; j > 0; --j) buf_[(head_ + j) & mask_] = buf_[(head_ + j - 1) & mask_];
      ++head_;
    } else {
      for (size_t j = i; j + 1 < size(); ++j) buf_[(head_ + j) & mask_] = buf_[(head_ + j + 1) & mask_];
      --tail_;
    }
  }

 private:
  void grow() {
    std::vector<uint32_t> b(std::max<size_t>(8, buf_.size() * 2));
    for (size_t i = 0; i < size(); ++i) b[i] = (*this)[i];
    tail_ = size();
    head_ = 0;
    buf_.swap(b);
    mask_ = buf_.size() - 1;
  }
  std::vector<uint32_t> buf_;
  size_t head_ = 0, tail_ = 0, mask_ = 0;
};

struct Die {
  // queues by level: mapping reads, reads of classes 0..3, mapping programs, programs of classes 0..3, GC
  std::array<TxQueue, 11> q;
  uint32_t nonempty = 0;  // bit l: q[l] holds a transaction
  void push(size_t l, uint32_t tx) {
    q[l].push_back(tx);
    nonempty |= 1u << l;
  }
  uint32_t pop_front(size_t l) {
    uint32_t tx = q[l].front();
    q[l].pop_front();
    if (q[l].empty()) nonempty &= ~(1u << l);
    return tx;
  }
  void erase(size_t l, size_t i) {
    q[l].erase(i);
    if (q[l].empty()) nonempty &= ~(1u << l);
  }
  bool busy = false;
  std::vector<uint32_t> group;  // transactions of the running operation
  int64_t pending_xfers = 0;
  // cache read (Flash-Cosmos operations): the transaction whose page is in the cache latch, one sensed waiting for it
  uint32_t c_tx = UINT32_MAX, s_tx = UINT32_MAX;
};

struct GcJob {
  bool active = false;
  int64_t victim = -1;
  int64_t outstanding = 0;
};

/// A synthetic request drawn from its flow's generator.
struct Drawn {
  int64_t lba = 0, size = 0;
  bool read = false;
};
constexpr int kAhead = 4;  // requests a closed-loop flow draws ahead

// ---- what each of MQSim's choices means for a flow (resolved once, at setup) ----

/// The queue class of a flow's transactions, 0 served first: its Priority_Class under
/// PRIORITY_OUT_OF_ORDER, one class (1) for every flow under OUT_OF_ORDER.
int priority_class(Scheduling s, Priority p) {
  switch (s) {
    case Scheduling::OutOfOrder:
      return 1;
    case Scheduling::PriorityOutOfOrder:
      switch (p) {
        case Priority::Urgent:
          return 0;
        case Priority::High:
          return 1;
        case Priority::Medium:
          return 2;
        case Priority::Low:
          return 3;
      }
      break;
  }
  throw std::logic_error("unhandled scheduling policy or priority class");
}

struct CacheUse {
  bool writes;  // writes go to the data cache
  bool reads;   // reads look in it
};
CacheUse cache_use(CachingMode m) {
  switch (m) {
    case CachingMode::TurnedOff:
      return {false, false};
    case CachingMode::ReadCache:
      return {false, true};
    case CachingMode::WriteCache:
    case CachingMode::WriteReadCache:
      return {true, true};
  }
  throw std::logic_error("unhandled caching mode");
}

/// A QUEUE_DEPTH flow is a closed loop (each completion generates the next request); a BANDWIDTH flow is open.
bool closed_loop(Generator g) {
  switch (g) {
    case Generator::QueueDepth:
      return true;
    case Generator::Bandwidth:
      return false;
  }
  throw std::logic_error("unhandled generator");
}

bool normal_size(SizeDistribution s) {
  switch (s) {
    case SizeDistribution::Fixed:
      return false;
    case SizeDistribution::Normal:
      return true;
  }
  throw std::logic_error("unhandled size distribution");
}

/// SHARED: one table or cache for all flows; otherwise one per flow.
bool shared(CmtSharing s) {
  switch (s) {
    case CmtSharing::Shared:
      return true;
    case CmtSharing::EqualSizePartitioning:
      return false;
  }
  throw std::logic_error("unhandled CMT sharing mode");
}
bool shared(DataCacheSharing s) {
  switch (s) {
    case DataCacheSharing::Shared:
      return true;
    case DataCacheSharing::EqualPartitioning:
      return false;
  }
  throw std::logic_error("unhandled data cache sharing mode");
}

/// MQSim's estimate of a cache DRAM access of b bytes: tRCD + tCL + bursts at the data rate, a row at a time.
Time cache_dram_time(const DeviceXml& d, int64_t b) {
  const auto in_ns = [](Time x) { return double(x.raw()) / 1e3; };
  const int64_t row = d.dram_row_size.raw(), burst = d.dram_burst_size.raw();
  double burst_ns = 1e3 / double(d.dram_data_rate);
  double t = in_ns(d.dram_trcd + d.dram_tcl) + double(std::min(b, row) / burst / 2) * burst_ns;
  if (b > row) t += double(b / row) * in_ns(d.dram_trp + d.dram_trcd + d.dram_tcl);
  return ns(t);
}

struct Flow {
  const FlowXml* x;
  int priority;  // 0 urgent .. 3 low
  bool write_cache;
  bool any_cache;    // reads look in the cache (every mode but TURNED_OFF)
  bool closed_loop;  // a synthetic QUEUE_DEPTH flow: each completion generates the next request
  bool normal_size;
  int64_t start_lba, end_lba;  // the flow's address range [start, end) in sectors (working set for synthetic)
  int64_t range_end;           // the whole range (trace wrap)
  Rng rng{1};
  std::unique_ptr<TraceReader> trace;
  int64_t trace_limit = 0, trace_done = 0, replay = 0, trace_lines = 0, trace_sectors = 0;
  Time replay_offset{}, last_arrival{};
  int64_t generated = 0;
  bool stopped = false;
  int64_t outstanding = 0;
  std::deque<uint32_t> backlog;  // requests that arrived while the submission queue was full
  int64_t stream_next = 0;
  std::array<Drawn, kAhead> ahead;  // closed loop: the next requests, drawn early
  int ahead_n = 0, ahead_i = 0;
  // results
  LatencyHist dev, e2e, dev_read, dev_write;
  int64_t reads = 0, writes = 0, read_bytes = 0, write_bytes = 0;
  Time first_arrival{INT64_MAX}, last_done{};
};

class Sim {
 public:
  Sim(const DeviceXml& d, const ScenarioXml& s, const RunOptions& opt, const JobSpec* compute = nullptr, const ComputeRates& rates = {},
      const std::string& label = "scenario")
      : d_(d), opt_(opt), M_(opt.model), ftl_(d), cs_(compute), rates_(rates) {
    dies_.resize(size_t(M_.chip_scheduling ? d.dies() / d.dies_per_chip : d.dies()));
    gc_.resize(size_t(d.planes()));
    blocked_.resize(size_t(d.planes()));
    channel_free_.assign(size_t(d.channels), Time{});
    for (int64_t p = 0; p < d.planes(); ++p) {
      int64_t die = ftl_.die_of_plane(p);
      die_of_.push_back(int32_t(die));
      pin_of_.push_back(uint8_t(ftl_.plane_in_die(p)));
      unit_of_.push_back(int32_t(M_.chip_scheduling ? die / d.dies_per_chip : die));
      channel_of_.push_back(int32_t(die / (d.chips_per_channel * d.dies_per_chip)));
    }
    channel_of_unit_.assign(dies_.size(), 0);
    units_of_channel_.resize(size_t(d.channels));
    for (int64_t p = 0; p < d.planes(); ++p) {
      size_t u = size_t(unit_of_[size_t(p)]);
      if (p == 0 || unit_of_[size_t(p) - 1] != int32_t(u)) units_of_channel_[size_t(channel_of_[size_t(p)])].push_back(int64_t(u));
      channel_of_unit_[u] = channel_of_[size_t(p)];
    }
    rr_of_channel_.assign(size_t(d.channels), 0);
    channel_wake_.assign(size_t(d.channels), 0);
    spp_ = d.sectors_per_page();
    xfer_rate_ =
        cs_ && rates.channel.raw() > 0 ? rates.channel : bytes_per_s(double(d.channel_transfer_rate) * 1e6 * double(d.channel_width));
    pcie_ = bytes_per_s(d.pcie_lane_bandwidth.raw() * double(d.pcie_lane_count));
    sqe_time_ = bytes(kSqeBytes) / pcie_;
    cqe_time_ = bytes(kCqeBytes) / pcie_;
    pcie_data_ = XferTimes(pcie_, 0);
    pcie_read_cqe_ = XferTimes(pcie_, kCqeBytes);
    chan_time_ = XferTimes(xfer_rate_, 0);
    for (int64_t k = 0; k <= XferTimes::kSectors; ++k) dram_times_.push_back(dram_time(k * 512));
    int64_t nflows = int64_t(s.flows.size());
    int64_t logical_sectors = d.logical_pages() * spp_;
    int64_t per_flow = nflows > 0 ? logical_sectors / nflows : 0;
    sq_depth_ = d.io_queue_depth;
    // CMT: MQSim's entry is (2 log2(pages) + sectors per page) bits; translation pages hold page / GTD entry entries
    double lg = std::log2(double(d.pages()));
    int64_t cmt_entry = d.cmt_entry_bytes();
    int64_t gtd_entry = int64_t(std::ceil((lg + double(spp_)) / 8));
    entries_per_tpage_ = std::max<int64_t>(1, d.page_size / gtd_entry);
    gtd_entry_ = gtd_entry;
    grp_ = (spp_ + 31) / 32;
    full_bits_ = bits_of(0, spp_);
    // Translation pages are per flow, as MQSim's address-mapping domains: flow f's logical pages from its first
    // one, entries_per_tpage_ to a page, numbered from tpage0_[f].
    tpage0_.push_back(0);
    for (int64_t f = 0; f < nflows; ++f) {
      int64_t lo = f * per_flow / spp_, hi = ((f + 1) * per_flow + spp_ - 1) / spp_;
      lpa0_.push_back(lo);
      tpage0_.push_back(tpage0_.back() + uint32_t((hi - lo + entries_per_tpage_ - 1) / entries_per_tpage_));
    }
    int64_t tpages = tpage0_.back();
    if (M_.translation_programs && d.logical_pages() + tpages >= int64_t(0xFFFFFFFFll))
      throw ConfigError(
          fmt::format("{}: ssd_model.translation_programs: the device's {} logical pages and {} translation "
                      "pages exceed 2^32-1 page keys",
                      d.file, d.logical_pages(), tpages));
    int64_t cmt_entries = d.cmt_capacity.raw() / cmt_entry;
    if (cmt_entries > (int64_t(1) << 31)) cmt_entries = int64_t(1) << 31;
    ideal_map_ = d.ideal_mapping_table;
    // SHARED: MQSim's constructor creates the "shared" table inside its loop over flows, so each flow gets a
    // table of the whole capacity (cmt_per_flow); EQUAL_SIZE_PARTITIONING: each flow gets capacity / flows.
    const bool shared_cmt = shared(*d.cmt_sharing);
    int ncmt = shared_cmt && !M_.cmt_per_flow ? 1 : int(nflows);
    int64_t per_cmt = shared_cmt || nflows == 0 ? cmt_entries : cmt_entries / nflows;
    for (int i = 0; i < ncmt; ++i) {
      uint32_t lo = ncmt == 1 ? 0 : tpage0_[size_t(i)], hi = ncmt == 1 ? uint32_t(tpages) : tpage0_[size_t(i) + 1];
      cmt_.push_back(std::make_unique<Cmt>(size_t(per_cmt), lo, hi, int(d.page_size / 512)));
    }
    arriving_.assign(size_t(tpages), kNotArriving);
    departing_.assign(size_t(tpages), 0);
    int ncache = shared(*d.data_cache_sharing) ? 1 : int(nflows);
    for (int i = 0; i < ncache; ++i) cache_.push_back(std::make_unique<WriteCache>(d.data_cache_capacity.raw() / d.page_size / ncache));
    depth_.assign(size_t(ncache), 0);
    waiting_.resize(size_t(ncache));
    max_depth_ =
        M_.destage_pages_per_plane > 0 ? std::max<int64_t>(1, int64_t(M_.destage_pages_per_plane * double(d.planes() * spp_))) : INT64_MAX;
    std::vector<std::pair<uint64_t, uint64_t>> precond;
    for (int64_t f = 0; f < nflows; ++f) {
      const FlowXml& x = s.flows[f];
      Flow fl;
      fl.x = &x;
      fl.priority = priority_class(*d.scheduling, x.priority);
      const CacheUse cache = cache_use(x.caching_mode);
      fl.write_cache = cache.writes;
      fl.any_cache = cache.reads;
      fl.closed_loop = x.kind == FlowKind::Synthetic && closed_loop(x.generator);
      fl.normal_size = normal_size(x.size_distribution);
      fl.start_lba = f * per_flow;
      fl.range_end = fl.start_lba + per_flow;
      fl.end_lba =
          x.kind == FlowKind::Synthetic ? fl.start_lba + std::max<int64_t>(1, int64_t(double(per_flow) * x.working_set)) : fl.range_end;
      fl.rng = Rng::derive(uint64_t(x.seed) * 1000003u + uint64_t(f), "flow");
      if (x.kind == FlowKind::Trace) {
        fl.trace = std::make_unique<TraceReader>(x.trace_path, x.time_unit);
        int64_t n = fl.trace->count(&fl.trace_sectors);
        fl.trace_lines = n;
        fl.trace_limit = std::max<int64_t>(1, int64_t(std::floor(double(n) * x.percentage_executed)));
        if (n == 0) throw ConfigError(fmt::format("{}: trace has no requests", x.trace_path));
      }
      if (d.preconditioning && x.initial_occupancy > 0) {
        uint64_t lo = uint64_t(fl.start_lba / spp_), hi = uint64_t(fl.range_end / spp_);
        precond.push_back({lo, lo + uint64_t(double(hi - lo) * x.initial_occupancy)});
      }
      flows_.push_back(std::move(fl));
    }
    if (!precond.empty()) ftl_.precondition(precond);
    for (int64_t p = 0; p < ftl_.planes(); ++p) maybe_start_gc(p);
    if (cs_) setup_compute();
    work_ = estimate_work();
    if (work_.page_transactions > opt.max_transactions)
      throw ConfigError(fmt::format(
          "{}: the estimated work, {} page transactions ({} requests; {}), is more than the budget of {} page transactions "
          "(bitline ssd run --max-transactions N raises it; each is about 5-7 events of the engine, docs/ssd.md \"Work budget\")",
          label, work_.page_transactions, work_.requests, work_.why, opt.max_transactions));
  }

  nlohmann::json run() {
    auto wall0 = std::chrono::steady_clock::now();
    for (uint32_t f = 0; f < flows_.size(); ++f) {
      Flow& fl = flows_[f];
      if (fl.closed_loop) {
        for (int64_t i = 0; i < fl.x->queue_depth; ++i) generate(f, Time{});
      } else {
        ev_.push(Time{}, {Ev::Arrival, f});
      }
    }
    if (cs_) {  // dies channel-interleaved (die 0 of every channel, then die 1, ...), so that a limited resource
                // (the ISP's SRAM slots) is spread over the channels, not taken by the dies of channel 0
      const int64_t per_channel = d_.chips_per_channel * d_.dies_per_chip;
      for (int64_t k = 0; k < per_channel; ++k)
        for (int64_t c = 0; c < d_.channels; ++c) fill_jobs(uint32_t(c * per_channel + k));
      feed_host();
    }
    auto last_report = wall0;
    while (!ev_.empty()) {
      auto e = ev_.pop();
      dispatch(e.payload);
      if ((ev_.executed() & 0xFFFF) == 0 && opt_.progress) {
        auto now = std::chrono::steady_clock::now();
        if (now - last_report > std::chrono::seconds(2)) {
          last_report = now;
          opt_.progress(Progress{to_s(ev_.now()), completed_, work_.requests});
        }
      }
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    if (cs_) {
      for (size_t die = 0; die < cnext_.size(); ++die)
        if (cnext_[die] < cs_->die_jobs[die].size() || cpending_[die] > 0)
          throw ModelError(fmt::format("general device: die {} never finished its Flash-Cosmos jobs ({} of {} queued, {} pending)", die,
                                       cnext_[die], cs_->die_jobs[die].size(), cpending_[die]));
      finish_compute();
    }
    return results(wall);
  }

  const ComputeResult& compute_result() const { return cr_; }
  const WorkEstimate& work() const { return work_; }

 private:
  /// The scenario's work, estimated before it runs (WorkEstimate). Rates in requests per second.
  WorkEstimate estimate_work() const {
    WorkEstimate w;
    const double pcie = pcie_.raw(), sqe = to_s(sqe_time_);
    const Time tr_min = std::min({d_.read_latency[0], d_.read_latency[1], d_.read_latency[2]});
    const Time tprog_min = std::min({d_.program_latency[0], d_.program_latency[1], d_.program_latency[2]});
    std::vector<std::string> why;
    // a read can be served from the cache only if some flow writes into it
    bool writes = false;
    for (const Flow& fl : flows_) writes = writes || (fl.write_cache && (fl.x->kind == FlowKind::Trace || fl.x->read_ratio < 1));
    for (size_t f = 0; f < flows_.size(); ++f) {
      const Flow& fl = flows_[f];
      const FlowXml& x = *fl.x;
      double requests = 0, pages = 1;
      if (x.kind == FlowKind::Trace) {
        const double n = double(fl.trace_limit) * double(x.relay_count);
        requests = n;
        const double lines = double(std::max<int64_t>(1, fl.trace_lines));
        pages = 1 + double(fl.trace_sectors) / lines / double(spp_);  // its mean request's pages, one more for alignment
        why.push_back(fmt::format("flow {}: {} trace requests x <Relay_Count> {}", f, fl.trace_limit, x.relay_count));
      } else {
        const double bytes = double(x.avg_size) * 512;
        // the most pages a request spans: its start sits on a multiple of gcd(alignment, sectors per page) in a page
        const int64_t g = x.aligned ? std::gcd(x.alignment_unit, spp_) : 1;
        pages = double((x.avg_size + spp_ - g + spp_ - 1) / spp_);
        double rate = 0;  // the flow's highest possible request rate
        if (!fl.closed_loop) {
          rate = double(x.bandwidth) / bytes;
        } else {
          // the least latency of a request: its command fetch, its data over PCIe, and a read's sense and channel
          // transfer of a page (or a cache DRAM access), a write's DRAM access (cached) or channel transfer and program
          const double data = bytes / pcie, page_xfer = double(std::min<int64_t>(x.avg_size * 512, d_.page_size)) / xfer_rate_.raw();
          const double dram = to_s(cache_dram_time(d_, std::min<int64_t>(x.avg_size * 512, d_.page_size)));
          double least = 1e30;
          if (x.read_ratio > 0) least = std::min(least, fl.any_cache && writes ? dram : to_s(tr_min) + page_xfer);
          if (x.read_ratio < 1) least = std::min(least, fl.write_cache ? dram : page_xfer + to_s(tprog_min));
          rate = double(x.queue_depth) / (sqe + data + least);
          rate = std::min(rate, pcie / (bytes + kCqeBytes));  // the link carries each request's data
          if (x.read_ratio == 0 && fl.write_cache && M_.dram_serial) rate = std::min(rate, 1 / dram);  // one DRAM access at a time
        }
        double by_time = x.stop_time > Time{} ? rate * to_s(x.stop_time) : 1e300;
        requests = x.total_requests > 0 ? std::min(double(x.total_requests), by_time) : by_time;
        if (x.total_requests > 0 && double(x.total_requests) <= by_time)
          why.push_back(fmt::format("flow {}: <Total_Requests_To_Generate> {}", f, x.total_requests));
        else
          why.push_back(fmt::format("flow {}: <Stop_Time> {} ns at up to {:.4g} requests/s{}", f, x.stop_time.raw() / 1000, rate,
                                    fl.closed_loop ? "" : fmt::format(" (<Bandwidth> {} B/s)", x.bandwidth)));
      }
      w.requests = int64_t(std::min(4e18, double(w.requests) + requests));
      w.page_transactions = int64_t(std::min(4e18, double(w.page_transactions) + requests * pages));
    }
    w.why = fmt::format("{}", fmt::join(why, ", "));
    return w;
  }

  // ---- host side -----------------------------------------------------------
  uint32_t new_request(uint32_t f, bool read, int64_t lba, int64_t sectors, Time arrival) {
    uint32_t id;
    if (!free_req_.empty()) {
      id = free_req_.back();
      free_req_.pop_back();
    } else {
      id = uint32_t(reqs_.size());
      reqs_.emplace_back();
    }
    reqs_[id] = Request{f, read, lba, sectors, arrival, arrival, 0, 0};
    return id;
  }

  /// Generates one synthetic request of flow f arriving at t (unless the flow has stopped).
  void generate(uint32_t f, Time t) {
    Flow& fl = flows_[f];
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
    arrive(new_request(f, r.read, r.lba, r.size, t), t);
  }

  Drawn draw_ahead(uint32_t f) {
    Drawn r = draw(f);
    prefetch_lpa(f, uint32_t(r.lba / spp_));
    return r;
  }

  /// Starts loading what the translation and the FTL will touch for logical page lpa (hints only).
  void prefetch_lpa(uint32_t f, uint32_t lpa) const {
    if (!ideal_map_) {
      uint32_t page = tpage_of(f, lpa);
      cmt_[cmt_.size() == 1 ? 0 : f]->prefetch(lpa, page);
      ssd::prefetch(&arriving_[page]);
      ssd::prefetch(&departing_[page]);
    }
    ftl_.prefetch(lpa);
    if (flows_[f].any_cache) cache_[size_t(cache_of(f))]->prefetch(lpa);
    if (flows_[f].write_cache && M_.hot_cold_cache) hot_.prefetch(lpa);
    partial_.prefetch(lpa);
  }

  /// Draws a synthetic request's direction, address and size from the flow's generator.
  Drawn draw(uint32_t f) {
    Flow& fl = flows_[f];
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
    auto uniform = [&](int64_t lo, int64_t hi) {
      return fl.start_lba + lo + int64_t(fl.rng.below(uint64_t(std::max<int64_t>(1, hi - lo))));
    };
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

  void on_arrival(uint32_t f) {
    Flow& fl = flows_[f];
    const FlowXml& x = *fl.x;
    Time t = ev_.now();
    if (x.kind == FlowKind::Synthetic) {  // BANDWIDTH: Poisson arrivals at Bandwidth / request size
      generate(f, t);
      if (fl.stopped) return;
      double mean_ns = double(x.avg_size * 512) / double(x.bandwidth) * 1e9;
      double gap = -std::log(1.0 - fl.rng.uniform()) * mean_ns;
      ev_.push(t + ns(gap), {Ev::Arrival, f});
      return;
    }
    // trace: this event delivers the record read ahead, then schedules the next one
    if (fl.generated > 0) arrive(pending_trace_[f], t);
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
                      x.trace_path, fl.trace->line(), fl.replay + 1, x.relay_count,
                      (double(fl.replay_offset.raw()) + double(raw_ps)) * 1e-12, double(kMaxSimulatedPs) * 1e-12));
    Time at = fl.replay_offset + Time(raw_ps);
    if (at < t) at = t;
    fl.last_arrival = at;
    int64_t span = fl.range_end - fl.start_lba;
    int64_t size = std::min(r.sectors, span);
    int64_t lba = fl.start_lba + r.lba % span;
    if (lba + size > fl.range_end) lba = fl.range_end - size;
    if (pending_trace_.size() < flows_.size()) pending_trace_.resize(flows_.size());
    pending_trace_[f] = new_request(f, r.read, lba, size, at);
    ev_.push(at, {Ev::Arrival, f});
  }

  void arrive(uint32_t id, Time t) {
    Flow& fl = flows_[reqs_[id].flow];
    fl.first_arrival = std::min(fl.first_arrival, t);
    if (fl.outstanding < sq_depth_)
      submit(id);
    else {
      if (fl.backlog.size() >= kMaxBacklog) {
        const FlowXml& x = *fl.x;
        throw ConfigError(
            fmt::format("flow {}: {} requests wait on the host at {:.6g} s simulated: the flow's arrivals ({}) far exceed what the device "
                        "serves (bounded memory: at most {} waiting requests per flow)",
                        reqs_[id].flow, fl.backlog.size(), to_s(t),
                        x.kind == FlowKind::Trace ? fmt::format("trace {}", x.trace_path) : fmt::format("<Bandwidth> {} B/s", x.bandwidth),
                        kMaxBacklog));
      }
      fl.backlog.push_back(id);
    }
  }

  /// Enters the submission queue: the device fetches the command over the link.
  void submit(uint32_t id) {
    Request& r = reqs_[id];
    ++flows_[r.flow].outstanding;
    r.enqueued = ev_.now();
    prefetch_lpa(r.flow, uint32_t(r.lba / spp_));
    ev_.push(link(down_free_, sqe_time_), {Ev::SqeFetched, id});
  }

  /// When a transfer taking d on a FIFO link that is busy until `busy` ends (the link is then busy until then).
  Time link(Time& busy, Time d) {
    Time start = std::max(ev_.now(), busy);
    busy = start + d;
    return busy;
  }

  void on_sqe_fetched(uint32_t id) {
    Request& r = reqs_[id];
    if (r.read) {
      issue_reads(id);
    } else {
      ev_.push(link(down_free_, pcie_data_(r.sectors * 512)), {Ev::WriteDmaDone, id});
    }
  }

  // ---- address translation (MQSim's CMT, translation reads and write-backs) -------
  template <class F>
  void for_each_page(const Request& r, F f) {
    int64_t lba = r.lba, end = r.lba + r.sectors;
    while (lba < end) {
      int64_t lpa = lba / spp_;
      int64_t n = std::min(end, (lpa + 1) * spp_) - lba;
      f(uint32_t(lpa), lba - lpa * spp_, n);
      lba += n;
    }
  }
  /// Written-sector groups (bits) of sectors [off, off + n) of a page.
  uint32_t bits_of(int64_t off, int64_t n) const {
    int64_t lo = off / grp_, hi = (off + n - 1) / grp_;
    uint64_t m = ((uint64_t(1) << (hi - lo + 1)) - 1) << lo;
    return uint32_t(m);
  }

  Cmt& cmt_of(uint32_t flow) { return *cmt_[cmt_.size() == 1 ? 0 : flow]; }
  uint32_t tpage_of(uint32_t flow, uint32_t lpa) const {
    return tpage0_[flow] + uint32_t((int64_t(lpa) - lpa0_[flow]) / entries_per_tpage_);
  }
  /// The 512 B sector of its translation page that holds the mapping entry of `lpa`.
  uint32_t tsector_of(uint32_t flow, uint32_t lpa) const {
    return uint32_t((int64_t(lpa) - lpa0_[flow]) % entries_per_tpage_ * gtd_entry_ / 512);
  }
  /// Inserts `lpa` into the flow's CMT, evicting (and writing back) its least recently used entry when full.
  void cmt_insert(Cmt& c, uint32_t flow, uint32_t lpa, uint32_t page, Cmt::State st) {
    make_room(c, flow);
    c.insert(lpa, page, tsector_of(flow, lpa), st);
  }

  /// Where translation page `page` is: its last program, else a fixed page of its plane (stored at start).
  uint32_t tpage_ppa(uint32_t page) {
    uint32_t key = uint32_t(ftl_.logical_pages() + int64_t(page));
    if (M_.translation_programs) {
      uint32_t p = ftl_.lookup(key);
      if (p != FlatMap32::kEmpty) return p;
    }
    return ftl_.unwritten_ppa(uint32_t((ftl_.logical_pages() + int64_t(page)) % ftl_.logical_pages()));
  }

  void issue_mapping_read(uint32_t page, int64_t b, uint32_t flow) {
    uint32_t ppa = tpage_ppa(page);
    ++stats_.mapping_reads;
    enqueue(new_tx(Tx{TxKind::Read, TxSource::Mapping, uint16_t(flow), kNone, page, ppa, ftl_.plane_of_ppa(ppa), b}));
  }

  /// Makes room in a full CMT; a dirty victim's translation page is written back.
  void make_room(Cmt& c, uint32_t flow) {
    if (!c.full()) return;
    auto [page, dirty] = c.evict();
    if (dirty && M_.translation_writeback) writeback(c, page, flow);
  }

  /// MQSim's translation-page write-back: every dirty entry of the page is cleaned, the sectors holding
  /// its clean cached entries are read (to merge), and the page is programmed (see translation_programs).
  void writeback(Cmt& c, uint32_t page, uint32_t flow) {
    int64_t n = c.writeback(page);
    ++stats_.mapping_writebacks;
    if (arriving_[page] == kNotArriving) arriving_[page] = kNone;
    issue_mapping_read(page, n * 512, flow);
    if (M_.translation_programs) {
      ++departing_[page];
      uint32_t key = uint32_t(ftl_.logical_pages() + int64_t(page));
      Tx t{TxKind::Program, TxSource::Mapping, uint16_t(flow), kNone, key, kNone, int64_t(ftl_.plane_of(page)), d_.page_size};
      t.sectors = spp_;
      enqueue(new_tx(t));
    } else {
      departing_[page] = 1;  // MQSim never programs it: the page stays in memory
    }
  }

  void park(uint32_t page, uint32_t tx) {
    uint32_t h = arriving_[page];
    park_next_[tx] = h == kNotArriving ? kNone : h;
    arriving_[page] = tx;
  }

  /// Resolves a transaction's logical page through the CMT, then issues it (now, or when its
  /// translation page arrives from flash).
  void translate(uint32_t tx) {
    const Tx& t = txs_[tx];
    bool write = t.kind == TxKind::Program;
    if (ideal_map_ || (write && !M_.write_translation)) return proceed(tx);
    Cmt& c = cmt_of(t.flow);
    uint32_t lpa = t.lpa, flow = t.flow, page = tpage_of(flow, lpa);
    uint32_t s = c.find(lpa);
    if (s != Cmt::kAbsent && c.state(s) != Cmt::State::Waiting) {
      c.touch(s);
      ++(write ? stats_.cmt_write_hits : stats_.cmt_hits);
      return proceed(tx);
    }
    ++(write ? stats_.cmt_write_misses : stats_.cmt_misses);
    if (s != Cmt::kAbsent) return park(page, tx);  // its translation page is on its way
    if (c.capacity() == 0) {
      if (arriving_[page] == kNotArriving) issue_mapping_read(page, 512, flow);
      return park(page, tx);
    }
    make_room(c, flow);  // first: the victim's write-back may start a read of this very page
    uint32_t sector = tsector_of(flow, lpa);
    if (arriving_[page] != kNotArriving) {
      c.insert(lpa, page, sector, Cmt::State::Waiting);
      return park(page, tx);
    }
    if (departing_[page]) {
      c.insert(lpa, page, sector, Cmt::State::Clean);
      return proceed(tx);
    }
    c.insert(lpa, page, sector, Cmt::State::Waiting);
    park(page, tx);
    issue_mapping_read(page, 512, flow);
  }

  /// A translation page arrived from flash: its waiting entries become valid, their transactions go on.
  void arrived(uint32_t page) {
    uint32_t h = arriving_[page];
    if (h == kNotArriving) return;
    scratch_.clear();
    for (uint32_t tx = h; tx != kNone; tx = park_next_[tx]) scratch_.push_back(tx);
    arriving_[page] = kNotArriving;
    std::reverse(scratch_.begin(), scratch_.end());
    std::vector<uint32_t> list;
    list.swap(scratch_);
    for (uint32_t tx : list) {
      const Tx& t = txs_[tx];
      Cmt& c = cmt_of(t.flow);
      if (c.capacity() > 0) {
        uint32_t s = c.find(t.lpa);
        if (s == Cmt::kAbsent) {
          uint32_t lpa = t.lpa, flow = t.flow;
          cmt_insert(c, flow, lpa, tpage_of(flow, lpa), Cmt::State::Clean);
        } else if (c.state(s) == Cmt::State::Waiting) {
          c.set_state(s, Cmt::State::Clean);
        }
      }
      proceed(tx);
    }
    list.clear();
    scratch_.swap(list);
  }

  void mark_dirty(uint32_t flow, uint32_t lpa) {
    Cmt& c = cmt_of(flow);
    if (c.capacity() == 0) return;
    uint32_t s = c.find(lpa);
    if (s == Cmt::kAbsent)
      cmt_insert(c, flow, lpa, tpage_of(flow, lpa), Cmt::State::Dirty);
    else
      c.set_state(s, Cmt::State::Dirty);
  }

  /// Issues a translated transaction: a read goes to its page; a program records its sectors and, when it
  /// leaves written sectors of the page uncovered, first reads them (update read).
  void proceed(uint32_t tx) {
    Tx& t = txs_[tx];
    if (t.kind == TxKind::Read) {
      uint32_t ppa = ftl_.lookup(t.lpa);
      if (ppa == FlatMap32::kEmpty) {
        ppa = ftl_.unwritten_ppa(t.lpa);
        if (M_.unwritten_read_dirty && !ideal_map_) mark_dirty(t.flow, t.lpa);
      }
      Tx& u = txs_[tx];
      u.ppa = ppa;
      u.plane = ftl_.plane_of_ppa(ppa);
      return enqueue(tx);
    }
    uint32_t lpa = t.lpa, flow = t.flow, bits = t.bits;
    t.plane = int64_t(ftl_.plane_of(lpa));
    if (!ideal_map_) mark_dirty(flow, lpa);
    uint32_t old_ppa = ftl_.lookup(lpa);
    uint32_t old = 0;
    if (const uint32_t* p = partial_.find(lpa))
      old = *p;
    else if (old_ppa != FlatMap32::kEmpty)
      old = full_bits_;
    uint32_t now_bits = old | bits;
    if (now_bits == full_bits_)
      partial_.erase(lpa);
    else
      partial_.set(lpa, now_bits);
    uint32_t missing = old & ~bits;
    if (M_.update_reads && missing && old_ppa != FlatMap32::kEmpty) {
      int64_t sec = std::min<int64_t>(spp_, int64_t(__builtin_popcount(missing)) * grp_);
      ++stats_.update_reads;
      Tx u{TxKind::Read, TxSource::Update, uint16_t(flow), tx, lpa, old_ppa, ftl_.plane_of_ppa(old_ppa), sec * 512};
      u.sectors = sec;
      enqueue(new_tx(u));
      return;
    }
    enqueue(tx);
  }

  // ---- reads -----------------------------------------------------------------
  void issue_reads(uint32_t id) {
    Request& r = reqs_[id];
    r.pending = 1;  // guard while issuing
    int64_t from_cache = 0;
    bool cache = flows_[r.flow].any_cache;
    WriteCache& wc = *cache_[cache_of(r.flow)];
    for_each_page(r, [&](uint32_t lpa, int64_t off, int64_t n) {
      if (cache) {
        uint32_t need = bits_of(off, n);
        if (WriteCache::Slot* sl = wc.find(lpa); sl && (sl->bits & need) == need) {
          ++stats_.cache_read_hits;
          from_cache += n;
          return;
        }
      }
      ++reqs_[id].pending;
      Tx t{TxKind::Read, TxSource::User, uint16_t(reqs_[id].flow), id, lpa, kNone, 0, n * 512};
      t.sectors = n;
      translate(new_tx(t));
    });
    if (from_cache > 0) {
      ++reqs_[id].pending;
      ev_.push(dram(from_cache * 512), {Ev::DramReadDone, id});
    }
    if (--reqs_[id].pending == 0) finish_read(id);
  }

  void finish_read(uint32_t id) {
    Request& r = reqs_[id];
    Time t = link(up_free_, pcie_read_cqe_(r.sectors * 512));
    ev_.push(t, {Ev::Complete, id});
  }

  void on_dram_read_done(uint32_t id) {
    if (--reqs_[id].pending == 0) finish_read(id);
  }

  // ---- writes ----------------------------------------------------------------
  int cache_of(uint32_t flow) const { return cache_.size() == 1 ? 0 : int(flow); }

  Time dram_time(int64_t b) const { return cache_dram_time(d_, b); }
  /// When a DRAM access of b bytes started now ends (one access at a time with dram_serial).
  Time dram(int64_t b) {
    Time d = b % 512 == 0 && size_t(b / 512) < dram_times_.size() ? dram_times_[size_t(b / 512)] : dram_time(b);
    if (!M_.dram_serial) return ev_.now() + d;
    dram_free_ = std::max(ev_.now(), dram_free_) + d;
    return dram_free_;
  }

  void on_write_dma_done(uint32_t id) {
    Request& r = reqs_[id];
    if (!flows_[r.flow].write_cache) return issue_programs(id);
    if (!destage(id)) waiting_[cache_of(r.flow)].push_back(id);
  }

  /// Programs of a write without the cache: the request completes when they all end.
  void issue_programs(uint32_t id) {
    Request& r = reqs_[id];
    r.pending = 1;
    for_each_page(r, [&](uint32_t lpa, int64_t off, int64_t n) {
      ++reqs_[id].pending;
      Tx t{TxKind::Program, TxSource::User, uint16_t(reqs_[id].flow), id, lpa, kNone, 0, n * 512};
      t.sectors = n;
      t.bits = bits_of(off, n);
      translate(new_tx(t));
    });
    if (--reqs_[id].pending == 0) ev_.push(link(up_free_, cqe_time_), {Ev::Complete, id});
  }

  /// MQSim's destage buffer: takes the request's pages into the write cache while the sectors being
  /// programmed from the cache stay under the back-pressure limit; a cold page is programmed at once, a
  /// hot one merges into its slot. Returns whether the whole request is in the cache.
  bool destage(uint32_t id) {
    Request& r = reqs_[id];
    uint32_t flow = r.flow;
    int c = cache_of(flow);
    WriteCache& wc = *cache_[c];
    int64_t lba = r.lba + r.admitted, end = r.lba + r.sectors, dram_sectors = 0, evicted_sectors = 0;
    uint32_t batch = kNone;
    while (lba < end && depth_[c] < max_depth_) {
      uint32_t lpa = uint32_t(lba / spp_);
      int64_t off = lba - int64_t(lpa) * spp_, n = std::min(end, int64_t(lpa + 1) * spp_) - lba;
      uint32_t bits = bits_of(off, n);
      WriteCache::Slot* sl = wc.find(lpa);
      if (sl) {
        sl->bits |= bits;
        sl->version = ++version_;
        wc.touch(*sl);
        ++stats_.cache_merges;
      } else {
        if (wc.full()) {
          WriteCache::Slot e = wc.evict();
          if (!e.writeback) {
            if (batch == kNone) batch = new_batch();
            batches_[batch].push_back(e);
            int64_t es = sectors_of(e.bits);
            evicted_sectors += es;
            depth_[c] += es;
          }
        }
        sl = &wc.insert(lpa, bits);
        sl->version = ++version_;
      }
      dram_sectors += n;
      if (!M_.hot_cold_cache || !hot_.find(lpa)) {  // cold: written back at once
        if (M_.hot_cold_cache) hot_.set(lpa, 1);
        sl->writeback = true;
        depth_[c] += n;
        Tx t{TxKind::Program, TxSource::Cache, uint16_t(flow), sl->version, lpa, kNone, 0, n * 512};
        t.sectors = n;
        t.bits = bits;
        translate(new_tx(t));
      }
      lba += n;
      reqs_[id].admitted += n;
    }
    if (M_.hot_cold_cache && ev_.now() > next_hot_reset_) {
      hot_.clear();
      next_hot_reset_ = ev_.now() + M_.hot_window;
    }
    if (batch != kNone) ev_.push(dram(evicted_sectors * 512), {Ev::EvictionRead, batch});
    if (dram_sectors > 0) {
      ++reqs_[id].pending;
      ev_.push(dram(dram_sectors * 512), {Ev::DramWriteDone, id});
    }
    return reqs_[id].admitted == reqs_[id].sectors;
  }

  int64_t sectors_of(uint32_t bits) const { return std::min<int64_t>(spp_, int64_t(__builtin_popcount(bits)) * grp_); }

  uint32_t new_batch() {
    if (!free_batch_.empty()) {
      uint32_t b = free_batch_.back();
      free_batch_.pop_back();
      return b;
    }
    batches_.emplace_back();
    return uint32_t(batches_.size() - 1);
  }

  /// The data of evicted dirty slots has been read from DRAM: program it.
  void on_eviction_read(uint32_t batch) {
    std::vector<WriteCache::Slot> list;
    list.swap(batches_[batch]);
    free_batch_.push_back(batch);
    for (const auto& e : list) {
      // the evicting flow is not recorded: the slot's lpa decides the flow for priorities and the CMT
      uint32_t flow = flow_of_lpa(e.lpa);
      Tx t{TxKind::Program, TxSource::Cache, uint16_t(flow), e.version, e.lpa, kNone, 0, sectors_of(e.bits) * 512};
      t.sectors = sectors_of(e.bits);
      t.bits = e.bits;
      translate(new_tx(t));
    }
  }

  uint32_t flow_of_lpa(uint32_t lpa) const {
    int64_t lba = int64_t(lpa) * spp_;
    for (uint32_t f = 0; f < flows_.size(); ++f)
      if (lba < flows_[f].range_end) return f;
    return uint32_t(flows_.size() - 1);
  }

  void on_dram_write_done(uint32_t id) {
    Request& r = reqs_[id];
    if (--r.pending == 0 && r.admitted == r.sectors) ev_.push(link(up_free_, cqe_time_), {Ev::Complete, id});
  }

  /// A page written back from the cache is programmed: its slot leaves the cache unless newer data merged
  /// into it meanwhile, and waiting writes get another try.
  void cache_program_done(const Tx& t) {
    int c = cache_of(t.flow);
    WriteCache& wc = *cache_[c];
    depth_[c] -= t.sectors;
    if (WriteCache::Slot* sl = wc.find(t.lpa)) {
      if (sl->version == t.req)
        wc.erase(*sl);
      else if (sl->writeback && sl->version > t.req)
        sl->writeback = false;  // newer data: dirty again
    }
    auto& w = waiting_[c];
    for (size_t i = 0; i < w.size();) {
      if (destage(w[i]))
        w.erase(w.begin() + std::ptrdiff_t(i));
      else
        ++i;
      // at the limit no later request can enter (and the first call above already did this instant's
      // hot-window reset)
      if (depth_[c] >= max_depth_) break;
    }
  }

  // ---- completion ------------------------------------------------------------
  void on_complete(uint32_t id) {
    Request& r = reqs_[id];
    Flow& fl = flows_[r.flow];
    Time now = ev_.now();
    fl.dev.add(now - r.enqueued);
    fl.e2e.add(now - r.arrival);
    (r.read ? fl.dev_read : fl.dev_write).add(now - r.enqueued);
    (r.read ? fl.reads : fl.writes) += 1;
    (r.read ? fl.read_bytes : fl.write_bytes) += r.sectors * 512;
    fl.last_done = now;
    ++completed_;
    --fl.outstanding;
    uint32_t f = r.flow;
    free_req_.push_back(id);
    if (!fl.backlog.empty()) {
      uint32_t next = fl.backlog.front();
      fl.backlog.pop_front();
      submit(next);
    }
    if (fl.closed_loop) generate(f, now);
  }

  // ---- transactions, dies and chips ---------------------------------------------
  uint32_t new_tx(const Tx& t) {
    uint32_t id;
    if (!free_tx_.empty()) {
      id = free_tx_.back();
      free_tx_.pop_back();
      txs_[id] = t;
    } else {
      id = uint32_t(txs_.size());
      txs_.push_back(t);
      park_next_.push_back(kNone);
    }
    return id;
  }

  /// Queue level: translation reads, user reads by class, translation programs, user programs by class, GC. A unit
  /// serves the lowest non-empty level first, except GC: with Preemptible_GC_Enabled false (MQSim's default), GC is
  /// always in MQSim's urgent mode and its transactions go before every other (TSU_Priority_OutOfOrder checks the
  /// GC queues first); with it true, GC goes last.
  static constexpr size_t kGcLevel = 10;
  static constexpr uint32_t kGcLevelBit = 1u << kGcLevel;
  size_t level(const Tx& t) const {
    if (t.src == TxSource::Gc) return kGcLevel;
    if (t.src == TxSource::Compute) return 1 + size_t(priority_class(*d_.scheduling, Priority::High));  // a user read
    bool read = t.kind == TxKind::Read;
    if (t.src == TxSource::Mapping) return read ? 0 : 5;
    return size_t((read ? 1 : 6) + flows_[t.flow].priority);
  }

  /// The scheduling unit of a plane: its chip (chip_scheduling) or its die.
  int64_t unit_of(int64_t plane) const { return unit_of_[size_t(plane)]; }

  void enqueue(uint32_t tx) {
    const Tx& t = txs_[tx];
    int64_t u = unit_of(t.plane);
    dies_[u].push(level(t), tx);
    if (!dies_[u].busy) start_die(u);
  }

  bool ready(const Tx& t) {
    if (t.kind != TxKind::Program) return true;
    return ftl_.can_allocate(t.plane, t.src == TxSource::Gc);
  }

  int64_t page_offset(const Tx& t) const {
    return t.kind == TxKind::Read ? ftl_.page_of_ppa(t.ppa) : ftl_.next_page(t.plane, t.src == TxSource::Gc);
  }

  /// Starts the highest-priority ready transaction on an idle unit, with same-kind transactions on the
  /// other planes of its die (multi-plane operation).
  void start_die(int64_t unit) {
    Die& D = dies_[unit];
    if (D.busy) return;
    if (M_.issue_on_idle_channel) {
      size_t ch = size_t(channel_of_unit_[size_t(unit)]);
      if (channel_free_[ch] > ev_.now()) {  // wait for the channel (see on_channel_idle)
        if (!channel_wake_[ch]) {
          channel_wake_[ch] = 1;
          ev_.push(channel_free_[ch], {Ev::ChannelIdle, uint32_t(ch)});
        }
        return;
      }
    }
    uint32_t first = kNone;
    size_t lvl = 0;
    // Planes of this unit with a program blocked for want of a free page: their GC starts after the scan, because
    // starting it enqueues its reads, which starts this (still idle) unit from inside the scan. (Empty, it
    // allocates nothing.)
    std::vector<int64_t> gc_planes;
    while (D.nonempty) {  // the lowest level first, in queue order; GC first unless it is preemptible
      lvl = !d_.gc_preemptible && (D.nonempty & kGcLevelBit) ? kGcLevel : size_t(std::countr_zero(D.nonempty));
      uint32_t tx = D.pop_front(lvl);
      if (!ready(txs_[tx])) {
        blocked_[txs_[tx].plane].push_back(tx);  // no free page until GC erases a block
        if (std::find(gc_planes.begin(), gc_planes.end(), txs_[tx].plane) == gc_planes.end()) gc_planes.push_back(txs_[tx].plane);
        continue;
      }
      first = tx;
      break;
    }
    if (first == kNone) {
      for (int64_t p : gc_planes) maybe_start_gc(p);
      return;
    }
    D.group.clear();
    D.group.push_back(first);
    const Tx& f = txs_[first];
    // (a Flash-Cosmos job already holds every plane of its die that it uses: no companions)
    const bool grouped = f.kind == TxKind::Read || f.kind == TxKind::Program;
    int64_t off = M_.multiplane_same_page && grouped ? page_offset(f) : 0;
    if (grouped && d_.planes_per_die > 1 && (f.kind == TxKind::Read || program_companion_possible(f, off))) {
      int32_t die = die_of_[size_t(f.plane)];
      uint32_t used_planes = 1u << pin_of_[size_t(f.plane)];
      bool read = f.kind == TxKind::Read;
      // levels 0-4 hold reads, 5-9 programs, 10 GC (both): the non-empty ones from the first's, of its kind
      uint32_t levels = D.nonempty & ~((1u << lvl) - 1) & (read ? 0x41Fu : 0x7E0u);
      for (; levels && int64_t(D.group.size()) < d_.planes_per_die; levels &= levels - 1) {
        size_t l = size_t(std::countr_zero(levels));
        auto& q = D.q[l];
        for (size_t i = 0; i < q.size() && i < 32 && int64_t(D.group.size()) < d_.planes_per_die; ++i) {
          const Tx& c = txs_[q[i]];
          if (c.kind != f.kind) continue;
          uint32_t bit = 1u << pin_of_[size_t(c.plane)];  // cheap tests first: tables, not divisions
          if ((used_planes & bit) || die_of_[size_t(c.plane)] != die) continue;
          if (M_.multiplane_same_page && page_offset(c) != off) continue;
          if (!ready(c)) continue;
          used_planes |= bit;
          D.group.push_back(q[i]);
          D.erase(l, i);
          --i;
        }
      }
    }
    if (D.group.size() > 1) ++stats_.multiplane_ops;
    D.busy = true;
    execute(unit);
    for (int64_t p : gc_planes) maybe_start_gc(p);
  }

  /// Whether another plane of program f's die could take a program with it now: its next page is f's (with
  /// multiplane_same_page) and it can allocate a page (as a host or a GC program: their frontiers differ). When none can, the
  /// queues hold no companion for f and need no scan.
  bool program_companion_possible(const Tx& f, int64_t off) const {
    int64_t first = int64_t(die_of_[size_t(f.plane)]) * d_.planes_per_die;
    for (int64_t q = first; q < first + d_.planes_per_die; ++q) {
      if (q == f.plane) continue;
      for (bool gc : {false, true})  // a host or a GC program
        if ((!M_.multiplane_same_page || ftl_.next_page(q, gc) == off) && ftl_.can_allocate(q, gc)) return true;
    }
    return false;
  }

  int64_t channel_of_plane(int64_t plane) const { return channel_of_[size_t(plane)]; }

  /// issue_on_idle_channel: the channel's transfers have ended; its units are visited once each in round-robin
  /// order, the turn moving on with every visit (MQSim's TSU_Base::handle_channel_idle_signal), an idle one with work
  /// starting it, until one of them occupies the channel.
  void on_channel_idle(uint32_t ch) {
    channel_wake_[ch] = 0;
    auto& units = units_of_channel_[ch];
    if (units.empty()) return;
    for (size_t k = 0; k < units.size(); ++k) {
      if (channel_free_[ch] > ev_.now()) {
        if (!channel_wake_[ch]) {
          channel_wake_[ch] = 1;
          ev_.push(channel_free_[ch], {Ev::ChannelIdle, ch});
        }
        return;
      }
      const size_t i = rr_of_channel_[ch];
      rr_of_channel_[ch] = uint32_t((i + 1) % units.size());
      const int64_t u = units[i];
      if (!dies_[size_t(u)].busy) start_die(u);
    }
  }

  Time xfer_end(int64_t plane, int64_t b) {
    Time& ch = channel_free_[channel_of_plane(plane)];
    Time start = std::max(ev_.now(), ch);
    ch = start + chan_time_(b);
    return ch;
  }

  void execute(int64_t unit) {
    Die& D = dies_[unit];
    const Tx& f = txs_[D.group[0]];
    Time now = ev_.now();
    if (f.kind == TxKind::Compute) {
      const Segment& sg = segment_of(f);
      cr_.die_busy += sg.die_time;
      cr_.die_steps += uint64_t(sg.steps);
      cr_.sensings += uint64_t(sg.sensings * f.sectors);  // per plane
      cr_.nand_sense += sg.energy;
      if (sg.data_in > 0) {  // a program: its slices leave the latches' count, the next program's may load
        wloaded_[f.req] -= sg.data_in;
        wclaimed_[f.req] -= sg.data_in;
        wprog_[f.req] = 1;
        ++cr_.programs;
        try_data_in(uint32_t(channel_of_plane(f.plane)));
      }
      ev_.push(now + sg.die_time, {Ev::ReadSensed, uint32_t(unit)});
    } else if (f.kind == TxKind::Read) {
      Time t_r{};
      for (uint32_t tx : D.group) t_r = std::max(t_r, d_.read_latency[int(ftl_.page_type(txs_[tx].ppa))]);
      stats_.flash_reads += int64_t(D.group.size());
      ev_.push(now + t_r, {Ev::ReadSensed, uint32_t(unit)});
    } else if (f.kind == TxKind::Program) {
      int64_t b = 0;
      Time t_p{};
      int64_t plane0 = f.plane;
      for (uint32_t tx : D.group) {
        Tx& t = txs_[tx];
        if (t.src == TxSource::Gc) {
          // a relocated page is skipped when the host overwrote it since the GC read
          if (ftl_.lookup(t.lpa) != t.ppa) {
            t.ppa = kNone;
            continue;
          }
          if (!d_.gc_copyback) b += t.bytes;
        } else {
          b += t.bytes;
        }
        t.ppa = ftl_.write(t.lpa, t.plane, t.src == TxSource::Gc);
        t_p = std::max(t_p, d_.program_latency[int(ftl_.page_type(t.ppa))]);
        ++stats_.flash_programs;
        maybe_start_gc(t.plane);
      }
      Time data_in = b > 0 ? xfer_end(plane0, b) : now;
      ev_.push(data_in + t_p, {Ev::DieOpDone, uint32_t(unit)});
    } else {
      ++stats_.flash_erases;
      ev_.push(now + d_.erase_latency, {Ev::DieOpDone, uint32_t(unit)});
    }
  }

  void on_read_sensed(int64_t unit) {
    Die& D = dies_[unit];
    if (txs_[D.group[0]].src == TxSource::Compute) {
      const uint32_t tx = D.group[0];
      if (txs_[tx].bytes == 0) {  // no page leaves (latch operations, a program): the die is free, the job goes on
        D.busy = false;
        D.group.clear();
        read_done(tx);
        return start_die(unit);
      }
      if (M_.cache_read) return sensed_to_cache(unit, tx);
    }
    D.pending_xfers = 0;
    for (uint32_t tx : D.group) {
      Tx& t = txs_[tx];
      ++D.pending_xfers;
      if (t.src == TxSource::Compute) {
        compute_out(tx);
        continue;
      }
      bool xfer = !(t.src == TxSource::Gc && d_.gc_copyback) && t.bytes > 0;
      Time end = xfer ? xfer_end(t.plane, t.bytes) : ev_.now();
      ev_.push(end, {Ev::XferDone, tx});
    }
  }

  void on_xfer_done(uint32_t tx) {
    int64_t unit = unit_of(txs_[tx].plane);
    if (M_.cache_read && txs_[tx].src == TxSource::Compute) return cache_emptied(unit, tx);
    read_done(tx);
    Die& D = dies_[unit];
    if (--D.pending_xfers == 0) {
      D.busy = false;
      D.group.clear();
      start_die(unit);
    }
  }

  void read_done(uint32_t tx) {
    Tx t = txs_[tx];
    free_tx_.push_back(tx);
    switch (t.src) {
      case TxSource::Mapping:
        arrived(t.lpa);
        return;
      case TxSource::Gc: {
        Tx p{TxKind::Program, TxSource::Gc, 0, t.req, t.lpa, t.ppa, t.plane, t.bytes};
        enqueue(new_tx(p));
        return;
      }
      case TxSource::Update:
        enqueue(t.req);
        return;
      case TxSource::Compute:
        job_done(t);
        return;
      default:
        break;
    }
    if (--reqs_[t.req].pending == 0) finish_read(t.req);
  }

  void on_die_op_done(int64_t unit) {
    Die& D = dies_[unit];
    // the finished group moves to a scratch vector (the unit may start its next operation in the loop);
    // the vectors trade buffers, so nothing is allocated per operation
    std::vector<uint32_t>& group = done_group_;
    group.swap(D.group);
    D.group.clear();
    D.busy = false;
    for (uint32_t tx : group) {
      Tx t = txs_[tx];
      free_tx_.push_back(tx);
      if (t.kind == TxKind::Erase) {
        ftl_.erase(t.block);
        GcJob& g = gc_[t.plane];
        g.active = false;
        auto& bl = blocked_[t.plane];
        std::vector<uint32_t> again(bl.begin(), bl.end());
        bl.clear();
        for (uint32_t b : again) enqueue(b);
        maybe_start_gc(t.plane);
      } else if (t.src == TxSource::Gc) {
        gc_page_done(t.plane);
      } else if (t.src == TxSource::Mapping) {
        uint32_t page = uint32_t(int64_t(t.lpa) - ftl_.logical_pages());
        if (departing_[page]) --departing_[page];
      } else if (t.src == TxSource::Cache) {
        cache_program_done(t);
      } else if (--reqs_[t.req].pending == 0) {
        ev_.push(link(up_free_, cqe_time_), {Ev::Complete, t.req});
      }
    }
    group.clear();
    start_die(unit);
  }

  // ---- Flash-Cosmos jobs (compute_jobs.hpp) ------------------------------------------------------------
  // A job's steps are cut into segments, each ending where a page leaves the die (or at the job's end): one Compute
  // transaction per segment, a die's segments queued in order. A page goes where its step routes it: a result to
  // the host; an operand page (OSP) to the host, which combines it; an operand page to the controller's ISP, which
  // combines the job's pages in a slot of its SRAM and sends the result to the host from there. A program segment
  // (a sequential write) is queued once its slices are in the die's latches.
  struct Segment {
    Time die_time{};
    Energy energy{};
    int64_t steps = 0, sensings = 0;
    Route route = Route::None;                 // where its page goes (None: stays in the latches)
    bool first_out = false, last_out = false;  // the job's first / last page out
    int64_t data_in = 0, overlap = 0;          // a program: its slices, and the next program's that may load meanwhile
  };

  const Segment& segment_of(const Tx& t) const { return segs_[size_t(t.block)][t.bits]; }

  void setup_compute() {
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
  bool issue_job(uint32_t die) {
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
    Tx t{TxKind::Compute,
         TxSource::Compute,
         0,
         die,
         0,
         0,
         int64_t(die) * d_.planes_per_die,
         g.route == Route::None ? 0 : int64_t(j.active) * d_.page_size};
    t.sectors = j.active;
    t.block = j.tmpl;
    t.bits = k;
    if (k == 0) ++cr_.jobs;
    if (++cseg_[die] == segs_[j.tmpl].size()) cseg_[die] = 0, ++cnext_[die];
    ++cpending_[die];
    enqueue(new_tx(t));
    return true;
  }

  /// Keeps kComputeAhead segments of `die` queued (fewer at the end of its jobs or before a held program).
  void fill_jobs(uint32_t die) {
    while (cpending_[die] < kComputeAhead && issue_job(die)) {
    }
  }

  /// Over the die's channel: the channel's next free time after `bytes` (energy and busy time counted).
  Time channel_xfer(int64_t plane, int64_t bytes) {
    cr_.channel_bytes += bytes;
    cr_.channel_busy += chan_time_(bytes);
    cr_.nand_io += rates_.channel_io * Bytes(bytes);
    return xfer_end(plane, bytes);
  }

  /// A segment's page leaves the die over the channel; a job's first page for the ISP needs an SRAM slot (its
  /// partial result) first, and waits in the latches for one (the die stays busy).
  void compute_out(uint32_t tx) {
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
  void sensed_to_cache(int64_t unit, uint32_t tx) {
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
  void cache_emptied(int64_t unit, uint32_t tx) {
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
  Time over_pcie(Time& busy, int64_t bytes) {
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
  Time to_host(int64_t bytes) { return over_pcie(up_free_, bytes); }

  /// The host's CPU work on what arrives (`bytes` read from its memory), in arrival order.
  void host_work(Time arrival, Time d, int64_t bytes) {
    host_free_ = std::max(arrival, host_free_) + d;
    cr_.host_busy += d;
    cr_.host_bytes += bytes;
    cr_.dram_access += rates_.dram * Bytes(bytes);
    cr_.total = std::max(cr_.total, host_free_);
  }

  /// A segment has ended (its page crossed the channel, or it had none): the page goes on by its route, and the
  /// die's next segment is queued.
  void job_done(const Tx& t) {
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
        if (g.last_out) ev_.push(isp_free_, {Ev::IspResult, uint32_t(t.sectors)});  // the job's result is ready
        break;
      }
      case Route::None:
        cr_.total = std::max(cr_.total, ev_.now());
        break;
    }
    const uint32_t die = t.req;
    if (g.data_in > 0) wprog_[die] = 0;  // a program ended
    --cpending_[die];
    fill_jobs(die);
    if (write_pages_ > 0) try_data_in(uint32_t(channel_of_plane(t.plane)));
  }

  /// A job's ISP result (`active` pages) goes to the host straight from its SRAM slot, which is free once it has left.
  void on_isp_result(uint32_t active) {
    const int64_t bytes = int64_t(active) * d_.page_size;
    cr_.isp_link_wait += std::max(Time{}, up_free_ - ev_.now());
    const Time at = to_host(bytes);
    if (cs_->host.popcount_result) host_work(at, Bytes(bytes) / rates_.host_popcount, bytes);
    ev_.push(up_free_, {Ev::SlotRelease, active});  // when the transfer ends
  }

  void on_slot_release(uint32_t active) {
    sram_free_ += int64_t(active) * d_.page_size;
    while (!sram_wait_.empty() && sram_free_ >= txs_[sram_wait_.front()].bytes) {  // FIFO: the earliest waiter first
      const uint32_t tx = sram_wait_.front();
      sram_wait_.pop_front();
      compute_out(tx);
    }
  }

  // Sequential writes: the host streams slices over PCIe while the controller's write buffer has room; a channel
  // with no page to move out loads them into its dies round robin.
  void feed_host() {
    while (next_slice_ < cs_->write_slices && buffered_ < buffer_slices_) {
      const Time arrival = over_pcie(down_free_, slice_bytes_);
      ++buffered_;
      const int64_t per_channel = d_.chips_per_channel * d_.dies_per_chip;
      ev_.push(arrival, {Ev::WriteArrive, program_die(next_slice_ / write_pages_, d_.channels, per_channel)});
      ++next_slice_;
    }
  }

  void on_write_arrive(uint32_t die) {
    ++wwait_[die];
    try_data_in(uint32_t(channel_of_plane(int64_t(die) * d_.planes_per_die)));
  }

  /// A slice may load into a die: one waits for it in the buffer, its next program is not complete, and while it
  /// programs only into the latches the program leaves free.
  bool can_load(uint32_t die) const {
    if (wwait_[die] == 0 || wloaded_[die] >= write_pages_) return false;
    return !wprog_[die] || wloaded_[die] < write_overlap_;
  }

  /// The channel, idle, moves the next write slice into one of its dies, round robin from after the last one served.
  void try_data_in(uint32_t ch) {
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

  void on_data_in_done(uint32_t ch) {
    const uint32_t die = din_[ch];
    din_[ch] = kNone;
    ++wloaded_[die];
    --buffered_;
    feed_host();
    if (wheld_[die]) fill_jobs(die);
    try_data_in(ch);
  }

  /// The run's totals: the time, the SSD's active part, the busiest resource.
  void finish_compute() {
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

  // ---- garbage collection ------------------------------------------------------
  void maybe_start_gc(int64_t plane) {
    GcJob& g = gc_[plane];
    if (g.active || !ftl_.needs_gc(plane)) return;
    int64_t v = ftl_.pick_victim(plane);
    if (v < 0) return;
    g.active = true;
    g.victim = v;
    g.outstanding = 1;  // guard
    uint32_t lpa = 0;
    int64_t G = ftl_.pages_per_block();
    for (int64_t pg = ftl_.next_valid(v, 0, lpa); pg < G; pg = ftl_.next_valid(v, pg + 1, lpa)) {
      ++g.outstanding;
      uint32_t ppa = uint32_t(v * G + pg);
      enqueue(new_tx(Tx{TxKind::Read, TxSource::Gc, 0, uint32_t(plane), lpa, ppa, plane, d_.page_size}));
    }
    gc_page_done(plane);
  }

  void gc_page_done(int64_t plane) {
    GcJob& g = gc_[plane];
    if (--g.outstanding > 0) return;
    Tx e{TxKind::Erase, TxSource::Gc, 0, uint32_t(plane), 0, kNone, plane, 0};
    e.block = g.victim;
    enqueue(new_tx(e));
  }

  void dispatch(const Payload& p) {
    switch (p.kind) {
      case Ev::Arrival:
        on_arrival(p.a);
        break;
      case Ev::SqeFetched:
        on_sqe_fetched(p.a);
        break;
      case Ev::WriteDmaDone:
        on_write_dma_done(p.a);
        break;
      case Ev::DramWriteDone:
        on_dram_write_done(p.a);
        break;
      case Ev::DramReadDone:
        on_dram_read_done(p.a);
        break;
      case Ev::EvictionRead:
        on_eviction_read(p.a);
        break;
      case Ev::Complete:
        on_complete(p.a);
        break;
      case Ev::ReadSensed:
        on_read_sensed(p.a);
        break;
      case Ev::XferDone:
        on_xfer_done(p.a);
        break;
      case Ev::DieOpDone:
        on_die_op_done(p.a);
        break;
      case Ev::ChannelIdle:
        on_channel_idle(p.a);
        break;
      case Ev::IspResult:
        on_isp_result(p.a);
        break;
      case Ev::SlotRelease:
        on_slot_release(p.a);
        break;
      case Ev::WriteArrive:
        on_write_arrive(p.a);
        break;
      case Ev::DataInDone:
        on_data_in_done(p.a);
        break;
    }
  }

  nlohmann::json results(double wall) const {
    nlohmann::json flows = nlohmann::json::array();
    Time end{};
    int64_t total = 0;
    for (auto& fl : flows_) end = std::max(end, fl.last_done);
    double secs = std::max(1e-12, to_s(end));
    for (size_t i = 0; i < flows_.size(); ++i) {
      const Flow& fl = flows_[i];
      int64_t n = fl.reads + fl.writes;
      total += n;
      flows.push_back({{"flow", i},
                       {"kind", fl.x->kind == FlowKind::Trace ? "trace" : "synthetic"},
                       {"requests", n},
                       {"reads", fl.reads},
                       {"writes", fl.writes},
                       {"iops", double(n) / secs},
                       {"iops_read", double(fl.reads) / secs},
                       {"iops_write", double(fl.writes) / secs},
                       {"bandwidth_Bps", double(fl.read_bytes + fl.write_bytes) / secs},
                       {"bandwidth_read_Bps", double(fl.read_bytes) / secs},
                       {"bandwidth_write_Bps", double(fl.write_bytes) / secs},
                       {"bytes_read", fl.read_bytes},
                       {"bytes_written", fl.write_bytes},
                       {"device_response_time", fl.dev.json()},
                       {"device_response_time_read", fl.dev_read.json()},
                       {"device_response_time_write", fl.dev_write.json()},
                       {"end_to_end_delay", fl.e2e.json()}});
    }
    const FtlStats& fs = ftl_.stats();
    return {{"flows", flows},
            {"simulated_s", to_s(end)},
            {"requests", total},
            {"iops", double(total) / secs},
            {"ftl",
             {{"host_page_writes", fs.host_page_writes},
              {"gc_page_writes", fs.gc_page_writes},
              {"gc_executions", fs.gc_victims},
              {"erases", fs.erases},
              {"write_amplification", fs.write_amplification()},
              {"max_erase_count", ftl_.max_erase_count()},
              {"mean_erase_count", ftl_.mean_erase_count()},
              {"mapping_entries", ftl_.mapping_entries()},
              {"mapping_page_writes", fs.mapping_page_writes},
              {"cmt_hits", stats_.cmt_hits},
              {"cmt_misses", stats_.cmt_misses},
              {"cmt_write_hits", stats_.cmt_write_hits},
              {"cmt_write_misses", stats_.cmt_write_misses},
              {"translation_reads", stats_.mapping_reads},
              {"translation_writebacks", stats_.mapping_writebacks},
              {"update_reads", stats_.update_reads},
              {"cache_merges", stats_.cache_merges},
              {"cache_read_hits", stats_.cache_read_hits}}},
            {"flash",
             {{"reads", stats_.flash_reads},
              {"programs", stats_.flash_programs},
              {"erases", stats_.flash_erases},
              {"multiplane_ops", stats_.multiplane_ops}}},
            {"wall", {{"seconds", wall}, {"events", ev_.executed()}, {"requests_per_second", wall > 0 ? double(total) / wall : 0.0}}}};
  }

  struct Stats {
    int64_t cmt_hits = 0, cmt_misses = 0, cmt_write_hits = 0, cmt_write_misses = 0, cache_read_hits = 0, cache_merges = 0;
    int64_t mapping_reads = 0, mapping_writebacks = 0, update_reads = 0;
    int64_t flash_reads = 0, flash_programs = 0, flash_erases = 0, multiplane_ops = 0;
  };

  static constexpr size_t kMaxBacklog = size_t(1) << 18;  // requests waiting on the host per flow (~15 MB)
  WorkEstimate work_;
  const DeviceXml& d_;
  const RunOptions& opt_;
  SsdModelOptions M_;
  Ftl ftl_;
  // Flash-Cosmos jobs (with a JobSpec): per die the next job to queue and the jobs queued or running
  static constexpr int64_t kComputeAhead = 2;
  const JobSpec* cs_ = nullptr;
  ComputeRates rates_;
  std::vector<std::vector<Segment>> segs_;  // per step template
  std::vector<size_t> cnext_;               // per die: its job of the next segment to queue
  std::vector<uint32_t> cseg_;              // per die: that segment
  std::vector<int64_t> cpending_;           // per die: segments queued or running
  std::deque<uint32_t> sram_wait_;          // first ISP pages waiting for an SRAM slot
  int64_t sram_free_ = 0;
  Time isp_free_{}, host_free_{}, ssd_end_{};
  // sequential writes: slices per program, of the next program that may load while one runs, bytes of a slice,
  // slices the write buffer holds, the next slice to stream, slices in the buffer; per die: slices waiting in the
  // buffer, in its latches, claimed by its queued program, programming now, a program held for its slices; per
  // channel: the die it is loading (kNone: none), the die after the last one loaded
  int64_t write_pages_ = 0, write_overlap_ = 0, slice_bytes_ = 0, buffer_slices_ = 0, next_slice_ = 0, buffered_ = 0;
  std::vector<int64_t> wwait_, wloaded_, wclaimed_;
  std::vector<uint8_t> wprog_, wheld_;
  std::vector<uint32_t> din_;
  std::vector<int64_t> din_rr_;
  ComputeResult cr_;
  EventHeap<Payload> ev_;
  std::vector<Flow> flows_;
  std::vector<Request> reqs_;
  std::vector<uint32_t> free_req_;
  std::vector<uint32_t> pending_trace_;
  std::vector<Tx> txs_;
  std::vector<uint32_t> free_tx_;
  std::vector<Die> dies_;
  std::vector<GcJob> gc_;
  std::vector<std::deque<uint32_t>> blocked_;
  std::vector<Time> channel_free_;
  Time down_free_{}, up_free_{};
  std::vector<std::unique_ptr<Cmt>> cmt_;
  std::vector<std::unique_ptr<WriteCache>> cache_;
  std::vector<int64_t> depth_;  // sectors being programmed from each cache partition
  int64_t max_depth_ = INT64_MAX;
  std::vector<std::vector<uint32_t>> waiting_;  // cached writes not yet wholly in the cache
  std::vector<std::vector<WriteCache::Slot>> batches_;
  std::vector<uint32_t> free_batch_;
  FlatMap32 hot_{1024};
  Time next_hot_reset_{}, dram_free_{};
  uint32_t version_ = 0;
  // per translation page: the transactions waiting for its read (kNone: none yet; kNotArriving: no read in
  // flight), and how many of its write-backs are still to be programmed (MQSim's departing entries)
  static constexpr uint32_t kNotArriving = 0xFFFFFFFEu;
  std::vector<uint32_t> arriving_, departing_;
  FlatMap32 partial_{1024};
  std::vector<uint32_t> park_next_, scratch_, done_group_;
  std::vector<int32_t> die_of_;      // die of each plane
  std::vector<uint8_t> pin_of_;      // plane in its die of each plane
  std::vector<int32_t> unit_of_;     // scheduling unit (chip or die) of each plane
  std::vector<int32_t> channel_of_;  // channel of each plane
  // issue_on_idle_channel: channel of each unit, units of each channel, the next unit to serve, a wake-up pending
  std::vector<int32_t> channel_of_unit_;
  std::vector<std::vector<int64_t>> units_of_channel_;
  std::vector<uint32_t> rr_of_channel_;
  std::vector<uint8_t> channel_wake_;
  std::vector<int64_t> lpa0_;     // first logical page of each flow
  std::vector<uint32_t> tpage0_;  // first translation page of each flow (and one past the last)
  int64_t spp_ = 16, sq_depth_ = 1, entries_per_tpage_ = 1, gtd_entry_ = 1, grp_ = 1;
  uint32_t full_bits_ = 0;
  bool ideal_map_ = false;
  Bandwidth xfer_rate_{}, pcie_{};
  // transfer times, computed once: a command and a completion over PCIe, data over PCIe (alone and with a
  // completion) and over a channel, and the DRAM access of each multiple of 512 B up to the limit
  Time sqe_time_{}, cqe_time_{};
  XferTimes pcie_data_, pcie_read_cqe_, chan_time_;
  std::vector<Time> dram_times_;
  int64_t completed_ = 0;
  Stats stats_;
};

}  // namespace

nlohmann::json simulate_scenario(const DeviceXml& device, const ScenarioXml& scenario, const RunOptions& opt, const std::string& label) {
  try {
    Sim sim(device, scenario, opt, nullptr, {}, label);
    nlohmann::json j = sim.run();
    j["work_estimate"] = {{"requests", sim.work().requests}, {"page_transactions", sim.work().page_transactions}};
    return j;
  } catch (const std::bad_alloc&) {
    // what grows with the inputs: the tables of the device's pages and translation pages, and the requests in flight
    throw ConfigError(fmt::format(
        "{}: {}: out of memory: the device's {} pages (<Flash_Channel_Count> {} x <Chip_No_Per_Channel> {} x <Die_No_Per_Chip> {} x "
        "<Plane_No_Per_Die> {} x <Block_No_Per_Plane> {} x <Page_No_Per_Block> {}) and the scenario's requests need more memory "
        "than this machine has",
        device.file, label, device.pages(), device.channels, device.chips_per_channel, device.dies_per_chip, device.planes_per_die,
        device.blocks_per_plane, device.pages_per_block));
  }
}

nlohmann::json simulate_workload(const DeviceXml& device, const WorkloadXml& workload, const RunOptions& opt) {
  check_workload(workload, device);
  nlohmann::json out = {{"device", device.file}, {"workload", workload.file}, {"defaults_used", device.defaulted}};
  // The device as resolved (the file's values, MQSim's defaults for what it left out, --set overrides) and the
  // model's switches: a result says what it was computed from.
  out["resolved"] = {{"ssd_device", dump_params(static_cast<const DeviceParams&>(device))}, {"ssd_model", dump_params(opt.model)}};
  nlohmann::json sc = nlohmann::json::array();
  for (size_t i = 0; i < workload.scenarios.size(); ++i)
    sc.push_back(simulate_scenario(device, workload.scenarios[i], opt, fmt::format("{}: scenario {}", workload.file, i + 1)));
  out["scenarios"] = sc;
  return out;
}

ComputeResult run_compute(const JobSpec& spec, const DeviceXml& device, const SsdModelOptions& model, const ComputeRates& rates) {
  RunOptions opt;
  opt.model = model;
  const ScenarioXml none;  // no host flows: the device serves the jobs alone
  Sim sim(device, none, opt, &spec, rates);
  sim.run();
  return sim.compute_result();
}

}  // namespace bitline::ssd
