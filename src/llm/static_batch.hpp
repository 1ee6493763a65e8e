// Static batching as a run mode (`accel run --static-batch`), the way TensorRT-LLM's gptSessionBenchmark measures,
// and the closed form of the static scheduler's run of one batch (serve/schedulers/static.cpp; the same throughput
// within 0.1%, tests/serve/test_serve.cpp, StaticBatchingsClosedFormIsTheStaticSchedulersRun):
// a batch of B prompts of IN tokens is prefilled together (one pass per serving.prefill.chunk), then OUT - 1 decode
// steps run over the growing KV (step j attends over IN + j tokens of every request), no SLO search and no
// disaggregation (the prompts' KV is written where it is decoded). The serving engine's host-side costs
// (serving.engine: auto = the TensorRT-LLM session runtime) are added to every forward pass.
//
// Decode steps are timed one by one up to kMaxTimedSteps; beyond, at kMaxTimedSteps evenly spaced steps (both ends
// included) with the sum taken piecewise linearly between them (the step time grows nearly linearly with the
// context; docs/llm.md, "Static batching").
//
// Output tokens per second per GPU = B x OUT / (prefill + decode) / GPUs, B the whole batch; the time to first token
// is the prefill. The GPU timed is one of the rank holding the most requests, ceil(B / ranks).
#pragma once

#include <cstdint>

#include "core/stats.hpp"
#include "llm/prefill.hpp"
#include "llm/serving.hpp"

namespace bitline::llm {

/// Decode steps timed one by one (more: evenly spaced ones, interpolated).
inline constexpr int64_t kMaxTimedSteps = 33;

struct StaticBatchReport {
  int64_t requests_per_rank = 0, batch = 0, gpus = 0, input = 0, output = 0;
  int64_t decode_steps = 0, steps_timed = 0;
  PrefillReport prefill;  // the GPU side of the prefill
  Time prefill_engine{};  // the engine's host side of the prefill
  Time request_engine{};  // the engine's own cost of the call (serving.engine.request: the batch is one request)
  Time ttft{};            // prefill + its engine overheads + the request's own (the first token)
  Time decode{};          // the OUT - 1 decode steps, engine overheads included
  Time decode_engine{};   // of which the engine's host side
  Time first_step{}, last_step{};
  Time total{};                // ttft + decode
  Breakdown decode_breakdown;  // summed over the steps
  Capacity capacity;           // at the full context, IN + OUT
  double output_tokens_per_s_per_gpu = 0;
  /// {"batch", "requests_per_rank", "gpus", "input_tokens", "output_tokens", "decode_steps", "steps_timed",
  /// "prefill_ms", "prefill_engine_ms", "request_engine_ms", "ttft_ms", "decode_ms", "decode_engine_ms", "first_step_ms", "last_step_ms",
  /// "total_ms", "output_tokens_per_s_per_gpu", "decode_breakdown_ms": {...}}
  Json json() const;
};

/// The parameters a static batch runs with: `k`, except that under TensorRT-LLM's session runtime (serving.engine auto
/// or tensorrt_llm_session) llm.attention_parallel auto means tensor parallel for every model. That runtime
/// (gptSessionBenchmark) has no data-parallel attention: its TP degree splits every layer, MoE models' included.
KindParams static_batch_params(KindParams k);

/// The static batch of `batch` requests (the whole system's) with context `c` (IN:OUT, OUT >= 1) on `s`'s deployment:
/// its attention ranks share them, the timed GPU's rank holding the most, ceil(batch / ranks). ConfigError (exit 2)
/// when that rank's requests do not fit in memory at their full context, naming the numbers.
StaticBatchReport run_static_batch(const Server& s, int64_t batch, const ContextSpec& c);

}  // namespace bitline::llm
