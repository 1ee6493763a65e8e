#include "serve/schedulers/steps.hpp"

#include <algorithm>

namespace bitline::serve::policy {

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

}  // namespace bitline::serve::policy

namespace bitline::serve {
bool decodes_all_running(const EngineState& st, const Batch& b) {
  return b.prefill.empty() && !b.decode.empty() && b.steps == 1 && b.decode_slots == 0 && b.swap_in_blocks == 0 && b.swap_out_blocks == 0 &&
         st.swapped.empty() && b.decode.size() == st.running.size();
}
}  // namespace bitline::serve

namespace bitline::serve::policy {

std::optional<int64_t> repeats_while_none_joins(const ServeParams& p, const EngineState& st, const Batch& b) {
  if (!decodes_all_running(st, b)) return std::nullopt;
  const PrefixCache* cache = st.blocks.prefix_cache();
  const bool looks_up = !st.waiting.empty() && cache && int64_t(st.running.size()) < p.max_num_seqs;
  return looks_up && cache->host_capacity() > 0 ? st.blocks.unused() : st.blocks.free();
}

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

bool admit_reserved(EngineState& st, Batch& b, int64_t budget) {
  Seq& s = st.seqs[size_t(st.waiting.front())];
  st.blocks.admit_prefix(s);
  const int64_t n = s.prefill_target() - s.computed;
  if ((n > budget && !b.empty()) || st.blocks.blocks_for(s.input + s.output) - s.shared > st.blocks.free()) {
    st.blocks.drop_prefix(s);
    return false;
  }
  start_prefill(st, b, n, s.input + s.output);
  return true;
}

}  // namespace bitline::serve::policy
