// SGLang's scheduler (python/sglang/srt/managers/scheduler.py, get_new_batch_prefill and update_running_batch, with
// its PrefillAdder; v0.3-v0.4): prefill first, never mixed. When requests wait and fit, the pass is a prefill batch of
// at most max_num_batched_tokens (SGLang's chunked_prefill_size) prompt tokens: a request whose prompt is cut into
// chunks first continues, then new requests, first come first served; a prompt longer than what is left is cut. A
// request is admitted only while the free KV holds its prompt plus the output the running requests and it are
// expected still to write: new_token_ratio x (its max_new_tokens - tokens generated) each, capped at 4096 tokens (the
// engine knows a request's max_new_tokens: benchmark_serving sends the output length as max_tokens). Otherwise the
// pass decodes every running request; a decode that finds no free block retracts (preempts by recompute) the most
// recently admitted request. The ratio starts at 0.7, falls by 0.001 with every decode pass to 0.1, and is reset to
// 0.7 when a decode has to retract (SGLang global_config: init_new_token_ratio, base_min_new_token_ratio,
// new_token_ratio_decay; retract_decode raises the ratio again, here to its initial value).
// `sglang-lpm` is the same with SGLang's default schedule_policy, lpm (ServerArgs.schedule_policy = "lpm" in v0.3-v0.4;
// schedule_policy.py, SchedulePolicy.calc_priority): before a prefill batch is formed, the waiting requests are tried
// longest prefix in the radix cache first (a stable sort: equals in arrival order), unless more than 128 wait (then
// first come first served: the matching is too expensive) or the cache is off. SGLang keeps the queue in that order;
// here the requests not admitted go back to arrival order, so equals are always in arrival order. Not modelled: the
// in-batch prefix check of later versions (a request whose prefix only other waiting requests share is tried later).
#include <algorithm>
#include <utility>
#include <vector>

#include "serve/schedulers/steps.hpp"

namespace bitline::serve::policy {
namespace {

// SGLang's global_config (python/sglang/global_config.py, v0.3) and CLIP_MAX_NEW_TOKENS (schedule_policy.py).
constexpr double kInitRatio = 0.7, kMinRatio = 0.1, kRatioDecay = 0.001;
constexpr int64_t kClipMaxNewTokens = 4096;
// SchedulePolicy.calc_priority: lpm turns to first come first served when more requests than this wait.
constexpr size_t kLpmMaxWaiting = 128;

class Sglang final : public Scheduler {
 public:
  Sglang(const ServeParams& p, bool longest_prefix_first) : p_(p), lpm_(longest_prefix_first) {}
  Batch next(EngineState& st) override {
    Batch b;
    ++st.pass;
    if (!swap_in(p_, st, b)) prefill(st, b);
    if (!b.empty()) return b;
    const std::vector<int32_t> order = st.running;
    const int64_t before = st.preemptions;
    for (int32_t i : order) {
      Seq& s = st.seqs[size_t(i)];
      if (!s.running() || s.phase != Phase::Decode) continue;  // (retracted meanwhile, or a prompt in chunks)
      if (grow_or_preempt(p_, st, b, i, s.computed + 1)) {
        s.stamp = st.pass;
        b.decode.push_back(i);
      }
    }
    ratio_ = st.preemptions > before ? kInitRatio : std::max(kMinRatio, ratio_ - kRatioDecay);
    b.decode_context = mean_context(st, b.decode);
    return b;
  }
  // Nothing waits (the ratio's decay could let a waiting request in) and no prompt is in chunks.
  std::optional<int64_t> repeats(const EngineState& st, const Batch& b) const override {
    if (!decodes_all_running(st, b) || !st.waiting.empty()) return std::nullopt;
    return st.blocks.free();
  }
  void repeated(int64_t passes) override {
    for (int64_t k = 0; k < passes; ++k) ratio_ = std::max(kMinRatio, ratio_ - kRatioDecay);
  }

 private:
  /// Tokens a request is expected still to write: its prompt's rest and new_token_ratio of its output's rest.
  int64_t expected(const Seq& s) const {
    const int64_t out = std::min<int64_t>(s.output - s.generated, kClipMaxNewTokens);
    return (s.prefill_target() - s.computed) + int64_t(ratio_ * double(out));
  }

  void prefill(EngineState& st, Batch& b) {
    int64_t budget = p_.max_num_batched_tokens;
    // The KV the running requests are expected to write, kept free.
    int64_t reserved = 0;
    for (int32_t i : st.running) reserved += st.blocks.blocks_for(expected(st.seqs[size_t(i)]));
    // A prompt being prefilled in chunks goes on first (its blocks were counted in `reserved`).
    for (int32_t i : std::vector<int32_t>(st.running)) {
      Seq& s = st.seqs[size_t(i)];
      if (budget <= 0 || s.phase != Phase::Prefill) continue;
      const int64_t n = std::min(s.prefill_target() - s.computed, budget);
      const int64_t held = s.blocks;
      if (!grow_or_preempt(p_, st, b, i, s.computed + n)) continue;  // (retracted itself: it waits again)
      reserved -= s.blocks - held;                                   // now held, no longer only expected
      s.stamp = st.pass;
      b.prefill.push_back(i);
      b.chunks.push_back({s.computed, n});
      budget -= n;
    }
    const bool ordered = lpm_ && st.blocks.prefix_cache() && st.waiting.size() > 1 && st.waiting.size() <= kLpmMaxWaiting;
    if (ordered) longest_prefix_first(st);
    while (!st.waiting.empty() && budget > 0 && int64_t(st.running.size()) < p_.max_num_seqs) {
      Seq& s = st.seqs[size_t(st.waiting.front())];
      st.blocks.admit_prefix(s);
      const int64_t n = std::min(s.prefill_target() - s.computed, budget);
      const int64_t need = st.blocks.blocks_for(s.computed + n) - s.blocks - s.shared;
      const int64_t later = st.blocks.blocks_for(expected(s)) - std::max<int64_t>(need, 0);
      if (st.blocks.free() - reserved - need - std::max<int64_t>(later, 0) < 0) {
        st.blocks.drop_prefix(s);
        break;
      }
      start_prefill(st, b, n, s.computed + n);
      reserved += std::max<int64_t>(later, 0);
      budget -= n;
    }
    if (ordered) sort_waiting_by_arrival(st);
  }

  /// The waiting queue, longest cached prefix first (in units of the prefix cache, as admit_prefix would take
  /// them), equals in their order.
  void longest_prefix_first(EngineState& st) {
    std::vector<std::pair<int64_t, int32_t>>& by_match = by_match_;
    by_match.clear();
    for (int32_t i : st.waiting) by_match.push_back({st.blocks.cached_prefix_units(st.seqs[size_t(i)]), i});
    std::stable_sort(by_match.begin(), by_match.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t k = 0; k < by_match.size(); ++k) st.waiting[k] = by_match[k].second;
  }

  ServeParams p_;
  bool lpm_ = false;
  double ratio_ = kInitRatio;
  std::vector<std::pair<int64_t, int32_t>> by_match_;  // longest_prefix_first(): (cached units, request), reused
};

}  // namespace

std::unique_ptr<Scheduler> make_sglang(const ServeParams& p) { return std::make_unique<Sglang>(p, false); }
std::unique_ptr<Scheduler> make_sglang_lpm(const ServeParams& p) { return std::make_unique<Sglang>(p, true); }

}  // namespace bitline::serve::policy
