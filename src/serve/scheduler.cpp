#include "serve/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace bitline::serve {

const Registry<SchedulerKind>& schedulers() {
  static const Registry<SchedulerKind> r(
      "scheduler", {{"vllm",
                     "continuous batching, prefill first (vLLM V0): a pass prefills the waiting requests that fit, else decodes all "
                     "running ones; preemption by recompute",
                     SchedulerKind::Vllm},
                    {"chunked",
                     "chunked prefill (Sarathi-Serve, vLLM V1): max_num_batched_tokens per pass, decodes first, then prompt chunks; "
                     "preemption by recompute",
                     SchedulerKind::Chunked},
                    {"orca",
                     "iteration-level scheduling with selective batching (Orca, OSDI 2022): every pass decodes all running "
                     "requests and prefills newly admitted whole prompts beside them; each request reserves its full context at "
                     "admission, so none is preempted",
                     SchedulerKind::Orca},
                    {"static", "static batching (TensorRT-LLM gptSession): a batch prefilled together and decoded to its longest request",
                     SchedulerKind::Static}});
  return r;
}

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

const Registry<PreemptionMode>& preemption_modes() {
  static const Registry<PreemptionMode> r(
      "preemption", {{"recompute", "a preempted request's KV is freed and prefilled again when it is readmitted (vLLM's default)",
                      PreemptionMode::Recompute},
                     {"swap",
                      "a preempted request's KV is copied to host memory (serve.swap_space) over serve.host_link and back when "
                      "blocks free up; recompute when the host is full",
                      PreemptionMode::Swap}});
  return r;
}

BlockManager::BlockManager(int64_t total, int64_t block_tokens, double watermark, int64_t prefix_unit, int64_t host_units)
    : total_(total), block_tokens_(block_tokens), watermark_(int64_t(std::floor(watermark * double(total)))), free_(total) {
  if (prefix_unit > 0) cache_.emplace(prefix_unit / block_tokens, host_units);
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

void enqueue_waiting(EngineState& st, int32_t i) {
  const auto before = [&](int32_t a, int32_t b) {
    const Time ta = st.seqs[size_t(a)].arrived, tb = st.seqs[size_t(b)].arrived;
    return ta < tb || (ta == tb && a < b);
  };
  st.waiting.insert(std::lower_bound(st.waiting.begin(), st.waiting.end(), i, before), i);
}

namespace {

/// Preemption of running request `i`: swapped out to host memory when the mode is swap and the host holds its
/// blocks (its KV kept, the copy in this pass: `b.swap_out_blocks`); otherwise by recompute (its prefix references
/// dropped; readmitted, it looks the cache up again).
void preempt(const ServeParams& p, EngineState& st, Batch& b, int32_t i) {
  Seq& s = st.seqs[size_t(i)];
  if (*p.preemption == PreemptionMode::Swap && s.blocks + s.shared <= st.host_free_blocks) {
    const int64_t n = s.blocks + s.shared;  // its whole KV (shared prefix units too: the GPU copy may be evicted)
    st.host_free_blocks -= n;
    b.swap_out_blocks += n;
    st.swapped_blocks += n;
    ++st.swaps_out;
    st.blocks.release(s);
    s.swapped = n;
    s.phase = Phase::Swapped;
    ++s.preemptions;
    ++st.preemptions;
    st.running.erase(std::find(st.running.begin(), st.running.end(), i));
    st.swapped.push_back(i);
    return;
  }
  st.blocks.release(s);
  s.computed = 0;
  s.phase = Phase::Waiting;
  ++s.preemptions;
  ++st.preemptions;
  st.running.erase(std::find(st.running.begin(), st.running.end(), i));
  enqueue_waiting(st, i);  // back in arrival order
}

/// Gives running request `i` the blocks for `tokens` tokens, preempting the most recently admitted running requests
/// (other than those already scheduled in this pass) while none are free; false when `i` itself had to be preempted.
bool grow_or_preempt(const ServeParams& p, EngineState& st, Batch& b, int32_t i, int64_t tokens) {
  Seq& s = st.seqs[size_t(i)];
  while (!st.blocks.grow(s, tokens)) {
    int32_t victim = -1;
    for (auto it = st.running.rbegin(); it != st.running.rend(); ++it)
      if (st.seqs[size_t(*it)].stamp != st.pass) {  // not already scheduled in this pass
        victim = *it;
        break;
      }
    if (victim < 0) victim = i;
    preempt(p, st, b, victim);
    if (victim == i) return false;
  }
  return true;
}

double mean_context(const EngineState& st, const std::vector<int32_t>& ids) {
  double sum = 0;
  for (int32_t i : ids) sum += double(st.seqs[size_t(i)].computed + 1);
  return ids.empty() ? 0.0 : sum / double(ids.size());
}

/// Moves the first waiting request into the running ones as a prefill of `n` prompt tokens after its computed ones,
/// its blocks grown to hold `tokens` tokens (the caller checked they are free) and its host-tier prefix units copied
/// in before the pass.
void start_prefill(EngineState& st, Batch& b, int64_t n, int64_t tokens) {
  const int32_t i = st.waiting.front();
  Seq& s = st.seqs[size_t(i)];
  st.blocks.grow(s, tokens);
  st.waiting.pop_front();
  st.running.push_back(i);
  s.phase = Phase::Prefill;
  s.stamp = st.pass;
  b.prefill.push_back(i);
  b.chunks.push_back({s.computed, n});
  b.swap_in_blocks += st.blocks.take_host_hits(s);
}

/// Admits waiting requests (first come first served) as prefills while they fit: blocks leaving the watermark free,
/// max_num_seqs, and `budget` tokens (a request that alone exceeds the budget runs alone, `alone_ok`). `chunk`: a
/// prompt may be cut to what is left of the budget.
void admit(const ServeParams& p, EngineState& st, Batch& b, int64_t& budget, bool chunk, bool alone_ok) {
  while (!st.waiting.empty() && budget > 0 && int64_t(st.running.size()) < p.max_num_seqs) {
    Seq& s = st.seqs[size_t(st.waiting.front())];
    st.blocks.admit_prefix(s);  // the cached head of its prompt, if any (prefix caching)
    int64_t n = s.prefill_target() - s.computed;
    if (n > budget) {
      if (chunk) {
        n = budget;
      } else if (!(alone_ok && b.empty())) {
        st.blocks.drop_prefix(s);
        break;
      }
    }
    if (!st.blocks.can_admit(st.blocks.blocks_for(s.computed + n) - s.blocks - s.shared)) {
      st.blocks.drop_prefix(s);
      break;
    }
    start_prefill(st, b, n, s.computed + n);
    budget -= std::min(budget, n);
  }
}

/// Swaps requests back in from host memory, oldest swap first, while their blocks (and one more token) fit leaving the
/// watermark free and max_num_seqs allows: they rejoin the running requests, decoding from where they stopped (vLLM
/// V0 serves the swapped queue before new prefills). Returns whether any is still swapped out.
bool swap_in(const ServeParams& p, EngineState& st, Batch& b) {
  while (!st.swapped.empty() && int64_t(st.running.size()) < p.max_num_seqs) {
    const int32_t i = st.swapped.front();
    Seq& s = st.seqs[size_t(i)];
    if (!st.blocks.can_admit(st.blocks.blocks_for(s.computed + 1))) break;
    st.blocks.grow(s, s.computed);
    st.host_free_blocks += s.swapped;
    b.swap_in_blocks += s.swapped;
    st.swapped_blocks += s.swapped;
    ++st.swaps_in;
    s.swapped = 0;
    s.phase = s.computed < s.prefill_target() ? Phase::Prefill : Phase::Decode;
    st.swapped.pop_front();
    st.running.push_back(i);
  }
  return !st.swapped.empty();
}

Batch schedule_vllm(const ServeParams& p, EngineState& st) {
  Batch b;
  ++st.pass;
  int64_t budget = p.max_num_batched_tokens;
  // Swapped-out requests come back before new prompts are admitted (and block them while any is left).
  if (!swap_in(p, st, b)) admit(p, st, b, budget, false, true);
  if (!b.empty()) return b;
  // Decode every running request (in admission order), preempting from the back when blocks run out.
  const std::vector<int32_t> order = st.running;
  for (int32_t i : order) {
    Seq& s = st.seqs[size_t(i)];
    if (!s.running()) continue;  // preempted meanwhile
    if (grow_or_preempt(p, st, b, i, s.computed + 1)) {
      s.stamp = st.pass;
      b.decode.push_back(i);
    }
  }
  b.decode_context = mean_context(st, b.decode);
  return b;
}

Batch schedule_chunked(const ServeParams& p, EngineState& st) {
  Batch b;
  ++st.pass;
  int64_t budget = p.max_num_batched_tokens;
  const bool still_swapped = swap_in(p, st, b);
  const std::vector<int32_t> order = st.running;
  // Running decodes first, then running prefills (their next chunk).
  for (int pass = 0; pass < 2; ++pass)
    for (int32_t i : order) {
      if (budget <= 0) break;
      Seq& s = st.seqs[size_t(i)];
      if (!s.running()) continue;  // preempted meanwhile
      if (pass == 0 && s.phase == Phase::Decode) {
        if (grow_or_preempt(p, st, b, i, s.computed + 1)) {
          s.stamp = st.pass;
          b.decode.push_back(i);
          budget -= 1;
        }
      } else if (pass == 1 && s.phase == Phase::Prefill) {
        const int64_t n = std::min(s.prefill_target() - s.computed, budget);
        if (grow_or_preempt(p, st, b, i, s.computed + n)) {
          s.stamp = st.pass;
          b.prefill.push_back(i);
          b.chunks.push_back({s.computed, n});
          budget -= n;
        }
      }
    }
  if (!still_swapped) admit(p, st, b, budget, true, false);
  b.decode_context = mean_context(st, b.decode);
  return b;
}

/// Admits the first waiting request with the blocks of its full context (prompt + output, no watermark: static
/// batching and Orca allocate a request's KV for its maximum length, so nothing running can run out of blocks), its
/// cached prefix taken first, as a prefill of the rest of its prompt. False, nothing taken, when the blocks are not
/// free or `fits(n)` refuses its n prompt tokens.
template <class Fits>
bool admit_reserved(EngineState& st, Batch& b, Fits fits) {
  Seq& s = st.seqs[size_t(st.waiting.front())];
  st.blocks.admit_prefix(s);
  const int64_t n = s.prefill_target() - s.computed;
  if (!fits(n) || st.blocks.blocks_for(s.input + s.output) - s.shared > st.blocks.free()) {
    st.blocks.drop_prefix(s);
    return false;
  }
  start_prefill(st, b, n, s.input + s.output);
  return true;
}

Batch schedule_orca(const ServeParams& p, EngineState& st) {
  Batch b;
  ++st.pass;
  // Every running request decodes (its blocks were reserved at admission: the grow takes none).
  for (int32_t i : st.running) {
    Seq& s = st.seqs[size_t(i)];
    if (s.phase != Phase::Decode) continue;
    st.blocks.grow(s, s.computed + 1);
    s.stamp = st.pass;
    b.decode.push_back(i);
  }
  // New requests join the same pass, first come first served, their whole prompts prefilled (selective batching),
  // while the batch has room (max_num_seqs), the pass's tokens stay within max_num_batched_tokens (a prompt longer
  // than the budget runs only in a pass of its own), and their full context (prompt + output) fits in the free
  // blocks: Orca allocates a request's KV for its maximum length when it is scheduled (Yu et al., OSDI 2022, Sec. 4.2).
  int64_t budget = p.max_num_batched_tokens - int64_t(b.decode.size());
  const auto fits = [&](int64_t n) { return n <= budget || b.empty(); };  // a longer prompt only in a pass of its own
  while (!st.waiting.empty() && int64_t(st.running.size()) < p.max_num_seqs && admit_reserved(st, b, fits))
    budget -= b.chunks.back().tokens;
  b.decode_context = mean_context(st, b.decode);
  return b;
}

Batch schedule_static(const ServeParams& p, EngineState& st) {
  Batch b;
  ++st.pass;
  if (st.running.empty()) {
    // A new batch: every member reserves its full context.
    st.static_batch = 0;
    while (!st.waiting.empty() && int64_t(st.running.size()) < p.max_num_seqs)
      if (!admit_reserved(st, b, [](int64_t) { return true; })) break;
    st.static_batch = int64_t(b.prefill.size());
    return b;
  }
  b.decode = st.running;
  b.padded_decodes = st.static_batch;
  b.decode_context = mean_context(st, b.decode);
  return b;
}

}  // namespace

Batch schedule(SchedulerKind kind, const ServeParams& p, EngineState& st) {
  switch (kind) {
    case SchedulerKind::Vllm:
      return schedule_vllm(p, st);
    case SchedulerKind::Chunked:
      return schedule_chunked(p, st);
    case SchedulerKind::Orca:
      return schedule_orca(p, st);
    case SchedulerKind::Static:
      return schedule_static(p, st);
  }
  throw std::logic_error("unhandled scheduler");
}

}  // namespace bitline::serve
