// vLLM V0's default scheduler: prefill first. When requests wait and the first of them fits (its blocks, leaving the
// watermark free; max_num_seqs; the pass's max_num_batched_tokens), the pass prefills the waiting requests that fit,
// first come first served, and decodes nothing; otherwise it decodes every running request. A decode that needs a
// block when none is free preempts the most recently admitted running request. Swapped-out requests come back before
// new prompts are admitted (vllm/core/scheduler.py, _schedule_default). With serve.scheduler_steps = n > 1 (vLLM
// v0.6 multi-step), a decode pass is a group of n steps: each request's blocks are grown for the tokens it will
// compute in them (n, or what is left of its output) before the group starts.
#include <algorithm>

#include "serve/schedulers/steps.hpp"

namespace bitline::serve::policy {
namespace {

class Vllm final : public Scheduler {
 public:
  explicit Vllm(const ServeParams& p) : p_(p) {}
  Batch next(EngineState& st) override {
    Batch b;
    ++st.pass;
    int64_t budget = p_.max_num_batched_tokens;
    if (!swap_in(p_, st, b)) admit(p_, st, b, budget, false, true);
    if (!b.empty()) return b;
    // Decode every running request (in admission order), preempting from the back when blocks run out.
    order_.assign(st.running.begin(), st.running.end());
    b.decode.reserve(order_.size());
    for (int32_t i : order_) {
      Seq& s = st.seqs[size_t(i)];
      if (!s.running()) continue;  // preempted meanwhile
      const int64_t tokens = std::min<int64_t>(p_.scheduler_steps, s.output - s.generated);
      if (grow_or_preempt(p_, st, b, i, s.computed + std::max<int64_t>(tokens, 1))) {
        s.stamp = st.pass;
        b.decode.push_back(i);
      }
    }
    b.decode_context = mean_context(st, b.decode);
    b.steps = p_.scheduler_steps;
    return b;
  }
  std::optional<int64_t> repeats(const EngineState& st, const Batch& b) const override { return repeats_while_none_joins(p_, st, b); }

 private:
  ServeParams p_;
  std::vector<int32_t> order_;  // next(): the running requests as the pass began (preemption changes st.running)
};

}  // namespace

std::unique_ptr<Scheduler> make_vllm(const ServeParams& p) { return std::make_unique<Vllm>(p); }

}  // namespace bitline::serve::policy
