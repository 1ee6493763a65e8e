#include "llm/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/error.hpp"

namespace bitline::llm {

const Registry<EngineKind>& engine_kinds() {
  static const Registry<EngineKind> r(
      "serving engine",
      {{"auto", "the TensorRT-LLM session runtime in accel run --static-batch, none elsewhere", EngineKind::Auto},
       {"none", "kernels only (CUDA graphs: the per-kernel llm.compute.kernel_overhead), no host-side costs", EngineKind::None},
       {"tensorrt_llm_session",
        "TensorRT-LLM's static-batching runtime (GptSession, gptSessionBenchmark) without CUDA graphs: 4 us of host time "
        "per kernel launch (measured 4-6 us per launch, https://susun-blog.com/blog/pegainfer-3-cuda-graph; an 8B decode "
        "step on an H100 SXM5 takes 8.4 ms launched eagerly, 5.1 ms as a CUDA graph, https://cloudai.pt/tag/cuda-graphs/), "
        "20 us per iteration (assumption: one stream synchronisation and the copy of the sampled tokens per step), no "
        "per-request cost (its requests are token ids)",
        EngineKind::TensorRtLlmSession},
       {"sarathi_serve",
        "Sarathi-Serve's engine (vLLM-derived, Python, Ray workers; Agrawal et al., OSDI 2024) as Vidur profiled it on an "
        "A100 host (microsoft/vidur data/profiling/a100/cpu_overheads.csv: Llama-2-7B, 8-64 sequences, FP16): on 1 GPU "
        "per iteration 1.33 ms + 105 us per sequence in it, a least-squares line through the medians of its schedule, "
        "sampler, prepare-inputs and process-outputs (detokenisation) steps and Ray's communication with its "
        "workers, the CPU overhead Vidur adds to each step (within 4.7% of each of the 8 points; CodeLlama-34B's 4 "
        "points: 1.23 ms + 168 us); with 2 GPUs (tensor parallel) 3.52 ms + 181 us (within 9.4%), with 4 or more "
        "3.70 ms + 220 us (within 5.7%; Llama-2-70B on 4: 3.44 ms + 234 us), Ray's communication with the workers "
        "growing from ~0.2 ms to 3-8 ms a step; CUDA graphs (no launch cost); profiled at 8-64 sequences and 1, 2 "
        "and 4 GPUs, the lines extended beyond (3 GPUs take 2's, 8 take 4's); no per-request cost (tokenisation is "
        "outside the steps Vidur profiles)",
        EngineKind::SarathiServe},
       {"custom",
        "the host costs serving.engine.launch (per kernel launch), serving.engine.iteration (per forward pass), "
        "serving.engine.per_sequence (per sequence in a pass) and serving.engine.request (per request, before it is "
        "scheduled) give, e.g. an engine the user measured, or a sweep of what CUDA graphs would buy",
        EngineKind::Custom}});
  return r;
}

EngineOverheads engine_overheads(EngineKind k, bool static_batch, int64_t workers) {
  if (workers < 1) throw std::logic_error(fmt::format("serving engine: {} workers", workers));
  switch (k) {
    case EngineKind::Auto:
      return engine_overheads(static_batch ? EngineKind::TensorRtLlmSession : EngineKind::None, static_batch, workers);
    case EngineKind::None:
      return {};
    case EngineKind::TensorRtLlmSession:
      return {us(4), us(20), Time{}, Time{}};
    case EngineKind::SarathiServe:
      // Vidur's profile (Llama-2-7B, A100 host) at 1, 2 and 4 GPUs; counts between or beyond take the one below.
      if (workers >= 4) return {Time{}, us(3700), us(220), Time{}};
      if (workers >= 2) return {Time{}, us(3520), us(181), Time{}};
      return {Time{}, us(1330), us(105), Time{}};
    case EngineKind::Custom:
      throw std::logic_error("serving engine custom: its costs are parameters (engine_overheads(EngineParams))");
  }
  throw std::logic_error("unhandled serving engine");
}

namespace {
// A cost parameter set for an engine kind other than custom, which would be ignored (key null: none).
struct MisplacedEngineCost {
  const char* key = nullptr;
  Time value{};
};
MisplacedEngineCost misplaced_engine_cost(const EngineParams& e) {
  if (*e.kind == EngineKind::Custom) return {};
  for (const MisplacedEngineCost c : {MisplacedEngineCost{"launch", e.launch}, MisplacedEngineCost{"iteration", e.iteration},
                                      MisplacedEngineCost{"per_sequence", e.per_sequence}, MisplacedEngineCost{"request", e.request}})
    if (c.value.raw() != 0) return c;
  return {};
}

// Why that cost is refused; `origin`: where it was set ("FILE:LINE: " or "").
ConfigError misplaced_engine_cost_error(const EngineParams& e, const MisplacedEngineCost& c, const std::string& origin) {
  return ConfigError(
      fmt::format("{}serving.engine.{} = {:g} us is read only by serving.engine.kind = custom (the kind is "
                  "'{}', whose costs are its own: bitline describe --impls); set the kind to custom, "
                  "or leave {} at 0",
                  origin, c.key, to_us(c.value), e.kind.name(), c.key));
}
}  // namespace

void check_engine_costs(const EngineParams& e, const ConfigTree& tree) {
  if (const MisplacedEngineCost c = misplaced_engine_cost(e); c.key) {
    const ConfigNode* at = tree.at(std::string("serving.engine.") + c.key);
    throw misplaced_engine_cost_error(e, c, at ? at->origin + ": " : "");
  }
}

EngineOverheads engine_overheads(const EngineParams& e, bool static_batch, int64_t workers) {
  if (*e.kind == EngineKind::Custom) return {e.launch, e.iteration, e.per_sequence, e.request};
  // A cost given for another kind would be silently ignored: refused instead.
  if (const MisplacedEngineCost c = misplaced_engine_cost(e); c.key) throw misplaced_engine_cost_error(e, c, "");
  return engine_overheads(*e.kind, static_batch, workers);
}

namespace {
// One engine instance over the whole deployment (a MoE model's experts couple every GPU in a step), or one per
// tensor-parallel group (a replica with its own host).
bool one_engine_for_all_gpus(const Deployment& d) { return d.ep > 1; }
}  // namespace

int64_t engine_workers(const Deployment& d) { return one_engine_for_all_gpus(d) ? d.gpus : d.tp; }

int64_t engine_sequences(const Deployment& d, int64_t per_rank, int64_t total) { return one_engine_for_all_gpus(d) ? total : per_rank; }

Time EngineOverheads::added(Time gpu, int64_t kernels, int64_t sequences, int64_t passes) const {
  const Time host = launch * double(std::max<int64_t>(kernels, 0));
  return (host > gpu ? host - gpu : Time{}) +
         (iteration + per_sequence * double(std::max<int64_t>(sequences, 0))) * double(std::max<int64_t>(passes, 0));
}

}  // namespace bitline::llm
