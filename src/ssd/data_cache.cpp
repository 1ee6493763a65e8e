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
  Request& r = host_.requests[id];
  r.pending = 1;  // guard while issuing
  int64_t from_cache = 0;
  bool cache = host_.flows[r.flow].any_cache;
  WriteCache& wc = *data_cache_.partitions[data_cache_.partition_of(r.flow)];
  for_each_page(r, [&](uint32_t lpa, int64_t off, int64_t n) {
    if (cache) {
      uint32_t need = bits_of(off, n);
      if (WriteCache::Slot* sl = wc.find(lpa); sl && (sl->bits & need) == need) {
        ++stats_.cache_read_hits;
        from_cache += n;
        return;
      }
    }
    ++host_.requests[id].pending;
    translate(new_tx_from([&] { return Tx::user(TxKind::Read, host_.requests[id].flow, id, lpa, n); }));
  });
  if (from_cache > 0) {
    ++host_.requests[id].pending;
    events_.push(dram(from_cache * 512), {Ev::DramReadDone, id});
  }
  if (--host_.requests[id].pending == 0) finish_read(id);
}

/// Programs of a write without the cache: the request completes when they all end.
void Sim::issue_programs(uint32_t id) {
  Request& r = host_.requests[id];
  r.pending = 1;
  for_each_page(r, [&](uint32_t lpa, int64_t off, int64_t n) {
    ++host_.requests[id].pending;
    translate(new_tx_from([&] { return Tx::user(TxKind::Program, host_.requests[id].flow, id, lpa, n, bits_of(off, n)); }));
  });
  if (--host_.requests[id].pending == 0) events_.push(link(host_.link_up_free, host_.cqe_time), {Ev::Complete, id});
}

/// MQSim's destage buffer: takes the request's pages into the write cache while the sectors being
/// programmed from the cache stay under the back-pressure limit; a cold page is programmed at once, a
/// hot one merges into its slot. Returns whether the whole request is in the cache.
bool Sim::destage(uint32_t id) {
  Request& r = host_.requests[id];
  uint32_t flow = r.flow;
  int c = data_cache_.partition_of(flow);
  WriteCache& wc = *data_cache_.partitions[c];
  int64_t lba = r.lba + r.admitted, end = r.lba + r.sectors, dram_sectors = 0, evicted_sectors = 0;
  uint32_t batch = kNone;
  prefetch_pages(flow, lba, end - lba);  // (their tables' slots all at once: the loop below then finds them loaded)
  while (lba < end && data_cache_.programming_sectors[c] < data_cache_.max_programming_sectors) {
    uint32_t lpa = uint32_t(page_of_sector(lba));
    int64_t off = lba - int64_t(lpa) * sectors_per_page_, n = std::min(end, int64_t(lpa + 1) * sectors_per_page_) - lba;
    uint32_t bits = bits_of(off, n);
    WriteCache::Slot* sl = wc.find(lpa);
    if (sl) {
      sl->bits |= bits;
      sl->version = ++data_cache_.version;
      wc.touch(*sl);
      ++stats_.cache_merges;
    } else {
      if (wc.full()) {
        WriteCache::Slot e = wc.evict();
        if (!e.writeback) {
          if (batch == kNone) batch = data_cache_.new_batch();
          data_cache_.eviction_batches[batch].push_back(e);
          int64_t es = sectors_of(e.bits);
          evicted_sectors += es;
          data_cache_.programming_sectors[c] += es;
        }
      }
      sl = &wc.insert(lpa, bits);
      sl->version = ++data_cache_.version;
    }
    dram_sectors += n;
    if (!model_.hot_cold_cache || !data_cache_.hot_pages.find(lpa)) {  // cold: written back at once
      if (model_.hot_cold_cache) data_cache_.hot_pages.set(lpa, 1);
      sl->writeback = true;
      data_cache_.programming_sectors[c] += n;
      translate(new_tx_from([&] { return Tx::cache_writeback(uint32_t(flow), sl->version, lpa, n, bits); }));
    }
    lba += n;
    host_.requests[id].admitted += n;
  }
  if (model_.hot_cold_cache && events_.now() > data_cache_.next_hot_reset) {
    data_cache_.hot_pages.clear();
    data_cache_.next_hot_reset = events_.now() + model_.hot_window;
  }
  if (batch != kNone) events_.push(dram(evicted_sectors * 512), {Ev::EvictionRead, batch});
  if (dram_sectors > 0) {
    ++host_.requests[id].pending;
    events_.push(dram(dram_sectors * 512), {Ev::DramWriteDone, id});
  }
  return host_.requests[id].admitted == host_.requests[id].sectors;
}

/// The data of evicted dirty slots has been read from DRAM: program it.
void Sim::on_eviction_read(uint32_t batch) {
  std::vector<WriteCache::Slot> list;
  list.swap(data_cache_.eviction_batches[batch]);
  data_cache_.free_batches.push_back(batch);
  for (const auto& e : list) {
    // the evicting flow is not recorded: the slot's lpa decides the flow for priorities and the CMT
    uint32_t flow = flow_of_lpa(e.lpa);
    translate(new_tx_from([&] { return Tx::cache_writeback(uint32_t(flow), e.version, e.lpa, sectors_of(e.bits), e.bits); }));
  }
}

/// A page written back from the cache is programmed: its slot leaves the cache unless newer data merged
/// into it meanwhile, and waiting writes get another try.
void Sim::cache_program_done(const Tx& t) {
  int c = data_cache_.partition_of(t.flow);
  WriteCache& wc = *data_cache_.partitions[c];
  data_cache_.programming_sectors[c] -= t.sectors;
  if (WriteCache::Slot* sl = wc.find(t.lpa)) {
    if (sl->version == t.cache_version())
      wc.erase(*sl);
    else if (sl->writeback && sl->version > t.cache_version())
      sl->writeback = false;  // newer data: dirty again
  }
  auto& w = data_cache_.waiting_writes[c];
  for (size_t i = 0; i < w.size();) {
    bool all = false;
    enqueue_together([&] { all = destage(w[i]); });
    if (all)
      w.erase(w.begin() + std::ptrdiff_t(i));
    else
      ++i;
    // at the limit no later request can enter (and the first call above already did this instant's
    // hot-window reset)
    if (data_cache_.programming_sectors[c] >= data_cache_.max_programming_sectors) break;
  }
}

}  // namespace bitline::ssd::detail
