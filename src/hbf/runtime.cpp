#include "hbf/runtime.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace bitline::hbf {

std::string to_string(Location::Kind k) {
  switch (k) {
    case Location::Kind::None:
      return "none";
    case Location::Kind::Flash:
      return "hbf";
    case Location::Kind::Hbm:
      return "hbm";
    case Location::Kind::PlaneSram:
      return "plane-sram";
    case Location::Kind::BaseSram:
      return "base-sram";
  }
  return "?";
}

namespace {
constexpr VAddr kVaBase = VAddr(1) << 40;
}  // namespace

Runtime::Runtime(const System& sys, Mode mode, uint64_t seed, const KvPolicy& kv)
    : sys_(sys),
      mode_(mode),
      rng_(Rng::derive(seed, "hbf.runtime")),
      kv_(sys_, kv),
      cursors_(kv_.cursor_stream()),
      layout_(sys.hbf().runtime.weight_layout.make()),
      flash_(sys_, mode == Mode::Functional),
      hbm_(sys_.hbm_capacity(), mode == Mode::Functional),
      sram_(sys_, mode == Mode::Functional),
      next_va_(kVaBase) {
  if (sys_.stacks() == 0)
    throw ConfigError("hbf.stacks: this GPU has no HBF stacks (0); the HBF runtime needs at least one (e.g. --preset csi or cli)");
}

// ---- lookups ------------------------------------------------------------------

Runtime::Object& Runtime::obj(ObjectId id, const char* what) {
  return const_cast<Object&>(static_cast<const Runtime*>(this)->obj(id, what));
}
const Runtime::Object& Runtime::obj(ObjectId id, const char* what) const {
  if (id >= objects_.size()) throw ModelError(fmt::format("{}: no object {}", what, id));
  const Object& o = objects_[id];
  if (!o.live) throw ModelError(fmt::format("{}: object '{}' was evicted", what, o.name));
  return o;
}
Runtime::KvData& Runtime::kv_obj(ObjectId id, const char* what) {
  return const_cast<KvData&>(static_cast<const Runtime*>(this)->kv_obj(id, what));
}
const Runtime::KvData& Runtime::kv_obj(ObjectId id, const char* what) const {
  const Object& o = obj(id, what);
  const auto* kv = std::get_if<KvData>(&o.data);
  if (!kv) throw ModelError(fmt::format("{}: object '{}' is not a KV object", what, o.name));
  return *kv;
}
Runtime::Group& Runtime::group(GroupId g, const char* what) {
  return const_cast<Group&>(static_cast<const Runtime*>(this)->group(g, what));
}
const Runtime::Group& Runtime::group(GroupId g, const char* what) const {
  if (g >= groups_.size()) throw ModelError(fmt::format("{}: no group {}", what, g));
  if (!groups_[g].live) throw ModelError(fmt::format("{}: group {} was destroyed", what, g));
  return groups_[g];
}

const Runtime::Mapping* Runtime::find_mapping(VAddr va) const {
  auto it = mappings_.upper_bound(va);
  if (it == mappings_.begin()) return nullptr;
  --it;
  const Mapping& m = it->second;
  if (va >= m.base + VAddr(std::max<int64_t>(m.units, 1)) * VAddr(sys_.megapage().raw())) return nullptr;
  return &m;
}

Runtime::Mapping& Runtime::mapping_at(VAddr va, const char* what) {
  const Mapping* m = find_mapping(va);
  if (!m) throw ModelError(fmt::format("{}(0x{:x}): address is not mapped", what, va));
  return const_cast<Mapping&>(*m);
}

VAddr Runtime::reserve_va(int64_t units) {
  VAddr base = next_va_;
  next_va_ += VAddr(std::max<int64_t>(units, 1) + 1) * VAddr(sys_.megapage().raw());  // one unit of guard gap
  return base;
}

bool Runtime::is_live(ObjectId id) const { return id < objects_.size() && objects_[id].live; }

std::vector<ObjectId> Runtime::live_objects() const {
  std::vector<ObjectId> out;
  for (ObjectId i = 0; i < objects_.size(); ++i)
    if (objects_[i].live) out.push_back(i);
  return out;
}

std::string Runtime::object_name(ObjectId id) const { return id < objects_.size() ? objects_[id].name : "?"; }

Location Runtime::base_location(const Mapping& m, int64_t i) const {
  Location l;
  const int64_t unit = sys_.megapage().raw();
  switch (m.kind) {
    case Kind::Weights:
      l.kind = Location::Kind::Flash;
      l.flash = std::get<WeightData>(objects_[m.object].data).units[size_t(i)];
      break;
    case Kind::Hbm:
      l.kind = Location::Kind::Hbm;
      l.hbm = std::get<HbmData>(objects_[m.object].data).hbm;
      l.hbm_offset = uint64_t(i * unit);
      break;
    case Kind::Kv: {
      const ReadTableEntry& e = groups_[m.group].table[size_t(i)];
      const KvSlice& s = kv_of(e.object).slices[e.unit];
      if (s.in_flash)
        l.kind = Location::Kind::Flash, l.flash = s.phys;
      else
        l.kind = Location::Kind::Hbm, l.hbm = s.hbm;
      break;
    }
  }
  return l;
}

Location Runtime::location(const Mapping& m, int64_t i) const {
  if (size_t(i) < m.override_.size() && m.override_[size_t(i)].kind != Location::Kind::None) return m.override_[size_t(i)];
  return base_location(m, i);
}

int64_t Runtime::unit_bytes(const Mapping& m, int64_t i) const {
  const int64_t unit = sys_.megapage().raw();
  switch (m.kind) {
    case Kind::Weights: {
      const WeightData& o = std::get<WeightData>(objects_[m.object].data);
      auto it = std::upper_bound(o.tensor_first.begin(), o.tensor_first.end(), i);
      size_t t = size_t(it - o.tensor_first.begin()) - 1;
      // Skip empty tensors that share the same first unit.
      while (t + 1 < o.tensors.size() && o.tensor_first[t + 1] == o.tensor_first[t] && o.tensors[t].bytes.raw() == 0) ++t;
      return std::clamp<int64_t>(o.tensors[t].bytes.raw() - (i - o.tensor_first[t]) * unit, 0, unit);
    }
    case Kind::Hbm:
      return std::clamp<int64_t>(std::get<HbmData>(objects_[m.object].data).bytes.raw() - i * unit, 0, unit);
    case Kind::Kv: {
      const ReadTableEntry& e = groups_[m.group].table[size_t(i)];
      return kv_of(e.object).slices[e.unit].bytes;
    }
  }
  return 0;
}

void Runtime::load(const Location& l, std::span<uint8_t> out) {
  std::fill(out.begin(), out.end(), 0);
  switch (l.kind) {
    case Location::Kind::Flash: {
      auto d = flash_.read(l.flash);
      std::memcpy(out.data(), d.data(), std::min(out.size(), d.size()));
      break;
    }
    case Location::Kind::Hbm: {
      auto d = hbm_.data(l.hbm);
      if (l.hbm_offset < d.size()) std::memcpy(out.data(), d.data() + l.hbm_offset, std::min<size_t>(out.size(), d.size() - l.hbm_offset));
      break;
    }
    case Location::Kind::PlaneSram:
    case Location::Kind::BaseSram: {
      auto d = sram_.data(l.sram);
      std::memcpy(out.data(), d.data(), std::min(out.size(), d.size()));
      break;
    }
    case Location::Kind::None:
      break;
  }
}

// ---- mappings -------------------------------------------------------------------

VAddr Runtime::nand_mmap(ObjectId id) {
  Object& o = obj(id, "nand_mmap");
  const auto* w = std::get_if<WeightData>(&o.data);
  if (!w) throw ModelError(fmt::format("nand_mmap: '{}' is not a weight object (KV objects are mapped with group_mmap)", o.name));
  if (o.mapped) throw ModelError(fmt::format("nand_mmap '{}': already mapped at 0x{:x}", o.name, o.mapped));
  Mapping m;
  m.units = m.reserved = int64_t(w->units.size());
  m.base = reserve_va(m.units);
  m.kind = Kind::Weights;
  m.object = id;
  o.mapped = m.base;
  mappings_.emplace(m.base, std::move(m));
  return o.mapped;
}

VAddr Runtime::hbm_alloc(Bytes n, std::string name) {
  if (n.raw() <= 0) throw ModelError(fmt::format("hbm_alloc '{}': size must be positive", name));
  auto a = hbm_.allocate(n);
  if (!a)
    throw ModelError(fmt::format("hbm_alloc '{}': HBM is full ({} requested, {} of {} used)", name, format(n), format(hbm_.used()),
                                 format(hbm_.capacity())));
  Object o;
  o.name = std::move(name);
  o.data = HbmData{*a, n};
  objects_.push_back(std::move(o));
  Mapping m;
  m.units = m.reserved = ceil_div(n.raw(), sys_.megapage().raw());
  m.base = reserve_va(m.units);
  m.kind = Kind::Hbm;
  m.object = ObjectId(objects_.size() - 1);
  objects_.back().mapped = m.base;
  mappings_.emplace(m.base, std::move(m));
  return objects_.back().mapped;
}

void Runtime::release_prefetches_in(const Mapping& m) {
  for (auto it = prefetches_.begin(); it != prefetches_.end();) {
    if (it->second.mapping == m.base) {
      for (auto& [i, slot] : it->second.slots) sram_.give(slot);
      it = prefetches_.erase(it);
    } else {
      ++it;
    }
  }
}

void Runtime::munmap(VAddr base) {
  auto it = mappings_.find(base);
  if (it == mappings_.end()) throw ModelError(fmt::format("munmap(0x{:x}): no mapping starts at this address", base));
  Mapping& m = it->second;
  if (m.kind == Kind::Kv) throw ModelError(fmt::format("munmap(0x{:x}): a group mapping; use group_destroy", base));
  release_prefetches_in(m);
  Object& o = objects_[m.object];
  o.mapped = 0;
  if (m.kind == Kind::Hbm) {
    hbm_.release(std::get<HbmData>(o.data).hbm);
    o.live = false;
  }
  mappings_.erase(it);
}

void Runtime::read(VAddr va, std::span<uint8_t> out) {
  if (mode_ != Mode::Functional) throw ModelError("read: this runtime runs in timing mode and holds no data");
  if (out.empty()) return;
  Mapping& m = mapping_at(va, "read");
  const int64_t unit = sys_.megapage().raw();
  const VAddr end = m.base + VAddr(m.units * unit);
  if (va + out.size() > end)
    throw ModelError(
        fmt::format("read(0x{:x}, {} B): runs {} B past the end of the mapping at 0x{:x}", va, out.size(), va + out.size() - end, m.base));
  std::vector<uint8_t> tmp(static_cast<size_t>(unit));
  size_t done = 0;
  while (done < out.size()) {
    const int64_t off = int64_t(va + done - m.base);
    const int64_t i = off / unit, in = off % unit;
    const size_t n = size_t(std::min<int64_t>(unit - in, int64_t(out.size() - done)));
    load(location(m, i), tmp);
    std::memcpy(out.data() + done, tmp.data() + in, n);
    done += n;
  }
}

void Runtime::write(VAddr va, std::span<const uint8_t> data) {
  Mapping& m = mapping_at(va, "write");
  if (m.kind == Kind::Weights)
    throw ModelError(fmt::format("write(0x{:x}): weight object '{}' is read-only (weights are written once, by store_weights)", va,
                                 objects_[m.object].name));
  if (m.kind == Kind::Kv)
    throw ModelError(fmt::format("write(0x{:x}): group mappings are read-only; KV is append-only (kv_append, group_write)", va));
  const Object& o = objects_[m.object];
  const HbmData& h = std::get<HbmData>(o.data);
  const uint64_t off = va - m.base;
  if (off + data.size() > uint64_t(h.bytes.raw()))
    throw ModelError(
        fmt::format("write(0x{:x}, {} B): runs past the end of HBM buffer '{}' ({} B)", va, data.size(), o.name, h.bytes.raw()));
  if (mode_ == Mode::Functional && !data.empty()) std::memcpy(hbm_.data(h.hbm).data() + off, data.data(), data.size());
}

Location Runtime::translate(VAddr va) const {
  const Mapping* m = find_mapping(va);
  if (!m) throw ModelError(fmt::format("translate(0x{:x}): address is not mapped", va));
  const int64_t i = int64_t(va - m->base) / sys_.megapage().raw();
  if (i >= m->units) throw ModelError(fmt::format("translate(0x{:x}): address is not mapped", va));
  return location(*m, i);
}

Bytes Runtime::tensor_offset(ObjectId id, size_t t) const {
  const Object& o = obj(id, "tensor_offset");
  const auto* w = std::get_if<WeightData>(&o.data);
  if (!w || t >= w->tensors.size()) throw ModelError(fmt::format("tensor_offset: '{}' has no tensor {}", o.name, t));
  return Bytes(w->tensor_first[t] * sys_.megapage().raw());
}

// ---- inspection, timing -----------------------------------------------------------

std::vector<PhysUnit> Runtime::flash_units(ObjectId id) const {
  const Object& o = obj(id, "flash_units");
  if (const auto* w = std::get_if<WeightData>(&o.data)) return w->units;
  std::vector<PhysUnit> out;
  if (const auto* kv = std::get_if<KvData>(&o.data))
    for (const auto& s : kv->slices)
      if (s.in_flash) out.push_back(s.phys);
  return out;
}

std::vector<std::pair<MegaplaneId, uint32_t>> Runtime::owned_blocks(ObjectId id) const { return obj(id, "owned_blocks").blocks; }

std::vector<Access> Runtime::tiles(VAddr va, Bytes size, Bytes tile, Time compute_per_tile) {
  std::vector<Access> out;
  if (tile.raw() <= 0) throw ModelError("tiles: tile size must be positive");
  for (int64_t off = 0; off < size.raw(); off += tile.raw())
    out.push_back(Access{va + VAddr(off), Bytes(std::min(tile.raw(), size.raw() - off)), compute_per_tile});
  return out;
}

ReadPlan Runtime::read_plan(std::span<const Access> accesses) const {
  ReadPlan plan;
  const int64_t unit = sys_.megapage().raw();
  for (const Access& a : accesses) {
    const Mapping* m = find_mapping(a.va);
    if (!m) throw ModelError(fmt::format("read_plan(0x{:x}): address is not mapped", a.va));
    const VAddr end = m->base + VAddr(m->units * unit);
    if (a.size.raw() < 0 || a.va + uint64_t(a.size.raw()) > end)
      throw ModelError(fmt::format("read_plan(0x{:x}, {}): runs past the end of the mapping at 0x{:x}", a.va, format(a.size), m->base));
    const bool join = a.joins && !plan.tiles.empty();
    ReadTile t;
    t.first = join ? plan.tiles.back().first : uint32_t(plan.units.size());
    t.compute = join ? plan.tiles.back().compute + a.compute : a.compute;
    if (a.size.raw() > 0) {
      const int64_t first = int64_t(a.va - m->base) / unit, last = int64_t(a.va + uint64_t(a.size.raw()) - 1 - m->base) / unit;
      for (int64_t i = first; i <= last; ++i) {
        const int64_t ustart = i * unit;
        const int64_t lo = std::max<int64_t>(int64_t(a.va - m->base), ustart) - ustart;
        const int64_t hi = std::min<int64_t>({int64_t(a.va - m->base) + a.size.raw(), ustart + unit, ustart + unit_bytes(*m, i)}) - ustart;
        if (hi <= lo) continue;
        Location l = base_location(*m, i);
        if (size_t(i) < m->override_.size() && m->override_[size_t(i)].kind == Location::Kind::Hbm) l = m->override_[size_t(i)];
        ReadUnit u;
        u.begin = uint32_t(lo);
        u.end = uint32_t(hi);
        if (l.kind == Location::Kind::Flash)
          u.megaplane = l.flash.megaplane;
        else
          u.hbm = true;
        plan.units.push_back(u);
      }
    }
    t.count = uint32_t(plan.units.size() - t.first);
    if (join)
      plan.tiles.back() = t;
    else
      plan.tiles.push_back(t);
  }
  return plan;
}

int64_t Runtime::page_table_entries() const {
  int64_t n = 0;
  for (const auto& [b, m] : mappings_) n += m.units;
  return n;
}

void Runtime::register_stats(StatGroup& g) const {
  flash_.register_stats(g.group("flash"));
  g.group("hbm")
      .derived(
          "used_bytes", [this] { return hbm_.used().raw(); }, "HBM bytes allocated now")
      .derived(
          "capacity_bytes", [this] { return hbm_.capacity().raw(); }, "HBM capacity")
      .derived(
          "allocations", [this] { return hbm_.allocations(); }, "live HBM allocations");
  g.group("sram")
      .derived(
          "plane_slots_used", [this] { return sram_.used_plane(); }, "plane-SRAM slots in use")
      .derived(
          "base_slots_used", [this] { return sram_.used_base(); }, "base-die SRAM slots in use");
  g.derived(
       "objects_live", [this] { return live_objects().size(); }, "persistent objects alive")
      .derived(
          "mappings", [this] { return mappings_.size(); }, "virtual mappings alive")
      .derived(
          "page_table_entries", [this] { return page_table_entries(); }, "page-table entries")
      .derived(
          "prefetches_live", [this] { return prefetches_.size(); }, "SRAM prefetches not yet released");
}

}  // namespace bitline::hbf
