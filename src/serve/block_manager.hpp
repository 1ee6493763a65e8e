// The engine's KV memory, counted: a request inside the engine (Seq), PagedAttention blocks (BlockManager), and
// vLLM's automatic prefix caching over them (PrefixCache). The schedulers (serve/scheduler.hpp) grow and free blocks
// through it; every block is alike, so only counts are kept.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/flat_map.hpp"
#include "core/units.hpp"

namespace bitline::serve {

/// Transfer: prefilled on a prefill instance, its KV on the way to a decode instance (disaggregated serving).
/// Swapped: preempted by swapping, its KV in host memory until it is swapped back in.
enum class Phase : uint8_t { Waiting, Prefill, Decode, Transfer, Swapped, Done };

/// A request inside the engine.
struct Seq {
  int64_t input = 0, output = 0;
  int64_t generated = 0;                          // output tokens emitted so far
  int64_t computed = 0;                           // tokens whose KV is cached (prompt tokens, then one per decode)
  int64_t blocks = 0;                             // KV blocks held (its own; the prefix cache's shared ones are counted in `shared`)
  const std::vector<uint64_t>* prefix = nullptr;  // its prefix keys (Request::prefix), null without
  int64_t prefix_unit = 0;                        // tokens per key
  int64_t hits = 0;                               // prefix keys it holds in the cache (its leading ones)
  int64_t shared = 0;                             // blocks of those keys
  int64_t host_hits = 0;                          // the next keys, found in the host tier (copied into its own blocks)
  int64_t cached_tokens = 0;                      // prompt tokens served from the prefix cache (all admissions)
  int64_t host_cached_tokens = 0;                 // of them, from its host-memory tier
  int64_t swapped = 0;                            // blocks of its KV in host memory (Phase::Swapped)
  int64_t preemptions = 0;
  uint64_t stamp = 0;  // the pass that last scheduled it (EngineState::pass)
  Time arrived{};      // when it arrived (first come, first served: by this, then by request number)
  Phase phase = Phase::Waiting;
  bool running() const { return phase == Phase::Prefill || phase == Phase::Decode; }
  /// Tokens the (re)prefill must compute: the prompt and, after a preemption, the tokens generated before it.
  int64_t prefill_target() const { return input + generated; }
};

/// Automatic prefix caching (vLLM's, Kwon et al. and the vLLM docs "Automatic Prefix Caching"): the KV of a finished
/// request's leading prefix units stays in its blocks, keyed by the unit's prefix key, for later requests that start
/// with the same tokens; a unit no running request uses is evictable, least recently used first (a request's head is
/// touched last, so a prefix outlives its extensions). Counts only: every block is alike.
class PrefixCache {
 public:
  /// `host_units`: the host-memory tier's capacity in units (0: none). A unit evicted from the GPU moves there (its
  /// least recently used unit dropped when full); a request whose head continues in it takes those units back.
  explicit PrefixCache(int64_t blocks_per_unit, int64_t host_units = 0) : bpu_(blocks_per_unit), host_cap_(host_units) {}
  int64_t blocks_per_unit() const { return bpu_; }
  int64_t evictable_blocks() const { return int64_t(lru_.size) * bpu_; }
  int64_t held_blocks() const { return int64_t(map_.size()) * bpu_; }
  /// Takes a reference on the leading keys of `keys` that are cached, at most `max_units`; returns how many.
  int64_t acquire(const std::vector<uint64_t>& keys, int64_t max_units);
  /// How many leading keys of `keys` are cached, at most `max_units` (a look-up only: no reference taken).
  int64_t cached_run(const std::vector<uint64_t>& keys, int64_t max_units) const;
  /// Drops the references on keys[0, n).
  void release(const std::vector<uint64_t>& keys, int64_t n);
  /// Whether `key` is cached.
  bool has(uint64_t key) const { return map_.contains(key); }
  /// Caches `key`, not cached yet, with no reference (its blocks given by the caller).
  void insert(uint64_t key);
  /// Evicts units no request uses, least recently used first, until `blocks` blocks are freed or none is left;
  /// returns the blocks freed.
  int64_t evict(int64_t blocks);
  int64_t evictions() const { return evictions_; }
  /// How many of keys[from, from + max_units) continue the run in the host tier (those units are then copied back
  /// into the request's own blocks; the host keeps them).
  int64_t host_run(const std::vector<uint64_t>& keys, int64_t from, int64_t max_units);
  int64_t host_units() const { return int64_t(host_map_.size()); }
  int64_t host_capacity() const { return host_cap_; }

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  /// A cached unit, in a slab (`units_`, `host_units_`) with the links of its tier's recency list.
  struct Unit {
    uint64_t key = 0;
    int64_t refs = 0;  // (GPU tier) running requests using it; on the LRU list while 0
    uint32_t prev = kNil, next = kNil;
  };
  /// A recency list over a slab's units, least recently used first (std::list's order, with no allocation per unit).
  struct Lru {
    uint32_t head = kNil, tail = kNil;
    size_t size = 0;
    void push_back(std::vector<Unit>& v, uint32_t i);
    void erase(std::vector<Unit>& v, uint32_t i);
  };
  /// A slab slot for `key` (a freed one first).
  static uint32_t take(std::vector<Unit>& slab, std::vector<uint32_t>& free, uint64_t key);
  int64_t bpu_;
  FlatMap64 map_;  // key -> its unit in units_
  std::vector<Unit> units_;
  std::vector<uint32_t> free_units_;
  Lru lru_;  // evictable units
  int64_t evictions_ = 0;
  int64_t host_cap_;
  FlatMap64 host_map_;  // key -> its unit in host_units_
  std::vector<Unit> host_units_;
  std::vector<uint32_t> free_host_units_;
  Lru host_lru_;
  void to_host(uint64_t key);
};

/// PagedAttention blocks of `block_tokens` tokens, counted (every block is alike), and the prefix cache's blocks when
/// it is on (serve.prefix_caching): a cached unit no running request uses counts as free to allocate, and is evicted
/// when its blocks are taken.
class BlockManager {
 public:
  BlockManager(int64_t total, int64_t block_tokens, double watermark, int64_t prefix_unit = 0, int64_t host_units = 0);
  int64_t total() const { return total_; }
  int64_t free() const { return free_ + (cache_ ? cache_->evictable_blocks() : 0); }
  /// The free blocks no cached unit holds: taken without evicting one.
  int64_t unused() const { return free_; }
  int64_t watermark_blocks() const { return watermark_; }
  int64_t block_tokens() const { return block_tokens_; }
  int64_t blocks_for(int64_t tokens) const {
    const int64_t x = tokens + block_tokens_ - 1;
    return shift_ >= 0 && x >= 0 ? x >> shift_ : x / block_tokens_;  // (a shift for the usual power-of-two blocks)
  }
  /// Whether a request of `tokens` tokens can ever run here: its blocks within all of them less the watermark's.
  bool holds(int64_t tokens) const { return blocks_for(tokens) <= total_ - watermark_; }
  /// A new request may take `n` blocks if `watermark` blocks stay free after (vLLM's can_allocate).
  bool can_admit(int64_t n) const { return free() - n >= watermark_; }
  /// Grows `s` to hold `tokens` tokens; false (nothing taken) when the blocks are not free.
  bool grow(Seq& s, int64_t tokens);
  /// Frees the blocks of `s` (preempted: its prefix references dropped, nothing cached).
  void release(Seq& s);
  /// A request about to prefill from scratch (computed == 0, no blocks): with prefix caching, takes the cached
  /// leading units of its context (leaving at least one prompt token to compute) and starts `s.computed` after them.
  void admit_prefix(Seq& s);
  /// The units of `s`'s prefix that admit_prefix would find in the GPU tier of the prefix cache now (a look-up only;
  /// 0 without a cache or a prefix).
  int64_t cached_prefix_units(const Seq& s) const;
  /// Undoes admit_prefix when the request is not admitted after all.
  void drop_prefix(Seq& s);
  /// The request is admitted: the blocks of its host-tier units, to copy in before its pass.
  int64_t take_host_hits(Seq& s) {
    const int64_t n = s.host_hits * (cache_ ? cache_->blocks_per_unit() : 0);
    s.host_hits = 0;
    return n;
  }
  /// A finished request: its leading units whose KV it computed are cached (those not cached yet take its blocks),
  /// its references dropped, the rest of its blocks freed.
  void finish(Seq& s);
  const PrefixCache* prefix_cache() const { return cache_ ? &*cache_ : nullptr; }

 private:
  int64_t total_, block_tokens_, watermark_, free_;
  int shift_ = -1;  // log2(block_tokens_) when it is a power of two
  std::optional<PrefixCache> cache_;
};

}  // namespace bitline::serve
