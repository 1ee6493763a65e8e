// FlatMap64: a hash map from 64-bit keys to 32-bit values in one array (open addressing, linear probing,
// backward-shift deletion), for hot paths where std::unordered_map's node per entry (an allocation per insert, a
// pointer chase per look-up) dominates. Iteration order is not offered: a caller that needs an order keeps it itself,
// so results never depend on the table's layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bitline {

class FlatMap64 {
 public:
  explicit FlatMap64(size_t initial = 16) { rehash(initial < 16 ? 16 : initial); }

  size_t size() const { return size_; }
  bool contains(uint64_t key) const { return find(key) != nullptr; }

  /// Pointer to the key's value, or null (valid until the next insertion or erasure).
  const uint32_t* find(uint64_t key) const {
    for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }
  uint32_t* find(uint64_t key) { return const_cast<uint32_t*>(static_cast<const FlatMap64*>(this)->find(key)); }

  /// Sets the key's value (inserting it if absent). Returns whether it was inserted.
  bool set(uint64_t key, uint32_t value) {
    if (4 * (size_ + 1) > 3 * slots_.size()) rehash(2 * slots_.size());  // (at most three quarters full)
    for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) {
        s = Slot{key, value, 1};
        ++size_;
        return true;
      }
      if (s.key == key) {
        s.value = value;
        return false;
      }
    }
  }

  /// Removes the key; returns whether it was there.
  bool erase(uint64_t key) {
    size_t i = slot_of(key);
    for (;; i = (i + 1) & mask_) {
      if (!slots_[i].used) return false;
      if (slots_[i].key == key) break;
    }
    // backward shift: move up each following entry whose home slot is at or before the hole (cyclically)
    for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      if (!slots_[j].used) break;
      const size_t home = slot_of(slots_[j].key);
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].used = 0;
    --size_;
    return true;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t value = 0;
    uint32_t used = 0;
  };
  size_t slot_of(uint64_t key) const { return size_t((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  void rehash(size_t capacity) {
    size_t n = 16;
    while (n < capacity) n *= 2;
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    shift_ = 64 - __builtin_ctzll(n);
    size_ = 0;
    for (const Slot& s : old)
      if (s.used) set(s.key, s.value);
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0, size_ = 0;
  int shift_ = 60;
};

}  // namespace bitline
