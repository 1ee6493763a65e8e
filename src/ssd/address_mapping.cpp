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
  if (mapping_.arriving[page] == kNotArriving) mapping_.arriving[page] = kNone;
  issue_mapping_read(page, n * 512, flow);
  if (model_.translation_programs) {
    ++mapping_.departing[page];
    uint32_t key = uint32_t(ftl_.logical_pages() + int64_t(page));
    enqueue(new_tx_from([&] { return Tx::mapping_program(uint32_t(flow), key, int64_t(ftl_.plane_of(page)), sectors_per_page_); }));
  } else {
    mapping_.departing[page] = 1;  // MQSim never programs it: the page stays in memory
  }
}

/// Resolves a transaction's logical page through the CMT, then issues it (now, or when its
/// translation page arrives from flash).
void Sim::translate(uint32_t tx) {
  const Tx& t = scheduler_.transactions[tx];
  bool write = t.kind == TxKind::Program;
  if (mapping_.ideal || (write && !model_.write_translation)) return proceed(tx);
  Cmt& c = mapping_.cmt_of(t.flow);
  uint32_t lpa = t.lpa, flow = t.flow, page = mapping_.tpage_of(flow, lpa);
  uint32_t s = c.find(lpa);
  if (s != Cmt::kAbsent && c.state(s) != Cmt::State::Waiting) {
    c.touch(s);
    ++(write ? stats_.cmt_write_hits : stats_.cmt_hits);
    return proceed(tx);
  }
  ++(write ? stats_.cmt_write_misses : stats_.cmt_misses);
  if (s != Cmt::kAbsent) return mapping_.park(page, tx);  // its translation page is on its way
  if (c.capacity() == 0) {
    if (mapping_.arriving[page] == kNotArriving) issue_mapping_read(page, 512, flow);
    return mapping_.park(page, tx);
  }
  make_room(c, flow);  // first: the victim's write-back may start a read of this very page
  uint32_t sector = mapping_.tsector_of(flow, lpa);
  if (mapping_.arriving[page] != kNotArriving) {
    c.insert(lpa, page, sector, Cmt::State::Waiting);
    return mapping_.park(page, tx);
  }
  if (mapping_.departing[page]) {
    c.insert(lpa, page, sector, Cmt::State::Clean);
    return proceed(tx);
  }
  c.insert(lpa, page, sector, Cmt::State::Waiting);
  mapping_.park(page, tx);
  issue_mapping_read(page, 512, flow);
}

/// A translation page arrived from flash: its waiting entries become valid, their transactions go on.
void Sim::arrived(uint32_t page) {
  uint32_t h = mapping_.arriving[page];
  if (h == kNotArriving) return;
  mapping_.scratch.clear();
  for (uint32_t tx = h; tx != kNone; tx = mapping_.park_next[tx]) mapping_.scratch.push_back(tx);
  mapping_.arriving[page] = kNotArriving;
  std::reverse(mapping_.scratch.begin(), mapping_.scratch.end());
  std::vector<uint32_t> list;
  list.swap(mapping_.scratch);
  for (uint32_t tx : list) {
    const Tx& t = scheduler_.transactions[tx];
    Cmt& c = mapping_.cmt_of(t.flow);
    if (c.capacity() > 0) {
      uint32_t s = c.find(t.lpa);
      if (s == Cmt::kAbsent) {
        uint32_t lpa = t.lpa, flow = t.flow;
        cmt_insert(c, flow, lpa, mapping_.tpage_of(flow, lpa), Cmt::State::Clean);
      } else if (c.state(s) == Cmt::State::Waiting) {
        c.set_state(s, Cmt::State::Clean);
      }
    }
    proceed(tx);
  }
  list.clear();
  mapping_.scratch.swap(list);
}

void Sim::mark_dirty(uint32_t flow, uint32_t lpa) {
  Cmt& c = mapping_.cmt_of(flow);
  if (c.capacity() == 0) return;
  uint32_t s = c.find(lpa);
  if (s == Cmt::kAbsent)
    cmt_insert(c, flow, lpa, mapping_.tpage_of(flow, lpa), Cmt::State::Dirty);
  else
    c.set_state(s, Cmt::State::Dirty);
}

/// Issues a translated transaction: a read goes to its page; a program records its sectors and, when it
/// leaves written sectors of the page uncovered, first reads them (update read).
void Sim::proceed(uint32_t tx) {
  Tx& t = scheduler_.transactions[tx];
  if (t.kind == TxKind::Read) {
    uint32_t ppa = ftl_.lookup(t.lpa);
    if (ppa == FlatMap32::kEmpty) {
      ppa = ftl_.unwritten_ppa(t.lpa);
      if (model_.unwritten_read_dirty && !mapping_.ideal) mark_dirty(t.flow, t.lpa);
    }
    Tx& u = scheduler_.transactions[tx];
    u.ppa = ppa;
    u.plane = ftl_.plane_of_ppa(ppa);
    return enqueue(tx);
  }
  uint32_t lpa = t.lpa, flow = t.flow, bits = t.bits;
  // the static allocation scheme stripes flash pages' worth of the logical space: a mapping unit's program is queued
  // on the die of its flash-page-sized logical neighbourhood (its plane is chosen when it is programmed, gather_host_units)
  t.plane = int64_t(ftl_.plane_of(lpa / uint32_t(ftl_.units_per_flash_page())));
  if (!mapping_.ideal) mark_dirty(flow, lpa);
  // a write of the whole page (unit) needs no update read, so not its old place either
  const uint32_t old_ppa = bits == full_page_bits_ ? FlatMap32::kEmpty : ftl_.lookup(lpa);
  uint32_t old = 0;  // the page's written sector groups before this write
  if (const uint32_t* p = mapping_.partial_bits.size() != 0 ? mapping_.partial_bits.find(lpa) : nullptr)
    old = *p;
  else if (old_ppa != FlatMap32::kEmpty)
    old = full_page_bits_;
  uint32_t now_bits = old | bits;
  if (now_bits == full_page_bits_) {
    if (mapping_.partial_bits.size() != 0) mapping_.partial_bits.erase(lpa);
  } else {
    mapping_.partial_bits.set(lpa, now_bits);
  }
  uint32_t missing = old & ~bits;
  if (model_.update_reads && missing && old_ppa != FlatMap32::kEmpty) {
    int64_t sec = std::min<int64_t>(sectors_per_page_, int64_t(__builtin_popcount(missing)) * sectors_per_group_);
    ++stats_.update_reads;
    enqueue(new_tx_from([&] { return Tx::update_read(uint32_t(flow), tx, lpa, old_ppa, ftl_.plane_of_ppa(old_ppa), sec); }));
    return;
  }
  enqueue(tx);
}

}  // namespace bitline::ssd::detail
