// Timing a decode step: the fast step model, and the event-driven reference.
//
// Both time the same TilePlan (memory.hpp): tiles run one after the other;
// tile t starts when tile t-1 has ended and ends when its kernel time has
// passed and all its data has arrived (compute and memory overlap, they do
// not add). With prefetch, tile t's flash megapages are issued when tile
// t - distance starts (hbf.runtime.prefetch_distance), without prefetch when
// tile t starts; each megaplane senses its megapages in issue order, one per
// tR; a megapage crosses its stack's interface (FIFO, megapage / bandwidth)
// once it is sensed and its tile has started; HBM bytes stream at the HBM
// bandwidth plus its latency.
//
// The event-driven reference converts the plan into an hbf::ReadPlan and runs
// hbf::simulate_reads (plane SRAM and base-die SRAM slots, page buffers,
// demand-before-prefetch priority, per-event interfaces).
//
// SRAM bounds the prefetch window in both: a stack's prefetch queue takes
// SRAM slots in issue order and waits for slots that SramRelease frees when a
// tile ends; what has no slot when its tile starts is read on demand.
//
// The fast model takes three shortcuts: (1) a tile is timed as a whole
// (per-megaplane sensing frontiers and a sorted per-stack FIFO, no event
// queue); (2) a stack's plane SRAM and base-die SRAM are one pool of
// megapage slots (the event model fills its megaplane's plane SRAM first)
// and page buffers are not limited; (3) of each run of
// layers of the same shape only llm.sample_layers layers, spread evenly over
// the run, are timed (one after the other); the others are extrapolated from
// the mean of the timed ones after the first (the state of the memory system
// is shifted by the extrapolated time).
// accel validate and tests/llm measure its agreement with the reference.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "core/stats.hpp"
#include "hbf/system.hpp"
#include "hbf/timing.hpp"
#include "llm/memory.hpp"

namespace bitline::llm {

/// Critical-path breakdown of a step: every picosecond of the step is attributed once.
struct Breakdown {
  Time weights{}, kv{}, compute{}, comm{}, overhead{}, flash_latency{}, kv_write{}, kv_erase{};
  Time kv_arrange{};  // GroupArrange: copying the selective-offload replicas of the step's new KV to HBM
  Time engine{};      // the serving engine's host side (serving.engine): launches the GPU waits for, per-iteration costs
  Time total() const { return weights + kv + compute + comm + overhead + flash_latency + kv_write + kv_erase + kv_arrange + engine; }
  Breakdown& operator+=(const Breakdown& o);
  Breakdown scaled(double k) const;
  /// {"weights": ms, "kv": ms, "compute": ms, "communication": ms, "overhead": ms, "exposed_flash_latency": ms, "kv_write": ms, "kv_erase":
  /// ms, "kv_arrange": ms, "engine": ms}
  Json json_ms() const;
  /// The same, registered into a stats tree (each component a derived figure in ms).
  void register_stats_ms(StatGroup& g) const;
};

/// What the timers need to know about one GPU's memory system.
struct MemoryTiming {
  int64_t megaplanes = 0;          // 0: no HBF
  std::vector<uint16_t> stack_of;  // per megaplane
  int64_t stacks = 0;
  Time t_read{};         // a megaplane's occupancy per read: tR and the command cycles (System::t_sense)
  Bandwidth die_link{};  // per-read latency after sensing: megapage / die_link + t_ecc (System::t_after_sense)
  Time t_ecc{};
  Bandwidth interface {};
  Bandwidth hbm{};
  Time hbm_latency{};
  bool prefetch = true;
  int64_t distance = 4;
  int64_t megapage = 0;
  int64_t plane_units = 0;  // megapages one megaplane's plane SRAM holds (its own data only)
  int64_t base_units = 0;   // megapages one stack's base-die SRAM holds (any of its megaplanes' data)
  static MemoryTiming of(const hbf::System& sys);
};

/// Counters of what a step read (for energy).
struct ReadCounters {
  double flash_units = 0;  // megapages sensed
  double flash_bytes = 0;  // bytes delivered from flash
  double hbm_bytes = 0;
  double tiles = 0;
  ReadCounters& operator+=(const ReadCounters& o);
  ReadCounters scaled(double k) const;
};

/// The fast step model's timer: runs tiles in order, carrying the memory system's state.
class FastTimer {
 public:
  explicit FastTimer(const MemoryTiming& mt);
  void run(const TilePlan& plan, Breakdown& bd, ReadCounters& rc);
  Time now() const { return Time(now_); }
  /// Moves the timer `dt` into the future (everything in flight moves with it).
  void shift(Time dt);

 private:
  void slide_windows(int64_t oldest);
  int64_t interfaces_end(const TilePlan& plan, const StepTile& t, int64_t S);
  const MemoryTiming& mt_;
  std::vector<int64_t> frontier_;  // per megaplane: when it finishes sensing what it was given
  std::vector<int64_t> starts_;    // ring of (at least) the last distance + 1 tile starts
  int64_t ring_mask_ = 0;          // the rings' length (a power of two) - 1
  // Rings of the last distance + 1 tiles: megapages each tile prefetched into plane SRAM ([tile][megaplane]) and into
  // base-die SRAM ([tile][stack]).
  std::vector<int32_t> held_plane_, held_base_;
  // While a tile is timed, per SRAM (a megaplane's plane SRAM, a stack's base-die SRAM): the earliest tile whose start
  // its next megapage may be given a slot at, the megapages of this tile already given one, and the slots held by
  // the tiles from first to this one. A megaplane's entry is set up when the tile first reads it (seen_ = the tile).
  struct Pool {
    int64_t first = 0, taken = 0, occ = 0;
  };
  std::vector<Pool> plane_, base_;
  std::vector<int64_t> seen_;
  // Per SRAM: the slots held by the tiles win_lo_..the last one timed (the window's sum, slid tile by tile).
  std::vector<int64_t> win_plane_, win_base_;
  int64_t win_lo_ = 0;
  int64_t tiles_ = 0, now_ = 0, first_start_ = 0;
  int64_t gate_ = -1;                                  // the latest gate tile started (its prefetch waited for it)
  std::vector<std::pair<int64_t, int64_t>> arrivals_;  // per megapage of the tile timed: (arrival, transfer)
  std::vector<std::pair<int64_t, int64_t>> sorted_;    // one stack's arrivals, sorted (when they came out of order)
  // Per stack, reset for each tile that uses them: its transfers' sum; when a tile's megapages are not all sensed by
  // its start, its interface's busy time, its last (arrival, transfer) and whether they came in order (a sorted
  // sequence needs no sort: it sorts to itself)
  std::vector<int64_t> stack_sum_, busy_;
  std::vector<std::pair<int64_t, int64_t>> last_;
  std::vector<uint8_t> in_order_;
};

struct StepTiming {
  Time time{};
  Breakdown breakdown;
  ReadCounters reads;
  int64_t layers_timed = 0;
  // HBF: by layer, the HBM replica slices of the KV placement of each layer the timing placed (-1: not placed, a
  // layer the fast model did not sample)
  std::vector<int64_t> kv_replicas;
};

/// The fast model over a whole step graph (sample_layers = 0: every layer timed).
StepTiming time_step_fast(const StepGraph& g, const GpuMemory& mem, const MemoryTiming& mt, int64_t sample_layers);

/// The whole step's reads as one TilePlan (every layer).
TilePlan full_plan(const StepGraph& g, const GpuMemory& mem);

/// Converts a TilePlan into the HBF issue's ReadPlan (HBM bytes in megapage-sized pieces).
hbf::ReadPlan to_read_plan(const TilePlan& plan, int64_t megapage);

/// The event-driven reference: simulate_reads on the whole step.
hbf::ReadResult time_step_event(const hbf::System& sys, const StepGraph& g, const GpuMemory& mem);

}  // namespace bitline::llm
