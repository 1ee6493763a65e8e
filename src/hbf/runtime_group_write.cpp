// GroupWrite: flushing a group's full KV slices from HBM to flash by the layout's mechanism (flashaccel's hyperpages
// in each request's window, scatter's random megaplanes, paged's whole blocks) (runtime.hpp).
#include "hbf/runtime.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace bitline::hbf {

WriteReport Runtime::group_write(GroupId gid, Remainder remainder) {
  Group& g = group(gid, "group_write");
  WriteReport r;
  // The layout's class picks the write mechanism (hbf::KvLayoutPolicy::write).
  struct Writer final : KvWriter {
    Runtime& rt;
    Group& g;
    Remainder remainder;
    WriteReport& r;
    Writer(Runtime& rt_, Group& g_, Remainder rem, WriteReport& r_) : rt(rt_), g(g_), remainder(rem), r(r_) {}
    void write_runs() override { rt.write_runs(g, remainder, r); }
    void write_scattered() override { rt.write_scattered(g, r); }
    void write_blocks() override { rt.write_paged_blocks(g, r); }
  } w(*this, g, remainder, r);
  kv_.layout().write(w);
  if (g.mapped) extend_group_mapping(g);
  return r;
}

std::vector<std::pair<ObjectId, uint32_t>> Runtime::full_slices(const Group& g) const {
  std::vector<std::pair<ObjectId, uint32_t>> full;
  for (ObjectId id : g.members) {
    const KvData& o = kv_of(id);
    for (uint32_t u = 0; u < o.slices.size(); ++u)
      if (!o.slices[u].in_flash && o.slices[u].bytes == o.slices[u].cap) full.emplace_back(id, u);
  }
  return full;
}

void Runtime::flush_slice(ObjectId id, uint32_t u, MegaplaneId mp, WriteReport& r) {
  KvSlice& s = kv_of(id).slices[u];
  const PhysUnit p = *place(id, objects_[id], mp);
  std::span<const uint8_t> bytes;
  if (mode_ == Mode::Functional) bytes = hbm_.data(s.hbm);
  flash_.program(p, id, bytes);
  hbm_.release(s.hbm);
  s.hbm = 0;
  s.in_flash = true;
  s.phys = p;
  r.programmed.push_back(mp);
  ++r.units;
}

void Runtime::write_scattered(Group& g, WriteReport& r) {
  std::vector<std::pair<ObjectId, uint32_t>> full = full_slices(g);
  // A plane-oblivious allocator: every full slice on the megaplane its stream's draw names (else the next one with
  // room), stream by stream, request by request, slice by slice: the order the serving model draws them in.
  std::stable_sort(full.begin(), full.end(), [&](const auto& a, const auto& b) {
    return kv_of(a.first).slices[a.second].stream < kv_of(b.first).slices[b.second].stream;
  });
  for (auto [id, u] : full) {
    const uint32_t stream = kv_of(id).slices[u].stream;
    while (scatter_.size() <= stream) scatter_.push_back(kv_.scatter_stream(int32_t(scatter_.size())));
    flush_slice(id, u, megaplane_with_room(objects_[id], kv_.scatter_pick(scatter_[stream])), r);
    ++r.scattered;
  }
}

void Runtime::write_runs(Group& g, Remainder remainder, WriteReport& r) {
  const int64_t k = sys_.megaplanes();
  const std::vector<std::pair<ObjectId, uint32_t>> full = full_slices(g);
  const size_t hyper = full.size() / size_t(k);
  std::vector<char> used(static_cast<size_t>(k));
  for (size_t h = 0; h < hyper; ++h) {
    std::fill(used.begin(), used.end(), 0);
    for (size_t j = h * size_t(k); j < (h + 1) * size_t(k); ++j) {
      auto [id, u] = full[j];
      Object& o = objects_[id];
      KvData& kv = kv_of(id);
      int64_t pick = -1;
      if (kv.window >= k) {
        // Each request continues round-robin from its own cursor, so its slices spread over all megaplanes.
        for (int64_t step = 0; step < k && pick < 0; ++step) {
          const int64_t d = (kv.cursor + step) % k;
          if (!used[size_t(d)] && has_room(o, sys_.dealt(d))) pick = d;
        }
        if (pick >= 0) kv.cursor = (pick + 1) % k;
      } else {
        // kv_span = fit: round-robin inside the request's window (other requests' windows fill the rest of the
        // hyperpage); a window with no room left spills to the next megaplanes after it.
        for (int64_t step = 0; step < kv.window && pick < 0; ++step) {
          const int64_t pos = (kv.cursor + step) % kv.window, d = (kv.window_start + pos) % k;
          if (has_room(o, sys_.dealt(d))) pick = d, kv.cursor = (pos + 1) % kv.window;
        }
        for (int64_t step = kv.window; step < k && pick < 0; ++step) {
          const int64_t d = (kv.window_start + step) % k;
          if (has_room(o, sys_.dealt(d))) pick = d, ++r.spilled;
        }
      }
      if (pick < 0) throw ModelError(fmt::format("group_write: HBF is full: no megaplane has a free block for the KV of '{}'", o.name));
      used[size_t(pick)] = 1;
      flush_slice(id, u, sys_.dealt(pick), r);
    }
    ++r.hyperpages;
  }
  for (size_t j = hyper * size_t(k); j < full.size(); ++j) {
    if (remainder == Remainder::Hold) {
      ++r.held;
      continue;
    }
    auto [id, u] = full[j];
    const KvData& kv = kv_of(id);
    // A random megaplane (of the request's window under kv_span = fit), else the next one with room.
    const int64_t start = kv.window >= k ? int64_t(rng_.below(uint64_t(k))) : kv.window_start + int64_t(rng_.below(uint64_t(kv.window)));
    flush_slice(id, u, megaplane_with_room(objects_[id], start), r);
    ++r.scattered;
  }
}

void Runtime::write_paged_blocks(Group& g, WriteReport& r) {
  // The whole blocks still in HBM (the slice ids of each), stream by stream, request by request, block by block: the
  // order the serving model draws them in (KvPlacement::paged_blocks).
  struct Block {
    ObjectId id = kNoObject;
    uint32_t stream = 0;
    std::vector<uint32_t> slices;
  };
  std::vector<Block> blocks;
  for (ObjectId id : g.members) {
    const KvData& o = kv_of(id);
    for (uint32_t st = 0; st < o.streams.size(); ++st) {
      int64_t at = 0;  // the stream's bytes up to and including the slice
      std::vector<uint32_t> run;
      for (uint32_t sid : o.streams[st]) {
        const KvSlice& s = o.slices[sid];
        if (s.bytes != s.cap) break;  // the open slice: its block is not whole
        at += s.bytes;
        run.push_back(sid);
        if (at % o.block != 0) continue;
        if (!s.in_flash) blocks.push_back(Block{id, st, run});
        run.clear();
      }
    }
  }
  std::stable_sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) { return a.stream < b.stream; });
  // Pieces beyond a block's staged slices (a block at an offset spans one megapage more), inserted after the block's
  // last slice in its stream once every block is placed: (object, stream) -> (last staged slice -> new slice).
  std::map<std::pair<ObjectId, uint32_t>, std::unordered_map<uint32_t, uint32_t>> extra;
  std::vector<uint8_t> bytes;
  std::vector<int64_t> pieces;
  for (const Block& b : blocks) {
    while (paged_.size() <= b.stream) paged_.push_back(kv_.paged_stream(int32_t(paged_.size())));
    Object& obj = objects_[b.id];
    KvData& o = kv_of(b.id);
    const KvPlacement::PagedSpot at = kv_.paged_pick(paged_[b.stream], o.block);
    bytes.clear();
    for (uint32_t sid : b.slices) {
      KvSlice& s = o.slices[sid];
      if (mode_ == Mode::Functional) {
        const auto d = hbm_.data(s.hbm);
        bytes.insert(bytes.end(), d.begin(), d.begin() + s.bytes);
      }
      hbm_.release(s.hbm);
      s.hbm = 0;
    }
    pieces.clear();
    kv_.paged_cut(at.offset, o.block, [&](int64_t p) { pieces.push_back(p); });
    int64_t off = 0;
    for (size_t j = 0; j < pieces.size(); ++j) {
      uint32_t sid = 0;
      if (j < b.slices.size()) {
        sid = b.slices[j];
      } else {  // (paged_cut gives at least as many pieces as the block has staged slices, each at most a megapage)
        sid = uint32_t(o.slices.size());
        KvSlice s;
        s.stream = b.stream;
        o.slices.push_back(s);
        extra[{b.id, b.stream}][b.slices.back()] = sid;
      }
      // The drawn megaplane, else the next one with room (the allocator's pool is the whole HBF).
      const MegaplaneId mp = megaplane_with_room(obj, at.megaplane);
      const PhysUnit p = *place(b.id, obj, mp);
      std::span<const uint8_t> data;
      if (mode_ == Mode::Functional) data = std::span<const uint8_t>(bytes).subspan(size_t(off), size_t(pieces[j]));
      flash_.program(p, b.id, data);
      KvSlice& s = o.slices[sid];
      s.bytes = s.cap = uint32_t(pieces[j]);
      s.in_flash = true;
      s.phys = p;
      off += pieces[j];
      r.programmed.push_back(mp);
      ++r.units;
      ++r.scattered;
    }
  }
  // Put the extra pieces in their streams and renumber the streams' slices (and the group's read table).
  for (auto& [key, after] : extra) {
    KvData& o = kv_of(key.first);
    std::vector<uint32_t>& ids = o.streams[key.second];
    std::vector<uint32_t> out;
    out.reserve(ids.size() + after.size());
    for (uint32_t sid : ids) {
      out.push_back(sid);
      if (auto it = after.find(sid); it != after.end()) out.push_back(it->second);
    }
    ids = std::move(out);
    for (uint32_t i = 0; i < ids.size(); ++i) o.slices[ids[i]].slice = i;
  }
  if (!extra.empty())
    for (ReadTableEntry& e : g.table) e.slice = kv_of(e.object).slices[e.unit].slice;
}

}  // namespace bitline::hbf
