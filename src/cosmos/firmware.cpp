#include "cosmos/firmware.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace bitline::cosmos {

Firmware::Firmware(const nand::NandParams& nand, const ssd::SsdParams& ssd)
    : nand_(nand),
      ssd_(ssd),
      planes_(ssd.dies() * nand.geometry.planes_per_die),
      page_(nand.geometry.page_size.raw()),
      wordlines_(nand.geometry.wordlines_per_string),
      subblocks_(nand.geometry.subblocks_per_block) {}

void Firmware::declare_group(const std::string& group, uint32_t n) {
  if (n == 0) throw ModelError(fmt::format("group '{}': a group holds at least one operand", group));
  declared_[group] = n;
}

PlaneLoc Firmware::plane_loc(int64_t p) const {
  PlaneLoc l;
  l.channel = uint32_t(p % ssd_.channels);
  uint32_t die_in_channel = uint32_t((p / ssd_.channels) % ssd_.dies_per_channel);
  l.plane = uint32_t(p / (ssd_.channels * ssd_.dies_per_channel));
  l.die = uint32_t(l.channel * ssd_.dies_per_channel + die_in_channel);
  return l;
}

uint32_t Firmware::allocate_block(const std::string& operand) {
  if (!free_blocks_.empty()) {
    uint32_t b = *free_blocks_.begin();
    free_blocks_.erase(free_blocks_.begin());
    return b;
  }
  if (next_block_ >= nand_.geometry.blocks_per_plane)
    throw ModelError(
        fmt::format("SSD too small: writing operand '{}' needs more than the {} blocks of a plane "
                    "(nand.geometry.blocks_per_plane; every plane holds the same blocks of each operand)",
                    operand, nand_.geometry.blocks_per_plane));
  return uint32_t(next_block_++);
}

uint32_t Firmware::pool_for(const std::string& group, uint32_t lane, bool inverted, const WriteOptions& opt, int64_t bytes,
                            const std::string& operand) {
  std::string key = group;  // group/lane[/inv] (built without a format call: one per operand written)
  key += '/';
  key += std::to_string(lane);
  if (inverted) key += "/inv";
  auto it = pool_index_.find(key);
  if (it != pool_index_.end()) {
    const Pool& p = pools_[it->second];
    if (p.bytes != bytes)
      throw ModelError(fmt::format("operand '{}' ({} bytes) cannot be co-located with group '{}' whose operands have {} bytes", operand,
                                   bytes, group, p.bytes));
    if (p.mode != opt.mode || p.randomize != opt.randomize)
      throw ModelError(fmt::format("operand '{}': group '{}' is programmed in {} mode{}; one group has one program mode", operand, group,
                                   nand::to_string(p.mode), p.randomize ? " with randomisation" : ""));
    return it->second;
  }
  Pool p;
  p.key = key;
  p.group = group;
  p.inverted = inverted;
  p.mode = opt.mode;
  p.randomize = opt.randomize;
  p.bytes = bytes;
  p.columns = columns_of(bytes);
  const auto d = declared_.find(group);
  uint32_t declared = d != declared_.end() ? d->second : uint32_t(wordlines_);
  p.chunk_width = uint32_t(std::min<int64_t>(declared, wordlines_));
  p.per_string = uint32_t(wordlines_ / p.chunk_width);
  pools_.push_back(p);
  pool_index_[key] = uint32_t(pools_.size() - 1);
  return uint32_t(pools_.size() - 1);
}

CopyRef Firmware::add_to_pool(uint32_t pi, const std::string& operand) {
  Pool& p = pools_[pi];
  CopyRef ref{pi, p.count};
  // Strings needed so far: slots (chunk, column) up to the end of this operand's chunk.
  int64_t chunk = p.count / p.chunk_width;
  int64_t slots = (chunk + 1) * p.columns;
  int64_t strings = (slots + p.per_string - 1) / p.per_string;
  int64_t blocks = (strings + subblocks_ - 1) / subblocks_;
  while (int64_t(p.blocks.size()) < blocks) p.blocks.push_back(allocate_block(operand));
  ++p.count;
  return ref;
}

const Operand& Firmware::write(const std::string& name, int64_t bytes, const WriteOptions& opt) {
  if (name.empty()) throw ModelError("an operand needs a name");
  if (operands_.count(name)) throw ModelError(fmt::format("operand '{}' already exists", name));
  if (bytes <= 0) throw ModelError(fmt::format("operand '{}': size must be positive", name));
  if (nand::bits_per_cell(opt.mode) != 1)
    throw ModelError(
        fmt::format("operand '{}': computable data must be programmed in SLC or ESP mode, not {}", name, nand::to_string(opt.mode)));
  Operand op;
  op.name = name;
  op.bytes = bytes;
  op.options = opt;
  std::string group = opt.group.empty() ? name : opt.group;
  if (opt.copies != WriteOptions::Copies::Inverted) op.normal = add_to_pool(pool_for(group, opt.lane, false, opt, bytes, name), name);
  if (opt.copies != WriteOptions::Copies::Normal) op.inverted = add_to_pool(pool_for(group, opt.lane, true, opt, bytes, name), name);
  return operands_.emplace(name, std::move(op)).first->second;
}

void Firmware::erase_group(const std::string& group) {
  bool found = false;
  for (auto& p : pools_) {
    if (p.group != group) continue;
    found = true;
    for (auto b : p.blocks) free_blocks_.insert(b);
    p.blocks.clear();
    p.count = 0;
  }
  if (!found) throw ModelError(fmt::format("erase: no group '{}'", group));
  for (auto it = operands_.begin(); it != operands_.end();) {
    std::string g = it->second.options.group.empty() ? it->first : it->second.options.group;
    it = g == group ? operands_.erase(it) : std::next(it);
  }
}

const Operand& Firmware::operand(const std::string& name) const {
  auto it = operands_.find(name);
  if (it == operands_.end()) throw ModelError(fmt::format("unknown operand '{}' (never written)", name));
  return it->second;
}

PageLoc Firmware::chunk_loc(uint32_t pi, uint32_t chunk, int64_t page_index) const {
  const Pool& p = pools_[pi];
  int64_t column = page_index / planes_;
  int64_t slot = int64_t(chunk) * p.columns + column;
  int64_t string = slot / p.per_string;
  PlaneLoc pl = plane_loc(page_index % planes_);
  PageLoc l;
  l.die = pl.die;
  l.plane = pl.plane;
  l.block = p.blocks.at(size_t(string / subblocks_));
  l.subblock = uint32_t(string % subblocks_);
  l.wordline = uint32_t((slot % p.per_string) * p.chunk_width);
  return l;
}

PageLoc Firmware::locate(const CopyRef& c, int64_t page_index) const {
  PageLoc l = chunk_loc(c.pool, chunk_of(c), page_index);
  l.wordline += offset_of(c);
  return l;
}

Firmware::OrdinaryPage Firmware::map_ordinary(int64_t lpn, nand::ProgramMode mode) {
  if (lpn < 0) throw ModelError(fmt::format("logical page {} is negative", lpn));
  trim_ordinary(lpn);
  Stream& st = streams_[mode];
  const int64_t bits = nand::bits_per_cell(mode);
  const int64_t slots_per_block = planes_ * subblocks_ * wordlines_ * bits;
  if (!st.open || st.next == slots_per_block) {
    if (st.open) {
      ordinary_blocks_[st.block].full = true;
      if (ordinary_blocks_[st.block].valid == 0) {  // everything in it was overwritten already
        ordinary_blocks_.erase(st.block);
        free_blocks_.insert(st.block);
        ++ordinary_erased_;
      }
    }
    st.block = allocate_block(fmt::format("logical page {}", lpn));
    st.open = true;
    st.next = 0;
    ordinary_blocks_[st.block] = OrdinaryBlock{};
  }
  // Slot order: plane fastest (striping), then page-in-wordline, wordline, sub-block.
  int64_t s = st.next++;
  int64_t plane = s % planes_;
  int64_t rest = s / planes_;
  OrdinaryPage p;
  p.mode = mode;
  p.bit = uint32_t(rest % bits);
  rest /= bits;
  PlaneLoc pl = plane_loc(plane);
  p.loc.die = pl.die;
  p.loc.plane = pl.plane;
  p.loc.block = st.block;
  p.loc.wordline = uint32_t(rest % wordlines_);
  p.loc.subblock = uint32_t(rest / wordlines_);
  ++ordinary_blocks_[st.block].valid;
  ordinary_map_[lpn] = {p, st.block};
  return p;
}

std::optional<Firmware::OrdinaryPage> Firmware::lookup_ordinary(int64_t lpn) const {
  auto it = ordinary_map_.find(lpn);
  if (it == ordinary_map_.end()) return std::nullopt;
  return it->second.first;
}

void Firmware::trim_ordinary(int64_t lpn) {
  auto it = ordinary_map_.find(lpn);
  if (it == ordinary_map_.end()) return;
  uint32_t block = uint32_t(it->second.second);
  ordinary_map_.erase(it);
  invalidate(block);
}

void Firmware::invalidate(uint64_t block_key) {
  uint32_t block = uint32_t(block_key);
  OrdinaryBlock& b = ordinary_blocks_.at(block);
  --b.valid;
  if (b.valid == 0 && b.full) {
    // Every page of the block is invalid: erase it and reuse the block.
    ordinary_blocks_.erase(block);
    free_blocks_.insert(block);
    ++ordinary_erased_;
  }
}

}  // namespace bitline::cosmos
