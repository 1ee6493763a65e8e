// Stage: SLC write cache (the general SSD, device_sim.hpp; off unless ssd_device.slc_cache says otherwise).
//
// Contract. With ssd_device.slc_cache = static or turbowrite, a host page program (a user write's page or a page
// written back from the DRAM cache; never GC's relocations or translation pages) goes to the SLC region while it has
// room, taking slc_program_latency instead of the page's program time (tPROG of its page type), and its page joins
// its plane's list of cached pages, oldest first. The region holds
//   capacity = slc_static_bytes + min(slc_dynamic_max_bytes, free logical space / bits per cell)   (turbowrite)
//   capacity = slc_static_bytes                                                                     (static)
// pages of data, where the free logical space is the logical pages holding no data (neither preconditioned nor
// written), so the dynamic region shrinks as the drive fills. A program that finds the region full goes directly to
// TLC (MLC) at its page type's program time. Folding moves the cached pages to their TLC place, per plane in the
// order they were cached: one fold is an SLC read (slc_read_latency) and a page program (tPROG of the page's type),
// inside the die (no channel transfer); every pages_per_block / bits folded pages free one SLC block, erased
// (tBERS) after its last fold, and only then is the block's room given back (a plane's open SLC block stays until
// it is full and folded). A page overwritten (or moved by GC)
// since it was cached is not folded (no read, no program) but still frees its room with its block. Folds run at the
// lowest priority of their unit (after every host, mapping and GC transaction), at most kFoldAhead per plane queued,
// while folding is on: from slc_idle_delay after the host's last request completed with none in the device until the
// next request is submitted (idle folding), and, with slc_fold_when_full, from the first program that finds the
// region full to the end of the run. Every fold read, program and erase is counted in the flash totals and in the
// result's `slc` section.
//
// Placement: the FTL gives a cached page its TLC page when it is written (ftl.hpp; where folding will put it), so the
// mapping, GC and the results' page counts are those of the run without the cache; the SLC blocks are accounted
// here only, by count (the static region lives in the over-provisioning, check_device; the dynamic one in free
// space). A host read of a page still in SLC is timed as a read of its TLC page.
#include "ssd/device_sim.hpp"

#include <fmt/format.h>

namespace bitline::ssd::detail {

void Sim::setup_slc(int64_t preconditioned_pages) {
  SlcCacheState& s = slc_;
  s.on = *device_.slc_cache != SlcCache::Off;
  if (!s.on) return;
  s.dynamic = *device_.slc_cache == SlcCache::TurboWrite;
  s.static_pages = device_.slc_static_bytes.raw() / device_.page_size;
  s.dynamic_max_pages = s.dynamic ? device_.slc_dynamic_max_bytes.raw() / device_.page_size : 0;
  s.bits = device_.bits_per_cell();
  s.pages_per_slc_block = std::max<int64_t>(1, device_.pages_per_block / s.bits);
  s.logical_pages = device_.logical_pages();
  s.logical_used = std::min(s.logical_pages, preconditioned_pages);
  const size_t planes = size_t(device_.planes());
  s.cached.assign(planes, {});
  s.written.assign(planes, 0);
  s.folded.assign(planes, 0);
  s.in_flight.assign(planes, 0);
}

/// A host page just placed at `ppa` of `plane` (a logical page never written before when `fresh`): into the SLC region
/// if it has room, else directly to TLC. Returns its program time.
Time Sim::slc_program(uint32_t ppa, int64_t plane, bool fresh, bool page_first) {
  SlcCacheState& s = slc_;
  if (fresh && s.logical_used < s.logical_pages) ++s.logical_used;
  if (s.used < s.capacity()) {
    ++s.used;
    ++s.written[size_t(plane)];
    s.slc_programs += page_first;
    auto& q = s.cached[size_t(plane)];
    if (!q.empty() && q.back().first + q.back().count == ppa)
      ++q.back().count;
    else
      q.push_back({ppa, 1});
    return device_.slc_program_latency;
  }
  s.direct_programs += page_first;
  if (!s.full_seen) {
    s.full_seen = true;
    s.full_at = events_.now();
  }
  if (device_.slc_fold_when_full && !s.full_folding) {
    s.full_folding = true;
    for (int64_t p = 0; p < device_.planes(); ++p) fill_folds(p);
  }
  return device_.program_latency[int(ftl_.page_type(ppa))];
}

/// Queues the plane's next folds (oldest cached page first) while folding is on, at most kFoldAhead at a time.
void Sim::fill_folds(int64_t plane) {
  SlcCacheState& s = slc_;
  auto& q = s.cached[size_t(plane)];
  const uint32_t units = uint32_t(ftl_.units_per_flash_page());
  while (s.folding() && s.in_flight[size_t(plane)] < kFoldAhead && !q.empty()) {
    // a fold moves a flash page: the cached units of the front run in the flash page of its first
    const uint32_t ppa = q.front().first, n = std::min(q.front().count, units - ppa % units);
    q.front().count -= n;
    q.front().first += n;
    if (q.front().count == 0) q.pop_front();
    ++s.in_flight[size_t(plane)];
    enqueue(new_tx_from([&] { return Tx::fold(plane, ppa, n); }));
  }
}

/// A fold starts on its die: the SLC read and the page program, or nothing for a page no longer valid there.
Time Sim::fold_time(const Tx& t) {
  SlcCacheState& s = slc_;
  bool valid = false;
  for (uint32_t k = 0; k < t.slc_pages() && !valid; ++k) valid = ftl_.holds(t.ppa + k);
  if (!valid) {
    ++s.folds_skipped;
    return Time{};
  }
  ++s.fold_reads;
  ++s.fold_programs;
  ++stats_.flash_reads;
  ++stats_.flash_programs;
  return device_.slc_read_latency + device_.program_latency[int(ftl_.page_type(t.ppa))];
}

/// A fold or an SLC block's erase has ended: a block whose pages are all folded is erased, and its room is given back
/// when the erase ends. (A plane's open SLC block stays until it is full and folded.)
void Sim::slc_op_done(const Tx& t) {
  SlcCacheState& s = slc_;
  const size_t p = size_t(t.plane);
  --s.in_flight[p];
  s.last_fold_end = events_.now();
  if (t.kind == TxKind::Erase) {
    s.used -= t.slc_pages();
    ++s.fold_erases;
  } else if (const int64_t before = s.folded[p]; (s.folded[p] += t.slc_pages()) / s.pages_per_slc_block > before / s.pages_per_slc_block) {
    ++s.in_flight[p];
    enqueue(new_tx_from([&] { return Tx::slc_erase(t.plane, s.pages_per_slc_block); }));
  }
  fill_folds(t.plane);
}

/// The host went idle (no request in the device): folding starts slc_idle_delay later unless a request comes first.
void Sim::slc_request_done() {
  SlcCacheState& s = slc_;
  if (--s.in_device == 0 && s.used > 0) events_.push(events_.now() + device_.slc_idle_delay, {Ev::SlcIdle, s.activity});
}

void Sim::on_slc_idle(uint32_t activity) {
  SlcCacheState& s = slc_;
  if (activity != s.activity || s.in_device > 0) return;  // the host came back meanwhile
  s.idle_folding = true;
  for (int64_t p = 0; p < device_.planes(); ++p) fill_folds(p);
}

void Sim::register_slc_results(StatGroup& g) const {
  const SlcCacheState& s = slc_;
  const double page = double(device_.page_size);
  g.derived(
      "mode", [this] { return std::string(device_.slc_cache.name()); }, "the SLC cache's kind (ssd_device.slc_cache)");
  g.derived(
      "capacity_bytes_at_end", [&s, page] { return double(s.capacity()) * page; }, "the cache's size at the end (bytes)");
  g.derived(
      "static_bytes", [&s, page] { return double(s.static_pages) * page; }, "its static region (bytes)");
  g.add("slc_programs", s.slc_programs, "pages programmed into the cache");
  g.add("direct_programs", s.direct_programs, "pages programmed straight to TLC (the cache full)");
  g.derived(
      "full_at_s", [&s] { return s.full_seen ? nlohmann::json(to_s(s.full_at)) : nlohmann::json(nullptr); },
      "when the cache was first full (s; null: never)");
  g.add("fold_reads", s.fold_reads, "cached pages read to fold them into TLC");
  g.add("fold_programs", s.fold_programs, "TLC programs of folded pages");
  g.add("folds_skipped", s.folds_skipped, "cached pages no longer valid when their fold came (not moved)");
  g.add("fold_erases", s.fold_erases, "SLC blocks erased after folding");
  g.derived(
      "last_fold_end_s",
      [&s] { return s.fold_reads + s.folds_skipped > 0 ? nlohmann::json(to_s(s.last_fold_end)) : nlohmann::json(nullptr); },
      "when the last fold ended (s; null: none)");
  g.derived(
      "slc_bytes_in_use_at_end", [&s, page] { return double(s.used) * page; }, "cached bytes not yet folded at the end");
}

}  // namespace bitline::ssd::detail
