// Sequential writes through the SSD: host -> PCIe -> controller write buffer ->
// channel -> a die's page buffer -> program. They run on the general device,
// with the same dies and channels as the Flash-Cosmos reads (ssd/compute_jobs.hpp:
// a program operation is a job of its die), event-driven, linear in the bytes
// written (a few events per page slice).
//
// Programming as the evaluated 48-layer 3D TLC chips do it (docs/cosmos.md,
// "Sequential writes"):
//   - a program operation covers all planes of a die (multi-plane) and, in
//     `one_shot` mode, all bits of a wordline (MLC: 2 pages, TLC: 3 pages) in
//     one tPROG(mode); in `page_by_page` mode every page is its own program of
//     tPROG(mode) (the MQSim-style reading of a per-mode tPROG);
//   - the page buffer has the C-latch and `nand.command.data_latches` data
//     latches per bitline; the wordline being programmed occupies one latch per
//     page, and with cache program the next operation's pages load into the
//     latches left free (all of them for SLC/ESP/MLC, one of three for one-shot
//     TLC with 3 data latches); the rest load after the program ends;
//   - one data-in per page slice (one page on every plane of the die) over the
//     die's channel, first come first served among the channel's dies in
//     round-robin order; the host streams slices over PCIe while the
//     controller's write buffer has room.
#pragma once

#include <cstdint>
#include <string>

#include "core/units.hpp"
#include "nand/command.hpp"
#include "nand/params.hpp"
#include "ssd/compute_jobs.hpp"
#include "ssd/params.hpp"

namespace bitline::ssd {

struct WriteResult {
  Time total{};
  int64_t bytes = 0;
  uint64_t events = 0, programs = 0;
  Time die_busy{}, channel_busy{}, pcie_busy{};
  Bottleneck bottleneck = Bottleneck::None;  // dies, channels or pcie (the highest utilisation)
  double gb_per_s() const { return total.raw() > 0 ? double(bytes) / to_s(total) / 1e9 : 0.0; }
};

/// Most bytes one sequential write may simulate: 1 TiB (one 4-byte job per program operation, ~16 M of them and
/// ~70 MB at SLC's 64 KiB; about 30 s for every mode and scheme of `cosmos write-bw`).
inline constexpr int64_t kMaxSequentialWriteBytes = int64_t(1) << 40;

/// Writes `total` bytes (rounded up to whole program operations) in `mode`, event-driven. ModelError above
/// kMaxSequentialWriteBytes.
WriteResult run_sequential_write(const SsdParams& ssd, const nand::NandParams& nand, nand::ProgramMode mode, Bytes total);

/// The steady-state bandwidth (bytes/s) the same rules give for an unbounded write: the smallest of the PCIe
/// payload rate, the channels' rate and the dies' rate (program time + the data-in that cannot overlap it).
double sequential_write_steady_state(const SsdParams& ssd, const nand::NandParams& nand, nand::ProgramMode mode);

}  // namespace bitline::ssd
