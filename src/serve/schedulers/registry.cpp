// The table of scheduling policies (serve.scheduler): a row per policy file of this folder.
#include "serve/schedulers/steps.hpp"

namespace bitline::serve {

const Registry<SchedulerFactory>& schedulers() {
  static const Registry<SchedulerFactory> r(
      "scheduler", {{"vllm",
                     "continuous batching, prefill first (vLLM V0): a pass prefills the waiting requests that fit, else decodes all "
                     "running ones; preemption by recompute",
                     policy::make_vllm},
                    {"chunked",
                     "chunked prefill (Sarathi-Serve, vLLM V1): max_num_batched_tokens per pass, decodes first, then prompt chunks; "
                     "preemption by recompute",
                     policy::make_chunked},
                    {"orca",
                     "iteration-level scheduling with selective batching (Orca, OSDI 2022): every pass decodes all running "
                     "requests and prefills newly admitted whole prompts beside them; each request reserves its full context at "
                     "admission, so none is preempted",
                     policy::make_orca},
                    {"static", "static batching (TensorRT-LLM gptSession): a batch prefilled together and decoded to its longest request",
                     policy::make_static},
                    {"sglang",
                     "SGLang's: prefill first, never mixed, prompts cut to max_num_batched_tokens (chunked_prefill_size); a request "
                     "admitted while the free KV holds its prompt and new_token_ratio of every running request's remaining output "
                     "(0.7 decaying to 0.1, back to 0.7 on a retraction); preemption by recompute",
                     policy::make_sglang},
                    {"sglang-lpm",
                     "SGLang's with its lpm schedule policy (its default in v0.3-v0.4): before a prefill batch, the waiting requests "
                     "are tried longest prefix in the prefix cache first (equals in arrival order; first come first served when "
                     "more than 128 wait)",
                     policy::make_sglang_lpm}});
  return r;
}

std::unique_ptr<Scheduler> make_scheduler(std::string_view name, const ServeParams& p) {
  return decltype(ServeParams::scheduler)::named(name, "serve.scheduler").make(p);
}

}  // namespace bitline::serve
