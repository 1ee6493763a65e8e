// Multi-turn KV reuse on the serving simulation (`bitline accel sessions`): each offered load (a trace of multi-turn
// sessions, bitline's or synthetic, or a Mooncake trace) served on each system by the request-level simulation with
// automatic prefix caching (serve.prefix_caching: the KV of a session's earlier turns, or of a shared prefix, stays in
// the engine's KV memory while no running request needs the space, least recently used out first, the head of a prefix
// last). So the hit rate comes out of the same engine that times the requests: the KV cached competes with the KV of
// the requests running, a turn is sent when its previous one has been answered (or at its trace time, if later), and
// the latency of every turn is measured (docs/llm.md, "Multi-turn sessions"; docs/serving.md, "Prefix caching").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/json_io.hpp"
#include "llm/deployment.hpp"
#include "llm/sessions.hpp"
#include "serve/params.hpp"
#include "serve/simulator.hpp"

namespace bitline::serve {

/// Output tokens one `accel sessions` run may simulate, summed over its loads and systems: 4e9, about 40 s of one core
/// of this project's 2-core machine at the measured ~10 ns per decoded token (the paper's experiment: 2.5e9, 25 s on
/// one core, 13 s on two threads; ~50 ns before issue 55's folds with requests waiting). Checked before any simulation
/// runs (docs/commands.md, "Work budgets").
inline constexpr double kMaxSessionOutputTokens = 4e9;
inline constexpr double kSessionSecondsPerToken = 10e-9;
/// Prefix keys (one per 512 tokens of a turn's context) of all loads together: 2^24, about 1.3 GB at ~80 B each while
/// served (the paper's experiment: 4.3 M). Each load is also held to llm::kMaxTraceBlocks (requests_from_trace).
inline constexpr int64_t kMaxSessionPrefixKeys = int64_t(1) << 24;

/// One system of the experiment: a KIND x GPUS name, its kind's parameters, its `serve` section and the serving engine
/// (--engine; the ideal one by default).
struct SessionSystem {
  std::string name;
  llm::KindParams kind;
  ServeParams serve;
  EngineSetup engine = ideal_engine();
};

/// The result of one load on one system: hit_rate (prompt tokens served from the prefix cache / those an earlier
/// request computed), turn_hit_rate, prompt/reusable/reused/recomputed tokens, recomputed_fraction, evictions (units),
/// turns, retention_bytes (the KV memory the cache shares with running requests, all GPUs), gpus, deployment, and the
/// turns' latencies and throughput (`serve`: ttft_ms, tpot_ms, e2e_ms, queueing_ms, output_tokens_per_s, ...).
Json session_result(const SimResult& r, const llm::Server& s, int64_t gpus);

/// Every load on every system (jobs in parallel on `threads`; each system's deployment built once): a JSON array,
/// one element per load, {"name", "trace": llm::trace_summary, "systems": {name: session_result}}; the same bytes
/// for any thread count. `progress(done, total, what)` after each job. ConfigError (before any simulation) when the
/// output tokens of all loads times the systems exceed kMaxSessionOutputTokens.
Json run_session_loads(const llm::ModelConfig& m, const std::vector<SessionSystem>& systems, const std::vector<llm::SessionLoad>& loads,
                       int threads, const std::function<void(size_t, size_t, const std::string&)>& progress = {});

}  // namespace bitline::serve
