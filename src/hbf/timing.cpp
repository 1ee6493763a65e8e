#include "hbf/timing.hpp"
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "core/error.hpp"
#include "core/event_queue.hpp"

namespace bitline::hbf {

const Registry<Granularity>& granularities() {
  static const Registry<Granularity> r(
      "timing granularity",
      {{"megapage", "one event per megapage command (the M planes of a megaplane move together)", Granularity::Megapage},
       {"plane", "one event per plane page, every plane its own lane (slower; validates the megapage mode)", Granularity::Plane}});
  return r;
}

const Registry<KvReadQueue>& kv_read_queues() {
  static const Registry<KvReadQueue> r(
      "KV read queue",
      {{"kernel", "a kernel's scattered KV reads are queued per megaplane at once (one tile per kernel)", KvReadQueue::Kernel},
       {"tile", "in tiles of K megapages, one after the other", KvReadQueue::Tile}});
  return r;
}

std::string to_string(Granularity g) { return std::string(Choice<Granularity, granularities>(g).name()); }

int64_t ReadPlan::bytes() const {
  int64_t n = 0;
  for (const auto& u : units) n += u.bytes();
  return n;
}

ReadOptions read_options(const System& sys) {
  const RuntimeParams& r = sys.hbf().runtime;
  return ReadOptions{r.prefetch, r.prefetch_distance, *r.granularity};
}

namespace {

// What an event carries through the engine (core::EventHeap orders by time, then scheduling order).
enum EvKind : uint32_t { kSenseDone, kXferDone, kHbmDone, kKernelDone, kProgDone, kArrived };
struct Ev {
  uint32_t kind;
  uint32_t arg;
};
/// The event heap's lane of an event (core/event_queue.hpp): its kind. Sensings end a fixed tR after they start, and
/// arrivals and transfers mostly come in time order too, so most events skip the heap.
inline int event_lane(const Ev& e) { return int(e.kind); }
static_assert(kArrived < kEventLanes);

Time max(Time a, Time b) { return a > b ? a : b; }

class ReadSim {
 public:
  ReadSim(const System& sys, const ReadPlan& plan, const ReadOptions& opt)
      : sys_(sys),
        plan_(plan),
        opt_(opt),
        lanes_(opt.granularity == Granularity::Plane ? sys.lanes() : 1),
        piece_(opt.granularity == Granularity::Plane ? sys.page_size().raw() : sys.megapage().raw()),
        t_read_(sys.t_sense()),
        bw_(sys.hbf().timing.interface_bandwidth) {
    const int64_t k = sys.megaplanes();
    const size_t n = plan.units.size();
    state_.assign(n, 0);
    tile_of_.resize(n);
    for (uint32_t t = 0; t < plan.tiles.size(); ++t) {
      const ReadTile& tile = plan.tiles[t];
      if (size_t(tile.first) + tile.count > n) throw ModelError("simulate_reads: a tile refers to units past the plan's end");
      for (uint32_t i = tile.first; i < tile.first + tile.count; ++i) tile_of_[i] = t;
    }
    for (const auto& u : plan.units) {
      if (u.end <= u.begin || int64_t(u.end) > sys.megapage().raw())
        throw ModelError(fmt::format("simulate_reads: unit byte range [{}, {}) is empty or exceeds a megapage", u.begin, u.end));
      if (!u.hbm && int64_t(u.megaplane) >= k)
        throw ModelError(fmt::format("simulate_reads: megaplane {} does not exist ({} megaplanes)", u.megaplane, k));
    }
    mp_.resize(size_t(k));
    latch_free_.assign(size_t(k * lanes_), int16_t(sys.hbf().timing.page_buffers));
    slot_free_.assign(size_t(k * lanes_), int32_t(sys.plane_sram_units()));
    st_.resize(size_t(sys.stacks()));
    const int64_t base_slots = sys.hbf().sram.base_sram.raw() / piece_;
    for (auto& s : st_) s.base_free = base_slots;
    tile_left_.assign(plan.tiles.size(), 0);
    gate_of_.assign(plan.tiles.size(), -1);
    for (size_t t = 0; t < plan.tiles.size(); ++t) gate_of_[t] = plan.tiles[t].gate ? int64_t(t) : t > 0 ? gate_of_[t - 1] : -1;
    kernel_start_.assign(plan.tiles.size(), Time{});
    commands_.assign(size_t(k), 0);
    res_.stack_bytes.assign(size_t(sys.stacks()), 0);
  }

  ReadResult run() {
    if (!plan_.tiles.empty()) start_tile(0);
    while (!ev_.empty()) {
      const Ev e = ev_.pop().payload;
      now_ = ev_.now();
      ++res_.events;
      switch (e.kind) {
        case kSenseDone:
          sense_done(e.arg);
          break;
        case kXferDone:
          xfer_done(e.arg);
          break;
        case kHbmDone:
          piece_done(tile_of_[e.arg]);
          break;
        case kKernelDone:
          kernel_done(e.arg);
          break;
        case kArrived:
          arrived(e.arg);
          break;
        default:
          break;
      }
    }
    finish();
    return res_;
  }

 private:
  enum : uint8_t { kResPlane = 1, kResBase = 2, kSensed = 4, kDemanded = 8, kDirect = 16 };
  struct Megaplane {
    bool busy = false;
    uint32_t cur = 0;
    std::deque<uint32_t> demand, prefetch;
    std::deque<uint32_t> waiting;  // prefetched units waiting for an SRAM slot, in issue order
  };
  struct Stack {
    bool busy = false;
    uint64_t cur = 0;
    std::deque<uint64_t> ready, ready_direct;
    int64_t base_free = 0;
  };

  int64_t lo(uint32_t u) const { return lanes_ == 1 ? 0 : plan_.units[u].begin / piece_; }
  int64_t hi(uint32_t u) const { return lanes_ == 1 ? 0 : (plan_.units[u].end - 1) / piece_; }
  int64_t piece_bytes(uint64_t p) const {
    const ReadUnit& u = plan_.units[size_t(p / uint64_t(lanes_))];
    if (lanes_ == 1) return u.bytes();
    const int64_t j = int64_t(p % uint64_t(lanes_));
    return std::max<int64_t>(0, std::min<int64_t>(u.end, (j + 1) * piece_) - std::max<int64_t>(u.begin, j * piece_));
  }
  size_t res(uint32_t u, int64_t j) const { return size_t(int64_t(plan_.units[u].megaplane) * lanes_ + j); }
  size_t stack(uint32_t u) const { return size_t(sys_.stack_of(plan_.units[u].megaplane)); }

  void start_tile(uint32_t t) {
    kernel_start_[t] = now_;
    if (opt_.prefetch)
      while (next_issue_ < plan_.tiles.size() && int64_t(next_issue_) <= int64_t(t) + opt_.distance && gate_of_[next_issue_] <= int64_t(t))
        issue(next_issue_++);  // (the queue waits at a gate tile until it starts)
    const ReadTile& tile = plan_.tiles[t];
    for (uint32_t u = tile.first; u < tile.first + tile.count; ++u) {
      const ReadUnit& ru = plan_.units[u];
      if (ru.hbm) {
        ++tile_left_[t];
        const Time x = Bytes(ru.bytes()) / sys_.hbm_bandwidth();
        hbm_busy_ = max(now_, hbm_busy_) + x;
        ev_.push(hbm_busy_ + sys_.hbm().latency, Ev{kHbmDone, u});
        res_.hbm_bytes += ru.bytes();
        continue;
      }
      tile_left_[t] += hi(u) - lo(u) + 1;
      state_[u] |= kDemanded;
      if (state_[u] & (kResPlane | kResBase)) {
        if (state_[u] & kSensed) make_ready(u);
      } else {
        state_[u] |= kDirect;
        res_.direct_reads += hi(u) - lo(u) + 1;
        mp_[ru.megaplane].demand.push_back(u);
        try_sense(ru.megaplane);
      }
    }
    // The queues take slots after the kernel's own reads: a unit of this tile still waiting is read directly.
    if (opt_.prefetch) admit_all();
    for (size_t s = 0; s < st_.size(); ++s) try_xfer(s);
    if (tile_left_[t] == 0) ev_.push(max(now_, kernel_start_[t] + tile.compute), Ev{kKernelDone, t});
  }

  // SramPrefetch of one tile: its units join their megaplane's prefetch queue (in issue order); admit_all() gives the
  // queues' heads plane SRAM, else their stack's base-die SRAM, as slots free (SramRelease); a unit whose kernel asks
  // for it before it has a slot leaves the queue and is read directly.
  void issue(uint32_t t) {
    const ReadTile& tile = plan_.tiles[t];
    for (uint32_t u = tile.first; u < tile.first + tile.count; ++u) {
      const ReadUnit& ru = plan_.units[u];
      if (ru.hbm) continue;
      mp_[ru.megaplane].waiting.push_back(u);
    }
  }

  // A megaplane's plane SRAM holds only its own data: each queue's head takes its slots while there are any. The
  // stack's base-die SRAM is shared by its megaplanes and taken in issue order across their queues (the oldest
  // SramPrefetch first), so no megaplane takes it by its index. A head that finds neither waits for SramRelease.
  void admit_all() {
    const int64_t per_stack = sys_.megaplanes_per_stack();
    for (size_t si = 0; si < st_.size(); ++si) {
      heads_.clear();
      for (int64_t i = 0; i < per_stack; ++i) {
        const MegaplaneId k(int64_t(si) * per_stack + i);
        if (mp_[k].waiting.empty()) continue;
        admit_plane(k);
        if (!mp_[k].waiting.empty()) heads_.push_back(k);
      }
      // Base-die SRAM by issue order: a merge of the queues by their heads' unit index (units are numbered in
      // issue order).
      const auto later = [this](MegaplaneId a, MegaplaneId b) { return mp_[a].waiting.front() > mp_[b].waiting.front(); };
      std::make_heap(heads_.begin(), heads_.end(), later);
      Stack& stk = st_[si];
      while (!heads_.empty()) {
        std::pop_heap(heads_.begin(), heads_.end(), later);
        const MegaplaneId k = heads_.back();
        std::deque<uint32_t>& q = mp_[k].waiting;
        const uint32_t u = q.front();
        const int64_t n = hi(u) - lo(u) + 1;
        if (stk.base_free < n) break;  // the oldest waits for SramRelease, and those behind it with it
        stk.base_free -= n;
        state_[u] |= kResBase;
        res_.prefetched_base_sram += n;
        q.pop_front();
        mp_[k].prefetch.push_back(u);
        try_sense(k);
        admit_plane(k);  // (in plane mode the next head may need other planes' slots)
        if (q.empty())
          heads_.pop_back();
        else
          std::push_heap(heads_.begin(), heads_.end(), later);
      }
    }
  }

  // The heads of a queue whose kernel asked first are read directly: they leave it.
  void drop_demanded(std::deque<uint32_t>& q) {
    while (!q.empty() && (state_[q.front()] & kDemanded)) q.pop_front();
  }

  // Gives plane-SRAM slots to the head of megaplane `k`'s prefetch queue while its planes have any.
  void admit_plane(MegaplaneId k) {
    std::deque<uint32_t>& q = mp_[k].waiting;
    for (drop_demanded(q); !q.empty(); drop_demanded(q)) {
      const uint32_t u = q.front();
      const int64_t a = lo(u), b = hi(u), n = b - a + 1;
      for (int64_t j = a; j <= b; ++j)
        if (slot_free_[res(u, j)] <= 0) return;
      for (int64_t j = a; j <= b; ++j) --slot_free_[res(u, j)];
      state_[u] |= kResPlane;
      res_.prefetched_plane_sram += n;
      q.pop_front();
      mp_[k].prefetch.push_back(u);
      try_sense(k);
    }
  }

  void try_sense(MegaplaneId k) {
    Megaplane& m = mp_[k];
    if (m.busy) return;
    std::deque<uint32_t>* q = !m.demand.empty() ? &m.demand : !m.prefetch.empty() ? &m.prefetch : nullptr;
    if (!q) return;
    const uint32_t u = q->front();
    const int64_t a = lo(u), b = hi(u);
    for (int64_t j = a; j <= b; ++j)
      if (latch_free_[res(u, j)] <= 0) return;  // waits for a page buffer to drain over the interface
    q->pop_front();
    for (int64_t j = a; j <= b; ++j) --latch_free_[res(u, j)];
    m.busy = true;
    m.cur = u;
    ++commands_[k];
    ev_.push(now_ + t_read_, Ev{kSenseDone, k});
  }

  // Ready data queues for its stack's interface: pages still in a page buffer (direct reads) go first, so that the
  // buffers drain and their megaplanes keep sensing; data held in SRAM can wait.
  void make_ready(uint32_t u) {
    Stack& s = st_[stack(u)];
    std::deque<uint64_t>& q = (state_[u] & kDirect) ? s.ready_direct : s.ready;
    for (int64_t j = lo(u); j <= hi(u); ++j) q.push_back(uint64_t(u) * uint64_t(lanes_) + uint64_t(j));
  }

  // Sensing ended: the megaplane takes its next read; the data crosses the die's link to the base die and is decoded
  // (System::t_after_sense) before it is ready.
  void sense_done(MegaplaneId k) {
    Megaplane& m = mp_[k];
    const uint32_t u = m.cur;
    m.busy = false;
    const Time after = sys_.t_after_sense(plan_.units[u].bytes());
    if (after.raw() > 0) {
      ev_.push(now_ + after, Ev{kArrived, u});
      try_sense(k);
    } else {
      arrived(u);
    }
  }

  void arrived(uint32_t u) {
    const MegaplaneId k = plan_.units[u].megaplane;
    state_[u] |= kSensed;
    if (state_[u] & (kResPlane | kResBase)) {
      for (int64_t j = lo(u); j <= hi(u); ++j) ++latch_free_[res(u, j)];  // the page moved on into SRAM
      if (state_[u] & kDemanded) make_ready(u);
    } else {
      make_ready(u);  // a direct read: the page waits in its buffer
    }
    try_sense(k);
    try_xfer(stack(u));
  }

  void try_xfer(size_t si) {
    Stack& s = st_[si];
    if (s.busy || (s.ready.empty() && s.ready_direct.empty())) return;
    std::deque<uint64_t>& q = s.ready_direct.empty() ? s.ready : s.ready_direct;
    s.cur = q.front();
    q.pop_front();
    s.busy = true;
    ev_.push(now_ + Bytes(piece_bytes(s.cur)) / bw_, Ev{kXferDone, uint32_t(si)});
  }

  void xfer_done(uint32_t si) {
    Stack& s = st_[si];
    s.busy = false;
    const uint64_t p = s.cur;
    const uint32_t u = uint32_t(p / uint64_t(lanes_));
    const int64_t j = int64_t(p % uint64_t(lanes_));
    const int64_t n = piece_bytes(p);
    res_.stack_bytes[si] += n;
    res_.flash_bytes += n;
    if (state_[u] & kDirect) {
      ++latch_free_[res(u, j)];
      try_sense(plan_.units[u].megaplane);
    }
    piece_done(tile_of_[u]);
    try_xfer(si);
  }

  void piece_done(uint32_t t) {
    if (--tile_left_[t] == 0) ev_.push(max(now_, kernel_start_[t] + plan_.tiles[t].compute), Ev{kKernelDone, t});
  }

  // The kernel of tile t is done: SramRelease its prefetches, start the next tile.
  void kernel_done(uint32_t t) {
    const ReadTile& tile = plan_.tiles[t];
    for (uint32_t u = tile.first; u < tile.first + tile.count; ++u) {
      if (state_[u] & kResPlane)
        for (int64_t j = lo(u); j <= hi(u); ++j) ++slot_free_[res(u, j)];
      if (state_[u] & kResBase) st_[stack(u)].base_free += hi(u) - lo(u) + 1;
    }
    // The freed slots go to the prefetch queues once the next tile has claimed its own reads (start_tile).
    if (t + 1 < plan_.tiles.size())
      start_tile(t + 1);
    else
      end_ = now_;
  }

  void finish() {
    res_.elapsed = end_;
    res_.bytes = res_.flash_bytes + res_.hbm_bytes;
    int64_t total = 0;
    for (int64_t c : commands_) res_.max_plane_load = std::max(res_.max_plane_load, c), total += c;
    res_.commands = total;
    res_.pages_sensed = total * sys_.lanes();
    res_.mean_plane_load = double(total) / double(sys_.megaplanes());
    std::vector<int64_t> load(size_t(sys_.megaplanes()), 0);
    double tile_max_sum = 0;
    for (const ReadTile& t : plan_.tiles) {
      int64_t mx = 0;
      for (uint32_t u = t.first; u < t.first + t.count; ++u)
        if (!plan_.units[u].hbm) mx = std::max(mx, ++load[plan_.units[u].megaplane]);
      for (uint32_t u = t.first; u < t.first + t.count; ++u)
        if (!plan_.units[u].hbm) load[plan_.units[u].megaplane] = 0;
      tile_max_sum += double(mx);
    }
    if (!plan_.tiles.empty()) res_.tile_max_plane_load_mean = tile_max_sum / double(plan_.tiles.size());
    if (end_.raw() > 0) res_.plane_busy_fraction = double(total) * to_s(t_read_) / (double(sys_.megaplanes()) * to_s(end_));
    res_.energy = sys_.hbf().energy.read * Bytes(res_.pages_sensed * sys_.page_size().raw()) + sys_.hbm().energy * Bytes(res_.hbm_bytes);
  }

  const System& sys_;
  const ReadPlan& plan_;
  ReadOptions opt_;
  const int64_t lanes_, piece_;
  const Time t_read_;
  const Bandwidth bw_;
  std::vector<uint8_t> state_;
  std::vector<uint32_t> tile_of_;
  std::vector<Megaplane> mp_;
  std::vector<MegaplaneId> heads_;  // admit_all's scratch: the stack's queues with a head waiting
  std::vector<int16_t> latch_free_;
  std::vector<int32_t> slot_free_;
  std::vector<Stack> st_;
  std::vector<int64_t> tile_left_;
  std::vector<int64_t> gate_of_;  // per tile: the latest gate tile at or before it (-1: none)
  std::vector<Time> kernel_start_;
  std::vector<int64_t> commands_;
  uint32_t next_issue_ = 0;
  Time now_{}, end_{}, hbm_busy_{};
  EventHeap<Ev> ev_;
  ReadResult res_;
};

class WriteSim {
 public:
  WriteSim(const System& sys, std::span<const MegaplaneId> order, Granularity g)
      : sys_(sys),
        order_(order),
        lanes_(g == Granularity::Plane ? sys.lanes() : 1),
        piece_(g == Granularity::Plane ? sys.page_size().raw() : sys.megapage().raw()),
        bw_(sys.hbf().timing.interface_bandwidth) {
    const int64_t k = sys.megaplanes();
    st_.resize(size_t(sys.stacks()));
    for (uint32_t i = 0; i < order.size(); ++i) {
      if (int64_t(order[i]) >= k)
        throw ModelError(fmt::format("simulate_writes: megaplane {} does not exist ({} megaplanes)", order[i], k));
      for (int64_t j = 0; j < lanes_; ++j)
        st_[size_t(sys.stack_of(order[i]))].queue.push_back(uint64_t(i) * uint64_t(lanes_) + uint64_t(j));
    }
    buf_free_.assign(size_t(k * lanes_), int16_t(sys.hbf().timing.page_buffers));
    arrived_.assign(order.size(), 0);
    mp_.resize(size_t(k));
    res_.stack_bytes.assign(size_t(sys.stacks()), 0);
  }

  WriteResult run() {
    for (size_t s = 0; s < st_.size(); ++s) try_xfer(s);
    while (!ev_.empty()) {
      const Ev e = ev_.pop().payload;
      now_ = ev_.now();
      ++res_.events;
      if (e.kind == kXferDone)
        xfer_done(e.arg);
      else
        prog_done(e.arg);
    }
    res_.elapsed = now_;
    res_.units = int64_t(order_.size());
    res_.bytes = res_.units * sys_.megapage().raw();
    if (now_.raw() > 0)
      res_.plane_busy_fraction = double(res_.units) * to_s(sys_.hbf().timing.t_prog) / (double(sys_.megaplanes()) * to_s(now_));
    res_.energy = sys_.hbf().energy.program * Bytes(res_.bytes) + sys_.hbm().energy * Bytes(res_.bytes);
    return res_;
  }

 private:
  struct Stack {
    bool busy = false;
    uint64_t cur = 0;
    std::deque<uint64_t> queue;
  };
  struct Megaplane {
    bool busy = false;
    uint32_t cur = 0;
    std::deque<uint32_t> ready;
  };
  size_t res(uint64_t p) const { return size_t(int64_t(order_[size_t(p / uint64_t(lanes_))]) * lanes_ + int64_t(p % uint64_t(lanes_))); }

  // The stack's write queue is served in order; its head waits for a free page buffer on its planes.
  void try_xfer(size_t si) {
    Stack& s = st_[si];
    if (s.busy || s.queue.empty()) return;
    const uint64_t p = s.queue.front();
    if (buf_free_[res(p)] <= 0) return;
    --buf_free_[res(p)];
    s.queue.pop_front();
    s.busy = true;
    s.cur = p;
    ev_.push(now_ + Bytes(piece_) / bw_, Ev{kXferDone, uint32_t(si)});
  }

  void xfer_done(uint32_t si) {
    Stack& s = st_[si];
    s.busy = false;
    res_.stack_bytes[si] += piece_;
    const uint32_t u = uint32_t(s.cur / uint64_t(lanes_));
    if (++arrived_[u] == lanes_) {
      mp_[order_[u]].ready.push_back(u);
      try_prog(order_[u]);
    }
    try_xfer(si);
  }

  void try_prog(MegaplaneId k) {
    Megaplane& m = mp_[k];
    if (m.busy || m.ready.empty()) return;
    m.cur = m.ready.front();
    m.ready.pop_front();
    m.busy = true;
    ev_.push(now_ + sys_.hbf().timing.t_prog, Ev{kProgDone, k});
  }

  void prog_done(MegaplaneId k) {
    Megaplane& m = mp_[k];
    m.busy = false;
    for (int64_t j = 0; j < lanes_; ++j) ++buf_free_[size_t(int64_t(k) * lanes_ + j)];
    try_prog(k);
    try_xfer(size_t(sys_.stack_of(k)));
  }

  const System& sys_;
  std::span<const MegaplaneId> order_;
  const int64_t lanes_, piece_;
  const Bandwidth bw_;
  std::vector<Stack> st_;
  std::vector<Megaplane> mp_;
  std::vector<int16_t> buf_free_;
  std::vector<int64_t> arrived_;
  Time now_{};
  EventHeap<Ev> ev_;
  WriteResult res_;
};

}  // namespace

ReadResult simulate_reads(const System& sys, const ReadPlan& plan, const ReadOptions& opt) {
  if (opt.distance < 0) throw ModelError("simulate_reads: prefetch distance must not be negative");
  return ReadSim(sys, plan, opt).run();
}

WriteResult simulate_writes(const System& sys, std::span<const MegaplaneId> order, Granularity g) { return WriteSim(sys, order, g).run(); }

Json ReadResult::json(const System& sys) const {
  Json j;
  const double gbs = gb_per_s();
  j["seconds"] = to_s(elapsed);
  j["gb_per_s"] = gbs;
  j["gb_per_s_per_stack"] = sys.stacks() > 0 ? gbs / double(sys.stacks()) : 0.0;
  j["plane_busy_fraction"] = plane_busy_fraction;
  j["max_plane_load"] = max_plane_load;
  j["mean_plane_load"] = mean_plane_load;
  j["tile_max_plane_load_mean"] = tile_max_plane_load_mean;
  j["bytes"] = bytes;
  j["flash_bytes"] = flash_bytes;
  j["hbm_bytes"] = hbm_bytes;
  Json per = Json::array();
  for (int64_t b : stack_bytes) per.push_back(elapsed.raw() > 0 ? double(b) / to_s(elapsed) * 1e-9 : 0.0);
  j["stack_gb_per_s"] = per;
  j["megapage_commands"] = commands;
  j["pages_sensed"] = pages_sensed;
  j["prefetched"] = {{"plane_sram", prefetched_plane_sram}, {"base_sram", prefetched_base_sram}, {"direct_reads", direct_reads}};
  j["energy_j"] = energy.raw();
  j["events"] = events;
  return j;
}

Json WriteResult::json(const System& sys) const {
  Json j;
  j["seconds"] = to_s(elapsed);
  j["gb_per_s"] = gb_per_s();
  j["gb_per_s_per_stack"] = sys.stacks() > 0 ? gb_per_s() / double(sys.stacks()) : 0.0;
  j["bytes"] = bytes;
  j["megapages"] = units;
  j["plane_busy_fraction"] = plane_busy_fraction;
  j["energy_j"] = energy.raw();
  j["events"] = events;
  return j;
}

}  // namespace bitline::hbf
