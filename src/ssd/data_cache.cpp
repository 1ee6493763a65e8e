// Stage: data cache (the general SSD, device_sim.hpp).
//
// Contract. A read's pages are looked up in the write cache (Caching_Mechanism / the flow's caching mode): a cached
// page is served from the cache DRAM, the rest become user read transactions (after translation, address_mapping).
// A cached write's sectors go into the cache (a DRAM write per request); pages first written in the current window
// are programmed at once (cold), pages written again stay and absorb later writes until LRU-evicted (hot_cold_cache,
// hot_window); evictions and destaging become program transactions, with back-pressure at destage_pages_per_plane
// pages per plane being programmed. An uncached write's pages become program transactions directly; a write covering
// part of a written page reads its other sectors first (update_reads). The cache DRAM serves one access at a time
// (dram_serial), each priced from its row size, data rate, burst size and tRCD/tCL/tRP.
#include "ssd/device_sim.hpp"

#include <fmt/format.h>

namespace bitline::ssd::detail {

void Sim::issue_reads(uint32_t id) {
  Request& r = reqs_[id];
  r.pending = 1;  // guard while issuing
  int64_t from_cache = 0;
  bool cache = flows_[r.flow].any_cache;
  WriteCache& wc = *cache_[cache_of(r.flow)];
  for_each_page(r, [&](uint32_t lpa, int64_t off, int64_t n) {
    if (cache) {
      uint32_t need = bits_of(off, n);
      if (WriteCache::Slot* sl = wc.find(lpa); sl && (sl->bits & need) == need) {
        ++stats_.cache_read_hits;
        from_cache += n;
        return;
      }
    }
    ++reqs_[id].pending;
    Tx t = Tx::user(TxKind::Read, reqs_[id].flow, id, lpa, n * 512);
    t.sectors = n;
    translate(new_tx(t));
  });
  if (from_cache > 0) {
    ++reqs_[id].pending;
    ev_.push(dram(from_cache * 512), {Ev::DramReadDone, id});
  }
  if (--reqs_[id].pending == 0) finish_read(id);
}

/// Programs of a write without the cache: the request completes when they all end.
void Sim::issue_programs(uint32_t id) {
  Request& r = reqs_[id];
  r.pending = 1;
  for_each_page(r, [&](uint32_t lpa, int64_t off, int64_t n) {
    ++reqs_[id].pending;
    Tx t = Tx::user(TxKind::Program, reqs_[id].flow, id, lpa, n * 512);
    t.sectors = n;
    t.bits = bits_of(off, n);
    translate(new_tx(t));
  });
  if (--reqs_[id].pending == 0) ev_.push(link(up_free_, cqe_time_), {Ev::Complete, id});
}

/// MQSim's destage buffer: takes the request's pages into the write cache while the sectors being
/// programmed from the cache stay under the back-pressure limit; a cold page is programmed at once, a
/// hot one merges into its slot. Returns whether the whole request is in the cache.
bool Sim::destage(uint32_t id) {
  Request& r = reqs_[id];
  uint32_t flow = r.flow;
  int c = cache_of(flow);
  WriteCache& wc = *cache_[c];
  int64_t lba = r.lba + r.admitted, end = r.lba + r.sectors, dram_sectors = 0, evicted_sectors = 0;
  uint32_t batch = kNone;
  while (lba < end && depth_[c] < max_depth_) {
    uint32_t lpa = uint32_t(lba / spp_);
    int64_t off = lba - int64_t(lpa) * spp_, n = std::min(end, int64_t(lpa + 1) * spp_) - lba;
    uint32_t bits = bits_of(off, n);
    WriteCache::Slot* sl = wc.find(lpa);
    if (sl) {
      sl->bits |= bits;
      sl->version = ++version_;
      wc.touch(*sl);
      ++stats_.cache_merges;
    } else {
      if (wc.full()) {
        WriteCache::Slot e = wc.evict();
        if (!e.writeback) {
          if (batch == kNone) batch = new_batch();
          batches_[batch].push_back(e);
          int64_t es = sectors_of(e.bits);
          evicted_sectors += es;
          depth_[c] += es;
        }
      }
      sl = &wc.insert(lpa, bits);
      sl->version = ++version_;
    }
    dram_sectors += n;
    if (!M_.hot_cold_cache || !hot_.find(lpa)) {  // cold: written back at once
      if (M_.hot_cold_cache) hot_.set(lpa, 1);
      sl->writeback = true;
      depth_[c] += n;
      Tx t = Tx::cache_writeback(uint32_t(flow), sl->version, lpa, n * 512);
      t.sectors = n;
      t.bits = bits;
      translate(new_tx(t));
    }
    lba += n;
    reqs_[id].admitted += n;
  }
  if (M_.hot_cold_cache && ev_.now() > next_hot_reset_) {
    hot_.clear();
    next_hot_reset_ = ev_.now() + M_.hot_window;
  }
  if (batch != kNone) ev_.push(dram(evicted_sectors * 512), {Ev::EvictionRead, batch});
  if (dram_sectors > 0) {
    ++reqs_[id].pending;
    ev_.push(dram(dram_sectors * 512), {Ev::DramWriteDone, id});
  }
  return reqs_[id].admitted == reqs_[id].sectors;
}

uint32_t Sim::new_batch() {
  if (!free_batch_.empty()) {
    uint32_t b = free_batch_.back();
    free_batch_.pop_back();
    return b;
  }
  batches_.emplace_back();
  return uint32_t(batches_.size() - 1);
}

/// The data of evicted dirty slots has been read from DRAM: program it.
void Sim::on_eviction_read(uint32_t batch) {
  std::vector<WriteCache::Slot> list;
  list.swap(batches_[batch]);
  free_batch_.push_back(batch);
  for (const auto& e : list) {
    // the evicting flow is not recorded: the slot's lpa decides the flow for priorities and the CMT
    uint32_t flow = flow_of_lpa(e.lpa);
    Tx t = Tx::cache_writeback(uint32_t(flow), e.version, e.lpa, sectors_of(e.bits) * 512);
    t.sectors = sectors_of(e.bits);
    t.bits = e.bits;
    translate(new_tx(t));
  }
}

/// A page written back from the cache is programmed: its slot leaves the cache unless newer data merged
/// into it meanwhile, and waiting writes get another try.
void Sim::cache_program_done(const Tx& t) {
  int c = cache_of(t.flow);
  WriteCache& wc = *cache_[c];
  depth_[c] -= t.sectors;
  if (WriteCache::Slot* sl = wc.find(t.lpa)) {
    if (sl->version == t.cache_version())
      wc.erase(*sl);
    else if (sl->writeback && sl->version > t.cache_version())
      sl->writeback = false;  // newer data: dirty again
  }
  auto& w = waiting_[c];
  for (size_t i = 0; i < w.size();) {
    if (destage(w[i]))
      w.erase(w.begin() + std::ptrdiff_t(i));
    else
      ++i;
    // at the limit no later request can enter (and the first call above already did this instant's
    // hot-window reset)
    if (depth_[c] >= max_depth_) break;
  }
}

}  // namespace bitline::ssd::detail
