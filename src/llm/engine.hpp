// The serving engine's host costs (serving.engine; llm/engine.cpp): what the runtime around the kernels adds to a
// pass (launches, iteration, sequences) and to a request, per engine kind, with sources in engine_kinds().
#pragma once

#include <cstdint>

#include "core/config.hpp"
#include "core/units.hpp"
#include "llm/params.hpp"
#include "llm/step.hpp"

namespace bitline::llm {

/// What the serving engine adds to the GPU's kernels (serving.engine; values and sources in engine_kinds()).
struct EngineOverheads {
  Time launch{};        // host time per kernel launched without CUDA graphs (0: CUDA graphs); the GPU waits when it is ahead
  Time iteration{};     // per forward pass: scheduling, the host synchronisation that reads the sampled tokens
  Time per_sequence{};  // per forward pass and sequence in it: the host's per-sequence work (inputs, outputs)
  Time request{};       // per request: tokenisation and detokenisation
  /// The host-side time `passes` passes (forward passes, e.g. a prefill's chunks) of `kernels` kernel launches in all
  /// over `sequences` sequences add to `gpu` time on the GPU: the launches it waits for (kernels x launch beyond the
  /// GPU time), then each pass's iteration overhead and its sequences'. The request's own cost is not in it.
  Time added(Time gpu, int64_t kernels, int64_t sequences, int64_t passes = 1) const;
};
/// The engine `k` stands for (EngineKind::Auto: `static_batch` ? the TensorRT-LLM session runtime : none); not Custom.
/// `workers`: the GPUs one instance of the engine drives (engine_workers); a kind whose host costs grow with them
/// (sarathi_serve: Ray's workers) takes its profile at that count.
EngineOverheads engine_overheads(EngineKind k, bool static_batch, int64_t workers);
/// The engine the config section serving.engine gives: its kind's costs, or for kind custom its parameters. A cost
/// parameter set for another kind is refused (ConfigError) rather than ignored.
EngineOverheads engine_overheads(const EngineParams& e, bool static_batch, int64_t workers);
/// Refuses (ConfigError naming where it was set in `tree`) a cost parameter set for an engine kind other than custom,
/// which would be ignored.
void check_engine_costs(const EngineParams& e, const ConfigTree& tree);
/// The GPUs one engine instance of deployment `d` drives: its tensor-parallel group, or every GPU when the experts of
/// a MoE model span them (one step couples them all).
int64_t engine_workers(const Deployment& d);
/// The sequences of a pass that one engine instance of `d` handles, of `per_rank` on each attention rank and `total`
/// over all: a replica's when each tensor-parallel group is its own engine (their hosts work in parallel), all of them
/// when the experts of a MoE model couple every GPU in one engine.
int64_t engine_sequences(const Deployment& d, int64_t per_rank, int64_t total);

}  // namespace bitline::llm
