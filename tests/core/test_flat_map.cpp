// FlatMap64 and FlatMap32 (core/flat_map.hpp's one open-addressing table, OpenTable, which ssd::Cmt also uses)
// against std::unordered_map: the same answers after any sequence of sets and erases, including keys that share a
// home slot (linear probing's clusters, which an erase must close up without losing a key behind the hole). And
// PagedMap32 (the FTL's mapping table): the same answers whether a chunk's keys are hashed or dense, across the
// change.
#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "core/flat_map.hpp"
#include "core/rng.hpp"

namespace bitline {
namespace {

TEST(FlatMap64, SetFindEraseAndSize) {
  FlatMap64 m;
  EXPECT_EQ(m.size(), 0u);
  EXPECT_FALSE(m.contains(0));
  EXPECT_TRUE(m.set(0, 7));   // key 0 is an ordinary key
  EXPECT_FALSE(m.set(0, 8));  // an existing key: its value replaced, not inserted again
  ASSERT_NE(m.find(0), nullptr);
  EXPECT_EQ(*m.find(0), 8u);
  EXPECT_TRUE(m.set(UINT64_MAX, 1));
  EXPECT_EQ(m.size(), 2u);
  EXPECT_TRUE(m.erase(0));
  EXPECT_FALSE(m.erase(0));
  EXPECT_EQ(m.find(0), nullptr);
  EXPECT_EQ(*m.find(UINT64_MAX), 1u);
  EXPECT_EQ(m.size(), 1u);
}

// Random sets, erases and look-ups of few distinct keys (so that erases of present keys and look-ups of erased ones
// happen often), shifted so that many share high bits (a key's home slot is the hash's top bits: long clusters),
// against std::unordered_map after every operation. `set` returns whether the key was new, or nothing (FlatMap32).
template <class Map, class Key>
void agrees_with_unordered_map(Map& m, uint64_t seed, int shift) {
  std::unordered_map<Key, uint32_t> ref;
  Rng rng(seed);
  for (int op = 0; op < 200000; ++op) {
    const Key key = Key(rng.below(5000)) << shift;
    const uint64_t r = rng.below(3);
    if (r == 0) {
      EXPECT_EQ(m.erase(key), ref.erase(key) == 1) << op;
    } else if (r == 1) {
      const bool fresh = !ref.count(key);
      if constexpr (std::is_same_v<decltype(m.set(key, 0u)), bool>) {
        EXPECT_EQ(m.set(key, uint32_t(op)), fresh) << op;
      } else {
        m.set(key, uint32_t(op));
      }
      ref[key] = uint32_t(op);
    } else {
      const uint32_t* f = m.find(key);
      const auto it = ref.find(key);
      ASSERT_EQ(f != nullptr, it != ref.end()) << op;
      if (f) {
        EXPECT_EQ(*f, it->second) << op;
      }
    }
    ASSERT_EQ(m.size(), ref.size()) << op;
  }
  for (const auto& [k, v] : ref) {
    ASSERT_NE(m.find(k), nullptr);
    EXPECT_EQ(*m.find(k), v);
  }
}

TEST(FlatMap64, AgreesWithUnorderedMapOverRandomSetsAndErasesThroughGrowth) {
  FlatMap64 m;
  agrees_with_unordered_map<FlatMap64, uint64_t>(m, 12345, 40);
}

TEST(FlatMap32, SetFindEraseKeepsEveryOtherKey) {
  FlatMap32 m(16);
  for (uint32_t k = 0; k < 5000; ++k) m.set(k * 7919u, k);
  for (uint32_t k = 0; k < 5000; k += 2) EXPECT_TRUE(m.erase(k * 7919u));
  EXPECT_FALSE(m.erase(0));
  EXPECT_EQ(m.size(), 2500u);
  for (uint32_t k = 0; k < 5000; ++k) {
    const uint32_t* v = m.find(k * 7919u);
    if (k % 2) {
      ASSERT_NE(v, nullptr);
      EXPECT_EQ(*v, k);
    } else {
      EXPECT_EQ(v, nullptr);
    }
  }
  m.clear();
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.find(7919u), nullptr);
}

TEST(FlatMap32, AgreesWithUnorderedMapOverRandomSetsAndErasesThroughGrowth) {
  FlatMap32 m(16);
  agrees_with_unordered_map<FlatMap32, uint32_t>(m, 777, 20);
}

TEST(PagedMap32, ChunkGoesDenseAfterItsQuotaOfKeysAndKeepsEveryValue) {
  PagedMap32 m(4 * PagedMap32::kChunk);
  // one chunk's keys scattered over it (every third), up to its quota: still hashed (no array of its own)
  const uint32_t base = PagedMap32::kChunk;  // chunk 1
  uint32_t n = 0;
  for (; n < PagedMap32::kDenseAt; ++n) m.set(base + 3 * n, 100 + n);
  EXPECT_EQ(m.dense_chunks(), 0u);
  EXPECT_EQ(m.size(), size_t(PagedMap32::kDenseAt));
  const size_t hashed_bytes = m.bytes();
  // one key more: the chunk moves into an array (its bytes counted; the hash keeps its size), every value kept
  m.set(base + 3 * n, 100 + n);
  ++n;
  EXPECT_EQ(m.dense_chunks(), 1u);
  EXPECT_EQ(m.bytes(), hashed_bytes + PagedMap32::kChunk * sizeof(uint32_t));
  EXPECT_EQ(m.size(), size_t(n));
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t* v = m.find(base + 3 * i);
    ASSERT_NE(v, nullptr) << i;
    EXPECT_EQ(*v, 100 + i);
    EXPECT_EQ(m.find(base + 3 * i + 1), nullptr);
  }
  // overwriting a dense key does not count it again; a new one does
  m.set(base, 7);
  EXPECT_EQ(*m.find(base), 7u);
  EXPECT_EQ(m.size(), size_t(n));
  m.set(base + 1, 8);
  EXPECT_EQ(m.size(), size_t(n) + 1);
  // other chunks are untouched; a key past the directory's first size grows it
  EXPECT_EQ(m.find(0), nullptr);
  EXPECT_EQ(m.find(5 * PagedMap32::kChunk), nullptr);
  m.set(40 * PagedMap32::kChunk + 5, 9);
  EXPECT_EQ(*m.find(40 * PagedMap32::kChunk + 5), 9u);
  EXPECT_EQ(m.find(40 * PagedMap32::kChunk + 4), nullptr);
}

TEST(PagedMap32, AgreesWithUnorderedMapOverRunsAndScatteredKeys) {
  // runs of consecutive keys (chunks going dense) interleaved with scattered ones (staying hashed) and overwrites
  PagedMap32 m(1 << 16);
  std::unordered_map<uint32_t, uint32_t> ref;
  Rng rng(4242);
  for (int round = 0; round < 400; ++round) {
    if (rng.chance(0.3)) {
      const uint32_t start = uint32_t(rng.below(1 << 17)), len = uint32_t(1 + rng.below(3 * PagedMap32::kChunk));
      for (uint32_t k = start; k < start + len; ++k) {
        const uint32_t v = uint32_t(rng.below(1u << 30));
        m.set(k, v);
        ref[k] = v;
      }
    } else {
      for (int i = 0; i < 50; ++i) {
        const uint32_t k = uint32_t(rng.below(1 << 18)), v = uint32_t(rng.below(1u << 30));
        m.set(k, v);
        ref[k] = v;
      }
    }
  }
  EXPECT_EQ(m.size(), ref.size());
  EXPECT_GT(m.dense_chunks(), 0u);  // (the runs took some chunks past their quota)
  for (uint32_t k = 0; k < (1u << 18) + 1024; ++k) {
    const uint32_t* v = m.find(k);
    const auto it = ref.find(k);
    if (it == ref.end()) {
      ASSERT_EQ(v, nullptr) << k;
    } else {
      ASSERT_NE(v, nullptr) << k;
      ASSERT_EQ(*v, it->second) << k;
    }
  }
}

}  // namespace
}  // namespace bitline
