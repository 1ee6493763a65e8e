// The general SSD's engine (internal to src/ssd): one class, Sim, with its member functions defined in the stage files,
// each of which states its contract at its top, and its state in one struct per stage (declared below, each saying
// which files use it):
//   host_interface.cpp         host flows, NVMe queues, the PCIe link, completions, results    HostInterfaceState host_
//   data_cache.cpp             reads and writes through the controller's DRAM write cache      WriteCacheState data_cache_
//   address_mapping.cpp        MQSim's cached mapping table: translation reads and write-backs  MappingState mapping_
//   transaction_scheduler.cpp  per-unit queues, multi-plane operations, chips, channels,       SchedulerState scheduler_
//                              die operations
//   garbage_collection.cpp     victim selection, relocation and erase per plane                GcState gc_
//   compute_jobs.cpp           Flash-Cosmos jobs and sequential writes (contract:              ComputeJobState jobs_,
//                              compute_jobs.hpp)                                                SequentialWriteState writes_
//   slc_cache.cpp              the SLC write cache: host programs into SLC, folding to TLC      SlcCacheState slc_
//   device.cpp                 construction, the event loop and its dispatch, the entry points (device.hpp)
// What every stage shares stays in Sim itself: the device and the run's options, the model's switches, the FTL
// (ftl.hpp), the event heap, a page's sector layout, the counts of the results, the work estimate and the label.
// One EventHeap drives every stage; events are a kind and an index, dispatched by a switch (device.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "core/event_queue.hpp"
#include "ssd/cmt.hpp"
#include "ssd/device_parts.hpp"
#include "ssd/ftl.hpp"

namespace bitline::ssd::detail {

// ---- The stages' state: one struct per stage, owned by Sim, read and written by the files named ----------------

/// Host interface (host_interface.cpp; data_cache.cpp and transaction_scheduler.cpp post completions): the flows and
/// their requests, the NVMe submission queues' depth, the PCIe link (a FIFO per direction) and its transfer times.
struct HostInterfaceState {
  std::vector<Flow> flows;
  std::vector<Request> requests;          // by id; a finished one's id goes to free_requests
  std::vector<uint32_t> free_requests;    // ids of finished requests, reused first
  std::vector<uint32_t> pending_trace;    // per trace flow: the request of its record read ahead
  Time link_down_free{}, link_up_free{};  // when the link's host-to-device / device-to-host FIFO is next free
  int64_t submission_queue_depth = 1;     // IO_Queue_Depth: requests of a flow in the device at once
  Bandwidth pcie_rate{};                  // lanes x lane bandwidth
  // transfer times, computed once: a command (SQE) and a completion (CQE), data alone and data with a completion
  Time sqe_time{}, cqe_time{};
  XferTimes pcie_data_time, pcie_data_cqe_time;
  int64_t completed = 0;   // requests completed (progress and messages)
  BandwidthSeries series;  // bytes completed over time (RunOptions::throughput_bin; off: 0)

  uint32_t new_request(uint32_t flow, bool read, int64_t lba, int64_t sectors, Time arrival) {
    uint32_t id;
    if (!free_requests.empty()) {
      id = free_requests.back();
      free_requests.pop_back();
    } else {
      id = uint32_t(requests.size());
      requests.emplace_back();
    }
    requests[id] = Request{flow, read, lba, sectors, arrival, arrival, 0, 0};
    return id;
  }
};

/// The controller's DRAM write cache (data_cache.cpp; host_interface.cpp prefetches from it): the cache partitions
/// (one shared, or one per flow), MQSim's destage back-pressure, the hot/cold filter and the DRAM's FIFO.
struct WriteCacheState {
  std::vector<std::unique_ptr<WriteCache>> partitions;
  std::vector<int64_t> programming_sectors;                     // per partition: sectors being programmed from it
  int64_t max_programming_sectors = INT64_MAX;                  // the back-pressure limit (destage_pages_per_plane)
  std::vector<std::vector<uint32_t>> waiting_writes;            // per partition: cached writes not yet all in the cache
  std::vector<std::vector<WriteCache::Slot>> eviction_batches;  // evicted dirty slots whose DRAM read is under way
  std::vector<uint32_t> free_batches;                           // indices of eviction_batches free for reuse
  FlatMap32 hot_pages{1024};                                    // pages written in the current hot window
  Time next_hot_reset{};                                        // when hot_pages is cleared next (hot_window)
  Time dram_free{};                                             // when the DRAM is next free (dram_serial)
  uint32_t version = 0;          // the last version stamped on a slot; a write-back that ends sees whether newer data merged
  std::vector<Time> dram_times;  // the DRAM access of each multiple of 512 B, up to XferTimes::kSectors sectors

  /// The partition a flow's writes go to.
  int partition_of(uint32_t flow) const { return partitions.size() == 1 ? 0 : int(flow); }

  uint32_t new_batch() {
    if (!free_batches.empty()) {
      uint32_t b = free_batches.back();
      free_batches.pop_back();
      return b;
    }
    eviction_batches.emplace_back();
    return uint32_t(eviction_batches.size() - 1);
  }
};

/// MappingState::arriving of a translation page with no read in flight.
constexpr uint32_t kNotArriving = 0xFFFFFFFEu;

/// Address mapping (address_mapping.cpp; host_interface.cpp prefetches from it): the cached mapping tables, the
/// translation pages in flight and the transactions parked on them, the sectors written of partly written pages,
/// and the layout of the translation pages (per flow, as MQSim's address-mapping domains).
struct MappingState {
  std::vector<std::unique_ptr<Cmt>> cmts;  // one shared, or one per flow (cmt_per_flow / CMT_Sharing_Mode)
  // per translation page: the last transaction parked for its read (kNone: none yet; kNotArriving: no read in
  // flight), and how many of its write-backs are still to be programmed (MQSim's departing entries)
  std::vector<uint32_t> arriving, departing;
  std::vector<uint32_t> park_next;    // per transaction: the one parked on the same translation page before it
  std::vector<uint32_t> scratch;      // arrived(): the parked transactions in order (kept to reuse its buffer)
  FlatMap32 partial_bits{1024};       // per logical page written in part: its written-sector groups
  std::vector<int64_t> first_lpa;     // per flow: its first logical page
  std::vector<uint32_t> first_tpage;  // per flow: its first translation page (and one past the last)
  int64_t entries_per_tpage = 1;      // mapping entries in a translation page
  int64_t gtd_entry_bytes = 1;        // bytes of a mapping entry in a translation page
  bool ideal = false;                 // Ideal_Mapping_Table: no translation at all

  Cmt& cmt_of(uint32_t flow) { return *cmts[cmts.size() == 1 ? 0 : flow]; }
  /// The translation page holding the mapping entry of the flow's logical page `lpa`.
  uint32_t tpage_of(uint32_t flow, uint32_t lpa) const {
    return first_tpage[flow] + uint32_t((int64_t(lpa) - first_lpa[flow]) / entries_per_tpage);
  }
  /// The 512 B sector of its translation page that holds the mapping entry of `lpa`.
  uint32_t tsector_of(uint32_t flow, uint32_t lpa) const {
    return uint32_t((int64_t(lpa) - first_lpa[flow]) % entries_per_tpage * gtd_entry_bytes / 512);
  }
  /// Parks transaction `tx` until translation page `page` arrives.
  void park(uint32_t page, uint32_t tx) {
    uint32_t h = arriving[page];
    park_next[tx] = h == kNotArriving ? kNone : h;
    arriving[page] = tx;
  }
};

/// Transaction scheduling (transaction_scheduler.cpp; every stage queues transactions, compute_jobs.cpp also moves
/// write slices over the channels): the transactions, the scheduling units (chips or dies) and their queues, the
/// device's topology as tables by plane, unit and channel, and the channels' buses.
struct SchedulerState {
  std::vector<Tx> transactions;             // by id; a finished one's id goes to free_transactions
  std::vector<uint32_t> free_transactions;  // ids of finished transactions, reused first
  std::vector<Die> units;                   // the scheduling units: chips (chip_scheduling) or dies
  std::vector<uint32_t> finished_group;     // on_die_op_done(): the finished operation's transactions (buffer reused)
  std::vector<uint32_t> unplaced;           // gather_host_units(): units not placed in their own plane (buffer reused)
  std::vector<int64_t> host_pages;          // per plane: host (and translation) flash pages programmed (gather_host_units)
  std::vector<int32_t> die_of_plane;
  std::vector<uint8_t> plane_in_die;  // a plane's index in its die
  std::vector<int32_t> unit_of_plane;
  std::vector<int32_t> channel_of_plane;
  // issue_on_idle_channel: each unit's channel, each channel's units, the unit whose turn is next (round robin),
  // and whether a ChannelIdle event is pending
  std::vector<int32_t> channel_of_unit;
  std::vector<std::vector<int64_t>> units_of_channel;
  std::vector<uint32_t> channel_turn;
  std::vector<uint8_t> channel_wake_pending;
  std::vector<Time> channel_free;  // per channel: when its bus is next free
  bool deferring = false;          // enqueue_together: idle units start after the request's transactions are queued
  std::vector<int64_t> deferred;   // the units to start then
  Bandwidth channel_rate{};        // a channel's transfer rate
  XferTimes channel_time;          // transfer times over a channel, computed once
};

/// Garbage collection (garbage_collection.cpp; transaction_scheduler.cpp blocks and releases programs): per plane,
/// its GC job and the programs blocked for want of a free page until that job erases a block.
struct GcState {
  std::vector<GcJob> jobs;
  std::vector<std::deque<uint32_t>> blocked_programs;
};

/// A segment of a Flash-Cosmos job's step template: its steps up to where a page leaves the die (or the job's end),
/// one die operation (ComputeJobState, compute_jobs.cpp).
struct Segment {
  Time die_time{};
  Energy energy{};
  int64_t steps = 0, sensings = 0;
  Route route = Route::None;                 // where its page goes (None: stays in the latches)
  bool first_out = false, last_out = false;  // the job's first / last page out
  int64_t data_in = 0, overlap = 0;          // a program: its slices, and the next program's that may load meanwhile
};

/// What moving and combining `bytes` costs at the jobs' rates (ComputeJobState::page_costs): computed once per size
/// (setup_compute), so that a segment's page charges precomputed times and energies, not divisions per event. A time
/// whose rate is not given (0: the jobs do not use it) stays zero.
struct PageCosts {
  int64_t bytes = 0;
  Time channel{}, pcie{}, isp{}, host_bitwise{}, host_popcount{};  // bytes / the rate
  Energy channel_io{}, pcie_io{}, dram{}, isp_ops{};               // bytes x the energy per bit
};

/// Flash-Cosmos jobs (compute_jobs.cpp; transaction_scheduler.cpp runs their segments): the spec and the rates,
/// the costs of a job's pages by its planes, each template's segments, per die the next segment to queue and the segments queued, the ISP's
/// SRAM and the FIFOs of the ISP and the host, and the run's result.
struct ComputeJobState {
  const JobSpec* spec = nullptr;  // null: a host scenario, no jobs
  ComputeRates rates;
  std::vector<PageCosts> page_costs;           // by active planes: a job's pages (active x page size; a write slice
                                               // is a page on every plane of its die)
  std::vector<std::vector<Segment>> segments;  // per step template
  // per die, side by side (one cache line a die, where the engine touches it per segment): its jobs, the job of the
  // next segment to queue and that segment in its job's template, and the segments queued or running
  struct DieCursor {
    const Job* next = nullptr;
    const Job* end = nullptr;
    uint32_t segment = 0;
    int64_t queued = 0;
    // the die takes its next segment when it is free (start_die), instead of the firmware queueing kComputeAhead:
    // the same order and times where the die runs only reads (no program claims slices at its issue) and is a
    // scheduling unit of its own; no queue work per segment
    bool pull = false;
  };
  std::vector<DieCursor> cursor;
  std::deque<uint32_t> sram_waiters;  // transactions of first ISP pages waiting for an SRAM slot
  int64_t sram_free_bytes = 0;        // the ISP's SRAM not held by a slot
  Time isp_free{}, host_free{};       // when the ISP's / the host CPU's FIFO is next free
  Time ssd_end{};                     // when the SSD's last transfer over PCIe ends
  ComputeResult result;

  const Segment& segment_of(const Tx& t) const { return segments[t.job.tmpl][t.job.segment]; }
};

/// Sequential writes (compute_jobs.cpp; transaction_scheduler.cpp starts their programs): the host streams slices
/// (one page on every plane of a die) over PCIe into the controller's write buffer, a channel loads them into its
/// dies' latches, and a die's program job runs once its slices are there.
struct SequentialWriteState {
  int64_t slices_per_program = 0;  // 0: no sequential write
  int64_t overlap_slices = 0;      // slices of the next program that may load while one runs (cache program)
  int64_t slice_bytes = 0;
  int64_t buffer_slices = 0;    // slices the write buffer holds
  int64_t next_slice = 0;       // the next slice the host streams
  int64_t buffered_slices = 0;  // slices in the write buffer
  // per die: slices waiting for it in the buffer, in its latches, claimed by its queued program; whether a program
  // runs, and whether its next program is held for its slices
  std::vector<int64_t> waiting, loaded, claimed;
  std::vector<uint8_t> programming, held;
  // per channel: the die it is loading a slice into (kNone: none), and where its round robin over its dies resumes
  std::vector<uint32_t> loading_die;
  std::vector<int64_t> next_turn;

  /// A slice may load into a die: one waits for it in the buffer, its next program is not complete, and while it
  /// programs only into the latches the program leaves free.
  bool can_load(uint32_t die) const {
    if (waiting[die] == 0 || loaded[die] >= slices_per_program) return false;
    return !programming[die] || loaded[die] < overlap_slices;
  }
};

/// The SLC write cache (slc_cache.cpp, whose header is its contract; transaction_scheduler.cpp asks it the program time
/// of a host page and runs its folds, host_interface.cpp tells it when the host comes and goes): the region's size in
/// pages of data, what it holds per plane, and the folds under way.
struct SlcCacheState {
  struct Run {
    uint32_t first, count;  // TLC places first, first + 1, ... of pages cached one after the other
  };
  bool on = false;       // ssd_device.slc_cache is not off
  bool dynamic = false;  // turbowrite: a dynamic region beside the static one
  int64_t static_pages = 0, dynamic_max_pages = 0;
  int64_t bits = 1;                 // bits per cell of the device's flash
  int64_t pages_per_slc_block = 1;  // pages per block / bits: the cached pages one SLC block holds
  int64_t logical_pages = 0;
  int64_t logical_used = 0;              // logical pages holding data (preconditioned or written): what the dynamic region cannot use
  int64_t used = 0;                      // SLC pages in use: cached, or folded from a block not yet erased
  std::vector<std::deque<Run>> cached;   // per plane: the pages to fold, oldest first (run-length: bounded memory)
  std::vector<int64_t> written, folded;  // per plane: pages cached, folded (the k-th cached page is in SLC block k / n)
  std::vector<int32_t> in_flight;        // per plane: folds and SLC erases queued or running
  bool idle_folding = false, full_folding = false;
  int64_t in_device = 0;  // host requests in the device (0: the host is idle)
  uint32_t activity = 0;  // counts submissions: an idle timer set before the latest one is stale
  bool full_seen = false;
  Time full_at{}, last_fold_end{};
  int64_t slc_programs = 0, direct_programs = 0, fold_reads = 0, fold_programs = 0, folds_skipped = 0, fold_erases = 0;

  /// Pages of data the region may hold now: the static region, plus (turbowrite) the dynamic one within the free
  /// logical space at one bit per cell.
  int64_t capacity() const { return static_pages + (dynamic ? std::min(dynamic_max_pages, (logical_pages - logical_used) / bits) : 0); }
  bool folding() const { return idle_folding || full_folding; }
};

class Sim {
 public:
  Sim(const DeviceXml& d, const ScenarioXml& s, const RunOptions& opt, const JobSpec* compute = nullptr, const ComputeRates& rates = {},
      const std::string& label = "scenario");

  nlohmann::json run();
  /// Runs the events to the end and checks that nothing stalled (run() without building the results' JSON, which a
  /// Flash-Cosmos run reads through compute_result() instead); returns the wall time it took in seconds.
  double simulate();

  const ComputeResult& compute_result() const { return jobs_.result; }
  const WorkEstimate& work() const { return work_; }
  /// Each flow's FlowIoStats (RunOptions::io_stats; empty without it).
  std::vector<FlowIoStats> io_stats() const {
    std::vector<FlowIoStats> out;
    for (const Flow& fl : host_.flows)
      if (fl.io) out.push_back(*fl.io);
    return out;
  }

 private:
  /// The scenario's work, estimated before it runs (WorkEstimate). Rates in requests per second.
  WorkEstimate estimate_work() const;

  // ---- host side -----------------------------------------------------------
  /// Generates one synthetic request of flow f arriving at t (unless the flow has stopped).
  void generate(uint32_t f, Time t);

  Drawn draw_ahead(uint32_t f) {
    Drawn r = draw(f);
    prefetch_pages(f, r.lba, r.size);
    return r;
  }

  /// Starts loading what the translation and the FTL will touch for logical page lpa (hints only).
  void prefetch_lpa(uint32_t f, uint32_t lpa) const;
  /// prefetch_lpa for the logical pages of sectors [lba, lba + sectors) (at most kPrefetchPages of them).
  void prefetch_pages(uint32_t f, int64_t lba, int64_t sectors) const {
    static constexpr int64_t kPrefetchPages = 4;
    const int64_t first = page_of_sector(lba),
                  last = std::min(page_of_sector(lba + std::max<int64_t>(sectors, 1) - 1), first + kPrefetchPages - 1);
    for (int64_t p = first; p <= last; ++p) prefetch_lpa(f, uint32_t(p));
  }

  /// Draws a synthetic request's direction, address and size from the flow's generator.
  Drawn draw(uint32_t f);

  void on_arrival(uint32_t f);

  void arrive(uint32_t id, Time t);

  /// Enters the submission queue: the device fetches the command over the link.
  void submit(uint32_t id) {
    Request& r = host_.requests[id];
    ++host_.flows[r.flow].outstanding;
    r.enqueued = events_.now();
    if (slc_.on) {  // the host is busy: idle folding pauses
      ++slc_.in_device;
      ++slc_.activity;
      slc_.idle_folding = false;
    }
    prefetch_pages(r.flow, r.lba, r.sectors);
    events_.push(link(host_.link_down_free, host_.sqe_time), {Ev::SqeFetched, id});
  }

  /// When a transfer taking d on a FIFO link that is busy until `busy` ends (the link is then busy until then).
  Time link(Time& busy, Time d) {
    Time start = std::max(events_.now(), busy);
    busy = start + d;
    return busy;
  }

  void on_sqe_fetched(uint32_t id) {
    Request& r = host_.requests[id];
    if (r.read) {
      enqueue_together([&] { issue_reads(id); });
    } else {
      events_.push(link(host_.link_down_free, host_.pcie_data_time(r.sectors * 512)), {Ev::WriteDmaDone, id});
    }
  }

  // ---- address translation (MQSim's CMT, translation reads and write-backs) -------
  /// The logical page of sector `lba` (>= 0): a shift where the page's sectors are a power of two (a 64-bit
  /// division took a fifth of generate()'s time, two per request).
  int64_t page_of_sector(int64_t lba) const { return page_shift_ >= 0 ? lba >> page_shift_ : lba / sectors_per_page_; }
  template <class F>
  void for_each_page(const Request& r, F f) {
    int64_t lba = r.lba, end = r.lba + r.sectors;
    while (lba < end) {
      int64_t lpa = page_of_sector(lba);
      int64_t n = std::min(end, (lpa + 1) * sectors_per_page_) - lba;
      f(uint32_t(lpa), lba - lpa * sectors_per_page_, n);
      lba += n;
    }
  }
  /// Written-sector groups (bits) of sectors [off, off + n) of a page.
  uint32_t bits_of(int64_t off, int64_t n) const {
    int64_t lo = off / sectors_per_group_, hi = (off + n - 1) / sectors_per_group_;
    uint64_t m = ((uint64_t(1) << (hi - lo + 1)) - 1) << lo;
    return uint32_t(m);
  }

  /// Inserts `lpa` into the flow's CMT, evicting (and writing back) its least recently used entry when full.
  void cmt_insert(Cmt& c, uint32_t flow, uint32_t lpa, uint32_t page, Cmt::State st) {
    make_room(c, flow);
    c.insert(lpa, page, mapping_.tsector_of(flow, lpa), st);
  }

  /// Where translation page `page` is: its last program, else a fixed page of its plane (stored at start).
  uint32_t tpage_ppa(uint32_t page) {
    uint32_t key = uint32_t(ftl_.logical_pages() + int64_t(page));
    if (model_.translation_programs) {
      uint32_t p = ftl_.lookup(key);
      if (p != FlatMap32::kEmpty) return p;
    }
    return ftl_.unwritten_ppa(uint32_t((ftl_.logical_pages() + int64_t(page)) % ftl_.logical_pages()));
  }

  void issue_mapping_read(uint32_t page, int64_t b, uint32_t flow) {
    uint32_t ppa = tpage_ppa(page);
    ++stats_.mapping_reads;
    enqueue(new_tx_from([&] { return Tx::mapping_read(uint32_t(flow), page, ppa, ftl_.plane_of_ppa(ppa), b); }));
  }

  /// Makes room in a full CMT; a dirty victim's translation page is written back.
  void make_room(Cmt& c, uint32_t flow) {
    if (!c.full()) return;
    auto [page, dirty] = c.evict();
    if (dirty && model_.translation_writeback) writeback(c, page, flow);
  }

  /// MQSim's translation-page write-back: every dirty entry of the page is cleaned, the sectors holding
  /// its clean cached entries are read (to merge), and the page is programmed (see translation_programs).
  void writeback(Cmt& c, uint32_t page, uint32_t flow);

  /// Resolves a transaction's logical page through the CMT, then issues it (now, or when its
  /// translation page arrives from flash).
  void translate(uint32_t tx);

  /// A translation page arrived from flash: its waiting entries become valid, their transactions go on.
  void arrived(uint32_t page);

  void mark_dirty(uint32_t flow, uint32_t lpa);

  /// Issues a translated transaction: a read goes to its page; a program records its sectors and, when it
  /// leaves written sectors of the page uncovered, first reads them (update read).
  void proceed(uint32_t tx);

  // ---- reads -----------------------------------------------------------------
  void issue_reads(uint32_t id);

  void finish_read(uint32_t id) {
    Request& r = host_.requests[id];
    Time t = link(host_.link_up_free, host_.pcie_data_cqe_time(r.sectors * 512));
    events_.push(t, {Ev::Complete, id});
  }

  void on_dram_read_done(uint32_t id) {
    if (--host_.requests[id].pending == 0) finish_read(id);
  }

  // ---- writes ----------------------------------------------------------------
  Time dram_time(int64_t b) const { return cache_dram_time(device_, b); }
  /// When a DRAM access of b bytes started now ends (one access at a time with dram_serial).
  Time dram(int64_t b) {
    Time d = b % 512 == 0 && size_t(b / 512) < data_cache_.dram_times.size() ? data_cache_.dram_times[size_t(b / 512)] : dram_time(b);
    if (!model_.dram_serial) return events_.now() + d;
    data_cache_.dram_free = std::max(events_.now(), data_cache_.dram_free) + d;
    return data_cache_.dram_free;
  }

  void on_write_dma_done(uint32_t id) {
    Request& r = host_.requests[id];
    if (!host_.flows[r.flow].write_cache) return enqueue_together([&] { issue_programs(id); });
    bool all = false;
    enqueue_together([&] { all = destage(id); });
    if (!all) data_cache_.waiting_writes[data_cache_.partition_of(r.flow)].push_back(id);
  }

  /// Programs of a write without the cache: the request completes when they all end.
  void issue_programs(uint32_t id);

  /// MQSim's destage buffer: takes the request's pages into the write cache while the sectors being
  /// programmed from the cache stay under the back-pressure limit; a cold page is programmed at once, a
  /// hot one merges into its slot. Returns whether the whole request is in the cache.
  bool destage(uint32_t id);

  int64_t sectors_of(uint32_t bits) const {
    return std::min<int64_t>(sectors_per_page_, int64_t(__builtin_popcount(bits)) * sectors_per_group_);
  }

  /// The data of evicted dirty slots has been read from DRAM: program it.
  void on_eviction_read(uint32_t batch);

  uint32_t flow_of_lpa(uint32_t lpa) const {
    int64_t lba = int64_t(lpa) * sectors_per_page_;
    for (uint32_t f = 0; f < host_.flows.size(); ++f)
      if (lba < host_.flows[f].range_end) return f;
    return uint32_t(host_.flows.size() - 1);
  }

  void on_dram_write_done(uint32_t id) {
    Request& r = host_.requests[id];
    if (--r.pending == 0 && r.admitted == r.sectors) events_.push(link(host_.link_up_free, host_.cqe_time), {Ev::Complete, id});
  }

  /// A page written back from the cache is programmed: its slot leaves the cache unless newer data merged
  /// into it meanwhile, and waiting writes get another try.
  void cache_program_done(const Tx& t);

  // ---- completion ------------------------------------------------------------
  void on_complete(uint32_t id);

  // ---- transactions, dies and chips ---------------------------------------------
  /// Stores the transaction `make()` returns as a new one (in a finished one's slot if any) and returns its id. It is
  /// built in its slot: a transaction built on the stack and copied in whole stalls the copy (its wide loads cannot
  /// forward from the narrow stores just made), which every user read paid once (about 4% of MQSim's read scenario),
  /// and the Flash-Cosmos jobs' one transaction per segment on every segment.
  template <class Make>
  uint32_t new_tx_from(Make&& make) {
    if (!scheduler_.free_transactions.empty()) {
      const uint32_t id = scheduler_.free_transactions.back();
      scheduler_.free_transactions.pop_back();
      static_assert(std::is_trivially_destructible_v<Tx>);
      ::new (&scheduler_.transactions[id]) Tx(make());
      return id;
    }
    scheduler_.transactions.push_back(make());
    mapping_.park_next.push_back(kNone);
    return uint32_t(scheduler_.transactions.size() - 1);
  }

  /// Queue level: translation reads, user reads by class, translation programs, user programs by class, GC. A unit
  /// serves the lowest non-empty level first, except GC: with Preemptible_GC_Enabled false (MQSim's default), GC is
  /// always in MQSim's urgent mode and its transactions go before every other (TSU_Priority_OutOfOrder checks the
  /// GC queues first); with it true, GC goes last.
  static constexpr size_t kGcLevel = 10;
  static constexpr uint32_t kGcLevelBit = 1u << kGcLevel;
  static constexpr size_t kFoldLevel = 11;  // the SLC cache's folds: after everything else
  size_t level(const Tx& t) const {
    if (t.src == TxSource::Gc) return kGcLevel;
    if (t.src == TxSource::Compute) return compute_level_;
    if (t.src == TxSource::Fold) return kFoldLevel;
    bool read = t.kind == TxKind::Read;
    if (t.src == TxSource::Mapping) return read ? 0 : 5;
    return size_t((read ? 1 : 6) + host_.flows[t.flow].priority);
  }

  /// The scheduling unit of a plane: its chip (chip_scheduling) or its die.
  int64_t unit_of(int64_t plane) const { return scheduler_.unit_of_plane[size_t(plane)]; }

  void enqueue(uint32_t tx) {
    const Tx& t = scheduler_.transactions[tx];
    int64_t u = unit_of(t.plane);
    scheduler_.units[u].push(level(t), tx);
    if (scheduler_.units[u].busy) return;
    if (scheduler_.deferring) return scheduler_.deferred.push_back(u);
    start_die(u);
  }

  /// Mapping units: a request's units are queued together before an idle die starts (so that the units of one flash
  /// page share its operation), by calling `issue` between these two. With page-level mapping each starts at once.
  template <class F>
  void enqueue_together(F issue) {
    if (ftl_.units_per_flash_page() == 1 || scheduler_.deferring) return issue();
    scheduler_.deferring = true;
    issue();
    scheduler_.deferring = false;
    std::vector<int64_t> units;
    units.swap(scheduler_.deferred);
    for (int64_t u : units)
      if (!scheduler_.units[size_t(u)].busy) start_die(u);
    units.clear();
    scheduler_.deferred.swap(units);
  }

  bool ready(const Tx& t) {
    if (t.kind != TxKind::Program) return true;
    return ftl_.can_allocate(t.plane, t.src == TxSource::Gc);
  }

  /// The offset in its block of the flash page a read senses or a program writes (multi-plane operations compare them).
  int64_t page_offset(const Tx& t) const {
    return t.kind == TxKind::Read ? ftl_.flash_page_in_block(t.ppa) : ftl_.next_flash_page(t.plane, t.src == TxSource::Gc);
  }

  /// Starts the highest-priority ready transaction on an idle unit, with same-kind transactions on the
  /// other planes of its die (multi-plane operation).
  void start_die(int64_t unit);

  /// Whether another plane of program f's die could take a program with it now: its next page is f's (with
  /// multiplane_same_page) and it can allocate a page (as a host or a GC program: their frontiers differ). When none can, the
  /// queues hold no companion for f and need no scan.
  bool program_companion_possible(const Tx& f, int64_t off) const;

  /// Mapping units: D.group's first transaction takes the other units of its flash page(s) into its operation.
  void gather_units(int64_t unit, size_t lvl, bool same_page, int64_t off);
  /// Mapping units: a host program's operation takes the die's queued host programs into flash pages of its planes.
  void gather_host_units(int64_t unit, size_t lvl);
  /// The planes an operation's transactions are on.
  int64_t op_planes(const std::vector<uint32_t>& group) const;

  int64_t channel_of_plane(int64_t plane) const { return scheduler_.channel_of_plane[size_t(plane)]; }

  /// issue_on_idle_channel: the channel's transfers have ended; its units are visited once each in round-robin
  /// order, the turn moving on with every visit (MQSim's TSU_Base::handle_channel_idle_signal), an idle one with work
  /// starting it, until one of them occupies the channel.
  void on_channel_idle(uint32_t ch);

  /// When a transfer taking d, started on the plane's channel once it is free, ends (the channel is busy until then).
  Time channel_end(int64_t plane, Time d) {
    Time& ch = scheduler_.channel_free[channel_of_plane(plane)];
    ch = std::max(events_.now(), ch) + d;
    return ch;
  }
  Time xfer_end(int64_t plane, int64_t b) { return channel_end(plane, scheduler_.channel_time(b)); }

  void execute(int64_t unit);

  void on_read_sensed(int64_t unit);

  void on_xfer_done(uint32_t tx);

  void read_done(uint32_t tx);

  void on_die_op_done(int64_t unit);
  /// The transactions of a finished die operation end, each as its source says.
  void finish_op(const std::vector<uint32_t>& group);

  // ---- Flash-Cosmos jobs (compute_jobs.hpp) ------------------------------------------------------------
  // A job's steps are cut into segments, each ending where a page leaves the die (or at the job's end): one Compute
  // transaction per segment, a die's segments queued in order (or, on a die that only reads, taken by start_die when
  // it is free: DieCursor::pull). A page goes where its step routes it: a result to
  // the host; an operand page (OSP) to the host, which combines it; an operand page to the controller's ISP, which
  // combines the job's pages in a slot of its SRAM and sends the result to the host from there. A program segment
  // (a sequential write) is queued once its slices are in the die's latches.
  void setup_compute();
  // The constructor's parts, in the order it runs them (device.cpp).
  void setup_topology();
  void setup_links(const ComputeRates& rates);
  void setup_mapping(int64_t nflows, int64_t per_flow);
  void setup_data_cache(int64_t nflows);
  std::vector<std::pair<uint64_t, uint64_t>> setup_flows(const ScenarioXml& s, int64_t per_flow);

  /// Queues the next segment of `die` (if any) on the die's first plane: one transaction for all the job's planes.
  /// A program waits (held) until its slices are in the die's latches. Returns whether it queued one.
  bool issue_job(uint32_t die);
  uint32_t next_segment(uint32_t die);

  /// Keeps kComputeAhead segments of `die` queued (fewer at the end of its jobs or before a held program).
  void fill_jobs(uint32_t die) {
    if (jobs_.cursor[die].pull) return;  // (it takes them itself)
    while (jobs_.cursor[die].queued < kComputeAhead && issue_job(die)) {
    }
  }

  /// The costs of `bytes` at the jobs' rates (PageCosts).
  PageCosts page_costs_of(int64_t bytes) const;

  /// Over the die's channel: the channel's next free time after the pages (energy and busy time counted).
  Time channel_xfer(int64_t plane, const PageCosts& c) {
    jobs_.result.channel_bytes += c.bytes;
    jobs_.result.channel_busy += c.channel;
    jobs_.result.nand_io += c.channel_io;
    return channel_end(plane, c.channel);
  }

  /// A segment's page leaves the die over the channel; a job's first page for the ISP needs an SRAM slot (its
  /// partial result) first, and waits in the latches for one (the die stays busy).
  void compute_out(uint32_t tx);

  /// Cache read: a sensed page enters the cache latch if it is empty, and the die is free for its next operation;
  /// otherwise the page waits in the die (busy) for the latch.
  void sensed_to_cache(int64_t unit, uint32_t tx);

  /// Cache read: the latch's page has left: it goes on by its route, and a page waiting in the die takes the latch.
  void cache_emptied(int64_t unit, uint32_t tx);

  /// Over the PCIe link (its FIFO `busy`, one per direction); returns the arrival, pcie_latency after the end.
  Time over_pcie(Time& busy, const PageCosts& c);
  Time to_host(const PageCosts& c) { return over_pcie(host_.link_up_free, c); }

  /// The host's CPU work `d` on what arrives (the pages `c`, read from its memory), in arrival order.
  void host_work(Time arrival, Time d, const PageCosts& c) {
    jobs_.host_free = std::max(arrival, jobs_.host_free) + d;
    jobs_.result.host_busy += d;
    jobs_.result.host_bytes += c.bytes;
    jobs_.result.dram_access += c.dram;
    jobs_.result.total = std::max(jobs_.result.total, jobs_.host_free);
  }

  /// A segment has ended (its page crossed the channel, or it had none): the page goes on by its route, and the
  /// die's next segment is queued.
  void job_done(const Tx& t);

  /// A job's ISP result (`active` pages) goes to the host straight from its SRAM slot, which is free once it has left.
  void on_isp_result(uint32_t active) {
    const PageCosts& c = jobs_.page_costs[active];
    jobs_.result.isp_link_wait += std::max(Time{}, host_.link_up_free - events_.now());
    const Time at = to_host(c);
    if (jobs_.spec->host.popcount_result) host_work(at, c.host_popcount, c);
    events_.push(host_.link_up_free, {Ev::SlotRelease, active});  // when the transfer ends
  }

  void on_slot_release(uint32_t active) {
    jobs_.sram_free_bytes += int64_t(active) * device_.page_size;
    // FIFO: the earliest waiter first
    while (!jobs_.sram_waiters.empty() && jobs_.sram_free_bytes >= scheduler_.transactions[jobs_.sram_waiters.front()].bytes) {
      const uint32_t tx = jobs_.sram_waiters.front();
      jobs_.sram_waiters.pop_front();
      compute_out(tx);
    }
  }

  // Sequential writes: the host streams slices over PCIe while the controller's write buffer has room; a channel
  // with no page to move out loads them into its dies round robin.
  void feed_host();

  /// A write slice's costs: a page on every plane of its die.
  const PageCosts& slice_costs() const { return jobs_.page_costs[size_t(device_.planes_per_die)]; }

  void on_write_arrive(uint32_t die) {
    ++writes_.waiting[die];
    try_data_in(uint32_t(channel_of_plane(int64_t(die) * device_.planes_per_die)));
  }

  /// The channel, idle, moves the next write slice into one of its dies, round robin from after the last one served.
  void try_data_in(uint32_t ch);

  void on_data_in_done(uint32_t ch);

  /// The run's totals: the time, the SSD's active part, the busiest resource.
  void finish_compute();

  // ---- garbage collection ------------------------------------------------------
  void maybe_start_gc(int64_t plane);

  void gc_page_done(int64_t plane) {
    GcJob& g = gc_.jobs[plane];
    if (--g.outstanding > 0) return;
    enqueue(new_tx_from([&] { return Tx::gc_erase(plane, g.victim); }));
  }

  // ---- the SLC write cache (slc_cache.cpp) ----------------------------------------
  static constexpr int32_t kFoldAhead = 2;  // folds (and SLC erases) of a plane kept queued
  /// The cache's sizes from the device; `preconditioned_pages`: logical pages holding data before the run.
  void setup_slc(int64_t preconditioned_pages);
  /// A host page just placed at `ppa` of `plane` (`fresh`: its logical page held no data): into the SLC region if it
  /// has room, else directly to TLC. Returns its program time. `page_first`: the first unit of its flash page (counts
  /// the flash page's program; always, with page-level mapping).
  Time slc_program(uint32_t ppa, int64_t plane, bool fresh, bool page_first);
  void fill_folds(int64_t plane);
  /// A fold starts: its die time (an SLC read and the page's program; nothing for a page no longer valid).
  Time fold_time(const Tx& t);
  void slc_op_done(const Tx& t);
  void slc_request_done();
  void on_slc_idle(uint32_t activity);
  void register_slc_results(StatGroup& g) const;

  // ---- events ----------------------------------------------------------------
  void dispatch(const Payload& p);

  // ---- results ---------------------------------------------------------------
  /// The run's results (`wall`: its wall-clock seconds) as one stats tree: MQSim's per-flow metrics, the FTL's,
  /// the flash's and the SLC cache's counts; results() is its JSON.
  void register_results(StatGroup& g, double wall) const;
  nlohmann::json results(double wall) const;

  /// The device-wide counts of the results (results()).
  struct Stats {
    int64_t cmt_hits = 0, cmt_misses = 0, cmt_write_hits = 0, cmt_write_misses = 0, cache_read_hits = 0, cache_merges = 0;
    int64_t mapping_reads = 0, mapping_writebacks = 0, update_reads = 0;
    int64_t flash_reads = 0, flash_programs = 0, flash_erases = 0, multiplane_ops = 0;
  };

  static constexpr size_t kMaxBacklog = size_t(1) << 18;  // requests waiting on the host per flow (~15 MB)
  static constexpr int64_t kComputeAhead = 2;             // segments of a die's Flash-Cosmos jobs kept queued
  WorkEstimate work_;
  const DeviceXml mapped_;   // the device as the FTL addresses it (mapped_view: a page is a mapping unit)
  const DeviceXml& device_;  // mapped_: every stage addresses pages of the mapping unit, timed as flash pages
  const RunOptions& options_;
  SsdModelOptions model_;  // options_.model: how closely to follow MQSim
  Ftl ftl_;
  EventHeap<Payload> events_;
  // the stages' state (above)
  HostInterfaceState host_;
  WriteCacheState data_cache_;
  MappingState mapping_;
  SchedulerState scheduler_;
  GcState gc_;
  ComputeJobState jobs_;
  SequentialWriteState writes_;
  SlcCacheState slc_;
  // a page's sectors, grouped for the written-sector bits (at most 32 groups: bits_of), and every group's bit
  int64_t sectors_per_page_ = 16, sectors_per_group_ = 1;
  int page_shift_ = -1;  // log2(sectors_per_page_) where it is a power of two (every shipped device), else -1
  uint32_t full_page_bits_ = 0;
  size_t compute_level_ = 0;  // level(): a Flash-Cosmos segment's, a user read's of class High (set once)
  std::string label_;         // the scenario, for messages
  Stats stats_;
};

}  // namespace bitline::ssd::detail
