// The general SSD's parts (internal to src/ssd; included by device_sim.hpp): the transaction and request records,
// the event kinds, the per-unit queues, the write cache, latency histograms, and what each of MQSim's choices means
// for a flow. Nothing here is an interface for users: ssd/device.hpp is.
#pragma once

#include <cassert>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/stats.hpp"
#include "ssd/cmt.hpp"
#include "ssd/compute_jobs.hpp"
#include "ssd/ftl.hpp"
#include "ssd/io_stats.hpp"
#include "ssd/mqsim_xml.hpp"
#include "ssd/run_options.hpp"

namespace bitline::ssd::detail {
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
  /// The histogram's figures in microseconds (0 where it holds no sample), read when the tree is dumped.
  void register_stats(StatGroup& g) const {
    g.derived(
        "mean_us", [this] { return mean_us(); }, "mean (us)");
    g.derived(
        "min_us", [this] { return n_ ? double(min_) * 1e-6 : 0.0; }, "shortest (us)");
    g.derived(
        "max_us", [this] { return n_ ? double(max_) * 1e-6 : 0.0; }, "longest (us)");
    g.derived(
        "p50_us", [this] { return percentile_us(0.5); }, "median (us; within 1/64)");
    g.derived(
        "p99_us", [this] { return percentile_us(0.99); }, "99th percentile (us; within 1/64)");
    g.derived(
        "p999_us", [this] { return percentile_us(0.999); }, "99.9th percentile (us; within 1/64)");
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
// Fold: the SLC cache's move of a cached page to its TLC place (slc_cache.cpp: an SLC read and a page program).
enum class TxKind : uint8_t { Read, Program, Erase, Compute, Fold };
// Where a transaction comes from, and so what its owner is (Tx's named constructors and accessors below):
// User: a host request's page (its request); Cache: a page written back from the write cache (its cache version);
// Update: the read of a partial write's other sectors (its program transaction); Mapping: a translation page read
// or programmed (lpa = the translation page's key); Gc: a relocation read or program, or an erase (its plane);
// Compute: a segment of a compute job (its JobSegment); Fold: the SLC cache's fold of a page, or the erase of an SLC
// block (the cached pages it frees).
enum class TxSource : uint8_t { User, Cache, Update, Mapping, Gc, Compute, Fold };

/// A compute transaction's payload: which die's job, which segment of which step template, on how many planes.
struct JobSegment {
  uint32_t die = 0;
  uint32_t segment = 0;  // in its template's segments
  uint16_t tmpl = 0;     // the job's step template
  uint16_t active = 0;   // the job's planes
};

/// One flash transaction. Built by source with the named constructors, never field by field, and its owner read
/// through the accessor of its source (each checks the source in debug builds), so a field never changes meaning
/// silently. The record stays flat (no variant) because the die queues copy it on the hot path.
struct Tx {
  TxKind kind{};
  TxSource src{};
  uint16_t flow = 0;
  uint32_t lpa = 0;
  uint32_t ppa = 0;  // read / erase target (block's first page) / GC read source
  int64_t plane = 0;
  int64_t bytes = 0;    // over the channel
  int64_t sectors = 0;  // user read: sectors of the page it serves; program: sectors written
  uint32_t bits = 0;    // program: written-sector groups
  int64_t block = -1;   // erase: the block
  JobSegment job{};     // Compute

  /// A host request's page: `sectors` of it read, or programmed (written-sector groups `bits`); the plane is chosen at
  /// issue.
  static Tx user(TxKind k, uint32_t flow, uint32_t request, uint32_t lpa, int64_t sectors, uint32_t bits = 0) {
    Tx t = make(k, TxSource::User, flow, request, lpa, kNone, 0, sectors * 512);
    t.sectors = sectors;
    t.bits = bits;
    return t;
  }
  /// `sectors` of a page of the write cache (its groups `bits`) written back at cache version `version`.
  static Tx cache_writeback(uint32_t flow, uint32_t version, uint32_t lpa, int64_t sectors, uint32_t bits) {
    Tx t = make(TxKind::Program, TxSource::Cache, flow, version, lpa, kNone, 0, sectors * 512);
    t.sectors = sectors;
    t.bits = bits;
    return t;
  }
  /// The read of a partial write's other sectors, before its program transaction `program` may go.
  static Tx update_read(uint32_t flow, uint32_t program, uint32_t lpa, uint32_t ppa, int64_t plane, int64_t sectors) {
    Tx t = make(TxKind::Read, TxSource::Update, flow, program, lpa, ppa, plane, sectors * 512);
    t.sectors = sectors;
    return t;
  }
  /// A translation page (key `lpa`) read from `ppa`, or programmed on `plane` (all its `sectors`).
  static Tx mapping_read(uint32_t flow, uint32_t key, uint32_t ppa, int64_t plane, int64_t bytes) {
    return make(TxKind::Read, TxSource::Mapping, flow, kNone, key, ppa, plane, bytes);
  }
  static Tx mapping_program(uint32_t flow, uint32_t key, int64_t plane, int64_t sectors) {
    Tx t = make(TxKind::Program, TxSource::Mapping, flow, kNone, key, kNone, plane, sectors * 512);
    t.sectors = sectors;
    return t;
  }
  /// GC on `plane`: the read of a valid page to relocate, its program, the victim block's erase.
  static Tx gc_read(int64_t plane, uint32_t lpa, uint32_t ppa, int64_t bytes) {
    return make(TxKind::Read, TxSource::Gc, 0, uint32_t(plane), lpa, ppa, plane, bytes);
  }
  static Tx gc_program(const Tx& read) {
    return make(TxKind::Program, TxSource::Gc, 0, read.owner_, read.lpa, read.ppa, read.plane, read.bytes);
  }
  static Tx gc_erase(int64_t plane, int64_t block) {
    Tx t = make(TxKind::Erase, TxSource::Gc, 0, uint32_t(plane), 0, kNone, plane, 0);
    t.block = block;
    return t;
  }
  /// A segment of a compute job, on its die's first plane (the one transaction holds all the job's planes).
  static Tx compute(JobSegment j, int64_t first_plane, int64_t bytes) {
    Tx t = make(TxKind::Compute, TxSource::Compute, 0, 0, 0, 0, first_plane, bytes);
    t.job = j;
    return t;
  }

  /// The SLC cache on `plane`: the fold of `pages` cached pages (mapping units of one flash page; 1 with page-level
  /// mapping) whose TLC places start at `ppa`, and the erase of an SLC block holding `pages` cached pages (all folded).
  static Tx fold(int64_t plane, uint32_t ppa, uint32_t pages) { return make(TxKind::Fold, TxSource::Fold, 0, pages, 0, ppa, plane, 0); }
  static Tx slc_erase(int64_t plane, int64_t pages) { return make(TxKind::Erase, TxSource::Fold, 0, uint32_t(pages), 0, kNone, plane, 0); }

  uint32_t request() const { return owner(TxSource::User); }
  uint32_t cache_version() const { return owner(TxSource::Cache); }
  uint32_t update_program() const { return owner(TxSource::Update); }
  uint32_t slc_pages() const { return owner(TxSource::Fold); }

 private:
  uint32_t owner_ = 0;  // by source: see TxSource
  static Tx make(TxKind k, TxSource s, uint32_t flow, uint32_t owner, uint32_t lpa, uint32_t ppa, int64_t plane, int64_t bytes) {
    Tx t;
    t.kind = k;
    t.src = s;
    t.flow = uint16_t(flow);
    t.owner_ = owner;
    t.lpa = lpa;
    t.ppa = ppa;
    t.plane = plane;
    t.bytes = bytes;
    return t;
  }
  uint32_t owner(TxSource s) const {
    assert(src == s);
    (void)s;
    return owner_;
  }
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
  DataInDone,   // a write slice is in its die's latches (a = the channel)
  SlcIdle       // the host has been idle slc_idle_delay since its activity count was a (SLC cache: folding)
};
struct Payload {
  Ev kind;
  uint32_t a;
};
/// The event heap's lane of an event (core/event_queue.hpp): its kind. Events of a kind mostly come in time order
/// (a Flash-Cosmos run's sensing ends, transfers, ISP results: all but about one in a million).
inline int event_lane(const Payload& p) { return int(p.kind); }
static_assert(int(Ev::SlcIdle) < kEventLanes, "an event kind past the event heap's lanes");

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

struct alignas(64) Die {
  // (the fields every operation touches first, in the die's first cache line; then the queues)
  uint32_t nonempty = 0;  // bit l: q[l] holds a transaction
  bool busy = false;
  // cache read (Flash-Cosmos operations): the transaction whose page is in the cache latch, one sensed waiting for it
  uint32_t c_tx = UINT32_MAX, s_tx = UINT32_MAX;
  // when the latch's page has crossed the channel (its XferDone), once scheduled; below 0 while it waits for an ISP
  // SRAM slot (not known yet)
  Time latch_until{-1};
  int64_t pending_xfers = 0;
  std::vector<uint32_t> group;  // transactions of the running operation
  // queues by level: mapping reads, reads of classes 0..3, mapping programs, programs of classes 0..3, GC, SLC folds
  std::array<TxQueue, 12> q;
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
};

/// Bytes of the requests completed in each bin of simulated time (ssd run --throughput-bin). At most kMaxBins bins: a
/// run that goes past them doubles the bin width, merging neighbours, so memory stays bounded whatever its length.
class BandwidthSeries {
 public:
  static constexpr size_t kMaxBins = size_t(1) << 16;
  explicit BandwidthSeries(Time bin = {}) : bin_(bin) {}
  bool on() const { return bin_.raw() > 0; }
  void add(Time t, int64_t b) {
    size_t i = size_t(t.raw() / bin_.raw());
    while (i >= kMaxBins) {
      for (size_t k = 0; k < bytes_.size(); ++k) bytes_[k / 2] = (k % 2 ? bytes_[k / 2] : 0) + bytes_[k];
      bytes_.resize((bytes_.size() + 1) / 2);
      bin_ = bin_ * 2.0;
      i = size_t(t.raw() / bin_.raw());
    }
    if (i >= bytes_.size()) bytes_.resize(i + 1, 0);
    bytes_[i] += b;
  }
  nlohmann::json json() const { return {{"bin_s", to_s(bin_)}, {"bytes", bytes_}}; }

 private:
  Time bin_;
  std::vector<int64_t> bytes_;
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
inline int priority_class(Scheduling s, Priority p) {
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
inline CacheUse cache_use(CachingMode m) {
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
inline bool closed_loop(Generator g) {
  switch (g) {
    case Generator::QueueDepth:
      return true;
    case Generator::Bandwidth:
      return false;
  }
  throw std::logic_error("unhandled generator");
}

inline bool normal_size(SizeDistribution s) {
  switch (s) {
    case SizeDistribution::Fixed:
      return false;
    case SizeDistribution::Normal:
      return true;
  }
  throw std::logic_error("unhandled size distribution");
}

/// SHARED: one table or cache for all flows; otherwise one per flow.
inline bool shared(CmtSharing s) {
  switch (s) {
    case CmtSharing::Shared:
      return true;
    case CmtSharing::EqualSizePartitioning:
      return false;
  }
  throw std::logic_error("unhandled CMT sharing mode");
}
inline bool shared(DataCacheSharing s) {
  switch (s) {
    case DataCacheSharing::Shared:
      return true;
    case DataCacheSharing::EqualPartitioning:
      return false;
  }
  throw std::logic_error("unhandled data cache sharing mode");
}

/// MQSim's estimate of a cache DRAM access of b bytes: tRCD + tCL + bursts at the data rate, a row at a time.
inline Time cache_dram_time(const DeviceXml& d, int64_t b) {
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
  std::unique_ptr<FlowIoStats> io;  // RunOptions::io_stats: fio's view, counted from FlowXml::stats_from
};

}  // namespace bitline::ssd::detail
