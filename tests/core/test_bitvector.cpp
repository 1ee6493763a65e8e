// Packed bit vectors: the content of a page or a latch.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/bitvector.hpp"

using namespace bitline;

namespace {
// Bits past size() in the last word must be zero.
bool tail_clear(const BitVector& v) {
  if (v.size() % 64 == 0) return true;
  return (v.words().back() >> (v.size() % 64)) == 0;
}
BitVector pattern(size_t bits, uint64_t seed) {
  BitVector v(bits);
  for (size_t i = 0; i < bits; ++i) v.set(i, ((i * 2654435761u + seed) >> 3) & 1);
  return v;
}
}  // namespace

TEST(BitVector, ConstructionAndSize) {
  for (size_t n : {size_t(0), size_t(1), size_t(63), size_t(64), size_t(65), size_t(130), size_t(16384 * 8)}) {
    BitVector z(n), o(n, true);
    EXPECT_EQ(z.size(), n);
    EXPECT_EQ(z.word_count(), (n + 63) / 64);
    EXPECT_EQ(z.popcount(), 0u);
    EXPECT_EQ(o.popcount(), n) << n;
    EXPECT_TRUE(tail_clear(o)) << n;
  }
  BitVector empty;
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.popcount(), 0u);
}

TEST(BitVector, GetSetFlip) {
  BitVector v(130);
  v.set(0, true);
  v.set(63, true);
  v.set(64, true);
  v.set(129, true);
  EXPECT_TRUE(v.get(0));
  EXPECT_TRUE(v.get(63));
  EXPECT_TRUE(v.get(64));
  EXPECT_TRUE(v.get(129));
  EXPECT_FALSE(v.get(1));
  EXPECT_FALSE(v.get(128));
  EXPECT_EQ(v.popcount(), 4u);
  // Layout: bit i is bit i % 64 of word i / 64.
  EXPECT_EQ(v.words()[0], (uint64_t(1) << 63) | 1u);
  EXPECT_EQ(v.words()[1], 1u);
  EXPECT_EQ(v.words()[2], 2u);
  v.set(63, false);
  EXPECT_FALSE(v.get(63));
  v.flip(5);
  v.flip(64);
  EXPECT_TRUE(v.get(5));
  EXPECT_FALSE(v.get(64));
  EXPECT_EQ(v.popcount(), 3u);
  v.set(5, true);  // setting a set bit keeps it set
  EXPECT_EQ(v.popcount(), 3u);
}

TEST(BitVector, BitwiseOpsMatchPerBitReference) {
  const size_t n = 200;
  BitVector a = pattern(n, 1), b = pattern(n, 77);
  BitVector x = a, y = a, z = a;
  x &= b;
  y |= b;
  z ^= b;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(x.get(i), a.get(i) && b.get(i)) << i;
    EXPECT_EQ(y.get(i), a.get(i) || b.get(i)) << i;
    EXPECT_EQ(z.get(i), a.get(i) != b.get(i)) << i;
  }
  // Identities.
  BitVector self = a;
  self ^= a;
  EXPECT_EQ(self.popcount(), 0u);
  BitVector ones(n, true);
  BitVector and1 = a;
  and1 &= ones;
  EXPECT_EQ(and1, a);
  EXPECT_EQ(x.popcount() + y.popcount(), a.popcount() + b.popcount());  // |A&B| + |A|B| = |A| + |B|
}

TEST(BitVector, TailBitsStayZero) {
  for (size_t n : {size_t(1), size_t(63), size_t(65), size_t(100), size_t(191)}) {
    BitVector v(n);
    v.invert();
    EXPECT_TRUE(tail_clear(v)) << n;
    EXPECT_EQ(v.popcount(), n);
    BitVector w = ~BitVector(n);
    EXPECT_TRUE(tail_clear(w)) << n;
    EXPECT_EQ(w.popcount(), n);
    EXPECT_EQ(w, v);
    v.fill(false);
    EXPECT_EQ(v.popcount(), 0u);
    v.fill(true);
    EXPECT_TRUE(tail_clear(v)) << n;
    EXPECT_EQ(v.popcount(), n);
    // NAND of all ones is all zeros, and its inverse is all ones again: no tail garbage.
    BitVector nand = ~v;
    EXPECT_EQ(nand.popcount(), 0u);
    EXPECT_EQ((~nand).popcount(), n);
    // Inverting twice gives the original.
    BitVector p = pattern(n, 5);
    EXPECT_EQ(~~p, p);
    EXPECT_EQ((~p).popcount(), n - p.popcount());
  }
}

TEST(BitVector, Equality) {
  EXPECT_EQ(pattern(100, 3), pattern(100, 3));
  EXPECT_NE(pattern(100, 3), pattern(101, 3));  // size counts
  BitVector a = pattern(100, 3), b = a;
  b.flip(99);
  EXPECT_NE(a, b);
  EXPECT_EQ(BitVector(0), BitVector());
}

TEST(BitVector, BytesRoundTrip) {
  // Little-endian bit order: bit i is bit i % 8 of byte i / 8.
  BitVector v(20);
  v.set(0, true);
  v.set(9, true);
  v.set(19, true);
  std::vector<uint8_t> b = v.to_bytes();
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0], 0x01);
  EXPECT_EQ(b[1], 0x02);
  EXPECT_EQ(b[2], 0x08);

  for (size_t n : {size_t(8), size_t(64), size_t(72), size_t(1000), size_t(16384 * 8)}) {
    BitVector p = pattern(n, n);
    std::vector<uint8_t> bytes = p.to_bytes();
    EXPECT_EQ(bytes.size(), (n + 7) / 8);
    BitVector q(n);
    q.from_bytes(bytes);
    EXPECT_EQ(q, p) << n;
  }
}

TEST(BitVector, FromBytesShortOrLongInput) {
  BitVector v(100, true);
  const std::vector<uint8_t> two{0xFF, 0x81};
  v.from_bytes(two);  // missing bytes become zero
  EXPECT_EQ(v.popcount(), 10u);
  EXPECT_TRUE(v.get(15));
  EXPECT_FALSE(v.get(16));
  EXPECT_FALSE(v.get(99));

  BitVector w(12);
  const std::vector<uint8_t> many(16, 0xFF);
  w.from_bytes(many);  // extra bits and bytes are dropped
  EXPECT_EQ(w.popcount(), 12u);
  EXPECT_TRUE(tail_clear(w));
  EXPECT_EQ(w.to_bytes(), (std::vector<uint8_t>{0xFF, 0x0F}));
}
