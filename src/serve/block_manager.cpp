#include "serve/block_manager.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

namespace bitline::serve {

void PrefixCache::Lru::push_back(std::vector<Unit>& v, uint32_t i) {
  v[i].prev = tail;
  v[i].next = kNil;
  (tail == kNil ? head : v[tail].next) = i;
  tail = i;
  ++size;
}

void PrefixCache::Lru::erase(std::vector<Unit>& v, uint32_t i) {
  const uint32_t p = v[i].prev, n = v[i].next;
  (p == kNil ? head : v[p].next) = n;
  (n == kNil ? tail : v[n].prev) = p;
  v[i].prev = v[i].next = kNil;
  --size;
}

uint32_t PrefixCache::take(std::vector<Unit>& slab, std::vector<uint32_t>& free, uint64_t key) {
  uint32_t i;
  if (!free.empty()) {
    i = free.back();
    free.pop_back();
  } else {
    i = uint32_t(slab.size());
    slab.emplace_back();
  }
  slab[i] = Unit{key, 0, kNil, kNil};
  return i;
}

int64_t PrefixCache::acquire(const std::vector<uint64_t>& keys, int64_t max_units) {
  int64_t h = 0;
  while (h < max_units && h < int64_t(keys.size())) {
    const uint32_t* u = map_.find(keys[size_t(h)]);
    if (!u) break;
    if (units_[*u].refs++ == 0) lru_.erase(units_, *u);
    ++h;
  }
  return h;
}

int64_t PrefixCache::cached_run(const std::vector<uint64_t>& keys, int64_t max_units) const {
  int64_t h = 0;
  while (h < max_units && h < int64_t(keys.size()) && map_.contains(keys[size_t(h)])) ++h;
  return h;
}

void PrefixCache::release(const std::vector<uint64_t>& keys, int64_t n) {
  for (int64_t k = n - 1; k >= 0; --k) {  // tail first: the head ends most recently used
    const uint32_t* u = map_.find(keys[size_t(k)]);
    if (!u) throw std::logic_error("prefix cache: a released key is not cached");
    if (--units_[*u].refs == 0) lru_.push_back(units_, *u);
  }
}

void PrefixCache::insert(uint64_t key) {
  if (map_.contains(key)) throw std::logic_error("prefix cache: a key inserted twice");
  const uint32_t u = take(units_, free_units_, key);
  map_.set(key, u);
  lru_.push_back(units_, u);
}

int64_t PrefixCache::evict(int64_t blocks) {
  int64_t freed = 0;
  while (freed < blocks && lru_.size > 0) {
    const uint32_t u = lru_.head;
    const uint64_t key = units_[u].key;
    lru_.erase(units_, u);
    map_.erase(key);
    free_units_.push_back(u);
    to_host(key);
    freed += bpu_;
    ++evictions_;
  }
  return freed;
}

void PrefixCache::to_host(uint64_t key) {
  if (host_cap_ <= 0) return;
  if (const uint32_t* u = host_map_.find(key)) {  // already there: most recently used now
    const uint32_t i = *u;
    host_lru_.erase(host_units_, i);
    host_lru_.push_back(host_units_, i);
    return;
  }
  if (int64_t(host_map_.size()) >= host_cap_) {
    const uint32_t old = host_lru_.head;
    host_map_.erase(host_units_[old].key);
    host_lru_.erase(host_units_, old);
    free_host_units_.push_back(old);
  }
  const uint32_t u = take(host_units_, free_host_units_, key);
  host_map_.set(key, u);
  host_lru_.push_back(host_units_, u);
}

int64_t PrefixCache::host_run(const std::vector<uint64_t>& keys, int64_t from, int64_t max_units) {
  int64_t n = 0;
  while (n < max_units && from + n < int64_t(keys.size())) {
    const uint32_t* u = host_map_.find(keys[size_t(from + n)]);
    if (!u) break;
    const uint32_t i = *u;
    host_lru_.erase(host_units_, i);
    host_lru_.push_back(host_units_, i);
    ++n;
  }
  return n;
}

BlockManager::BlockManager(int64_t total, int64_t block_tokens, double watermark, int64_t prefix_unit, int64_t host_units)
    : total_(total), block_tokens_(block_tokens), watermark_(int64_t(std::floor(watermark * double(total)))), free_(total) {
  if (prefix_unit > 0) cache_.emplace(prefix_unit / block_tokens, host_units);
  if (block_tokens > 0 && (block_tokens & (block_tokens - 1)) == 0) shift_ = std::countr_zero(uint64_t(block_tokens));
}

bool BlockManager::grow(Seq& s, int64_t tokens) {
  const int64_t need = blocks_for(tokens) - s.blocks - s.shared;
  if (need <= 0) return true;
  if (need > free()) return false;
  if (need > free_) free_ += cache_->evict(need - free_);
  free_ -= need;
  s.blocks += need;
  return true;
}

void BlockManager::release(Seq& s) {
  free_ += s.blocks;
  s.blocks = 0;
  if (cache_ && s.hits > 0) cache_->release(*s.prefix, s.hits);
  s.hits = 0;
  s.shared = 0;
}

namespace {
/// The most prefix units a request may take from the cache: at least one prompt token is computed.
int64_t max_prefix_units(const Seq& s) { return (s.prefill_target() - 1) / s.prefix_unit; }
}  // namespace

int64_t BlockManager::cached_prefix_units(const Seq& s) const {
  if (!cache_ || !s.prefix || s.prefix_unit <= 0) return 0;
  return cache_->cached_run(*s.prefix, max_prefix_units(s));
}

void BlockManager::admit_prefix(Seq& s) {
  if (!cache_ || !s.prefix || s.computed != 0 || s.blocks != 0 || s.hits != 0) return;
  const int64_t max_units = max_prefix_units(s);
  s.hits = cache_->acquire(*s.prefix, max_units);
  s.shared = s.hits * cache_->blocks_per_unit();
  s.host_hits = cache_->host_run(*s.prefix, s.hits, max_units - s.hits);
  s.computed = (s.hits + s.host_hits) * s.prefix_unit;
  s.cached_tokens += s.computed;
  s.host_cached_tokens += s.host_hits * s.prefix_unit;
}

void BlockManager::drop_prefix(Seq& s) {
  if (!cache_ || s.hits + s.host_hits == 0) return;
  if (s.hits > 0) cache_->release(*s.prefix, s.hits);
  s.cached_tokens -= (s.hits + s.host_hits) * s.prefix_unit;
  s.host_cached_tokens -= s.host_hits * s.prefix_unit;
  s.computed = 0;
  s.hits = 0;
  s.host_hits = 0;
  s.shared = 0;
}

void BlockManager::finish(Seq& s) {
  if (cache_ && s.prefix) {
    // Units whose KV the request computed (all its context but the last token), tail first so that the head ends
    // most recently used; a unit not cached yet takes its blocks from the request's own.
    const int64_t units = std::min<int64_t>(int64_t(s.prefix->size()), s.computed / s.prefix_unit);
    const int64_t bpu = cache_->blocks_per_unit();
    for (int64_t k = units - 1; k >= s.hits; --k) {
      const uint64_t key = (*s.prefix)[size_t(k)];
      if (cache_->has(key) || s.blocks < bpu) continue;
      cache_->insert(key);
      s.blocks -= bpu;
    }
  }
  release(s);
}

}  // namespace bitline::serve
