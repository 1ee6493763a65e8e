// FlatMap64 and FlatMap32 (core/flat_map.hpp's one open-addressing table, OpenTable, which ssd::Cmt also uses)
// against std::unordered_map: the same answers after any sequence of sets and erases, including keys that share a
// home slot (linear probing's clusters, which an erase must close up without losing a key behind the hole).
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

}  // namespace
}  // namespace bitline
