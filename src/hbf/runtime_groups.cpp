// The unified KV cache of a step: group_create, GroupMmap, the read table, plane loads, GroupArrange (selective
// replication to HBM) and group_destroy (runtime.hpp). GroupWrite is in runtime_group_write.cpp.
#include "hbf/runtime.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace bitline::hbf {

// ---- groups ---------------------------------------------------------------------

GroupId Runtime::group_create(std::span<const ObjectId> members) {
  if (members.empty()) throw ModelError("group_create: a group needs at least one KV object");
  const GroupId gid = GroupId(groups_.size());
  for (size_t i = 0; i < members.size(); ++i) {
    const Object& o = obj(members[i], "group_create");
    if (o.kind() != Kind::Kv) throw ModelError(fmt::format("group_create: '{}' is not a KV object", o.name));
    if (o.group != UINT32_MAX && groups_[o.group].live)
      throw ModelError(fmt::format("group_create: '{}' is already in live group {}", o.name, o.group));
    for (size_t j = 0; j < i; ++j)
      if (members[j] == members[i]) throw ModelError(fmt::format("group_create: '{}' appears twice", o.name));
  }
  Group g;
  g.members.assign(members.begin(), members.end());
  g.mapped_slices.assign(members.size(), 0);
  for (ObjectId id : members) objects_[id].group = gid;
  groups_.push_back(std::move(g));
  return gid;
}

VAddr Runtime::group_mmap(GroupId gid) {
  Group& g = group(gid, "group_mmap");
  if (g.mapped) throw ModelError(fmt::format("group_mmap: group {} is already mapped at 0x{:x}", gid, g.mapped));
  const int64_t k = sys_.megaplanes();
  // The plane-distribution table: the flash slices of each megaplane, in member order.
  std::vector<std::vector<ReadTableEntry>> per(static_cast<size_t>(k));
  std::vector<ReadTableEntry> staged;
  for (size_t mi = 0; mi < g.members.size(); ++mi) {
    const KvData& o = kv_of(g.members[mi]);
    for (uint32_t u = 0; u < o.slices.size(); ++u) {
      const KvSlice& s = o.slices[u];
      ReadTableEntry e{g.members[mi], u, s.stream, s.slice};
      if (s.in_flash)
        per[size_t(sys_.deal_index(s.phys.megaplane))].push_back(e);
      else
        staged.push_back(e);
    }
    g.mapped_slices[mi] = uint32_t(o.slices.size());
  }
  size_t rounds = 0;
  for (auto& v : per) rounds = std::max(rounds, v.size());
  g.table.clear();
  for (size_t r = 0; r < rounds; ++r)
    for (auto& v : per)
      if (r < v.size()) g.table.push_back(v[r]);
  g.table.insert(g.table.end(), staged.begin(), staged.end());
  Mapping m;
  m.kind = Kind::Kv;
  m.group = gid;
  m.units = int64_t(g.table.size());
  // Room to grow as GroupWrite adds slices: every megapage of flash and HBM.
  m.reserved = k * sys_.blocks_per_plane() * sys_.pages_per_block() + hbm_.capacity().raw() / sys_.megapage().raw();
  m.base = reserve_va(m.reserved);
  g.mapped = m.base;
  mappings_.emplace(m.base, std::move(m));
  return g.mapped;
}

const std::vector<ReadTableEntry>& Runtime::read_table(GroupId gid) const { return group(gid, "read_table").table; }

std::vector<int64_t> Runtime::group_loads(GroupId gid) const {
  const Group& g = group(gid, "group_loads");
  std::vector<int64_t> loads(size_t(sys_.megaplanes()), 0);
  if (!g.mapped) {
    for (ObjectId id : g.members)
      for (const auto& s : kv_of(id).slices)
        if (s.in_flash) ++loads[s.phys.megaplane];
    return loads;
  }
  const Mapping& m = mappings_.at(g.mapped);
  for (int64_t i = 0; i < m.units; ++i) {
    if (size_t(i) < m.override_.size() && m.override_[size_t(i)].kind == Location::Kind::Hbm) continue;
    Location l = base_location(m, i);
    if (l.kind == Location::Kind::Flash) ++loads[l.flash.megaplane];
  }
  return loads;
}

std::vector<std::vector<int64_t>> Runtime::group_stream_loads(GroupId gid) const {
  const Group& g = group(gid, "group_stream_loads");
  if (!g.mapped) throw ModelError(fmt::format("group_stream_loads: group {} is not mapped (group_mmap first)", gid));
  const Mapping& m = mappings_.at(g.mapped);
  std::vector<std::vector<int64_t>> loads;
  for (int64_t i = 0; i < m.units; ++i) {
    if (size_t(i) < m.override_.size() && m.override_[size_t(i)].kind == Location::Kind::Hbm) continue;
    const Location l = base_location(m, i);
    if (l.kind != Location::Kind::Flash) continue;
    const size_t st = g.table[size_t(i)].stream;
    while (loads.size() <= st) loads.emplace_back(size_t(sys_.megaplanes()), 0);
    ++loads[st][l.flash.megaplane];
  }
  return loads;
}

ArrangeReport Runtime::group_arrange(GroupId gid, ArrangeScope scope) {
  Group& g = group(gid, "group_arrange");
  if (!g.mapped) throw ModelError(fmt::format("group_arrange: group {} is not mapped (group_mmap first)", gid));
  Mapping& m = mappings_.at(g.mapped);
  ArrangeReport r;
  const int64_t k = sys_.megaplanes();
  // The scope of mapping unit i: 0 for the whole group, its stream (layer) per stream.
  const bool per_stream = scope == ArrangeScope::PerStream;
  const auto key = [&](int64_t i) -> size_t { return per_stream ? size_t(g.table[size_t(i)].stream) : 0; };
  size_t scopes = 1;
  if (per_stream)
    for (int64_t i = 0; i < m.units; ++i) scopes = std::max(scopes, key(i) + 1);
  std::vector<std::vector<int64_t>> loads(scopes, std::vector<int64_t>(size_t(k), 0));
  for (int64_t i = 0; i < m.units; ++i) {
    if (size_t(i) < m.override_.size() && m.override_[size_t(i)].kind == Location::Kind::Hbm) continue;
    const Location l = base_location(m, i);
    if (l.kind == Location::Kind::Flash) ++loads[key(i)][l.flash.megaplane];
  }
  // The HBM bytes each scope already reads (staged slices, earlier replicas) and the bytes of a full slice: what
  // kv_offload = fill weighs against the flash rounds.
  std::vector<int64_t> hbm_bytes(scopes, 0);
  for (int64_t i = 0; i < m.units; ++i) {
    const bool replica = size_t(i) < m.override_.size() && m.override_[size_t(i)].kind == Location::Kind::Hbm;
    if (replica || base_location(m, i).kind == Location::Kind::Hbm) hbm_bytes[key(i)] += unit_bytes(m, i);
  }
  int64_t slice_bytes = 0;
  for (ObjectId id : g.members) slice_bytes = std::max(slice_bytes, kv_of(id).slice_cap);
  // Each scope's level per megaplane (KvPlacement::offload over the loads in dealing order, as the serving model),
  // each within an equal share of the HBM megapages left (the serving model's replica budget per layer).
  const int64_t budget = (hbm_.capacity().raw() - hbm_.used().raw()) / sys_.megapage().raw() / int64_t(scopes);
  std::vector<std::vector<int64_t>> target(scopes, std::vector<int64_t>(size_t(k), 0));
  for (size_t s = 0; s < scopes; ++s) {
    int64_t total = 0, need = 0;
    for (int64_t l : loads[s]) total += l, r.max_load_before = std::max(r.max_load_before, l);
    r.mean_load = std::max(r.mean_load, double(total) / double(k));
    std::vector<int64_t> level(static_cast<size_t>(k));
    for (int64_t d = 0; d < k; ++d) {
      level[size_t(d)] = loads[s][sys_.dealt(d)];
      need += std::max<int64_t>(0, level[size_t(d)] - ceil_div(total, k));
    }
    if (need > budget) r.hbm_full = true;
    int64_t rounds = 0;
    kv_.offload(level, total, budget, hbm_bytes[s], slice_bytes, rounds);
    for (int64_t d = 0; d < k; ++d) target[s][sys_.dealt(d)] = level[size_t(d)];
  }
  // Candidates per scope and overloaded megaplane, latest in the mapping first (they sit in the last, partial hyperpages).
  std::vector<std::vector<std::vector<int64_t>>> cand(scopes, std::vector<std::vector<int64_t>>(size_t(k)));
  for (int64_t i = m.units - 1; i >= 0; --i) {
    if (size_t(i) < m.override_.size() && m.override_[size_t(i)].kind != Location::Kind::None) continue;  // replica or in SRAM
    const Location l = base_location(m, i);
    const size_t s = key(i);
    if (l.kind == Location::Kind::Flash && loads[s][l.flash.megaplane] > target[s][l.flash.megaplane])
      cand[s][l.flash.megaplane].push_back(i);
  }
  const int64_t unit = sys_.megapage().raw();
  std::vector<uint8_t> tmp(static_cast<size_t>(unit));
  bool out_of_hbm = false;
  for (size_t s = 0; s < scopes && !out_of_hbm; ++s) {
    for (size_t mp = 0; mp < cand[s].size() && !out_of_hbm; ++mp) {
      for (int64_t i : cand[s][mp]) {
        if (loads[s][mp] <= target[s][mp]) break;
        auto a = hbm_.allocate(sys_.megapage());
        if (!a) {
          out_of_hbm = r.hbm_full = true;
          break;
        }
        if (mode_ == Mode::Functional) {
          load(base_location(m, i), tmp);
          auto d = hbm_.data(*a);
          std::memcpy(d.data(), tmp.data(), tmp.size());
        }
        if (m.override_.size() < size_t(m.units)) m.override_.resize(size_t(m.units));
        Location l;
        l.kind = Location::Kind::Hbm;
        l.hbm = *a;
        m.override_[size_t(i)] = l;
        g.replicas.emplace_back(i, *a);
        --loads[s][mp];
        ++r.replicated;
      }
    }
  }
  for (const auto& ls : loads)
    for (int64_t l : ls) r.max_load_after = std::max(r.max_load_after, l);
  return r;
}

void Runtime::extend_group_mapping(Group& g) {
  Mapping& m = mappings_.at(g.mapped);
  for (size_t mi = 0; mi < g.members.size(); ++mi) {
    const KvData& o = kv_of(g.members[mi]);
    for (uint32_t u = g.mapped_slices[mi]; u < o.slices.size(); ++u)
      g.table.push_back(ReadTableEntry{g.members[mi], u, o.slices[u].stream, o.slices[u].slice});
    g.mapped_slices[mi] = uint32_t(o.slices.size());
  }
  if (int64_t(g.table.size()) > m.reserved) throw ModelError("group mapping: reserved virtual range exhausted");
  m.units = int64_t(g.table.size());
}

void Runtime::group_destroy(GroupId gid) {
  Group& g = group(gid, "group_destroy");
  if (g.mapped) {
    Mapping& m = mappings_.at(g.mapped);
    release_prefetches_in(m);
    mappings_.erase(g.mapped);
  }
  for (auto& [i, a] : g.replicas) hbm_.release(a);
  g.replicas.clear();
  for (ObjectId id : g.members)
    if (objects_[id].group == gid) objects_[id].group = UINT32_MAX;
  g.live = false;
  g.mapped = 0;
  g.table.clear();
}

}  // namespace bitline::hbf
