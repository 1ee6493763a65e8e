// The storage devices of one GPU as the runtime sees them, without time:
//   FlashArray  HBF flash of every stack: megablocks with one owner each,
//               append-only programming, whole-block erase, per-block P/E counts;
//   HbmStore    HBM capacity and allocations;
//   SramPool    plane SRAM of every megaplane and base-die SRAM of every stack.
// Each can hold bytes (functional mode) or only bookkeeping (timing mode), so
// memory is proportional to what is written, not to the capacity.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/stats.hpp"
#include "hbf/system.hpp"

namespace bitline::hbf {

using ObjectId = uint32_t;
inline constexpr ObjectId kNoObject = UINT32_MAX;

struct FlashStats {
  int64_t units_programmed = 0, units_read = 0, megablocks_erased = 0, blocks_retired = 0;
  Energy program_energy{}, read_energy{}, erase_energy{};
};

/// HBF flash. The allocation unit is a megablock: block b on every plane of a
/// megaplane (the planes share a command circuit, so they program, read and
/// erase the same offsets together). A megablock belongs to at most one object.
class FlashArray {
 public:
  FlashArray(const System& sys, bool store_data);

  /// A free megablock on `m` for `owner`, or nullopt when `m` has none left.
  /// Free blocks are handed out first-in first-out, which spreads erases.
  std::optional<uint32_t> allocate(MegaplaneId m, ObjectId owner);
  /// Free megablocks of a megaplane.
  int64_t free_blocks(MegaplaneId m) const { return free_count_[m]; }
  int64_t free_blocks() const { return total_free_; }

  /// Programs the next page of a megablock: `p.page` must be its write
  /// pointer and `owner` its owner (append-only, isolated). `data` is at most a megapage.
  void program(const PhysUnit& p, ObjectId owner, std::span<const uint8_t> data);
  /// The bytes of a programmed megapage (functional mode).
  std::span<const uint8_t> read(const PhysUnit& p);
  /// Erases megablock (m, b), which must belong to `owner`; increments its P/E count and frees it
  /// (or retires it at the endurance limit).
  void erase(MegaplaneId m, uint32_t block, ObjectId owner);

  ObjectId owner(MegaplaneId m, uint32_t block) const { return owner_[index(m, block)]; }
  uint32_t write_pointer(MegaplaneId m, uint32_t block) const { return wp_[index(m, block)]; }
  /// P/E cycles of block `block` of plane `plane` (all planes of a megablock share the count).
  int64_t pe_cycles(int64_t plane, uint32_t block) const { return pe_[index(MegaplaneId(plane / sys_.lanes()), block)]; }
  int64_t megablock_pe_cycles(MegaplaneId m, uint32_t block) const { return pe_[index(m, block)]; }
  bool stores_data() const { return store_data_; }
  size_t stored_units() const { return data_.size(); }
  const FlashStats& stats() const { return stats_; }
  /// Registers the array's statistics (read when the tree is dumped, while the array lives).
  void register_stats(StatGroup& g) const;

 private:
  size_t index(MegaplaneId m, uint32_t b) const { return size_t(m) * size_t(sys_.blocks_per_plane()) + b; }
  const System& sys_;
  bool store_data_;
  std::vector<ObjectId> owner_;
  std::vector<uint32_t> wp_;
  std::vector<uint32_t> pe_;
  std::vector<uint32_t> free_ring_;  // per megaplane: a ring of free block ids
  std::vector<uint32_t> free_head_, free_count_;
  int64_t total_free_ = 0;
  std::unordered_map<uint64_t, std::vector<uint8_t>> data_;
  FlashStats stats_;
};

/// HBM: capacity accounting and (functional mode) the bytes of each allocation.
class HbmStore {
 public:
  HbmStore(Bytes capacity, bool store_data) : capacity_(capacity), store_data_(store_data) {}
  /// Allocates `n` bytes; nullopt when HBM is full.
  std::optional<uint64_t> allocate(Bytes n);
  void release(uint64_t id);
  std::span<uint8_t> data(uint64_t id);
  Bytes size(uint64_t id) const { return Bytes(int64_t(allocs_.at(id).size)); }
  Bytes used() const { return used_; }
  Bytes capacity() const { return capacity_; }
  size_t allocations() const { return allocs_.size(); }

 private:
  struct Alloc {
    uint64_t size;
    std::vector<uint8_t> bytes;
  };
  Bytes capacity_, used_{};
  bool store_data_;
  uint64_t next_ = 1;
  std::unordered_map<uint64_t, Alloc> allocs_;
};

/// One megapage-sized slot of HBF SRAM: in the plane SRAM of a megaplane
/// (M pages, one per plane) or in the base-die SRAM of a stack.
struct SramSlot {
  bool base = false;
  uint32_t where = 0;  // megaplane (plane SRAM) or stack (base SRAM)
  uint32_t slot = 0;
  uint64_t key() const { return (uint64_t(base) << 63) | (uint64_t(where) << 32) | slot; }
};

class SramPool {
 public:
  SramPool(const System& sys, bool store_data);
  /// A slot in the plane SRAM of `m`, else in the base-die SRAM of its stack, else nullopt.
  std::optional<SramSlot> take(MegaplaneId m);
  void give(const SramSlot& s);
  std::span<uint8_t> data(const SramSlot& s);
  int64_t used_plane() const { return used_plane_; }
  int64_t used_base() const { return used_base_; }

 private:
  const System& sys_;
  bool store_data_;
  std::vector<std::vector<uint32_t>> plane_free_, base_free_;
  int64_t used_plane_ = 0, used_base_ = 0;
  std::unordered_map<uint64_t, std::vector<uint8_t>> data_;
};

}  // namespace bitline::hbf
