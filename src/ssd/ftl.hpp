// The page-level FTL of the general SSD (bitline ssd run): static plane
// allocation (MQSim's 24 fully static schemes, e.g. CWDP), a mapping table
// that holds only the logical pages written during the run (hashed where
// scattered, arrays where written in runs: PagedMap32), an analytic
// preconditioned state (mapping and valid counts computed, not simulated),
// per-plane write frontiers, garbage collection victim selection (GREEDY,
// RGA, RANDOM, FIFO) and wear counts. No time here: the device (device.hpp)
// decides when each program, read and erase happens.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/flat_map.hpp"
#include "core/rng.hpp"
#include "ssd/mqsim_xml.hpp"

namespace bitline::ssd {

struct FtlStats {
  int64_t host_page_writes = 0;
  int64_t gc_page_writes = 0;
  int64_t mapping_page_writes = 0;  // translation pages (keys at and above logical_pages())
  int64_t erases = 0;
  int64_t gc_victims = 0;
  int64_t unwritten_units = 0;  // mapping units of flash pages programmed without them (close_flash_page)
  double write_amplification() const {
    return host_page_writes ? double(host_page_writes + gc_page_writes) / double(host_page_writes) : 0.0;
  }
};

class Ftl {
 public:
  explicit Ftl(const DeviceXml& d);

  // ---- geometry ----
  int64_t planes() const { return planes_; }
  int64_t pages_per_block() const { return G_; }
  int64_t logical_pages() const { return logical_pages_; }
  /// Global plane of a logical page under the static allocation scheme.
  uint32_t plane_of(uint64_t lpa) const { return plane_of_residue_[lpa % uint64_t(planes_)]; }
  int64_t die_of_plane(int64_t plane) const { return plane / planes_per_die_; }
  int64_t plane_in_die(int64_t plane) const { return plane % planes_per_die_; }
  // (32-bit divisions: a physical page number fits in 32 bits)
  int64_t plane_of_ppa(uint32_t ppa) const { return int64_t(ppa / pages_per_plane32_); }
  int64_t block_of_ppa(uint32_t ppa) const { return int64_t(ppa / pages_per_block32_); }
  int64_t page_of_ppa(uint32_t ppa) const { return int64_t(ppa % pages_per_block32_); }
  /// Page type (LSB/CSB/MSB) of a physical page (of the flash page holding it, where pages are mapping units).
  PageType page_type(uint32_t ppa) const {
    int64_t k = int64_t(ppa % pages_per_block32_ / units32_ % bits32_);
    return k == 0 ? PageType::LSB : (bits_ == 2 || k == 2) ? PageType::MSB : PageType::CSB;
  }
  /// Mapping units in a flash page (DeviceXml::units_per_flash_page; 1: a page is a flash page).
  int64_t units_per_flash_page() const { return units_; }
  /// The flash page (device-wide) holding physical page (unit) `ppa`.
  uint32_t flash_page_of_ppa(uint32_t ppa) const { return ppa / units32_; }
  /// The offset in its block of the flash page holding physical page (unit) `ppa` (32-bit divisions, the second only
  /// where pages are units: a read's multi-plane partners are matched by it on every read).
  int64_t flash_page_in_block(uint32_t ppa) const {
    const uint32_t page = ppa % pages_per_block32_;
    return int64_t(units32_ == 1 ? page : page / units32_);
  }

  // ---- mapping ----
  /// Page offset (in its block) that the next program in `plane` lands on: a host (or translation) page, or a page
  /// relocated by GC (gc = true), each with its own write frontier (as MQSim's data and GC write frontiers).
  int64_t next_page(int64_t plane, bool gc) const {
    int64_t f = planes_state_[plane].frontier[gc];
    return f < 0 ? 0 : int64_t(blocks_[f].written);
  }
  /// The offset in its block of the flash page that next_page(plane, gc) is in.
  int64_t next_flash_page(int64_t plane, bool gc) const {
    const int64_t page = next_page(plane, gc);
    return units_ == 1 ? page : page / units_;
  }
  /// Ends a program of the frontier's flash page: the units of it left unwritten stay so (a flash page is programmed
  /// once), and the frontier moves to the next flash page. Nothing with one unit per page, or at a page boundary.
  void close_flash_page(int64_t plane, bool gc);
  /// Physical page of a logical page, or kEmpty when it was never written. Keys at and above
  /// logical_pages() are translation pages (never preconditioned).
  uint32_t lookup(uint32_t lpa) const;
  /// Starts loading what lookup(lpa) will touch (a hint).
  void prefetch(uint32_t lpa) const { map_.prefetch(lpa); }
  /// Where a read of a never-written logical page is served (its static plane, a fixed page).
  uint32_t unwritten_ppa(uint32_t lpa) const;

  // ---- writes ----
  /// Whether a program of a host page (gc=false) or a relocated page (gc=true) can be placed in `plane` now.
  /// Host writes leave GC_Hard_Threshold blocks free, and GC fills a frontier of its own, so the host cannot use up
  /// the pages a running GC needs to empty its victim.
  bool can_allocate(int64_t plane, bool gc) const {
    const PlaneState& ps = planes_state_[plane];
    const int64_t f = ps.frontier[gc];
    if (f >= 0 && int64_t(blocks_[f].written) < G_) return true;
    return int64_t(ps.free.size()) > (gc ? 0 : hard_reserve_blocks_);
  }
  /// Programs `lpa` into the next page of `plane`'s host or GC frontier, invalidating its old copy. Returns the new
  /// page; `old`, if given, receives the old one (kEmpty: the logical page held no data).
  uint32_t write(uint32_t lpa, int64_t plane, bool gc, uint32_t* old = nullptr);

  // ---- garbage collection ----
  bool needs_gc(int64_t plane) const { return int64_t(planes_state_[plane].free.size()) < gc_threshold_blocks_; }
  /// Picks a victim block in `plane` per the policy (-1 when no block has an invalid page).
  int64_t pick_victim(int64_t plane);
  /// The first valid page of `block` at or after `from` (returns pages_per_block() when none); its lpa in `lpa`.
  int64_t next_valid(int64_t block, int64_t from, uint32_t& lpa) const;
  int64_t valid_pages(int64_t block) const { return blocks_[block].valid; }
  /// Whether physical page `ppa` holds valid data (the last write of its logical page).
  bool holds(uint32_t ppa) const { return is_valid(block_of_ppa(ppa), page_of_ppa(ppa)); }
  /// Erases a victim whose pages have all been relocated (valid count must be zero).
  void erase(int64_t block);
  /// Relocates every valid page of victims and erases them until `plane` is above its threshold
  /// (no timing: used by tests of write amplification).
  void collect_now(int64_t plane);

  // ---- preconditioning ----
  /// Fills the logical pages in [lo, hi) ranges analytically: each plane's blocks take the
  /// steady-state valid counts of uniform random writes under greedy GC (linear between u and 1).
  void precondition(const std::vector<std::pair<uint64_t, uint64_t>>& ranges);

  // ---- statistics ----
  const FtlStats& stats() const { return stats_; }
  int64_t max_erase_count() const;
  double mean_erase_count() const;
  size_t mapping_entries() const { return map_.size(); }
  size_t memory_bytes() const;
  int64_t free_blocks(int64_t plane) const { return int64_t(planes_state_[plane].free.size()); }

 private:
  enum class BlockState : uint8_t { Free, Open, Full, Victim };
  struct Block {
    uint32_t valid = 0;
    uint32_t written = 0;  // pages programmed since the last erase
    uint32_t erase_count = 0;
    uint32_t implicit = 0;  // preconditioned valid prefix (pages [0, implicit) hold implicit lpas)
    int32_t data = -1;      // index into data_ (lazily allocated)
    uint64_t seq = 0;       // when it became full (FIFO)
    BlockState state = BlockState::Free;
  };
  struct BlockData {
    std::vector<uint64_t> valid_bits;
    std::vector<uint32_t> lpa;  // per page written during the run
  };
  struct Interval {
    uint64_t lo, hi, cum;  // plane-local indices [lo, hi); cum = ranks before
  };
  struct PlaneState {
    std::deque<uint32_t> free;       // free blocks (local ids), oldest erased first
    int64_t frontier[2] = {-1, -1};  // global block ids: [0] host and translation pages, [1] GC relocations
    std::vector<Interval> implicit_ranges;
    std::vector<uint32_t> prefix;  // implicit ranks before each local block (size B+1) when preconditioned
  };
  BlockData& data_of(int64_t block);
  bool is_valid(int64_t block, int64_t page) const;
  void invalidate(uint32_t ppa);
  uint32_t implicit_ppa(uint32_t lpa) const;
  uint32_t implicit_lpa(int64_t block, int64_t page) const;
  int64_t take_free(int64_t plane);
  /// The plane of residue r (= lpa mod planes) under the allocation scheme (computed once per residue).
  uint32_t scheme_plane(uint64_t r) const;
  /// How many of `dim` the device has (channels, chips per channel, dies per chip, planes per die).
  int64_t extent(PlaneDim dim) const;
  /// Whether `block` is full and holds an invalid page (a GC candidate).
  bool gc_candidate(int64_t block) const;
  /// The candidates of `plane`, by block index.
  std::vector<int64_t> gc_candidates(int64_t plane) const;

  int64_t C_, W_, D_, P_, B_, G_, bits_, units_;
  uint32_t pages_per_plane32_, pages_per_block32_, bits32_, units32_;
  int64_t planes_, planes_per_die_, logical_pages_;
  PlaneAllocation scheme_;
  int64_t gc_threshold_blocks_, hard_reserve_blocks_;
  GcPolicy policy_;
  int64_t rga_set_;
  std::vector<Block> blocks_;
  std::vector<BlockData> data_;
  std::vector<int32_t> data_free_;
  std::vector<PlaneState> planes_state_;
  std::vector<uint32_t> residue_of_plane_;  // lpa % planes for each plane
  std::vector<uint32_t> plane_of_residue_;  // and its inverse
  PagedMap32 map_;                          // logical page -> physical page (written during the run; preconditioned pages are implicit)
  bool preconditioned_ = false;
  uint64_t full_seq_ = 0;
  Rng rng_;
  FtlStats stats_;
};

}  // namespace bitline::ssd
