// Iteration-level scheduling with selective batching (Orca, Yu et al., OSDI 2022): every pass decodes all running
// requests and prefills the newly admitted ones' whole prompts in the same pass (first come first served,
// max_num_seqs, max_num_batched_tokens; a longer prompt only in a pass of its own). A request reserves the blocks of
// its full context (input + output) when it is scheduled (Sec. 4.2), so none is ever preempted.
#include "serve/schedulers/steps.hpp"

namespace bitline::serve::policy {
namespace {

class Orca final : public Scheduler {
 public:
  explicit Orca(const ServeParams& p) : p_(p) {}
  Batch next(EngineState& st) override {
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
    // New requests join the same pass while the batch has room and the pass's tokens stay within the budget.
    int64_t budget = p_.max_num_batched_tokens - int64_t(b.decode.size());
    while (!st.waiting.empty() && int64_t(st.running.size()) < p_.max_num_seqs && admit_reserved(st, b, budget))
      budget -= b.chunks.back().tokens;
    b.decode_context = mean_context(st, b.decode);
    return b;
  }

 private:
  ServeParams p_;
};

}  // namespace

std::unique_ptr<Scheduler> make_orca(const ServeParams& p) { return std::make_unique<Orca>(p); }

}  // namespace bitline::serve::policy
