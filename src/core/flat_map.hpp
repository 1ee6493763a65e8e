// Open-addressing hash tables for hot paths, where std::unordered_map's node per entry (an allocation per insert, a
// pointer chase per look-up) dominates. One definition of the table (OpenTable: linear probing from a Fibonacci
// hash's top bits, backward-shift deletion, at most kMaxLoadPercent full, a zeroed slot empty) serves three users:
//   FlatMap32  uint32 -> uint32 in 8-byte slots (the general SSD's hot-page and partial-page sets, and the sparse
//              part of PagedMap32, its mapping table);
//   FlatMap64  uint64 -> uint32 (serve's prefix cache and reuse measure);
//   ssd::Cmt   its entries inline, 16-byte slots (ssd/cmt.hpp).
// Iteration order is not offered to results: a caller that needs an order keeps it itself, so results never depend
// on the table's layout.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/big_array.hpp"

namespace bitline {

/// The table of `Slot`s. Contract for Slot: trivially copyable, all-zero bytes = empty; `bool empty() const` and
/// `Key key() const` (a used slot's key). The caller fills a slot that emplace() hands it (its key included) and
/// may keep a slot's index until the next emplace() or erase_at().
template <class Slot, unsigned kMaxLoadPercent = 70>
class OpenTable {
 public:
  using Key = decltype(std::declval<const Slot&>().key());
  static constexpr size_t kNone = SIZE_MAX;

  /// Room for `initial` slots (rounded up to a power of two, at least 16).
  explicit OpenTable(size_t initial = 16) { rehash(std::bit_ceil(initial < 16 ? size_t(16) : initial)); }

  size_t size() const { return size_; }
  size_t bytes() const { return t_.size() * sizeof(Slot); }
  Slot& operator[](size_t i) { return t_[i]; }
  const Slot& operator[](size_t i) const { return t_[i]; }

  /// Starts loading the key's home slot (a hint).
  void prefetch(Key key) const { bitline::prefetch(&t_[home(key)]); }

  /// The key's slot, or kNone.
  size_t find(Key key) const {
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = t_[i];
      if (s.empty()) return kNone;
      if (s.key() == key) return i;
    }
  }
  /// The key's slot and false, or (growing the table first when the new key would fill it past its load) the
  /// empty slot it takes, counted, and true: the caller fills that slot.
  std::pair<size_t, bool> emplace(Key key) {
    if ((size_ + 1) * 100 > t_.size() * kMaxLoadPercent) rehash(t_.size() * 2);
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = t_[i];
      if (s.empty()) {
        ++size_;
        return {i, true};
      }
      if (s.key() == key) return {i, false};
    }
  }
  /// Empties slot i, moving back each following entry of its cluster whose home is not after the hole (cyclically),
  /// so that every probe chain stays unbroken.
  void erase_at(size_t i) {
    for (size_t j = (i + 1) & mask_; !t_[j].empty(); j = (j + 1) & mask_) {
      const size_t h = home(t_[j].key());
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        t_[i] = t_[j];
        i = j;
      }
    }
    t_[i] = Slot{};
    --size_;
  }
  /// Removes every entry, keeping the table's size (a table refilled to a similar size is not grown again).
  void clear() {
    for (Slot& s : t_) s = Slot{};
    size_ = 0;
  }
  /// Calls f(slot) for every used slot (in the table's order: for updates that need none).
  template <class F>
  void for_each(F&& f) {
    for (Slot& s : t_)
      if (!s.empty()) f(s);
  }

 private:
  /// The slot a key's probe starts at.
  size_t home(Key key) const { return size_t((uint64_t(key) * 0x9E3779B97F4A7C15ull) >> shift_); }
  /// A table of n slots (a power of two), the entries moved into it in the old table's order.
  void rehash(size_t n) {
    BigArray<Slot> old = std::move(t_);
    t_ = BigArray<Slot>(n);  // zeroed: all empty
    mask_ = n - 1;
    shift_ = 64 - std::countr_zero(n);
    for (const Slot& s : old) {
      if (s.empty()) continue;
      size_t i = home(s.key());
      while (!t_[i].empty()) i = (i + 1) & mask_;
      t_[i] = s;
    }
  }
  BigArray<Slot> t_;
  size_t mask_ = 0, size_ = 0;
  int shift_ = 64;
};

/// A map from uint32 to uint32 in 8-byte slots: the key's complement in the high half (a zeroed slot is key
/// kEmpty: the one key it cannot hold), the value in the low half.
class FlatMap32 {
 public:
  static constexpr uint32_t kEmpty = 0xFFFFFFFFu;
  explicit FlatMap32(size_t initial = 1024) : t_(initial) {}
  /// Pointer to the key's value, or null (valid until the next set or erase).
  uint32_t* find(uint32_t key) {
    const size_t i = t_.find(key);
    return i == Table::kNone ? nullptr : &t_[i].value;
  }
  const uint32_t* find(uint32_t key) const { return const_cast<FlatMap32*>(this)->find(key); }
  /// Starts loading the slot where `key` would be (a hint: the table is not changed).
  void prefetch(uint32_t key) const { t_.prefetch(key); }
  void set(uint32_t key, uint32_t value) { t_[t_.emplace(key).first] = Slot{value, ~key}; }
  /// Removes the key; returns whether it was there.
  bool erase(uint32_t key) {
    const size_t i = t_.find(key);
    if (i == Table::kNone) return false;
    t_.erase_at(i);
    return true;
  }
  size_t size() const { return t_.size(); }
  size_t bytes() const { return t_.bytes(); }
  void clear() { t_.clear(); }

 private:
  struct Slot {
    uint32_t value, nkey;
    bool empty() const { return nkey == 0; }
    uint32_t key() const { return ~nkey; }
  };
  using Table = OpenTable<Slot, 70>;
  Table t_;
};

/// A map from uint32 to uint32 for keys that come in runs as often as scattered: an SSD's logical pages, written
/// sequentially (a run of 4 KiB units per request) or at random. Keys are grouped in chunks of kChunk consecutive
/// keys. A chunk's keys live in one FlatMap32 while it holds at most kDenseAt of them, and from then on in an array
/// of its own (4 bytes a key; found without hashing, neighbours in the same cache lines). Scattered keys cost what
/// FlatMap32 costs them (about 11-23 bytes each); a chunk goes dense where its hashed keys would take about as much
/// memory as its array. kEmpty can be neither a key (as in FlatMap32) nor a value.
class PagedMap32 {
 public:
  static constexpr uint32_t kEmpty = FlatMap32::kEmpty;
  static constexpr unsigned kChunkBits = 12;
  static constexpr uint32_t kChunk = 1u << kChunkBits;  // keys a chunk
  static constexpr uint32_t kDenseAt = kChunk / 4;      // a chunk of more hashed keys than this goes dense

  /// A directory for keys below `keys` (it grows past them on demand).
  explicit PagedMap32(size_t keys = 0) : dir_((keys + kChunk - 1) / kChunk) {}
  /// Pointer to the key's value, or null (valid until the next set).
  uint32_t* find(uint32_t key) {
    const size_t c = key >> kChunkBits;
    if (size_ == 0 || c >= dir_.size()) return nullptr;  // (an empty map reads no directory entry)
    const Chunk& ch = dir_[c];
    if (ch.dense) {
      uint32_t& v = ch.dense[key & (kChunk - 1)];
      return v == kEmpty ? nullptr : &v;
    }
    return ch.hashed ? sparse_.find(key) : nullptr;
  }
  const uint32_t* find(uint32_t key) const { return const_cast<PagedMap32*>(this)->find(key); }
  void set(uint32_t key, uint32_t value) {
    const size_t c = key >> kChunkBits;
    if (c >= dir_.size()) dir_.resize(c + 1);
    Chunk& ch = dir_[c];
    if (!ch.dense) {
      if (uint32_t* v = ch.hashed ? sparse_.find(key) : nullptr) {
        *v = value;
        return;
      }
      if (ch.hashed < kDenseAt) {
        sparse_.set(key, value);
        ++ch.hashed;
        ++size_;
        return;
      }
      densify(c);
    }
    uint32_t& v = ch.dense[key & (kChunk - 1)];
    size_ += v == kEmpty;
    v = value;
  }
  /// Starts loading where `key` is or would be (a hint): its chunk's entry and its hash slot, without waiting for
  /// the entry to say which of the two holds it (a dense chunk's array is read in runs, which the hardware follows).
  void prefetch(uint32_t key) const {
    const size_t c = key >> kChunkBits;
    if (size_ == 0 || c >= dir_.size()) return;
    bitline::prefetch(&dir_[c]);
    if (sparse_.size()) sparse_.prefetch(key);
  }
  size_t size() const { return size_; }
  /// Chunks kept as arrays.
  size_t dense_chunks() const { return owned_.size(); }
  size_t bytes() const { return sparse_.bytes() + dir_.capacity() * sizeof(Chunk) + owned_.size() * kChunk * sizeof(uint32_t); }

 private:
  struct Chunk {
    uint32_t* dense = nullptr;  // the chunk's array once dense, else its keys are in sparse_
    uint32_t hashed = 0;        // keys of the chunk in sparse_
  };
  /// Moves chunk c's keys from the hash into an array of its own.
  void densify(size_t c) {
    Chunk& ch = dir_[c];
    auto block = std::make_unique<uint32_t[]>(kChunk);
    std::fill_n(block.get(), kChunk, kEmpty);
    const uint64_t base = uint64_t(c) << kChunkBits;
    for (uint32_t i = 0; i < kChunk && ch.hashed > 0; ++i) {
      const uint32_t key = uint32_t(base + i);
      if (uint32_t* v = sparse_.find(key)) {
        block[i] = *v;
        sparse_.erase(key);
        --ch.hashed;
      }
    }
    ch.dense = block.get();
    owned_.push_back(std::move(block));
  }
  std::vector<Chunk> dir_;
  std::vector<std::unique_ptr<uint32_t[]>> owned_;
  FlatMap32 sparse_;
  size_t size_ = 0;
};

/// A map from uint64 (every value a key) to uint32.
class FlatMap64 {
 public:
  explicit FlatMap64(size_t initial = 16) : t_(initial) {}
  size_t size() const { return t_.size(); }
  bool contains(uint64_t key) const { return t_.find(key) != Table::kNone; }
  /// Pointer to the key's value, or null (valid until the next insertion or erasure).
  const uint32_t* find(uint64_t key) const {
    const size_t i = t_.find(key);
    return i == Table::kNone ? nullptr : &t_[i].value;
  }
  uint32_t* find(uint64_t key) { return const_cast<uint32_t*>(static_cast<const FlatMap64*>(this)->find(key)); }
  /// Sets the key's value (inserting it if absent). Returns whether it was inserted.
  bool set(uint64_t key, uint32_t value) {
    const auto [i, inserted] = t_.emplace(key);
    t_[i] = Slot{key, value, 1};
    return inserted;
  }
  /// Removes the key; returns whether it was there.
  bool erase(uint64_t key) {
    const size_t i = t_.find(key);
    if (i == Table::kNone) return false;
    t_.erase_at(i);
    return true;
  }

 private:
  struct Slot {
    uint64_t k;
    uint32_t value, used;
    bool empty() const { return used == 0; }
    uint64_t key() const { return k; }
  };
  using Table = OpenTable<Slot, 75>;
  Table t_;
};

}  // namespace bitline
