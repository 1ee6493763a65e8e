// Stage: address mapping (the general SSD, device_sim.hpp).
//
// Contract. Every user transaction is translated before it is queued. Its flow's cached mapping table (CMT, MQSim's,
// CMT_Capacity and CMT_Sharing_Mode) either holds the entry (a hit: on at once) or not: a miss reads the entry's
// translation page (one read in flight per page; later misses on it wait for that read), and inserting the entry may
// evict another, whose dirty translation page is written back (a read of its clean cached entries, then a program
// when translation_programs). Writes update their entries (dirty); a read of a never-written page creates its entry
// (unwritten_read_dirty). Physical pages come from the page-level FTL (ftl.hpp); Ideal_Mapping_Table skips all of it.
#include "ssd/device_sim.hpp"

#include <fmt/format.h>

namespace bitline::ssd::detail {

/// MQSim's translation-page write-back: every dirty entry of the page is cleaned, the sectors holding
/// its clean cached entries are read (to merge), and the page is programmed (see translation_programs).
void Sim::writeback(Cmt& c, uint32_t page, uint32_t flow) {
  int64_t n = c.writeback(page);
  ++stats_.mapping_writebacks;
  if (arriving_[page] == kNotArriving) arriving_[page] = kNone;
  issue_mapping_read(page, n * 512, flow);
  if (M_.translation_programs) {
    ++departing_[page];
    uint32_t key = uint32_t(ftl_.logical_pages() + int64_t(page));
    Tx t = Tx::mapping_program(uint32_t(flow), key, int64_t(ftl_.plane_of(page)), d_.page_size);
    t.sectors = spp_;
    enqueue(new_tx(t));
  } else {
    departing_[page] = 1;  // MQSim never programs it: the page stays in memory
  }
}

/// Resolves a transaction's logical page through the CMT, then issues it (now, or when its
/// translation page arrives from flash).
void Sim::translate(uint32_t tx) {
  const Tx& t = txs_[tx];
  bool write = t.kind == TxKind::Program;
  if (ideal_map_ || (write && !M_.write_translation)) return proceed(tx);
  Cmt& c = cmt_of(t.flow);
  uint32_t lpa = t.lpa, flow = t.flow, page = tpage_of(flow, lpa);
  uint32_t s = c.find(lpa);
  if (s != Cmt::kAbsent && c.state(s) != Cmt::State::Waiting) {
    c.touch(s);
    ++(write ? stats_.cmt_write_hits : stats_.cmt_hits);
    return proceed(tx);
  }
  ++(write ? stats_.cmt_write_misses : stats_.cmt_misses);
  if (s != Cmt::kAbsent) return park(page, tx);  // its translation page is on its way
  if (c.capacity() == 0) {
    if (arriving_[page] == kNotArriving) issue_mapping_read(page, 512, flow);
    return park(page, tx);
  }
  make_room(c, flow);  // first: the victim's write-back may start a read of this very page
  uint32_t sector = tsector_of(flow, lpa);
  if (arriving_[page] != kNotArriving) {
    c.insert(lpa, page, sector, Cmt::State::Waiting);
    return park(page, tx);
  }
  if (departing_[page]) {
    c.insert(lpa, page, sector, Cmt::State::Clean);
    return proceed(tx);
  }
  c.insert(lpa, page, sector, Cmt::State::Waiting);
  park(page, tx);
  issue_mapping_read(page, 512, flow);
}

/// A translation page arrived from flash: its waiting entries become valid, their transactions go on.
void Sim::arrived(uint32_t page) {
  uint32_t h = arriving_[page];
  if (h == kNotArriving) return;
  scratch_.clear();
  for (uint32_t tx = h; tx != kNone; tx = park_next_[tx]) scratch_.push_back(tx);
  arriving_[page] = kNotArriving;
  std::reverse(scratch_.begin(), scratch_.end());
  std::vector<uint32_t> list;
  list.swap(scratch_);
  for (uint32_t tx : list) {
    const Tx& t = txs_[tx];
    Cmt& c = cmt_of(t.flow);
    if (c.capacity() > 0) {
      uint32_t s = c.find(t.lpa);
      if (s == Cmt::kAbsent) {
        uint32_t lpa = t.lpa, flow = t.flow;
        cmt_insert(c, flow, lpa, tpage_of(flow, lpa), Cmt::State::Clean);
      } else if (c.state(s) == Cmt::State::Waiting) {
        c.set_state(s, Cmt::State::Clean);
      }
    }
    proceed(tx);
  }
  list.clear();
  scratch_.swap(list);
}

void Sim::mark_dirty(uint32_t flow, uint32_t lpa) {
  Cmt& c = cmt_of(flow);
  if (c.capacity() == 0) return;
  uint32_t s = c.find(lpa);
  if (s == Cmt::kAbsent)
    cmt_insert(c, flow, lpa, tpage_of(flow, lpa), Cmt::State::Dirty);
  else
    c.set_state(s, Cmt::State::Dirty);
}

/// Issues a translated transaction: a read goes to its page; a program records its sectors and, when it
/// leaves written sectors of the page uncovered, first reads them (update read).
void Sim::proceed(uint32_t tx) {
  Tx& t = txs_[tx];
  if (t.kind == TxKind::Read) {
    uint32_t ppa = ftl_.lookup(t.lpa);
    if (ppa == FlatMap32::kEmpty) {
      ppa = ftl_.unwritten_ppa(t.lpa);
      if (M_.unwritten_read_dirty && !ideal_map_) mark_dirty(t.flow, t.lpa);
    }
    Tx& u = txs_[tx];
    u.ppa = ppa;
    u.plane = ftl_.plane_of_ppa(ppa);
    return enqueue(tx);
  }
  uint32_t lpa = t.lpa, flow = t.flow, bits = t.bits;
  t.plane = int64_t(ftl_.plane_of(lpa));
  if (!ideal_map_) mark_dirty(flow, lpa);
  uint32_t old_ppa = ftl_.lookup(lpa);
  uint32_t old = 0;
  if (const uint32_t* p = partial_.find(lpa))
    old = *p;
  else if (old_ppa != FlatMap32::kEmpty)
    old = full_bits_;
  uint32_t now_bits = old | bits;
  if (now_bits == full_bits_)
    partial_.erase(lpa);
  else
    partial_.set(lpa, now_bits);
  uint32_t missing = old & ~bits;
  if (M_.update_reads && missing && old_ppa != FlatMap32::kEmpty) {
    int64_t sec = std::min<int64_t>(spp_, int64_t(__builtin_popcount(missing)) * grp_);
    ++stats_.update_reads;
    enqueue(new_tx(Tx::update_read(uint32_t(flow), tx, lpa, old_ppa, ftl_.plane_of_ppa(old_ppa), sec)));
    return;
  }
  enqueue(tx);
}

}  // namespace bitline::ssd::detail
