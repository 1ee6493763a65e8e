// The general SSD's cached mapping table (ssd/cmt.hpp) against a plain
// reference: an LRU list with a map, and a write-back that walks the page's
// entries. Random operation sequences (fixed seeds) must give the same hits,
// victims, dirty flags and write-back sector counts at every step.
#include <gtest/gtest.h>

#include <list>
#include <map>
#include <set>

#include "core/rng.hpp"
#include "ssd/cmt.hpp"

namespace bitline::ssd {
namespace {

/// The obvious implementation: std::list in LRU order (front = most recent), entries with their state.
class RefCmt {
 public:
  struct Entry {
    uint32_t lpa, page, sector;
    Cmt::State st;
  };
  explicit RefCmt(size_t cap) : cap_(cap) {}
  bool full() const { return lru_.size() >= cap_; }
  size_t size() const { return lru_.size(); }
  Entry* find(uint32_t lpa) {
    auto it = pos_.find(lpa);
    return it == pos_.end() ? nullptr : &*it->second;
  }
  void touch(uint32_t lpa) { lru_.splice(lru_.begin(), lru_, pos_.at(lpa)); }
  void insert(uint32_t lpa, uint32_t page, uint32_t sector, Cmt::State st) {
    lru_.push_front(Entry{lpa, page, sector, st});
    pos_[lpa] = lru_.begin();
  }
  std::pair<uint32_t, bool> evict() {
    Entry e = lru_.back();
    pos_.erase(e.lpa);
    lru_.pop_back();
    return {e.page, e.st == Cmt::State::Dirty};
  }
  int writeback(uint32_t page) {
    std::set<uint32_t> sectors;
    for (Entry& e : lru_) {
      if (e.page != page || e.st == Cmt::State::Waiting) continue;
      if (e.st == Cmt::State::Dirty)
        e.st = Cmt::State::Clean;
      else
        sectors.insert(e.sector);
    }
    return int(sectors.size());
  }

 private:
  size_t cap_;
  std::list<Entry> lru_;
  std::map<uint32_t, std::list<Entry>::iterator> pos_;
};

/// Runs `steps` random operations on both tables; lpas in [0, lpas), translation pages of `per_page` lpas
/// from page_lo, `sectors` sectors a page. Counts the write-backs and evictions (to check that the run
/// exercised them).
struct Counts {
  int64_t writebacks = 0, evictions = 0;
};
void differential(Counts& n, uint64_t seed, size_t cap, uint32_t lpas, uint32_t per_page, int sectors, int64_t steps, double touch_share) {
  const uint32_t page_lo = 7;
  uint32_t pages = (lpas + per_page - 1) / per_page;
  Cmt c(cap, page_lo, page_lo + pages, sectors);
  RefCmt r(cap);
  Rng rng(seed);
  auto page_of = [&](uint32_t lpa) { return page_lo + lpa / per_page; };
  auto sector_of = [&](uint32_t lpa) { return uint32_t(lpa % per_page * uint32_t(sectors) / per_page); };
  auto random_state = [&] { return Cmt::State(rng.below(3)); };
  for (int64_t i = 0; i < steps; ++i) {
    uint32_t lpa = uint32_t(rng.below(lpas));
    uint32_t s = c.find(lpa);
    RefCmt::Entry* e = r.find(lpa);
    ASSERT_EQ(s != Cmt::kAbsent, e != nullptr) << "step " << i;
    if (e) {
      ASSERT_EQ(c.state(s), e->st) << "step " << i;
      ASSERT_EQ(c.page(s), e->page);
      ASSERT_EQ(c.lpa(s), lpa);
      if (rng.chance(touch_share)) {
        c.touch(s);
        r.touch(lpa);
      } else {
        Cmt::State st = random_state();
        c.set_state(s, st);
        e->st = st;
      }
      continue;
    }
    if (c.full()) {
      ASSERT_TRUE(r.full());
      auto [page, dirty] = c.evict();
      auto [rpage, rdirty] = r.evict();
      ++n.evictions;
      ASSERT_EQ(page, rpage) << "step " << i;
      ASSERT_EQ(dirty, rdirty) << "step " << i;
      if (dirty) {
        ++n.writebacks;
        ASSERT_EQ(c.writeback(page), r.writeback(page)) << "step " << i;
      }
    }
    Cmt::State st = random_state();
    c.insert(lpa, page_of(lpa), sector_of(lpa), st);
    r.insert(lpa, page_of(lpa), sector_of(lpa), st);
    ASSERT_EQ(c.size(), r.size());
  }
}

TEST(SsdCmt, MatchesReferenceLruWithFewTouches) {
  // MQSim's shape: 16 sectors a translation page; the table far smaller than the address space
  Counts n;
  differential(n, 1, 300, 20000, 64, 16, 60000, 0.05);
  EXPECT_GT(n.writebacks, 1000);
  EXPECT_GT(n.evictions, 20000);
}

TEST(SsdCmt, MatchesReferenceLruWithManyTouches) {
  // most operations hit and touch: the ring fills with dead copies and is compacted many times
  Counts n;
  differential(n, 2, 500, 700, 16, 4, 200000, 0.9);
  EXPECT_GT(n.writebacks, 100);
  EXPECT_GT(n.evictions, 1000);
}

TEST(SsdCmt, MatchesReferenceWithOneEntryAndOddSectorCounts) {
  Counts n;
  differential(n, 3, 1, 50, 5, 3, 5000, 0.5);
  differential(n, 4, 37, 3000, 100, 64, 30000, 0.3);
  EXPECT_GT(n.writebacks, 1000);
}

TEST(SsdCmt, WritebackCountsSectorsOfCleanEntriesAndCleansDirtyOnes) {
  Cmt c(8, 0, 2, 4);
  c.insert(0, 0, 0, Cmt::State::Clean);
  c.insert(1, 0, 0, Cmt::State::Clean);  // same sector: counted once
  c.insert(2, 0, 2, Cmt::State::Dirty);
  c.insert(3, 0, 3, Cmt::State::Waiting);  // neither read nor cleaned
  c.insert(4, 1, 1, Cmt::State::Dirty);    // another page: untouched
  EXPECT_EQ(c.writeback(0), 1);
  EXPECT_EQ(c.state(c.find(2)), Cmt::State::Clean);
  EXPECT_EQ(c.state(c.find(3)), Cmt::State::Waiting);
  EXPECT_EQ(c.state(c.find(4)), Cmt::State::Dirty);
  EXPECT_EQ(c.writeback(0), 2);  // now sectors 0 and 2 hold clean entries
  c.set_state(c.find(2), Cmt::State::Dirty);
  EXPECT_EQ(c.state(c.find(2)), Cmt::State::Dirty);
  EXPECT_EQ(c.writeback(0), 1);
}

TEST(SsdCmt, BadGeometryIsRefused) {
  EXPECT_THROW(Cmt(4, 5, 4, 16), std::invalid_argument);
  EXPECT_THROW(Cmt(4, 0, 4, 65), std::invalid_argument);
  Cmt c(2, 0, 4, 16);
  EXPECT_THROW(c.insert(1, 4, 0, Cmt::State::Clean), std::logic_error);   // page out of range
  EXPECT_THROW(c.insert(1, 0, 16, Cmt::State::Clean), std::logic_error);  // sector out of range
}

}  // namespace
}  // namespace bitline::ssd
