// Static batching (TensorRT-LLM's gptSession): when nothing runs, up to max_num_seqs waiting requests whose full
// context (input + output) fits in the free blocks (no watermark) form a batch; it is prefilled in one pass and decoded
// until its longest request finishes, every pass at the batch's size (its finished requests are padding), while new
// requests wait. The batch's size is this policy's own state. Its closed form for one batch is llm::run_static_batch
// (`accel run --static-batch`).
#include <limits>

#include "serve/schedulers/steps.hpp"

namespace bitline::serve::policy {
namespace {

class Static final : public Scheduler {
 public:
  explicit Static(const ServeParams& p) : p_(p) {}
  Batch next(EngineState& st) override {
    Batch b;
    ++st.pass;
    if (st.running.empty()) {
      // A new batch: every member reserves its full context; its prompts are prefilled together.
      while (!st.waiting.empty() && int64_t(st.running.size()) < p_.max_num_seqs)
        if (!admit_reserved(st, b, std::numeric_limits<int64_t>::max())) break;
      batch_ = int64_t(b.prefill.size());
      return b;
    }
    b.decode = st.running;
    b.decode_slots = batch_;
    b.decode_context = mean_context(st, b.decode);
    return b;
  }

 private:
  ServeParams p_;
  int64_t batch_ = 0;  // the size of the batch in flight (its decode slots)
};

}  // namespace

std::unique_ptr<Scheduler> make_static(const ServeParams& p) { return std::make_unique<Static>(p); }

}  // namespace bitline::serve::policy
