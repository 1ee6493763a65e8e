#include "hbf/devices.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace bitline::hbf {

FlashArray::FlashArray(const System& sys, bool store_data) : sys_(sys), store_data_(store_data) {
  const size_t k = size_t(sys.megaplanes()), b = size_t(sys.blocks_per_plane());
  owner_.assign(k * b, kNoObject);
  wp_.assign(k * b, 0);
  pe_.assign(k * b, 0);
  free_ring_.resize(k * b);
  for (size_t m = 0; m < k; ++m)
    for (size_t i = 0; i < b; ++i) free_ring_[m * b + i] = uint32_t(i);
  free_head_.assign(k, 0);
  free_count_.assign(k, uint32_t(b));
  total_free_ = int64_t(k * b);
}

std::optional<uint32_t> FlashArray::allocate(MegaplaneId m, ObjectId owner) {
  if (free_count_[m] == 0) return std::nullopt;
  const size_t b = size_t(sys_.blocks_per_plane());
  uint32_t block = free_ring_[m * b + free_head_[m]];
  free_head_[m] = uint32_t((free_head_[m] + 1) % b);
  --free_count_[m];
  --total_free_;
  owner_[index(m, block)] = owner;
  wp_[index(m, block)] = 0;
  return block;
}

void FlashArray::program(const PhysUnit& p, ObjectId owner, std::span<const uint8_t> data) {
  const size_t i = index(p.megaplane, p.block);
  if (owner_[i] != owner)
    throw ModelError(fmt::format("program {} block {} page {}: block belongs to object {}, not {}", sys_.name(p.megaplane), p.block, p.page,
                                 owner_[i] == kNoObject ? std::string("none") : std::to_string(owner_[i]), owner));
  if (p.page != wp_[i] || int64_t(p.page) >= sys_.pages_per_block())
    throw ModelError(fmt::format("program {} block {} page {}: pages are programmed in order; next is {}", sys_.name(p.megaplane), p.block,
                                 p.page, wp_[i]));
  if (int64_t(data.size()) > sys_.megapage().raw())
    throw ModelError(fmt::format("program: {} bytes exceed a megapage ({})", data.size(), sys_.megapage().raw()));
  ++wp_[i];
  if (store_data_) {
    auto& d = data_[p.key()];
    d.assign(size_t(sys_.megapage().raw()), 0);
    if (!data.empty()) std::memcpy(d.data(), data.data(), data.size());
  }
  ++stats_.units_programmed;
  stats_.program_energy += sys_.hbf().energy.program * sys_.megapage();
}

std::span<const uint8_t> FlashArray::read(const PhysUnit& p) {
  if (!store_data_) throw ModelError("flash read: this runtime runs in timing mode and holds no data");
  auto it = data_.find(p.key());
  if (it == data_.end())
    throw ModelError(fmt::format("flash read {} block {} page {}: page not programmed", sys_.name(p.megaplane), p.block, p.page));
  ++stats_.units_read;
  stats_.read_energy += sys_.hbf().energy.read * sys_.megapage();
  return it->second;
}

void FlashArray::erase(MegaplaneId m, uint32_t block, ObjectId owner) {
  const size_t i = index(m, block);
  if (owner_[i] != owner)
    throw ModelError(fmt::format("erase {} block {}: block belongs to object {}, not {}", sys_.name(m), block,
                                 owner_[i] == kNoObject ? std::string("none") : std::to_string(owner_[i]), owner));
  if (store_data_)
    for (uint32_t pg = 0; pg < wp_[i]; ++pg) data_.erase(PhysUnit{m, block, pg}.key());
  owner_[i] = kNoObject;
  wp_[i] = 0;
  ++pe_[i];
  ++stats_.megablocks_erased;
  stats_.erase_energy += sys_.hbf().energy.erase_block * double(sys_.lanes());
  if (pe_[i] >= uint64_t(sys_.hbf().endurance.pe_cycles)) {
    ++stats_.blocks_retired;
    return;
  }
  const size_t b = size_t(sys_.blocks_per_plane());
  free_ring_[m * b + (free_head_[m] + free_count_[m]) % b] = block;
  ++free_count_[m];
  ++total_free_;
}

void FlashArray::register_stats(StatGroup& g) const {
  g.add("megapages_programmed", stats_.units_programmed, "megapages programmed")
      .add("megapages_read", stats_.units_read, "megapages read")
      .add("megablocks_erased", stats_.megablocks_erased, "megablocks erased")
      .add("megablocks_retired", stats_.blocks_retired, "megablocks retired at their P/E limit")
      .add("free_megablocks", total_free_, "megablocks free now");
  g.group("pe_cycles")
      .derived(
          "max", [this] { return pe_.empty() ? 0u : *std::max_element(pe_.begin(), pe_.end()); }, "highest P/E count of a megablock")
      .derived(
          "mean",
          [this] {
            uint64_t sum = 0;
            for (uint32_t v : pe_) sum += v;
            return pe_.empty() ? 0.0 : double(sum) / double(pe_.size());
          },
          "mean P/E count over megablocks");
  g.group("energy_j")
      .add("program", stats_.program_energy, "programming energy")
      .add("read", stats_.read_energy, "read (sensing) energy")
      .add("erase", stats_.erase_energy, "erase energy");
}

std::optional<uint64_t> HbmStore::allocate(Bytes n) {
  if (n.raw() < 0 || used_.raw() + n.raw() > capacity_.raw()) return std::nullopt;
  uint64_t id = next_++;
  Alloc a{uint64_t(n.raw()), {}};
  if (store_data_) a.bytes.assign(size_t(n.raw()), 0);
  allocs_.emplace(id, std::move(a));
  used_ += n;
  return id;
}

void HbmStore::release(uint64_t id) {
  auto it = allocs_.find(id);
  if (it == allocs_.end()) throw ModelError(fmt::format("HBM: allocation {} released twice", id));
  used_ -= Bytes(int64_t(it->second.size));
  allocs_.erase(it);
}

std::span<uint8_t> HbmStore::data(uint64_t id) {
  if (!store_data_) throw ModelError("HBM read: this runtime runs in timing mode and holds no data");
  return allocs_.at(id).bytes;
}

SramPool::SramPool(const System& sys, bool store_data) : sys_(sys), store_data_(store_data) {
  plane_free_.resize(size_t(sys.megaplanes()));
  for (auto& f : plane_free_)
    for (int64_t s = sys.plane_sram_units() - 1; s >= 0; --s) f.push_back(uint32_t(s));
  base_free_.resize(size_t(sys.stacks()));
  for (auto& f : base_free_)
    for (int64_t s = sys.base_sram_units() - 1; s >= 0; --s) f.push_back(uint32_t(s));
}

std::optional<SramSlot> SramPool::take(MegaplaneId m) {
  if (!plane_free_[m].empty()) {
    SramSlot s{false, m, plane_free_[m].back()};
    plane_free_[m].pop_back();
    ++used_plane_;
    return s;
  }
  auto& b = base_free_[size_t(sys_.stack_of(m))];
  if (!b.empty()) {
    SramSlot s{true, uint32_t(sys_.stack_of(m)), b.back()};
    b.pop_back();
    ++used_base_;
    return s;
  }
  return std::nullopt;
}

void SramPool::give(const SramSlot& s) {
  if (s.base)
    base_free_[s.where].push_back(s.slot), --used_base_;
  else
    plane_free_[s.where].push_back(s.slot), --used_plane_;
  data_.erase(s.key());
}

std::span<uint8_t> SramPool::data(const SramSlot& s) {
  auto& d = data_[s.key()];
  if (store_data_ && d.empty()) d.assign(size_t(sys_.megapage().raw()), 0);
  return d;
}

}  // namespace bitline::hbf
