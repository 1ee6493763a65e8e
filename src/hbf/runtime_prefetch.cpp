// SramPrefetch / SramRelease and the prefetch queue that runs them ahead of the tiles that read (runtime.hpp).
#include "hbf/runtime.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace bitline::hbf {

// ---- SRAM -------------------------------------------------------------------------

PrefetchResult Runtime::sram_prefetch(VAddr va, Bytes size) {
  Mapping& m = mapping_at(va, "sram_prefetch");
  const int64_t unit = sys_.megapage().raw();
  if (size.raw() <= 0) throw ModelError(fmt::format("sram_prefetch(0x{:x}): size must be positive", va));
  const VAddr end = m.base + VAddr(m.units * unit);
  if (va + uint64_t(size.raw()) > end)
    throw ModelError(fmt::format("sram_prefetch(0x{:x}, {}): runs past the end of the mapping at 0x{:x}", va, format(size), m.base));
  if (prefetches_.count(va)) throw ModelError(fmt::format("sram_prefetch(0x{:x}): already prefetched; release it first", va));
  PrefetchResult r;
  r.address = va;
  Prefetch p;
  p.mapping = m.base;
  const int64_t first = int64_t(va - m.base) / unit, last = int64_t(va + uint64_t(size.raw()) - 1 - m.base) / unit;
  std::vector<uint8_t> tmp;
  for (int64_t i = first; i <= last; ++i) {
    Location l = location(m, i);
    if (l.kind != Location::Kind::Flash) {
      ++r.not_in_flash;
      continue;
    }
    auto slot = sram_.take(l.flash.megaplane);
    if (!slot) {
      ++r.left_in_flash;
      continue;
    }
    if (mode_ == Mode::Functional) {
      auto d = flash_.read(l.flash);
      auto s = sram_.data(*slot);
      std::memcpy(s.data(), d.data(), std::min(s.size(), d.size()));
    }
    if (m.override_.size() < size_t(m.units)) m.override_.resize(size_t(m.units));
    Location to;
    to.kind = slot->base ? Location::Kind::BaseSram : Location::Kind::PlaneSram;
    to.sram = *slot;
    m.override_[size_t(i)] = to;
    p.slots.emplace_back(i, *slot);
    (slot->base ? r.base_sram : r.plane_sram)++;
  }
  prefetches_.emplace(va, std::move(p));
  return r;
}

void Runtime::sram_release(VAddr va) {
  auto it = prefetches_.find(va);
  if (it == prefetches_.end())
    throw ModelError(
        fmt::format("sram_release(0x{:x}): nothing is prefetched at this address (never prefetched, or already released)", va));
  Mapping& m = mappings_.at(it->second.mapping);
  for (auto& [i, slot] : it->second.slots) {
    m.override_[size_t(i)] = Location{};
    sram_.give(slot);
  }
  prefetches_.erase(it);
}

PrefetchQueueStats run_prefetch_queue(Runtime& rt, std::span<const Access> accesses, int64_t distance,
                                      const std::function<void(size_t tile)>& consume) {
  if (distance < 0) throw ModelError("prefetch queue: distance must not be negative");
  // Tiles: runs of joined accesses.
  std::vector<std::pair<size_t, size_t>> tiles;  // [first, last) access
  for (size_t i = 0; i < accesses.size(); ++i) {
    if (i == 0 || !accesses[i].joins)
      tiles.emplace_back(i, i + 1);
    else
      tiles.back().second = i + 1;
  }
  PrefetchQueueStats st;
  size_t issued = 0;
  for (size_t t = 0; t < tiles.size(); ++t) {
    for (; issued < tiles.size() && issued <= t + size_t(distance); ++issued)
      for (size_t a = tiles[issued].first; a < tiles[issued].second; ++a) {
        if (accesses[a].size.raw() <= 0) continue;
        PrefetchResult r = rt.sram_prefetch(accesses[a].va, accesses[a].size);
        st.sram += r.plane_sram + r.base_sram;
        st.flash += r.left_in_flash;
      }
    st.max_slots_in_use = std::max(st.max_slots_in_use, rt.sram().used_plane() + rt.sram().used_base());
    consume(t);
    for (size_t a = tiles[t].first; a < tiles[t].second; ++a)
      if (accesses[a].size.raw() > 0) rt.sram_release(accesses[a].va);
  }
  return st;
}

}  // namespace bitline::hbf
