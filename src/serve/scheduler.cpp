#include "serve/scheduler.hpp"

#include <algorithm>

namespace bitline::serve {

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

namespace {
/// Arrival order: by Seq::arrived, then by request number.
auto arrives_before(const EngineState& st) {
  return [&st](int32_t a, int32_t b) {
    const Time ta = st.seqs[size_t(a)].arrived, tb = st.seqs[size_t(b)].arrived;
    return ta < tb || (ta == tb && a < b);
  };
}
}  // namespace

void enqueue_waiting(EngineState& st, int32_t i) {
  st.waiting.insert(std::lower_bound(st.waiting.begin(), st.waiting.end(), i, arrives_before(st)), i);
}

void sort_waiting_by_arrival(EngineState& st) { std::sort(st.waiting.begin(), st.waiting.end(), arrives_before(st)); }

}  // namespace bitline::serve
