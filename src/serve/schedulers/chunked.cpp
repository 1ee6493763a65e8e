// Chunked prefill (Sarathi-Serve, Agrawal et al., OSDI 2024; vLLM V1's scheduler): a token budget of
// max_num_batched_tokens per pass, spent on the running decodes first (one token each), then on the running
// prefills (their next chunk), then on new requests; a prompt longer than what is left is cut into a chunk; decodes
// and chunks share a pass. Also the decode side of a disaggregated deployment, which takes transferred requests in as
// one-token chunks beside its decodes.
#include "serve/schedulers/steps.hpp"

namespace bitline::serve::policy {
namespace {

class Chunked final : public Scheduler {
 public:
  explicit Chunked(const ServeParams& p) : p_(p) {}
  Batch next(EngineState& st) override {
    Batch b;
    ++st.pass;
    int64_t budget = p_.max_num_batched_tokens;
    const bool still_swapped = swap_in(p_, st, b);
    const std::vector<int32_t> order = st.running;
    for (int32_t i : order) {  // running decodes first
      if (budget <= 0) break;
      Seq& s = st.seqs[size_t(i)];
      if (!s.running() || s.phase != Phase::Decode) continue;  // (preempted meanwhile, or prefilling)
      if (grow_or_preempt(p_, st, b, i, s.computed + 1)) {
        s.stamp = st.pass;
        b.decode.push_back(i);
        budget -= 1;
      }
    }
    for (int32_t i : order) {  // then the running prefills' next chunks
      if (budget <= 0) break;
      Seq& s = st.seqs[size_t(i)];
      if (!s.running() || s.phase != Phase::Prefill) continue;
      const int64_t n = std::min(s.prefill_target() - s.computed, budget);
      if (grow_or_preempt(p_, st, b, i, s.computed + n)) {
        s.stamp = st.pass;
        b.prefill.push_back(i);
        b.chunks.push_back({s.computed, n});
        budget -= n;
      }
    }
    if (!still_swapped) admit(p_, st, b, budget, true, false);
    b.decode_context = mean_context(st, b.decode);
    return b;
  }
  std::optional<int64_t> repeats(const EngineState& st, const Batch& b) const override { return repeats_while_none_joins(p_, st, b); }

 private:
  ServeParams p_;
};

}  // namespace

std::unique_ptr<Scheduler> make_chunked(const ServeParams& p) { return std::make_unique<Chunked>(p); }

}  // namespace bitline::serve::policy
