// A packed bit vector of 64-bit words: the content of a page or a latch.
// Bit i of the page is bit (i % 64) of word i / 64. Bits past size() in the
// last word are kept zero.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace bitline {

/// The set bits of a 64-bit word, inline (SWAR): x86-64's baseline has no POPCNT instruction, and the compiler's
/// __builtin_popcountll is then a call into libgcc per word.
inline int popcount64(uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ULL;
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return int((x * 0x0101010101010101ULL) >> 56);
}

class BitVector {
 public:
  BitVector() = default;
  explicit BitVector(size_t bits, bool value = false) { assign(bits, value); }

  void assign(size_t bits, bool value) {
    bits_ = bits;
    words_.assign((bits + 63) / 64, value ? ~uint64_t(0) : 0);
    clear_tail();
  }
  size_t size() const { return bits_; }
  size_t word_count() const { return words_.size(); }
  uint64_t* data() { return words_.data(); }
  const uint64_t* data() const { return words_.data(); }
  std::span<uint64_t> words() { return words_; }
  std::span<const uint64_t> words() const { return words_; }

  bool get(size_t i) const { return (words_[i >> 6] >> (i & 63)) & 1u; }
  void set(size_t i, bool v) {
    uint64_t m = uint64_t(1) << (i & 63);
    if (v)
      words_[i >> 6] |= m;
    else
      words_[i >> 6] &= ~m;
  }
  void flip(size_t i) { words_[i >> 6] ^= uint64_t(1) << (i & 63); }

  void fill(bool v) {
    std::memset(words_.data(), v ? 0xFF : 0, words_.size() * 8);
    clear_tail();
  }
  BitVector& operator&=(const BitVector& o) {
    for (size_t i = 0; i < words_.size(); ++i) words_[i] &= o.words_[i];
    return *this;
  }
  BitVector& operator|=(const BitVector& o) {
    for (size_t i = 0; i < words_.size(); ++i) words_[i] |= o.words_[i];
    return *this;
  }
  BitVector& operator^=(const BitVector& o) {
    for (size_t i = 0; i < words_.size(); ++i) words_[i] ^= o.words_[i];
    return *this;
  }
  void invert() {
    for (auto& w : words_) w = ~w;
    clear_tail();
  }
  BitVector operator~() const {
    BitVector r = *this;
    r.invert();
    return r;
  }
  size_t popcount() const {
    size_t n = 0;
    for (auto w : words_) n += size_t(popcount64(w));
    return n;
  }
  bool operator==(const BitVector& o) const { return bits_ == o.bits_ && words_ == o.words_; }

  /// Copies bytes in (little-endian bit order); missing bytes are zero.
  void from_bytes(std::span<const uint8_t> bytes) {
    std::fill(words_.begin(), words_.end(), 0);
    std::memcpy(words_.data(), bytes.data(), std::min(bytes.size(), words_.size() * 8));
    clear_tail();
  }
  std::vector<uint8_t> to_bytes() const {
    std::vector<uint8_t> out((bits_ + 7) / 8);
    std::memcpy(out.data(), words_.data(), out.size());
    return out;
  }

 private:
  void clear_tail() {
    if (bits_ % 64 && !words_.empty()) words_.back() &= (uint64_t(1) << (bits_ % 64)) - 1;
  }
  size_t bits_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace bitline
