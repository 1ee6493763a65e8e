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
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
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

bool Runtime::has_room(const Object& o, MegaplaneId m) const {
  auto it = o.open.find(m);
  if (it != o.open.end() && int64_t(flash_.write_pointer(m, it->second)) < sys_.pages_per_block()) return true;
  return flash_.free_blocks(m) > 0;
}

std::optional<PhysUnit> Runtime::place(ObjectId id, Object& o, MegaplaneId m) {
  auto it = o.open.find(m);
  uint32_t block;
  if (it != o.open.end() && int64_t(flash_.write_pointer(m, it->second)) < sys_.pages_per_block()) {
    block = it->second;
  } else {
    auto b = flash_.allocate(m, id);
    if (!b) return std::nullopt;
    block = *b;
    o.open[m] = block;
    o.blocks.emplace_back(m, block);
  }
  return PhysUnit{m, block, flash_.write_pointer(m, block)};
}

// ---- objects ------------------------------------------------------------------

ObjectId Runtime::store_weights(const WeightSpec& spec, std::span<const uint8_t> data, const WeightLayout* layout) {
  if (spec.tensors.empty()) throw ModelError(fmt::format("store_weights '{}': a weight object needs at least one tensor", spec.name));
  if (!layout) layout = layout_.get();
  const std::vector<uint32_t> order = layout->placement_order(spec);
  const int64_t unit = sys_.megapage().raw();
  const int64_t k = sys_.megaplanes();
  int64_t total_bytes = 0, total_units = 0;
  std::vector<int64_t> first(spec.tensors.size()), byte_first(spec.tensors.size());
  for (size_t t = 0; t < spec.tensors.size(); ++t) {
    if (spec.tensors[t].bytes.raw() < 0)
      throw ModelError(fmt::format("store_weights '{}': tensor '{}' has a negative size", spec.name, spec.tensors[t].name));
    first[t] = total_units;
    byte_first[t] = total_bytes;
    total_units += ceil_div(spec.tensors[t].bytes.raw(), unit);
    total_bytes += spec.tensors[t].bytes.raw();
  }
  if (mode_ == Mode::Functional && int64_t(data.size()) != total_bytes)
    throw ModelError(
        fmt::format("store_weights '{}': {} bytes of data given for tensors of {} bytes", spec.name, data.size(), total_bytes));
  // The layout deals megapage j to megaplane dealt(cursor + j): every megaplane
  // gets floor(U / K) megapages, the first U mod K of the dealing order one more.
  const int64_t per = total_units / k, extra = total_units % k;
  const int64_t free_units = flash_.free_blocks() * sys_.pages_per_block();
  for (int64_t d = 0; d < k; ++d) {
    const int64_t pos = ((d - weight_cursor_) % k + k) % k;
    const int64_t need = per + (pos < extra ? 1 : 0);
    const MegaplaneId m = sys_.dealt(d);
    const int64_t avail = flash_.free_blocks(m) * sys_.pages_per_block();
    if (need > avail)
      throw ModelError(
          fmt::format("store_weights '{}': {} ({} megapages of {}) does not fit: the {} layout puts {} megapages on {} "
                      "but it has {} free ({} of {} megapages free in all)",
                      spec.name, format(Bytes(total_bytes)), total_units, format(sys_.megapage()), layout->name(), need, sys_.name(m),
                      avail, free_units, k * sys_.blocks_per_plane() * sys_.pages_per_block()));
  }

  const ObjectId id = ObjectId(objects_.size());
  objects_.emplace_back();
  Object& o = objects_.back();
  o.name = spec.name;
  WeightData& w = o.data.emplace<WeightData>();
  w.tensors = spec.tensors;
  w.tensor_first = first;
  w.units.resize(size_t(total_units));
  int64_t j = 0;
  for (uint32_t t : order) {
    const int64_t bytes = spec.tensors[t].bytes.raw();
    const int64_t n = ceil_div(bytes, unit);
    for (int64_t u = 0; u < n; ++u, ++j) {
      const MegaplaneId m = sys_.dealt(weight_cursor_ + j);
      const PhysUnit p = *place(id, o, m);  // capacity checked above
      std::span<const uint8_t> chunk;
      if (mode_ == Mode::Functional) chunk = data.subspan(size_t(byte_first[t] + u * unit), size_t(std::min(unit, bytes - u * unit)));
      flash_.program(p, id, chunk);
      w.units[size_t(first[t] + u)] = p;
    }
  }
  weight_cursor_ = (weight_cursor_ + total_units) % k;
  return id;
}

int64_t Runtime::tokens_per_slice(Bytes token_bytes) const {
  if (token_bytes.raw() <= 0) throw ModelError("tokens_per_slice: the KV of one token must have a positive size");
  const int64_t n = sys_.megapage().raw() / token_bytes.raw();
  if (n == 0)
    throw ModelError(fmt::format("KV layout does not fit: one token of one layer ({}) is larger than a megapage ({})", format(token_bytes),
                                 format(sys_.megapage())));
  return n;
}

ObjectId Runtime::kv_create(std::string name, uint32_t streams, Bytes token_bytes, Bytes expected) {
  if (streams == 0) throw ModelError(fmt::format("kv_create '{}': a KV object needs at least one stream", name));
  if (expected.raw() < 0) throw ModelError(fmt::format("kv_create '{}': negative expected size", name));
  if (kv_.layout().whole_blocks()) {
    if (token_bytes.raw() <= 0)
      throw ModelError(
          fmt::format("kv_create '{}': the paged KV layout cuts KV into blocks of whole tokens: give the size of a token", name));
    if (kv_.policy().block_bytes < token_bytes.raw())
      throw ModelError(fmt::format("kv_create '{}': one token's KV of a layer ({}) exceeds a KV block (serving.kv_block_bytes = {})", name,
                                   format(token_bytes), format(Bytes(kv_.policy().block_bytes))));
  }
  KvData kv;
  kv.slice_cap = sys_.megapage().raw();
  if (token_bytes.raw() != 0) {
    kv.slice_cap = tokens_per_slice(token_bytes) * token_bytes.raw();
    kv.token_bytes = token_bytes.raw();
  }
  if (kv_.layout().whole_blocks()) {
    kv.slice_cap = sys_.megapage().raw();
    kv.block = kv_.policy().block_bytes / token_bytes.raw() * token_bytes.raw();
    kv.appended.assign(streams, 0);
  }
  const int64_t k = sys_.megaplanes();
  kv.window = k;
  if (*sys_.hbf().runtime.kv_span == KvSpan::All && expected.raw() > 0) kv.cursor = kv_.scatter_pick(cursors_);
  if (*sys_.hbf().runtime.kv_span == KvSpan::Fit && expected.raw() > 0) {
    // Just wide enough for the expected slices (each stream rounds up to whole slices) in whole megablocks.
    const int64_t per_stream = ceil_div(ceil_div(expected.raw(), int64_t(streams)), kv.slice_cap);
    kv.window = kv_.window(per_stream, int64_t(streams));
    kv.window_start = kv_window_next_;
    kv_window_next_ = (kv_window_next_ + kv.window) % k;
  }
  kv.streams.resize(streams);
  Object o;
  o.name = std::move(name);
  o.data = std::move(kv);
  objects_.push_back(std::move(o));
  return ObjectId(objects_.size() - 1);
}

std::pair<int64_t, int64_t> Runtime::kv_window(ObjectId id) const {
  const KvData& kv = kv_obj(id, "kv_window");
  return {kv.window_start, kv.window};
}

void Runtime::kv_append(ObjectId id, uint32_t stream, std::span<const uint8_t> data) {
  append(id, stream, data.data(), int64_t(data.size()));
}

void Runtime::kv_append_zeros(ObjectId id, uint32_t stream, Bytes n) { append(id, stream, nullptr, n.raw()); }

void Runtime::append(ObjectId id, uint32_t stream, const uint8_t* data, int64_t n) {
  KvData& o = kv_obj(id, "kv_append");
  const std::string& name = objects_[id].name;
  if (stream >= o.streams.size())
    throw ModelError(fmt::format("kv_append '{}': stream {} does not exist (the object has {})", name, stream, o.streams.size()));
  if (n < 0) throw ModelError(fmt::format("kv_append '{}': negative size", name));
  if (n == 0) return;
  if (o.token_bytes && n % o.token_bytes != 0)
    throw ModelError(fmt::format("kv_append '{}': {} bytes is not a whole number of {}-byte tokens", name, n, o.token_bytes));
  const int64_t unit = sys_.megapage().raw();
  // Room in the open (last, staged, not full) slice, then whole new slices: check HBM first so that a failure changes nothing.
  auto& ids = o.streams[stream];
  int64_t room = 0;
  if (!ids.empty()) {
    const KvSlice& s = o.slices[ids.back()];
    if (!s.in_flash) room = s.cap - s.bytes;
  }
  int64_t new_slices = 0;
  if (o.block == 0) {
    new_slices = ceil_div(std::max<int64_t>(0, n - room), o.slice_cap);
  } else {  // paged: slices end at block boundaries (at most the HBM's megapages are counted)
    for (int64_t left = n - room, at = o.appended[stream] + room; left > 0 && new_slices * unit <= hbm_.capacity().raw(); ++new_slices) {
      const int64_t c = next_cap(o, at);
      left -= c;
      at += c;
    }
  }
  if (hbm_.used().raw() + new_slices * unit > hbm_.capacity().raw())
    throw ModelError(fmt::format("kv_append '{}': HBM is full: staging {} new slices of {} needs {} but {} of {} are used", name,
                                 new_slices, format(sys_.megapage()), format(Bytes(new_slices * unit)), format(hbm_.used()),
                                 format(hbm_.capacity())));
  int64_t pos = 0;
  while (pos < n) {
    if (ids.empty() || o.slices[ids.back()].in_flash || o.slices[ids.back()].bytes == o.slices[ids.back()].cap) {
      KvSlice s;
      s.stream = stream;
      s.slice = uint32_t(ids.size());
      s.cap = uint32_t(next_cap(o, o.block ? o.appended[stream] : 0));
      s.hbm = *hbm_.allocate(sys_.megapage());
      ids.push_back(uint32_t(o.slices.size()));
      o.slices.push_back(s);
    }
    KvSlice& s = o.slices[ids.back()];
    const int64_t take = std::min<int64_t>(s.cap - s.bytes, n - pos);
    if (mode_ == Mode::Functional && data) std::memcpy(hbm_.data(s.hbm).data() + s.bytes, data + pos, size_t(take));
    s.bytes += uint32_t(take);
    if (o.block) o.appended[stream] += take;
    pos += take;
  }
}

int64_t Runtime::next_cap(const KvData& o, int64_t appended) const {
  if (o.block == 0) return o.slice_cap;
  return std::min(sys_.megapage().raw(), o.block - appended % o.block);
}

std::vector<uint8_t> Runtime::kv_read(ObjectId id, uint32_t stream) {
  const KvData& o = kv_obj(id, "kv_read");
  if (stream >= o.streams.size()) throw ModelError(fmt::format("kv_read '{}': stream {} does not exist", objects_[id].name, stream));
  if (mode_ != Mode::Functional) throw ModelError("kv_read: this runtime runs in timing mode and holds no data");
  std::vector<uint8_t> out, tmp(size_t(sys_.megapage().raw()));
  for (uint32_t sid : o.streams[stream]) {
    const KvSlice& s = o.slices[sid];
    Location l;
    if (s.in_flash)
      l.kind = Location::Kind::Flash, l.flash = s.phys;
    else
      l.kind = Location::Kind::Hbm, l.hbm = s.hbm;
    load(l, tmp);
    out.insert(out.end(), tmp.begin(), tmp.begin() + s.bytes);
  }
  return out;
}

std::vector<std::pair<MegaplaneId, uint32_t>> Runtime::evict(ObjectId id) {
  Object& o = obj(id, "evict");
  if (o.kind() == Kind::Hbm) throw ModelError(fmt::format("evict: '{}' is an HBM buffer; munmap it", o.name));
  if (o.mapped) throw ModelError(fmt::format("evict '{}': the object is mapped at 0x{:x}; munmap it first", o.name, o.mapped));
  if (o.group != UINT32_MAX && groups_[o.group].live)
    throw ModelError(fmt::format("evict '{}': the object is in live group {}; group_destroy it first", o.name, o.group));
  std::vector<std::pair<MegaplaneId, uint32_t>> erased = o.blocks;
  for (auto [m, b] : o.blocks) flash_.erase(m, b, id);
  if (const auto* kv = std::get_if<KvData>(&o.data))
    for (const auto& s : kv->slices)
      if (!s.in_flash) hbm_.release(s.hbm);
  o.live = false;
  o.blocks.clear();
  o.open.clear();
  if (auto* w = std::get_if<WeightData>(&o.data)) std::vector<PhysUnit>().swap(w->units);
  if (auto* kv = std::get_if<KvData>(&o.data)) kv->slices.clear(), kv->streams.clear();
  return erased;
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

MegaplaneId Runtime::megaplane_with_room(const Object& o, int64_t start) const {
  const int64_t k = sys_.megaplanes();
  for (int64_t step = 0; step < k; ++step)
    if (has_room(o, sys_.dealt(start + step))) return sys_.dealt(start + step);
  throw ModelError(fmt::format("group_write: HBF is full: no megaplane has a free block for the KV of '{}'", o.name));
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
