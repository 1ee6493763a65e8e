// The memory system of one GPU, as numbers derived from the parameters:
// stacks of dies of planes, planes grouped into megaplanes of M planes that
// share a command circuit, megapages (one page on each plane of a megaplane at
// the same offset) and hyperpages (one megapage from every megaplane).
//
// Addressing. Megaplane ids run stack-major: id = (stack * dies + die) *
// megaplanes_per_die + m. Plane p of die d of stack s belongs to megaplane
// (s, d, p / M) as its lane p % M. The round-robin *dealing order* used by the
// layouts visits stacks first, then dies, then the megaplanes of a die, so
// that consecutive megapages land on different stacks and dies.
#pragma once

#include <cstdint>
#include <string>

#include "hbf/params.hpp"

namespace bitline::hbf {

using MegaplaneId = uint32_t;

/// Physical address of one megapage: (megaplane, block, page). With M = 1 a megapage is a plane page.
struct PhysUnit {
  MegaplaneId megaplane = 0;
  uint32_t block = 0;
  uint32_t page = 0;
  uint64_t key() const { return (uint64_t(megaplane) << 40) | (uint64_t(block) << 20) | page; }
  bool operator==(const PhysUnit&) const = default;
};

class System {
 public:
  explicit System(const SystemParams& p);

  const SystemParams& params() const { return p_; }
  const HbfParams& hbf() const { return p_.hbf; }
  const HbmParams& hbm() const { return p_.hbm; }

  int64_t stacks() const { return p_.hbf.stacks; }
  int64_t dies_per_stack() const { return p_.hbf.geometry.dies_per_stack; }
  int64_t planes_per_die() const { return p_.hbf.geometry.planes_per_die; }
  /// M: planes per megaplane.
  int64_t lanes() const { return p_.hbf.geometry.planes_per_megaplane; }
  int64_t megaplanes_per_die() const { return planes_per_die() / lanes(); }
  int64_t megaplanes_per_stack() const { return dies_per_stack() * megaplanes_per_die(); }
  /// K: megaplanes of all stacks (megapages per hyperpage).
  int64_t megaplanes() const { return stacks() * megaplanes_per_stack(); }
  int64_t planes() const { return megaplanes() * lanes(); }
  int64_t planes_per_stack() const { return megaplanes_per_stack() * lanes(); }
  int64_t blocks_per_plane() const { return p_.hbf.geometry.blocks_per_plane; }
  int64_t pages_per_block() const { return p_.hbf.geometry.pages_per_block; }

  Bytes page_size() const { return p_.hbf.geometry.page_size; }
  /// The allocation and read unit: M pages.
  Bytes megapage() const { return Bytes(page_size().raw() * lanes()); }
  Bytes hyperpage() const { return Bytes(megapage().raw() * megaplanes()); }
  /// Flash capacity of all stacks.
  Bytes flash_capacity() const { return Bytes(megapage().raw() * megaplanes() * blocks_per_plane() * pages_per_block()); }
  Bytes hbm_capacity() const { return Bytes(p_.hbm.capacity_per_stack.raw() * p_.hbm.stacks); }
  Bandwidth hbm_bandwidth() const { return Bandwidth(p_.hbm.bandwidth_per_stack.raw() * double(p_.hbm.stacks)); }
  /// Peak sensing rate of one stack: every plane reading one page per t_sense() (tR and the command cycles).
  Bandwidth stack_sense_bandwidth() const { return Bytes(page_size().raw() * planes_per_stack()) / t_sense(); }
  /// A megaplane's occupancy per read: command and address cycles, then tR.
  Time t_sense() const { return p_.hbf.timing.t_command + p_.hbf.timing.t_read; }
  /// From the end of a read's sensing until its `bytes` are ready on the base die: the die-to-base-die link, then ECC.
  Time t_after_sense(int64_t bytes) const { return Bytes(bytes) / p_.hbf.timing.die_link_bandwidth + p_.hbf.timing.t_ecc_decode; }
  /// Program rate of all stacks: every plane programming one page per tPROG.
  Bandwidth program_bandwidth() const { return Bytes(page_size().raw() * planes()) / p_.hbf.timing.t_prog; }

  /// Plane-SRAM slots of one megaplane, in megapages (= pages per plane SRAM).
  int64_t plane_sram_units() const { return p_.hbf.sram.plane_sram.raw() / page_size().raw(); }
  /// Base-die SRAM slots of one stack, in megapages.
  int64_t base_sram_units() const { return p_.hbf.sram.base_sram.raw() / megapage().raw(); }

  int64_t stack_of(MegaplaneId m) const { return int64_t(m) / megaplanes_per_stack(); }
  int64_t die_of(MegaplaneId m) const { return (int64_t(m) / megaplanes_per_die()) % dies_per_stack(); }
  int64_t megaplane_in_die(MegaplaneId m) const { return int64_t(m) % megaplanes_per_die(); }
  /// The global plane index of lane `lane` of megaplane `m`.
  int64_t plane_of(MegaplaneId m, int64_t lane) const { return int64_t(m) * lanes() + lane; }
  /// The i-th megaplane of the dealing order (i taken modulo K).
  MegaplaneId dealt(int64_t i) const;
  /// Position of a megaplane in the dealing order.
  int64_t deal_index(MegaplaneId m) const;
  /// Megaplanes a request's KV of `slices` slices is dealt over (hbf.runtime.kv_span): all K, or (fit) the
  /// fewest that hold them in whole megablocks, ceil(slices / pages per block), at least 1.
  int64_t kv_window(int64_t slices) const;
  /// Megablocks such a request holds (isolated blocks: its own on every megaplane of its window it reaches,
  /// more on each for long requests).
  int64_t kv_megablocks(int64_t slices) const;
  /// "stack 2 die 5 megaplane 1" (for error messages).
  std::string name(MegaplaneId m) const;

 private:
  SystemParams p_;
};

}  // namespace bitline::hbf
