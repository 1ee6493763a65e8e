// MQSim's cached mapping table (CMT) for the general SSD (bitline ssd run): an
// exact LRU of logical pages, each entry waiting (its translation page is being
// read from flash), clean or dirty. Built for the simulator's hot path, where
// nearly every request of a random workload misses, evicts and inserts:
// - the entries live inline in an open-addressing table keyed by logical page
//   (core/flat_map.hpp's OpenTable: 16 bytes a slot, linear probing, deletion
//   by backward shift);
// - the LRU order is a ring of keys in access order. A touch appends the key
//   again and leaves a dead copy behind (an entry is live only at the ring
//   position it records); eviction pops from the old end, skipping dead
//   copies. So evictions read the ring in order and the victims' slots are
//   prefetched several evictions ahead. Dead copies are compacted away when
//   the ring fills, which keeps it under four times the entries.
// - per translation page, the clean and dirty entries in each 512 B sector of
//   the page (counts), and a write-back epoch: a dirty entry records the
//   page's epoch, and a write-back makes all the page's dirty entries clean at
//   once by advancing it. A write-back costs O(sectors), not a walk over the
//   page's entries.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "core/big_array.hpp"
#include "core/flat_map.hpp"

namespace bitline::ssd {

class Cmt {
 public:
  enum class State : uint8_t { Waiting, Clean, Dirty };
  static constexpr uint32_t kAbsent = 0xFFFFFFFFu;

  /// A table of `capacity` entries for translation pages [page_lo, page_hi), each of `sectors` 512 B sectors
  /// (1..64).
  Cmt(size_t capacity, uint32_t page_lo, uint32_t page_hi, int sectors) : cap_(capacity), page_lo_(page_lo), npages_(page_hi - page_lo) {
    if (page_hi < page_lo || sectors < 1 || sectors > 64) throw std::invalid_argument("Cmt: bad translation-page geometry");
    sectors_ = uint32_t(sectors);
    sh_ = std::countr_zero(std::bit_ceil(uint32_t(sectors)));
    if (cap_ == 0) return;
    cnt_ = BigArray<uint16_t>(size_t(npages_) << (sh_ + 1));
    epoch_ = BigArray<uint32_t>(npages_);
    t_ = Table(std::min<size_t>(cap_, 1 << 16) * 2);
    ring_ = BigArray<uint32_t>(std::bit_ceil(std::max<size_t>(std::min<size_t>(cap_, 1 << 16), 16)));
    rmask_ = ring_.size() - 1;
  }

  size_t capacity() const { return cap_; }
  size_t size() const { return t_.size(); }
  bool full() const { return t_.size() >= cap_; }

  /// Slot of a logical page, or kAbsent; valid until the next insert or evict.
  uint32_t find(uint32_t lpa) const {
    const size_t i = t_.find(lpa);
    return i == Table::kNone ? kAbsent : uint32_t(i);
  }
  State state(uint32_t s) const {
    const Slot& x = t_[s];
    if (x.tag == kTagWaiting) return State::Waiting;
    return x.tag == epoch_[x.cell >> sh_] ? State::Dirty : State::Clean;
  }
  uint32_t lpa(uint32_t s) const { return ~t_[s].nkey; }
  uint32_t page(uint32_t s) const { return page_lo_ + (t_[s].cell >> sh_); }

  void set_state(uint32_t s, State st) {
    State old = state(s);
    if (old == st) return;
    Slot& x = t_[s];
    count(x.cell, old, -1);
    x.tag = tag_for(x.cell, st);
    count(x.cell, st, +1);
  }
  /// Makes an entry the most recently used.
  void touch(uint32_t s) {
    if (t_[s].pos == uint32_t(head_ - 1)) return;  // already
    push(s);
  }
  /// Inserts a logical page that is not present (the table must not be full). `sector`: the 512 B sector of
  /// translation page `page` that holds its entry.
  void insert(uint32_t lpa, uint32_t page, uint32_t sector, State st) {
    uint32_t rel = page - page_lo_;
    if (rel >= npages_ || sector >= sectors_ || t_.size() >= cap_ || lpa == kAbsent) throw std::logic_error("Cmt::insert out of range");
    const size_t i = t_.emplace(lpa).first;  // (absent: a new slot)
    uint32_t cell = (rel << sh_) | sector;
    t_[i] = Slot{~lpa, 0, cell, tag_for(cell, st)};
    count(cell, st, +1);
    push(uint32_t(i));
  }
  /// Removes the least recently used entry (the table must not be empty): its translation page and whether
  /// it was dirty.
  std::pair<uint32_t, bool> evict() {
    while (true) {
      uint32_t key = ring_[tail_ & rmask_];
      uint32_t p = uint32_t(tail_++);
      uint32_t s = find(key);
      if (s == kAbsent || t_[s].pos != p) continue;  // a copy left behind by a touch
      prefetch_victims();
      State st = state(s);
      uint32_t cell = t_[s].cell;
      count(cell, st, -1);
      t_.erase_at(s);
      return {page_lo_ + (cell >> sh_), st == State::Dirty};
    }
  }
  /// MQSim's write-back of translation page `page`: returns how many of its sectors hold clean entries (they
  /// are read to merge), and makes all its dirty entries clean.
  int writeback(uint32_t page) {
    uint32_t rel = page - page_lo_;
    uint16_t* clean = &cnt_[size_t(rel) << (sh_ + 1)];
    uint16_t* dirty = clean + (size_t(1) << sh_);
    int n = 0;
    for (uint32_t k = 0; k < sectors_; ++k) {
      n += clean[k] > 0;
      clean[k] = uint16_t(clean[k] + dirty[k]);
      dirty[k] = 0;
    }
    if (++epoch_[rel] >= kTagWaiting - 1) renumber(rel);
    return n;
  }
  /// Starts loading what a lookup and an insert of `lpa` (of translation page `page`) will touch.
  void prefetch(uint32_t lpa, uint32_t page) const {
    if (cap_ == 0) return;
    t_.prefetch(lpa);
    uint32_t rel = page - page_lo_;
    if (rel < npages_) prefetch_page(rel);
  }
  /// Bytes held (for memory accounting).
  size_t bytes() const { return t_.bytes() + ring_.size() * 4 + cnt_.size() * 2 + epoch_.size() * 4; }

 private:
  // tags: waiting, clean, else the page's write-back epoch when the entry became dirty (dirty while equal)
  static constexpr uint32_t kTagWaiting = 0xFFFFFFFFu, kTagClean = 0xFFFFFFFEu;
  static constexpr uint64_t kAhead = 16;  // evictions prefetched ahead
  struct Slot {
    // the logical page's complement (0: an empty slot), ring position, (page - page_lo) << sh | sector, tag
    uint32_t nkey, pos, cell, tag;
    bool empty() const { return nkey == 0; }
    uint32_t key() const { return ~nkey; }
  };
  using Table = OpenTable<Slot, 70>;
  uint32_t tag_for(uint32_t cell, State st) const {
    return st == State::Waiting ? kTagWaiting : st == State::Clean ? kTagClean : epoch_[cell >> sh_];
  }
  void count(uint32_t cell, State st, int delta) {
    if (st == State::Waiting) return;
    size_t i = (size_t(cell >> sh_) << (sh_ + 1)) + (cell & ((1u << sh_) - 1));
    if (st == State::Dirty) i += size_t(1) << sh_;
    cnt_[i] = uint16_t(cnt_[i] + delta);
  }
  /// Prefetches for the evictions to come: the slot of the victim kAhead evictions ahead and, through
  /// the slot of the victim kAhead / 2 ahead (prefetched earlier), its sector counts and epoch.
  void prefetch_victims() const {
    if (tail_ + kAhead < head_) t_.prefetch(ring_[(tail_ + kAhead) & rmask_]);
    if (tail_ + kAhead / 2 < head_) {
      uint32_t s = find(ring_[(tail_ + kAhead / 2) & rmask_]);
      if (s != kAbsent) prefetch_page(t_[s].cell >> sh_);
    }
  }
  void prefetch_page(uint32_t rel) const {
    bitline::prefetch(&cnt_[size_t(rel) << (sh_ + 1)]);
    bitline::prefetch(&epoch_[rel]);
  }
  /// Appends slot s at the young end of the ring.
  void push(uint32_t s) {
    if (head_ - tail_ == ring_.size()) make_ring_room();
    ring_[head_ & rmask_] = ~t_[s].nkey;
    t_[s].pos = uint32_t(head_++);
  }
  /// The ring is full: doubles it while most of it is live, else drops the dead copies.
  void make_ring_room() {
    if (t_.size() * 2 > ring_.size()) {
      BigArray<uint32_t> bigger(ring_.size() * 2);
      size_t m = bigger.size() - 1;
      for (uint64_t p = tail_; p < head_; ++p) bigger[p & m] = ring_[p & rmask_];
      ring_ = std::move(bigger);
      rmask_ = m;
      return;
    }
    uint64_t w = tail_;
    for (uint64_t p = tail_; p < head_; ++p) {
      uint32_t key = ring_[p & rmask_];
      uint32_t s = find(key);
      if (s == kAbsent || t_[s].pos != uint32_t(p)) continue;
      ring_[w & rmask_] = key;
      t_[s].pos = uint32_t(w++);
    }
    head_ = w;
  }
  /// The page's epoch would reach a reserved tag: all its entries are clean (a write-back just ran), so mark
  /// them so and restart its epochs.
  void renumber(uint32_t rel) {
    t_.for_each([&](Slot& x) {
      if ((x.cell >> sh_) == rel && x.tag != kTagWaiting) x.tag = kTagClean;
    });
    epoch_[rel] = 0;
  }

  size_t cap_;
  uint32_t page_lo_, npages_, sectors_ = 1;
  int sh_ = 0;
  Table t_;
  BigArray<uint32_t> ring_;  // keys in access order, positions [tail_, head_) (index: position & rmask_)
  uint64_t tail_ = 0, head_ = 0;
  size_t rmask_ = 0;
  BigArray<uint16_t> cnt_;  // per page: clean counts of its sectors, then dirty counts
  BigArray<uint32_t> epoch_;
};

}  // namespace bitline::ssd
