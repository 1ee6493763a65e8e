// The general SSD's engine (internal to src/ssd): one class whose state is the device's, with its member functions
// defined in the stage files, each of which states its contract at its top:
//   host_interface.cpp         host flows, NVMe queues, the PCIe link, completions, results
//   data_cache.cpp             reads and writes through the controller's DRAM write cache
//   address_mapping.cpp        MQSim's cached mapping table: translation reads and write-backs
//   transaction_scheduler.cpp  per-unit queues, multi-plane operations, chips, channels, die operations
//   garbage_collection.cpp     victim selection, relocation and erase per plane
//   compute_jobs.cpp           Flash-Cosmos jobs and sequential writes (contract: compute_jobs.hpp)
//   device.cpp                 construction, the event loop and its dispatch, the entry points (device.hpp)
// One EventHeap drives every stage; events are a kind and an index, dispatched by a switch (device.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/event_queue.hpp"
#include "ssd/cmt.hpp"
#include "ssd/device_parts.hpp"
#include "ssd/ftl.hpp"

namespace bitline::ssd::detail {

class Sim {
 public:
  Sim(const DeviceXml& d, const ScenarioXml& s, const RunOptions& opt, const JobSpec* compute = nullptr, const ComputeRates& rates = {},
      const std::string& label = "scenario");

  nlohmann::json run();

  const ComputeResult& compute_result() const { return cr_; }
  const WorkEstimate& work() const { return work_; }

 private:
  /// The scenario's work, estimated before it runs (WorkEstimate). Rates in requests per second.
  WorkEstimate estimate_work() const;

  // ---- host side -----------------------------------------------------------
  uint32_t new_request(uint32_t f, bool read, int64_t lba, int64_t sectors, Time arrival);

  /// Generates one synthetic request of flow f arriving at t (unless the flow has stopped).
  void generate(uint32_t f, Time t);

  Drawn draw_ahead(uint32_t f) {
    Drawn r = draw(f);
    prefetch_lpa(f, uint32_t(r.lba / spp_));
    return r;
  }

  /// Starts loading what the translation and the FTL will touch for logical page lpa (hints only).
  void prefetch_lpa(uint32_t f, uint32_t lpa) const;

  /// Draws a synthetic request's direction, address and size from the flow's generator.
  Drawn draw(uint32_t f);

  void on_arrival(uint32_t f);

  void arrive(uint32_t id, Time t);

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
    enqueue(new_tx(Tx::mapping_read(uint32_t(flow), page, ppa, ftl_.plane_of_ppa(ppa), b)));
  }

  /// Makes room in a full CMT; a dirty victim's translation page is written back.
  void make_room(Cmt& c, uint32_t flow) {
    if (!c.full()) return;
    auto [page, dirty] = c.evict();
    if (dirty && M_.translation_writeback) writeback(c, page, flow);
  }

  /// MQSim's translation-page write-back: every dirty entry of the page is cleaned, the sectors holding
  /// its clean cached entries are read (to merge), and the page is programmed (see translation_programs).
  void writeback(Cmt& c, uint32_t page, uint32_t flow);

  void park(uint32_t page, uint32_t tx) {
    uint32_t h = arriving_[page];
    park_next_[tx] = h == kNotArriving ? kNone : h;
    arriving_[page] = tx;
  }

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
  void issue_programs(uint32_t id);

  /// MQSim's destage buffer: takes the request's pages into the write cache while the sectors being
  /// programmed from the cache stay under the back-pressure limit; a cold page is programmed at once, a
  /// hot one merges into its slot. Returns whether the whole request is in the cache.
  bool destage(uint32_t id);

  int64_t sectors_of(uint32_t bits) const { return std::min<int64_t>(spp_, int64_t(__builtin_popcount(bits)) * grp_); }

  uint32_t new_batch();

  /// The data of evicted dirty slots has been read from DRAM: program it.
  void on_eviction_read(uint32_t batch);

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
  void cache_program_done(const Tx& t);

  // ---- completion ------------------------------------------------------------
  void on_complete(uint32_t id);

  // ---- transactions, dies and chips ---------------------------------------------
  uint32_t new_tx(const Tx& t);

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
  void start_die(int64_t unit);

  /// Whether another plane of program f's die could take a program with it now: its next page is f's (with
  /// multiplane_same_page) and it can allocate a page (as a host or a GC program: their frontiers differ). When none can, the
  /// queues hold no companion for f and need no scan.
  bool program_companion_possible(const Tx& f, int64_t off) const;

  int64_t channel_of_plane(int64_t plane) const { return channel_of_[size_t(plane)]; }

  /// issue_on_idle_channel: the channel's transfers have ended; its units are visited once each in round-robin
  /// order, the turn moving on with every visit (MQSim's TSU_Base::handle_channel_idle_signal), an idle one with work
  /// starting it, until one of them occupies the channel.
  void on_channel_idle(uint32_t ch);

  Time xfer_end(int64_t plane, int64_t b) {
    Time& ch = channel_free_[channel_of_plane(plane)];
    Time start = std::max(ev_.now(), ch);
    ch = start + chan_time_(b);
    return ch;
  }

  void execute(int64_t unit);

  void on_read_sensed(int64_t unit);

  void on_xfer_done(uint32_t tx);

  void read_done(uint32_t tx);

  void on_die_op_done(int64_t unit);

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

  const Segment& segment_of(const Tx& t) const { return segs_[t.job.tmpl][t.job.segment]; }

  void setup_compute();

  /// Queues the next segment of `die` (if any) on the die's first plane: one transaction for all the job's planes.
  /// A program waits (held) until its slices are in the die's latches. Returns whether it queued one.
  bool issue_job(uint32_t die);

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
  void compute_out(uint32_t tx);

  /// Cache read: a sensed page enters the cache latch if it is empty, and the die is free for its next operation;
  /// otherwise the page waits in the die (busy) for the latch.
  void sensed_to_cache(int64_t unit, uint32_t tx);

  /// Cache read: the latch's page has left: it goes on by its route, and a page waiting in the die takes the latch.
  void cache_emptied(int64_t unit, uint32_t tx);

  /// Over the PCIe link (its FIFO `busy`, one per direction); returns the arrival, pcie_latency after the end.
  Time over_pcie(Time& busy, int64_t bytes);
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
  void job_done(const Tx& t);

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
  void feed_host();

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
  void try_data_in(uint32_t ch);

  void on_data_in_done(uint32_t ch);

  /// The run's totals: the time, the SSD's active part, the busiest resource.
  void finish_compute();

  // ---- garbage collection ------------------------------------------------------
  void maybe_start_gc(int64_t plane);

  void gc_page_done(int64_t plane) {
    GcJob& g = gc_[plane];
    if (--g.outstanding > 0) return;
    enqueue(new_tx(Tx::gc_erase(plane, g.victim)));
  }

  // ---- events ----------------------------------------------------------------
  void dispatch(const Payload& p);

  // ---- results ---------------------------------------------------------------
  nlohmann::json results(double wall) const;

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
  std::string label_;  // the scenario, for messages
  Stats stats_;
};

}  // namespace bitline::ssd::detail
