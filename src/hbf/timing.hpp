// Timing of reads and writes through the HBF stacks: an event-driven model of
// the planes (sensing, programming), their page buffers, the plane and
// base-die SRAM, each stack's interface, HBM, and the prefetch runtime that
// runs ahead of the GPU's kernels. See docs/hbf.md ("Timing model").
//
// Reads. A ReadPlan is a sequence of tiles (what one kernel step consumes: a
// tensor, or a part of one no larger than `tile_hyperpages` hyperpages); each
// tile is a list of megapage-sized units on a megaplane (or in HBM). The GPU
// runs the tiles in order: tile t starts when t-1 has finished, asks for all
// its data at once and ends when all of it has arrived and `compute` has
// passed. With prefetch, when tile t starts the runtime issues SramPrefetch for
// the tiles up to t + distance: their units join their megaplane's prefetch
// queue, whose head takes a slot in the megaplane's plane SRAM, else in its
// stack's base-die SRAM, and waits while there is none (slots are retried as
// SramRelease frees them); prefetched units are sensed in queue order and wait
// in SRAM until their tile's kernel reads them; SramRelease frees the slots
// when that tile ends. Units that have no slot when their kernel asks for them
// leave the queue and are read directly: sensed into a page
// buffer that is held until the data has crossed the interface. A megaplane
// senses one megapage per t_command + tR (its planes share one command
// circuit), demand reads before prefetches; a sensed megapage reaches the base
// die megapage / die_link_bandwidth later and is ECC-decoded (t_ecc_decode)
// before it is ready for the interface (both latencies, per read). Each stack's
// interface moves ready data to the GPU first come, first served, pages in a
// page buffer (direct reads) before data held in SRAM (so the buffers drain).
//
// Granularity. `megapage`: one event per megapage command and one transfer per
// megapage. `plane`: the M pages of a megapage are separate transfers with
// per-plane page buffers and SRAM slots (the command still starts on all
// planes of the megaplane together); used to validate the coarse mode.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "hbf/system.hpp"

namespace bitline::hbf {

/// The registered name of `g` (hbf.runtime.granularity).
std::string to_string(Granularity g);

/// One megapage (or part of one) that a tile reads.
struct ReadUnit {
  MegaplaneId megaplane = 0;
  uint32_t begin = 0, end = 0;  // byte range within the megapage
  bool hbm = false;             // read from HBM (a replica or KV not yet flushed) instead of flash
  uint32_t bytes() const { return end - begin; }
};

struct ReadTile {
  uint32_t first = 0, count = 0;  // units [first, first + count) of the plan
  Time compute{};                 // GPU time of the kernel on this tile (overlaps its reads)
  bool gate = false;              // SramPrefetch of this tile and the later ones waits until this tile starts
};

struct ReadPlan {
  std::vector<ReadUnit> units;
  std::vector<ReadTile> tiles;
  int64_t bytes() const;
};

struct ReadOptions {
  bool prefetch = true;
  int64_t distance = 4;
  Granularity granularity = Granularity::Megapage;
};
/// The options in `hbf.runtime`.
ReadOptions read_options(const System& sys);

struct ReadResult {
  Time elapsed{};
  int64_t bytes = 0, flash_bytes = 0, hbm_bytes = 0;
  std::vector<int64_t> stack_bytes;
  int64_t commands = 0;      // megapage sensing commands
  int64_t pages_sensed = 0;  // plane pages sensed (commands x M)
  double plane_busy_fraction = 0;
  int64_t max_plane_load = 0;
  double mean_plane_load = 0;
  double tile_max_plane_load_mean = 0;  // mean over tiles of the largest load of a megaplane in the tile
  int64_t prefetched_plane_sram = 0, prefetched_base_sram = 0, direct_reads = 0;  // units (pieces in plane mode)
  Energy energy{};
  uint64_t events = 0;

  double gb_per_s() const { return elapsed.raw() > 0 ? double(bytes) / to_s(elapsed) * 1e-9 : 0.0; }
  Json json(const System& sys) const;
};

ReadResult simulate_reads(const System& sys, const ReadPlan& plan, const ReadOptions& opt);

/// Writes: megapages programmed in the given order (a hyperpage at a time when
/// the runtime could form hyperpages). Data streams from HBM over each stack's
/// interface into a page buffer of the target planes (a free buffer is needed;
/// the interface serves its queue in order), then the megaplane programs it
/// (tPROG) and frees the buffer. With two buffers, loading the next page
/// overlaps programming (cache program).
struct WriteResult {
  Time elapsed{};
  int64_t bytes = 0;
  int64_t units = 0;
  std::vector<int64_t> stack_bytes;
  double plane_busy_fraction = 0;
  Energy energy{};
  uint64_t events = 0;
  double gb_per_s() const { return elapsed.raw() > 0 ? double(bytes) / to_s(elapsed) * 1e-9 : 0.0; }
  Json json(const System& sys) const;
};

WriteResult simulate_writes(const System& sys, std::span<const MegaplaneId> order, Granularity g);

}  // namespace bitline::hbf
