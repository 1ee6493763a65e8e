#include "llm/timing.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>

namespace bitline::llm {

Breakdown& Breakdown::operator+=(const Breakdown& o) {
  weights += o.weights;
  kv += o.kv;
  compute += o.compute;
  comm += o.comm;
  overhead += o.overhead;
  flash_latency += o.flash_latency;
  kv_write += o.kv_write;
  kv_erase += o.kv_erase;
  kv_arrange += o.kv_arrange;
  engine += o.engine;
  return *this;
}

Breakdown Breakdown::scaled(double k) const {
  Breakdown b;
  b.weights = weights * k;
  b.kv = kv * k;
  b.compute = compute * k;
  b.comm = comm * k;
  b.overhead = overhead * k;
  b.flash_latency = flash_latency * k;
  b.kv_write = kv_write * k;
  b.kv_erase = kv_erase * k;
  b.kv_arrange = kv_arrange * k;
  b.engine = engine * k;
  return b;
}

void Breakdown::register_stats_ms(StatGroup& g) const {
  auto ms = [&g](const char* name, const Time& t, const char* desc) {
    g.derived(
        name, [&t] { return to_s(t) * 1e3; }, desc);
  };
  ms("weights", weights, "reading the weights (ms)");
  ms("kv", kv, "reading the KV cache (ms)");
  ms("compute", compute, "GEMMs and attention on the GPU (ms)");
  ms("communication", comm, "collectives on the critical path (ms)");
  ms("overhead", overhead, "kernel launch overheads (ms)");
  ms("exposed_flash_latency", flash_latency, "flash sensing latency not hidden by prefetch (ms)");
  ms("kv_write", kv_write, "programming the step's new KV (ms)");
  ms("kv_erase", kv_erase, "erasing blocks for new KV (ms)");
  ms("kv_arrange", kv_arrange, "GroupArrange: copying selective-offload replicas to HBM (ms)");
  ms("engine", engine, "serving engine: host launches the GPU waits for and per-iteration costs (ms)");
}

Json Breakdown::json_ms() const {
  return dump_stats([this](StatGroup& g) { register_stats_ms(g); });
}

ReadCounters& ReadCounters::operator+=(const ReadCounters& o) {
  flash_units += o.flash_units;
  flash_bytes += o.flash_bytes;
  hbm_bytes += o.hbm_bytes;
  tiles += o.tiles;
  return *this;
}

ReadCounters ReadCounters::scaled(double k) const { return ReadCounters{flash_units * k, flash_bytes * k, hbm_bytes * k, tiles * k}; }

MemoryTiming MemoryTiming::of(const hbf::System& sys) {
  MemoryTiming mt;
  mt.megaplanes = sys.stacks() > 0 ? sys.megaplanes() : 0;
  mt.stacks = sys.stacks();
  mt.stack_of.resize(size_t(mt.megaplanes));
  for (int64_t m = 0; m < mt.megaplanes; ++m) mt.stack_of[size_t(m)] = uint16_t(sys.stack_of(hbf::MegaplaneId(m)));
  mt.t_read = sys.t_sense();
  mt.die_link = sys.hbf().timing.die_link_bandwidth;
  mt.t_ecc = sys.hbf().timing.t_ecc_decode;
  mt.interface = sys.hbf().timing.interface_bandwidth;
  mt.hbm = sys.hbm_bandwidth();
  mt.hbm_latency = sys.hbm().latency;
  mt.prefetch = sys.hbf().runtime.prefetch;
  mt.distance = sys.hbf().runtime.prefetch_distance;
  mt.megapage = sys.megapage().raw();
  if (mt.megaplanes > 0) {
    mt.plane_units = sys.plane_sram_units();
    mt.base_units = sys.base_sram_units();
  }
  return mt;
}

FastTimer::FastTimer(const MemoryTiming& mt) : mt_(mt) {
  frontier_.assign(size_t(mt.megaplanes), 0);
  // The ring holds at least the last distance + 1 tiles, a power of two of them so that a slot is a mask, not a
  // division (the older slots are never read).
  const size_t stacks = size_t(std::max<int64_t>(mt.stacks, 1)), ring = std::bit_ceil(size_t(mt.distance + 1));
  ring_mask_ = int64_t(ring) - 1;
  starts_.assign(ring, 0);
  held_plane_.assign(ring * size_t(mt.megaplanes), 0);
  held_base_.assign(ring * stacks, 0);
  plane_.assign(size_t(mt.megaplanes), Pool{});
  base_.assign(stacks, Pool{});
  seen_.assign(size_t(mt.megaplanes), -1);
  win_plane_.assign(size_t(mt.megaplanes), 0);
  win_base_.assign(stacks, 0);
  stack_sum_.assign(stacks, 0);
  busy_.assign(stacks, 0);
  last_.assign(stacks, {});
  in_order_.assign(stacks, 1);
}

void FastTimer::shift(Time dt) {
  now_ += dt.raw();
  first_start_ += dt.raw();
  for (auto& f : frontier_) f += dt.raw();
  for (auto& s : starts_) s += dt.raw();
}

namespace {
/// A tile's time `dur` into the step's breakdown: its part's, and for a memory tile (weights, KV) the time its memory
/// (`mem`: the interfaces' transfers or HBM's, the longer) or its compute kept it busy, the rest as flash latency.
inline void account_tile(Breakdown& bd, const StepTile& t, Time dur, int64_t mem) {
  switch (t.part) {
    case Part::Overhead:
      bd.overhead += dur;
      break;
    case Part::Comm:
      bd.comm += dur;
      break;
    case Part::Compute:
      bd.compute += dur;
      break;
    case Part::Weights:
    case Part::Kv: {
      const int64_t c = t.compute.raw();
      const Time busy(std::min(std::max(mem, c), dur.raw()));
      if (c >= mem && !t.streamed)
        bd.compute += busy;
      else
        (t.part == Part::Weights ? bd.weights : bd.kv) += busy;
      bd.flash_latency += dur - busy;
      break;
    }
  }
}
}  // namespace

/// Slides the SRAM windows' sums to the tiles oldest..t-1: the ring still holds every tile that leaves them (they
/// start at t-1-d or later).
void FastTimer::slide_windows(int64_t oldest) {
  const int64_t nm = mt_.megaplanes, ns = int64_t(base_.size());
  for (; win_lo_ < oldest; ++win_lo_) {
    const size_t slot = size_t(win_lo_ & ring_mask_);
    for (int64_t m = 0; m < nm; ++m) win_plane_[size_t(m)] -= held_plane_[slot * size_t(nm) + size_t(m)];
    for (int64_t s = 0; s < ns; ++s) win_base_[size_t(s)] -= held_base_[slot * size_t(ns) + size_t(s)];
  }
}

/// When tile t's megapages (their arrivals in arrivals_, some after the tile's start S) have all crossed their stacks'
/// interfaces. Each interface moves its megapages in the order they arrive (equal arrivals: the shorter first): one
/// pass in the tile's order, exact for every stack whose megapages came in that order; the others are sorted and
/// moved again.
int64_t FastTimer::interfaces_end(const TilePlan& plan, const StepTile& t, int64_t S) {
  const std::pair<int64_t, int64_t>* const arrival = arrivals_.data();
  const uint16_t* const stack_of = mt_.stack_of.data();
  std::fill(busy_.begin(), busy_.end(), S);
  std::fill(last_.begin(), last_.end(), std::pair<int64_t, int64_t>{INT64_MIN, INT64_MIN});
  std::fill(in_order_.begin(), in_order_.end(), 1);
  for (uint32_t k = 0; k < t.count; ++k) {
    const size_t s = stack_of[plan.units[t.first + k].megaplane];
    const auto& [a, x] = arrival[k];
    if (a < last_[s].first || (a == last_[s].first && x < last_[s].second)) in_order_[s] = 0;
    last_[s] = arrival[k];
    busy_[s] = std::max(busy_[s], a) + x;
  }
  int64_t end = S;
  for (size_t s = 0; s < busy_.size(); ++s) {
    if (!in_order_[s]) {
      sorted_.clear();
      for (uint32_t k = 0; k < t.count; ++k)
        if (stack_of[plan.units[t.first + k].megaplane] == s) sorted_.push_back(arrival[k]);
      std::sort(sorted_.begin(), sorted_.end());
      busy_[s] = S;
      for (const auto& [a, x] : sorted_) busy_[s] = std::max(busy_[s], a) + x;
    }
    end = std::max(end, busy_[s]);
  }
  return end;
}

void FastTimer::run(const TilePlan& plan, Breakdown& bd, ReadCounters& rc) {
  const int64_t d = mt_.distance, mask = ring_mask_;
  const int64_t tr = mt_.t_read.raw();
  const int64_t x_full = mt_.megaplanes > 0 ? (Bytes(mt_.megapage) / mt_.interface).raw() : 0;
  const auto after = [&](int64_t bytes) { return mt_.megaplanes > 0 ? (Bytes(bytes) / mt_.die_link + mt_.t_ecc).raw() : 0; };
  const int64_t after_full = after(mt_.megapage);
  const int64_t h_full = mt_.hbm.raw() > 0 ? (Bytes(std::max<int64_t>(mt_.megapage, 1)) / mt_.hbm).raw() : 0;  // 0: no HBM
  std::vector<int64_t>& stack_sum = stack_sum_;
  // A partial megapage's interface and after-sense times, for the size seen last (a layout's partial pages mostly
  // share one size): the same divisions, done once per size run instead of once per megapage.
  int64_t part_bytes = -1, part_x = 0, part_after = 0;
  // The per-megapage loop's tables as locals: the compiler cannot keep a member vector's data pointer in a register
  // across the loop's stores, and reloaded them for every megapage.
  const bool prefetch = mt_.prefetch;
  const int64_t plane_cap = mt_.plane_units, base_cap = mt_.base_units;
  Pool* const plane_pool = plane_.data();
  Pool* const base_pool = base_.data();
  int64_t* const seen = seen_.data();
  int64_t* const win_plane = win_plane_.data();
  int64_t* const win_base = win_base_.data();
  const int32_t* const held_plane = held_plane_.data();
  const int32_t* const held_base = held_base_.data();
  const int64_t* const starts = starts_.data();
  int64_t* const frontier = frontier_.data();
  const uint16_t* const stack_of = mt_.stack_of.data();
  for (const StepTile& t : plan.tiles) {
    const int64_t S = now_;
    if (tiles_ == 0) first_start_ = S;
    starts_[size_t(tiles_ & mask)] = S;
    // SramPrefetch of this tile's megapages, in the queue of their megaplane: each takes a slot of its megaplane's
    // plane SRAM, else of its stack's base-die SRAM, behind the tiles t-d..t-1 still holding theirs (hbf/timing.cpp's
    // admit()); a pool has room for the next megapage from the start of the earliest tile t' from which the tiles
    // t'..t-1 and this one hold fewer than its slots (tile t'-1 releases them when it ends, i.e. when t' starts). The
    // plane SRAM is taken when it has room no later than the base die. What has no slot by the tile's own start is
    // read on demand at S. A gate tile (router-driven experts): the queue waits there until it starts.
    if (t.gate) gate_ = tiles_;
    const int64_t t_now = tiles_, oldest = std::max<int64_t>({0, t_now - d, gate_}), ns = int64_t(base_.size());
    const int64_t nm = mt_.megaplanes;
    // Slide the windows' sums to the tiles oldest..t-1 (the ring still holds every tile that leaves them: they start
    // at t-1-d or later), then reuse the ring's slot of tile t-1-d for this tile.
    slide_windows(oldest);
    int32_t* plane_now = held_plane_.empty() ? nullptr : &held_plane_[size_t(t_now & mask) * size_t(nm)];
    int32_t* base_now = &held_base_[size_t(t_now & mask) * size_t(ns)];
    if (plane_now) std::fill(plane_now, plane_now + nm, 0);
    std::fill(base_now, base_now + ns, 0);
    if (mt_.prefetch && t.count > 0)
      for (int64_t s = 0; s < ns; ++s) base_[size_t(s)] = Pool{oldest, 0, win_base_[size_t(s)]};
    // The earliest tile from which pool p has a slot (t_now: none before this tile starts).
    const auto room = [&](Pool& p, const int32_t* held, int64_t stride, int64_t i, int64_t cap) {
      while (p.first < t_now && p.occ + p.taken + 1 > cap) p.occ -= held[size_t(p.first & mask) * size_t(stride) + size_t(i)], ++p.first;
      return p.occ + p.taken + 1 > cap ? t_now : p.first;
    };
    auto issue_of = [&](int64_t m, int64_t s) {
      if (!prefetch) return S;
      Pool& pp = plane_pool[m];
      if (seen[m] != t_now) seen[m] = t_now, pp = Pool{oldest, 0, win_plane[m]};
      const int64_t fp = room(pp, held_plane, nm, m, plane_cap);
      Pool& bp = base_pool[s];
      // The plane SRAM has room from the window's first tile: no pool is earlier, and it wins ties, so the base die's
      // pool is not asked (asking advances it only as far as its next question will).
      const int64_t fb = fp == oldest && fp < t_now ? fp : room(bp, held_base, ns, s, base_cap);
      const int64_t f = std::min(fp, fb);
      if (f >= t_now) return S;
      if (fp <= fb)
        ++pp.taken, ++plane_now[m], ++win_plane[m];
      else
        ++bp.taken, ++base_now[s], ++win_base[s];
      return f == 0 ? first_start_ : starts[f & mask];
    };
    ++tiles_;

    int64_t flash_end = S, xfer = 0;
    if (t.count > 0) {
      std::fill(stack_sum.begin(), stack_sum.end(), 0);
      if (arrivals_.size() < t.count) arrivals_.resize(t.count);
      std::pair<int64_t, int64_t>* const arrival = arrivals_.data();  // per megapage of the tile: (arrival, transfer)
      int64_t latest = 0;
      int64_t bytes = 0;  // (whole bytes: the sum is exact, and the double it is added to as before)
      // The stack of the megapages just before, and their transfers (added to stack_sum when the stack changes: a
      // sum in a register, not a load and a store per megapage that waits for the one before)
      int64_t run_stack = 0, run_sum = 0;
      for (uint32_t i = t.first; i < t.first + t.count; ++i) {
        const FlashUnit& u = plan.units[i];
        const int64_t s = stack_of[u.megaplane];
        int64_t& f = frontier[u.megaplane];
        f = std::max(issue_of(int64_t(u.megaplane), s), f) + tr;
        int64_t x = x_full, after_sense = after_full;
        if (int64_t(u.bytes) != mt_.megapage) {
          if (int64_t(u.bytes) != part_bytes)
            part_bytes = u.bytes, part_x = (Bytes(u.bytes) / mt_.interface).raw(), part_after = after(u.bytes);
          x = part_x, after_sense = part_after;
        }
        const int64_t ready = f + after_sense;
        if (s != run_stack) stack_sum[size_t(run_stack)] += run_sum, run_stack = s, run_sum = 0;
        run_sum += x;
        latest = std::max(latest, ready);
        arrival[i - t.first] = {std::max(S, ready), x};
        bytes += u.bytes;
      }
      stack_sum[size_t(run_stack)] += run_sum;
      for (int64_t v : stack_sum) xfer = std::max(xfer, v);
      // everything sensed before the kernel asked: the interfaces alone
      flash_end = latest <= S ? S + xfer : interfaces_end(plan, t, S);
      rc.flash_units += t.count;
      rc.flash_bytes += double(bytes);
    }
    int64_t hbm_time = 0;
    if (t.hbm_bytes > 0) {
      const int64_t full = t.hbm_bytes / mt_.megapage, rem = t.hbm_bytes % mt_.megapage;
      hbm_time = full * h_full + (rem > 0 ? (Bytes(rem) / mt_.hbm).raw() : 0) + mt_.hbm_latency.raw();
      rc.hbm_bytes += double(t.hbm_bytes);
    }
    const int64_t E = std::max({S + t.compute.raw(), flash_end, S + hbm_time});
    account_tile(bd, t, Time(E - S), std::max(xfer, hbm_time));
    rc.tiles += 1;
    now_ = E;
  }
}

StepTiming time_step_fast(const StepGraph& g, const GpuMemory& mem, const MemoryTiming& mt, int64_t sample_layers) {
  StepTiming st;
  FastTimer timer(mt);
  TilePlan plan;
  size_t i = 0;
  while (i < g.segments.size()) {
    const Segment& s0 = g.segments[i];
    size_t j = i + 1;
    if (s0.kind == 1 || s0.kind == 2)
      while (j < g.segments.size() && g.segments[j].kind == s0.kind) ++j;
    const int64_t n = int64_t(j - i);
    const int64_t timed = sample_layers <= 0 ? n : std::min(n, sample_layers);
    Time steady{};
    Breakdown steady_bd;
    ReadCounters steady_rc;
    int64_t counted = 0;
    // The timed layers are spread over the run (the first and the last included): consecutive layers differ in
    // where their KV runs fall, slowly, so neighbours would not be representative.
    for (int64_t k = 0; k < timed; ++k) {
      const int64_t idx = timed == 1 ? 0 : int64_t(std::llround(double(k) * double(n - 1) / double(timed - 1)));
      const Segment& s = g.segments[i + size_t(idx)];
      plan.clear();
      mem.append_ops(g, s.first_op, s.op_count, plan);
      for (const auto& [layer, replicas] : plan.kv_replicas) {
        if (size_t(layer) >= st.kv_replicas.size()) st.kv_replicas.resize(size_t(layer) + 1, -1);
        st.kv_replicas[size_t(layer)] = replicas;
      }
      const Time t0 = timer.now();
      Breakdown b;
      ReadCounters r;
      timer.run(plan, b, r);
      st.breakdown += b;
      st.reads += r;
      ++st.layers_timed;
      if (k >= 1 || timed == 1) {
        steady += timer.now() - t0;
        steady_bd += b;
        steady_rc += r;
        ++counted;
      }
    }
    if (n > timed && counted > 0) {
      const double per = double(n - timed) / double(counted);
      timer.shift(steady * per);
      st.breakdown += steady_bd.scaled(per);
      st.reads += steady_rc.scaled(per);
    }
    i = j;
  }
  st.time = timer.now();
  return st;
}

TilePlan full_plan(const StepGraph& g, const GpuMemory& mem) {
  TilePlan plan;
  mem.append_ops(g, 0, uint32_t(g.ops.size()), plan);
  return plan;
}

hbf::ReadPlan to_read_plan(const TilePlan& plan, int64_t megapage) {
  hbf::ReadPlan rp;
  rp.units.reserve(plan.units.size());
  rp.tiles.reserve(plan.tiles.size());
  for (const StepTile& t : plan.tiles) {
    hbf::ReadTile rt;
    rt.first = uint32_t(rp.units.size());
    for (uint32_t i = t.first; i < t.first + t.count; ++i)
      rp.units.push_back(hbf::ReadUnit{plan.units[i].megaplane, 0, plan.units[i].bytes, false});
    for (int64_t left = t.hbm_bytes; left > 0; left -= megapage)
      rp.units.push_back(hbf::ReadUnit{0, 0, uint32_t(std::min(left, megapage)), true});
    rt.count = uint32_t(rp.units.size()) - rt.first;
    rt.compute = t.compute;
    rt.gate = t.gate;
    rp.tiles.push_back(rt);
  }
  return rp;
}

hbf::ReadResult time_step_event(const hbf::System& sys, const StepGraph& g, const GpuMemory& mem) {
  const TilePlan plan = full_plan(g, mem);
  const hbf::ReadPlan rp = to_read_plan(plan, sys.megapage().raw());
  return hbf::simulate_reads(sys, rp, hbf::read_options(sys));
}

}  // namespace bitline::llm
