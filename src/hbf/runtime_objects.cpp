// The runtime's objects (weights, KV, HBM buffers) and their flash blocks: store_weights, kv_create, kv_append, kv_read,
// evict, and the allocation of a megapage on a megaplane (runtime.hpp).
#include "hbf/runtime.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace bitline::hbf {

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

MegaplaneId Runtime::megaplane_with_room(const Object& o, int64_t start) const {
  const int64_t k = sys_.megaplanes();
  for (int64_t step = 0; step < k; ++step)
    if (has_room(o, sys_.dealt(start + step))) return sys_.dealt(start + step);
  throw ModelError(fmt::format("group_write: HBF is full: no megaplane has a free block for the KV of '{}'", o.name));
}

}  // namespace bitline::hbf
