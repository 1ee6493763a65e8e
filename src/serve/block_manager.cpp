#include "serve/block_manager.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace bitline::serve {

int64_t PrefixCache::acquire(const std::vector<uint64_t>& keys, int64_t max_units) {
  int64_t h = 0;
  while (h < max_units && h < int64_t(keys.size())) {
    const auto it = map_.find(keys[size_t(h)]);
    if (it == map_.end()) break;
    if (it->second.refs++ == 0) lru_.erase(it->second.lru);
    ++h;
  }
  return h;
}

void PrefixCache::release(const std::vector<uint64_t>& keys, int64_t n) {
  for (int64_t k = n - 1; k >= 0; --k) {  // tail first: the head ends most recently used
    Entry& e = map_.at(keys[size_t(k)]);
    if (--e.refs == 0) e.lru = lru_.insert(lru_.end(), keys[size_t(k)]);
  }
}

void PrefixCache::insert(uint64_t key) { map_.emplace(key, Entry{0, lru_.insert(lru_.end(), key)}); }

int64_t PrefixCache::evict(int64_t blocks) {
  int64_t freed = 0;
  while (freed < blocks && !lru_.empty()) {
    const uint64_t key = lru_.front();
    map_.erase(key);
    lru_.pop_front();
    to_host(key);
    freed += bpu_;
    ++evictions_;
  }
  return freed;
}

void PrefixCache::to_host(uint64_t key) {
  if (host_cap_ <= 0) return;
  if (const auto it = host_map_.find(key); it != host_map_.end()) {  // already there: most recently used now
    host_lru_.splice(host_lru_.end(), host_lru_, it->second);
    return;
  }
  if (int64_t(host_map_.size()) >= host_cap_) {
    host_map_.erase(host_lru_.front());
    host_lru_.pop_front();
  }
  host_map_.emplace(key, host_lru_.insert(host_lru_.end(), key));
}

int64_t PrefixCache::host_run(const std::vector<uint64_t>& keys, int64_t from, int64_t max_units) {
  int64_t n = 0;
  while (n < max_units && from + n < int64_t(keys.size())) {
    const auto it = host_map_.find(keys[size_t(from + n)]);
    if (it == host_map_.end()) break;
    host_lru_.splice(host_lru_.end(), host_lru_, it->second);
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

void BlockManager::admit_prefix(Seq& s) {
  if (!cache_ || !s.prefix || s.computed != 0 || s.blocks != 0 || s.hits != 0) return;
  const int64_t max_units = (s.prefill_target() - 1) / s.prefix_unit;  // at least one prompt token is computed
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
