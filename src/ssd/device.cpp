#include "ssd/device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>

#include "core/error.hpp"
#include "core/event_queue.hpp"
#include "core/rng.hpp"
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
    return {{"mean_us", mean_us()},
            {"min_us", n_ ? double(min_) * 1e-6 : 0},
            {"max_us", n_ ? double(max_) * 1e-6 : 0},
            {"p50_us", percentile_us(0.5)},
            {"p99_us", percentile_us(0.99)},
            {"p999_us", percentile_us(0.999)}};
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

/// MQSim's cached mapping table: an LRU of logical pages.
class Cmt {
 public:
  explicit Cmt(size_t capacity) : cap_(capacity), index_(std::min<size_t>(capacity, 1 << 16) * 2) {}
  /// True on a hit (and refreshes it).
  bool touch(uint32_t lpa) {
    if (uint32_t* s = index_.find(lpa)) {
      unlink(*s);
      push_front(*s);
      return true;
    }
    return false;
  }
  void insert(uint32_t lpa) {
    if (cap_ == 0 || touch(lpa)) return;
    uint32_t slot;
    if (key_.size() < cap_) {
      slot = uint32_t(key_.size());
      key_.push_back(lpa);
      prev_.push_back(kNone);
      next_.push_back(kNone);
    } else {
      slot = tail_;
      unlink(slot);
      index_.erase(key_[slot]);
      key_[slot] = lpa;
    }
    index_.set(lpa, slot);
    push_front(slot);
  }
  size_t bytes() const { return index_.bytes() + key_.capacity() * 12; }

 private:
  void unlink(uint32_t s) {
    if (prev_[s] != kNone) next_[prev_[s]] = next_[s]; else head_ = next_[s];
    if (next_[s] != kNone) prev_[next_[s]] = prev_[s]; else tail_ = prev_[s];
  }
  void push_front(uint32_t s) {
    prev_[s] = kNone;
    next_[s] = head_;
    if (head_ != kNone) prev_[head_] = s;
    head_ = s;
    if (tail_ == kNone) tail_ = s;
  }
  size_t cap_;
  FlatMap32 index_;
  std::vector<uint32_t> key_, prev_, next_;
  uint32_t head_ = kNone, tail_ = kNone;
};

enum class TxKind : uint8_t { Read, Program, Erase };
enum class TxSource : uint8_t { User, Mapping, Gc };

struct Tx {
  TxKind kind;
  TxSource src;
  uint32_t req;      // user: request; gc: plane
  uint32_t lpa;
  uint32_t ppa;      // read / erase target (block's first page) / GC read source
  int64_t plane;
  int64_t bytes;     // over the channel
  int64_t cache_bytes = 0;
  int64_t block = -1;
};

struct Request {
  uint32_t flow;
  bool read;
  int64_t lba, sectors;
  Time arrival, enqueued;
  int32_t pending = 0;   // flash reads (read) or uncached programs (write) still to finish
  int32_t programs = 0;  // cached write: programs still to finish after the host got its completion
  bool host_done = false;
};

enum class Ev : uint8_t { Arrival, SqeFetched, WriteDmaDone, CacheAdmitted, Complete, ReadSensed, XferDone, DieOpDone };
struct Payload {
  Ev kind;
  uint32_t a;
};

struct Die {
  // queues by level: [class 0..3][read, write], then GC/mapping traffic
  std::array<std::deque<uint32_t>, 9> q;
  bool busy = false;
  std::vector<uint32_t> group;  // transactions of the running operation
  int64_t pending_xfers = 0;
};

struct GcJob {
  bool active = false;
  int64_t victim = -1;
  int64_t outstanding = 0;
};

struct Flow {
  const FlowXml* x;
  int priority;  // 0 urgent .. 3 low
  bool write_cache;
  int64_t start_lba, end_lba;  // the flow's address range [start, end) in sectors (working set for synthetic)
  int64_t range_end;           // the whole range (trace wrap)
  Rng rng{1};
  std::unique_ptr<TraceReader> trace;
  int64_t trace_limit = 0, trace_done = 0, replay = 0;
  Time replay_offset{}, last_arrival{};
  int64_t generated = 0;
  bool stopped = false;
  int64_t outstanding = 0;
  std::deque<uint32_t> backlog;  // requests that arrived while the submission queue was full
  int64_t stream_next = 0;
  // results
  LatencyHist dev, e2e, dev_read, dev_write;
  int64_t reads = 0, writes = 0, read_bytes = 0, write_bytes = 0;
  Time first_arrival{INT64_MAX}, last_done{};
};

class Sim {
 public:
  Sim(const DeviceXml& d, const ScenarioXml& s, const RunOptions& opt) : d_(d), s_(s), opt_(opt), ftl_(d) {
    dies_.resize(size_t(d.dies()));
    gc_.resize(size_t(d.planes()));
    blocked_.resize(size_t(d.planes()));
    channel_free_.assign(size_t(d.channels), Time{});
    spp_ = d.sectors_per_page();
    xfer_rate_ = bytes_per_s(double(d.channel_transfer_rate) * 1e6 * double(d.channel_width));
    pcie_ = bytes_per_s(d.pcie_lane_bandwidth_gbps * 1e9 * double(d.pcie_lane_count));
    int64_t nflows = int64_t(s.flows.size());
    int64_t logical_sectors = d.logical_pages() * spp_;
    int64_t per_flow = logical_sectors / nflows;
    sq_depth_ = d.io_queue_depth;
    // CMT: MQSim's entry is (2 log2(pages) + sectors per page) bits; translation pages hold page / GTD entry entries
    double lg = std::log2(double(d.pages()));
    int64_t cmt_entry = int64_t(std::ceil((2 * lg + double(spp_)) / 8));
    int64_t gtd_entry = int64_t(std::ceil((lg + double(spp_)) / 8));
    entries_per_tpage_ = std::max<int64_t>(1, d.page_size / gtd_entry);
    int64_t cmt_entries = d.cmt_capacity / cmt_entry;
    if (cmt_entries > (int64_t(1) << 31)) cmt_entries = int64_t(1) << 31;
    ideal_map_ = d.ideal_mapping_table;
    int ncmt = d.cmt_sharing == "SHARED" ? 1 : int(nflows);
    for (int i = 0; i < ncmt; ++i) cmt_.push_back(std::make_unique<Cmt>(size_t(cmt_entries / ncmt)));
    int ncache = d.data_cache_sharing == "SHARED" ? 1 : int(nflows);
    cache_cap_.assign(size_t(ncache), d.data_cache_capacity / ncache);
    cache_used_.assign(size_t(ncache), 0);
    cache_wait_.resize(size_t(ncache));
    std::vector<std::pair<uint64_t, uint64_t>> precond;
    for (int64_t f = 0; f < nflows; ++f) {
      const FlowXml& x = s.flows[f];
      Flow fl;
      fl.x = &x;
      fl.priority = d.scheduling == "PRIORITY_OUT_OF_ORDER"
                        ? (x.priority == "URGENT" ? 0 : x.priority == "HIGH" ? 1 : x.priority == "MEDIUM" ? 2 : 3)
                        : 1;
      fl.write_cache = x.caching_mode == "WRITE_CACHE" || x.caching_mode == "WRITE_READ_CACHE";
      fl.start_lba = f * per_flow;
      fl.range_end = fl.start_lba + per_flow;
      fl.end_lba = x.kind == FlowKind::Synthetic ? fl.start_lba + std::max<int64_t>(1, int64_t(double(per_flow) * x.working_set))
                                                 : fl.range_end;
      fl.rng = Rng::derive(uint64_t(x.seed) * 1000003u + uint64_t(f), "flow");
      if (x.kind == FlowKind::Trace) {
        fl.trace = std::make_unique<TraceReader>(x.trace_path);
        int64_t n = fl.trace->count();
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
  }

  nlohmann::json run() {
    auto wall0 = std::chrono::steady_clock::now();
    for (uint32_t f = 0; f < flows_.size(); ++f) {
      Flow& fl = flows_[f];
      if (fl.x->kind == FlowKind::Synthetic && fl.x->generator == "QUEUE_DEPTH") {
        for (int64_t i = 0; i < fl.x->queue_depth; ++i) generate(f, Time{});
      } else {
        ev_.push(Time{}, {Ev::Arrival, f});
      }
    }
    auto last_report = wall0;
    while (!ev_.empty()) {
      auto e = ev_.pop();
      dispatch(e.payload);
      if ((ev_.executed() & 0xFFFF) == 0 && opt_.progress) {
        auto now = std::chrono::steady_clock::now();
        if (now - last_report > std::chrono::seconds(2)) {
          last_report = now;
          opt_.progress(to_s(ev_.now()), completed_);
        }
      }
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return results(wall);
  }

 private:
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
    reqs_[id] = Request{f, read, lba, sectors, arrival, arrival, 0, 0, false};
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
    int64_t size = x.avg_size;
    if (x.size_distribution == "NORMAL" && x.size_variance > 0) {
      double u1 = 1.0 - fl.rng.uniform(), u2 = fl.rng.uniform();
      double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
      size = std::max<int64_t>(1, std::llround(double(x.avg_size) + z * std::sqrt(double(x.size_variance))));
    }
    int64_t span = fl.end_lba - fl.start_lba;
    size = std::min(size, span);
    bool read = fl.rng.chance(x.read_ratio);
    int64_t lba;
    if (x.address_distribution == "STREAMING") {
      if (fl.stream_next + size > span) fl.stream_next = 0;
      lba = fl.start_lba + fl.stream_next;
      fl.stream_next += size;
    } else {
      int64_t lo = 0, hi = span - size + 1;
      if (x.address_distribution == "RANDOM_HOTCOLD") {
        // 90% of the accesses go to the hot region (the first Percentage_of_Hot_Region of the working set)
        int64_t hot = std::max<int64_t>(1, int64_t(double(span) * x.hot_region));
        if (fl.rng.chance(0.9)) hi = std::min(hi, hot);
        else lo = std::min(hot, hi - 1);
      }
      lba = fl.start_lba + lo + int64_t(fl.rng.below(uint64_t(std::max<int64_t>(1, hi - lo))));
    }
    if (x.aligned && x.alignment_unit > 1) {
      lba -= lba % x.alignment_unit;
      if (lba < fl.start_lba) lba = fl.start_lba;
    }
    arrive(new_request(f, read, lba, size, t), t);
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
    Time at = fl.replay_offset + Time(r.arrival_raw * x.time_unit.raw());
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
    if (fl.outstanding < sq_depth_) submit(id);
    else {
      if (fl.backlog.size() >= (size_t(1) << 24))
        throw ModelError("host backlog exceeds 16 Mi requests: the arrival rate far exceeds what the device serves");
      fl.backlog.push_back(id);
    }
  }

  /// Enters the submission queue: the device fetches the command over the link.
  void submit(uint32_t id) {
    Request& r = reqs_[id];
    ++flows_[r.flow].outstanding;
    r.enqueued = ev_.now();
    ev_.push(link(down_free_, bytes(kSqeBytes)), {Ev::SqeFetched, id});
  }

  Time link(Time& busy, Bytes b) {
    Time start = std::max(ev_.now(), busy);
    busy = start + b / pcie_;
    return busy;
  }

  void on_sqe_fetched(uint32_t id) {
    Request& r = reqs_[id];
    if (r.read) {
      issue_reads(id);
    } else {
      ev_.push(link(down_free_, bytes(r.sectors * 512)), {Ev::WriteDmaDone, id});
    }
  }

  // ---- reads -----------------------------------------------------------------
  template <class F>
  void for_each_page(const Request& r, F f) {
    int64_t lba = r.lba, end = r.lba + r.sectors;
    while (lba < end) {
      int64_t lpa = lba / spp_;
      int64_t n = std::min(end, (lpa + 1) * spp_) - lba;
      f(uint32_t(lpa), n);
      lba += n;
    }
  }

  Cmt& cmt_of(uint32_t flow) { return *cmt_[cmt_.size() == 1 ? 0 : flow]; }

  void issue_reads(uint32_t id) {
    Request& r = reqs_[id];
    r.pending = 1;  // guard while issuing
    for_each_page(r, [&](uint32_t lpa, int64_t n) {
      if (const uint32_t* c = cached_.find(lpa); c && *c > 0) {
        ++stats_.cache_read_hits;
        return;
      }
      ++r.pending;
      if (ideal_map_ || cmt_of(r.flow).touch(lpa)) {
        ++stats_.cmt_hits;
        data_read(id, lpa, n);
      } else {
        ++stats_.cmt_misses;
        // the translation page of this logical page, one sector of it read from flash
        uint32_t mvpn = uint32_t(int64_t(lpa) / entries_per_tpage_);
        uint32_t mppa = ftl_.unwritten_ppa(uint32_t(int64_t(ftl_.logical_pages()) + mvpn) % uint32_t(ftl_.logical_pages()));
        enqueue(new_tx(Tx{TxKind::Read, TxSource::Mapping, id, lpa, mppa, ftl_.plane_of_ppa(mppa), 512, n}));
      }
    });
    if (--r.pending == 0) finish_read(id);
  }

  void data_read(uint32_t id, uint32_t lpa, int64_t sectors) {
    uint32_t ppa = ftl_.lookup(lpa);
    if (ppa == FlatMap32::kEmpty) ppa = ftl_.unwritten_ppa(lpa);
    enqueue(new_tx(Tx{TxKind::Read, TxSource::User, id, lpa, ppa, ftl_.plane_of_ppa(ppa), sectors * 512}));
  }

  void finish_read(uint32_t id) {
    Request& r = reqs_[id];
    Time t = link(up_free_, bytes(r.sectors * 512 + kCqeBytes));
    ev_.push(t, {Ev::Complete, id});
  }

  // ---- writes ----------------------------------------------------------------
  int cache_of(uint32_t flow) const { return cache_cap_.size() == 1 ? 0 : int(flow); }

  void on_write_dma_done(uint32_t id) {
    Request& r = reqs_[id];
    Flow& fl = flows_[r.flow];
    int64_t b = r.sectors * 512;
    int c = cache_of(r.flow);
    if (!fl.write_cache || b > cache_cap_[c]) {
      issue_programs(id, false);
      return;
    }
    if (cache_wait_[c].empty() && cache_used_[c] + b <= cache_cap_[c]) admit(id);
    else cache_wait_[c].push_back(id);
  }

  Time dram_time(int64_t b) const {
    double burst_ns = 1e3 / double(d_.dram_data_rate);
    double t = double(d_.dram_trcd + d_.dram_tcl) + double(std::min(b, d_.dram_row_size) / d_.dram_burst_size / 2) * burst_ns;
    if (b > d_.dram_row_size)
      t += double(b / d_.dram_row_size) * double(d_.dram_trp + d_.dram_trcd + d_.dram_tcl);
    return ns(t);
  }

  void admit(uint32_t id) {
    Request& r = reqs_[id];
    cache_used_[cache_of(r.flow)] += r.sectors * 512;
    ev_.push(ev_.now() + dram_time(r.sectors * 512), {Ev::CacheAdmitted, id});
  }

  void on_cache_admitted(uint32_t id) {
    issue_programs(id, true);
    ev_.push(link(up_free_, bytes(kCqeBytes)), {Ev::Complete, id});
  }

  void issue_programs(uint32_t id, bool cached) {
    Request& r = reqs_[id];
    r.pending = 0;
    r.programs = 0;
    for_each_page(r, [&](uint32_t lpa, int64_t n) {
      if (!ideal_map_) cmt_of(r.flow).insert(lpa);
      if (cached) {
        ++r.programs;
        if (uint32_t* c = cached_.find(lpa)) ++*c;
        else cached_.set(lpa, 1);
      } else {
        ++r.pending;
      }
      Tx t{TxKind::Program, TxSource::User, id, lpa, kNone, ftl_.plane_of(lpa), n * 512};
      t.cache_bytes = cached ? n * 512 : 0;
      enqueue(new_tx(t));
    });
  }

  void release_cache(uint32_t flow, uint32_t lpa, int64_t b) {
    if (uint32_t* c = cached_.find(lpa)) {
      if (--*c == 0) cached_.erase(lpa);
    }
    int c = cache_of(flow);
    cache_used_[c] -= b;
    while (!cache_wait_[c].empty()) {
      uint32_t w = cache_wait_[c].front();
      if (cache_used_[c] + reqs_[w].sectors * 512 > cache_cap_[c]) break;
      cache_wait_[c].pop_front();
      admit(w);
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
    r.host_done = true;
    if (r.programs == 0) free_req_.push_back(id);  // a cached write's slot lives until its programs end
    if (!fl.backlog.empty()) {
      uint32_t next = fl.backlog.front();
      fl.backlog.pop_front();
      submit(next);
    }
    if (fl.x->kind == FlowKind::Synthetic && fl.x->generator == "QUEUE_DEPTH") generate(r.flow, now);
  }

  // ---- transactions and dies ---------------------------------------------------
  uint32_t new_tx(const Tx& t) {
    uint32_t id;
    if (!free_tx_.empty()) {
      id = free_tx_.back();
      free_tx_.pop_back();
      txs_[id] = t;
    } else {
      id = uint32_t(txs_.size());
      txs_.push_back(t);
    }
    return id;
  }

  size_t level(const Tx& t) const {
    if (t.src == TxSource::Gc) return 8;
    int cls = flows_[reqs_[t.req].flow].priority;
    return size_t(cls * 2 + (t.kind == TxKind::Read ? 0 : 1));
  }

  void enqueue(uint32_t tx) {
    const Tx& t = txs_[tx];
    int64_t die = ftl_.die_of_plane(t.plane);
    dies_[die].q[level(t)].push_back(tx);
    if (!dies_[die].busy) start_die(die);
  }

  bool ready(const Tx& t) {
    if (t.kind != TxKind::Program) return true;
    return ftl_.can_allocate(t.plane, t.src == TxSource::Gc);
  }

  /// Starts the highest-priority ready transaction on an idle die, with same-kind transactions
  /// on its other planes (multi-plane operation).
  void start_die(int64_t die) {
    Die& D = dies_[die];
    if (D.busy) return;
    while (true) {
      uint32_t first = kNone;
      size_t lvl = 0;
      for (; lvl < D.q.size() && first == kNone; ++lvl) {
        auto& q = D.q[lvl];
        while (!q.empty()) {
          uint32_t tx = q.front();
          q.pop_front();
          if (!ready(txs_[tx])) {
            blocked_[txs_[tx].plane].push_back(tx);  // no free page until GC erases a block
            maybe_start_gc(txs_[tx].plane);
            continue;
          }
          first = tx;
          break;
        }
      }
      if (first == kNone) return;
      --lvl;
      D.group.assign(1, first);
      const Tx& f = txs_[first];
      if (f.kind != TxKind::Erase && d_.planes_per_die > 1) {
        uint32_t used_planes = 1u << ftl_.plane_in_die(f.plane);
        for (size_t l = lvl; l < D.q.size() && int64_t(D.group.size()) < d_.planes_per_die; ++l) {
          auto& q = D.q[l];
          for (size_t i = 0; i < q.size() && i < 32 && int64_t(D.group.size()) < d_.planes_per_die; ++i) {
            const Tx& c = txs_[q[i]];
            uint32_t bit = 1u << ftl_.plane_in_die(c.plane);
            if (c.kind != f.kind || (used_planes & bit) || !ready(c)) continue;
            used_planes |= bit;
            D.group.push_back(q[i]);
            q.erase(q.begin() + std::ptrdiff_t(i));
            --i;
          }
        }
      }
      if (D.group.size() > 1) ++stats_.multiplane_ops;
      D.busy = true;
      execute(die);
      return;
    }
  }

  int64_t channel_of(int64_t die) const { return die / (d_.chips_per_channel * d_.dies_per_chip); }

  Time xfer_end(int64_t die, int64_t b) {
    Time& ch = channel_free_[channel_of(die)];
    Time start = std::max(ev_.now(), ch);
    ch = start + bytes(b) / xfer_rate_;
    return ch;
  }

  void execute(int64_t die) {
    Die& D = dies_[die];
    const Tx& f = txs_[D.group[0]];
    Time now = ev_.now();
    if (f.kind == TxKind::Read) {
      Time t_r{};
      for (uint32_t tx : D.group) t_r = std::max(t_r, d_.read_latency[int(ftl_.page_type(txs_[tx].ppa))]);
      stats_.flash_reads += int64_t(D.group.size());
      ev_.push(now + t_r, {Ev::ReadSensed, uint32_t(die)});
    } else if (f.kind == TxKind::Program) {
      int64_t b = 0;
      Time t_p{};
      for (uint32_t tx : D.group) {
        Tx& t = txs_[tx];
        if (t.src == TxSource::Gc) {
          // a relocated page is skipped when the host overwrote it since the GC read
          if (ftl_.lookup(t.lpa) != t.ppa) { t.ppa = kNone; continue; }
          if (!d_.gc_copyback) b += t.bytes;
        } else {
          b += t.bytes;
        }
        t.ppa = ftl_.write(t.lpa, t.plane, t.src == TxSource::Gc);
        t_p = std::max(t_p, d_.program_latency[int(ftl_.page_type(t.ppa))]);
        ++stats_.flash_programs;
        maybe_start_gc(t.plane);
      }
      Time data_in = b > 0 ? xfer_end(die, b) : now;
      ev_.push(data_in + t_p, {Ev::DieOpDone, uint32_t(die)});
    } else {
      ++stats_.flash_erases;
      ev_.push(now + d_.erase_latency, {Ev::DieOpDone, uint32_t(die)});
    }
  }

  void on_read_sensed(int64_t die) {
    Die& D = dies_[die];
    D.pending_xfers = 0;
    for (uint32_t tx : D.group) {
      Tx& t = txs_[tx];
      bool xfer = !(t.src == TxSource::Gc && d_.gc_copyback);
      Time end = xfer ? xfer_end(die, t.bytes) : ev_.now();
      ++D.pending_xfers;
      ev_.push(end, {Ev::XferDone, tx});
    }
  }

  void on_xfer_done(uint32_t tx) {
    int64_t die = ftl_.die_of_plane(txs_[tx].plane);
    read_done(tx);
    Die& D = dies_[die];
    if (--D.pending_xfers == 0) {
      D.busy = false;
      D.group.clear();
      start_die(die);
    }
  }

  void read_done(uint32_t tx) {
    Tx t = txs_[tx];
    free_tx_.push_back(tx);
    if (t.src == TxSource::Mapping) {
      cmt_of(reqs_[t.req].flow).insert(t.lpa);
      data_read(t.req, t.lpa, t.cache_bytes);  // a mapping read carries the data's sector count
      return;
    }
    if (t.src == TxSource::Gc) {
      Tx p{TxKind::Program, TxSource::Gc, t.req, t.lpa, t.ppa, t.plane, t.bytes};
      enqueue(new_tx(p));
      return;
    }
    Request& r = reqs_[t.req];
    if (--r.pending == 0) finish_read(t.req);
  }

  void on_die_op_done(int64_t die) {
    Die& D = dies_[die];
    std::vector<uint32_t> group = std::move(D.group);
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
      } else {
        Request& r = reqs_[t.req];
        if (t.cache_bytes > 0) {
          uint32_t flow = r.flow;
          if (--r.programs == 0 && r.host_done) free_req_.push_back(t.req);
          release_cache(flow, t.lpa, t.cache_bytes);
        } else if (--r.pending == 0) {
          ev_.push(link(up_free_, bytes(kCqeBytes)), {Ev::Complete, t.req});
        }
      }
    }
    start_die(die);
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
      enqueue(new_tx(Tx{TxKind::Read, TxSource::Gc, uint32_t(plane), lpa, ppa, plane, d_.page_size}));
    }
    gc_page_done(plane);
  }

  void gc_page_done(int64_t plane) {
    GcJob& g = gc_[plane];
    if (--g.outstanding > 0) return;
    Tx e{TxKind::Erase, TxSource::Gc, uint32_t(plane), 0, kNone, plane, 0};
    e.block = g.victim;
    enqueue(new_tx(e));
  }

  void dispatch(const Payload& p) {
    switch (p.kind) {
      case Ev::Arrival: on_arrival(p.a); break;
      case Ev::SqeFetched: on_sqe_fetched(p.a); break;
      case Ev::WriteDmaDone: on_write_dma_done(p.a); break;
      case Ev::CacheAdmitted: on_cache_admitted(p.a); break;
      case Ev::Complete: on_complete(p.a); break;
      case Ev::ReadSensed: on_read_sensed(p.a); break;
      case Ev::XferDone: on_xfer_done(p.a); break;
      case Ev::DieOpDone: on_die_op_done(p.a); break;
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
              {"cmt_hits", stats_.cmt_hits},
              {"cmt_misses", stats_.cmt_misses},
              {"cache_read_hits", stats_.cache_read_hits}}},
            {"flash", {{"reads", stats_.flash_reads}, {"programs", stats_.flash_programs}, {"erases", stats_.flash_erases},
                       {"multiplane_ops", stats_.multiplane_ops}}},
            {"wall",
             {{"seconds", wall},
              {"events", ev_.executed()},
              {"requests_per_second", wall > 0 ? double(total) / wall : 0.0}}}};
  }

  struct Stats {
    int64_t cmt_hits = 0, cmt_misses = 0, cache_read_hits = 0;
    int64_t flash_reads = 0, flash_programs = 0, flash_erases = 0, multiplane_ops = 0;
  };

  const DeviceXml& d_;
  const ScenarioXml& s_;
  const RunOptions& opt_;
  Ftl ftl_;
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
  FlatMap32 cached_{1024};
  std::vector<int64_t> cache_cap_, cache_used_;
  std::vector<std::deque<uint32_t>> cache_wait_;
  int64_t spp_ = 16, sq_depth_ = 1, entries_per_tpage_ = 1;
  bool ideal_map_ = false;
  Bandwidth xfer_rate_{}, pcie_{};
  int64_t completed_ = 0;
  Stats stats_;
};

}  // namespace

nlohmann::json simulate_scenario(const DeviceXml& device, const ScenarioXml& scenario, const RunOptions& opt) {
  Sim sim(device, scenario, opt);
  return sim.run();
}

nlohmann::json simulate_workload(const DeviceXml& device, const WorkloadXml& workload, const RunOptions& opt) {
  check_workload(workload, device);
  nlohmann::json out = {{"device", device.file}, {"workload", workload.file}, {"defaults_used", device.defaulted}};
  nlohmann::json sc = nlohmann::json::array();
  for (auto& s : workload.scenarios) sc.push_back(simulate_scenario(device, s, opt));
  out["scenarios"] = sc;
  return out;
}

}  // namespace bitline::ssd
