// The request-level serving simulation: requests arrive (open loop, trace) or are sent by N users (closed loop),
// wait, are scheduled iteration by iteration (serve/scheduler.hpp) and timed by the iteration model
// (serve/iteration.hpp), on the one event engine (core/event_queue.hpp). Tokens are emitted at the end of the pass
// that produces them: a request's first token at the end of its (last) prefill chunk, each later one at the end of a
// decode pass. See docs/serving.md.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/stats.hpp"
#include "llm/deployment.hpp"
#include "llm/serving.hpp"
#include "serve/engine_profile.hpp"
#include "serve/kv_memory.hpp"
#include "serve/params.hpp"
#include "serve/workload.hpp"

namespace bitline::serve {

/// One request's result.
struct RequestRecord {
  int64_t id = 0, input = 0, output = 0, preemptions = 0;
  Time arrival{}, scheduled{}, first_token{}, finish{};
  Time itl_max{};
  double energy_j = 0;             // its share of the passes it took part in (by tokens computed), all GPUs
  int64_t cached_tokens = 0;       // prompt tokens served from the prefix cache
  int64_t host_cached_tokens = 0;  // of them, from its host tier
  int64_t reusable_tokens = 0;     // prompt tokens an earlier request computed (reusable_prefix_tokens; prefix caching on)
  double ttft_s() const { return to_s(first_token - arrival); }
  double e2e_s() const { return to_s(finish - arrival); }
  double queueing_s() const { return to_s(scheduled - arrival); }
  /// (E2E - TTFT) / (output - 1); 0 for a single output token.
  double tpot_s() const { return output > 1 ? to_s(finish - first_token) / double(output - 1) : 0.0; }
};

/// What an engine instance does: all of a request (colocated), or its prefill or its decode (disaggregated).
enum class InstanceRole : uint8_t { Colocated, Prefill, Decode };
const char* to_string(InstanceRole r);  // "colocated", "prefill", "decode"

/// One engine instance's share of a run (summary.instances).
struct InstanceRecord {
  InstanceRole role = InstanceRole::Colocated;
  std::string deployment;  // Deployment::describe()
  int64_t gpus = 0, kv_blocks = 0, iterations = 0, preemptions = 0;
  Time busy{};  // the time it ran passes
  double energy_j = 0;
  Json json() const;
};

/// One iteration (forward pass), for a Chrome trace (Workload::record_passes).
struct PassRecord {
  Time start{}, duration{};
  int32_t prefills = 0, decodes = 0;
  int64_t prompt_tokens = 0;
  int32_t instance = 0;  // the engine instance that ran it (0: the colocated engine; prefill ones, then decode ones)
};

/// Where requests are served: one colocated engine (prefill and decode on the same GPUs), or prefill/decode
/// disaggregation (DistServe, Splitwise, Mooncake): `prefill.count` instances that only prefill, each a deployment of
/// `prefill.server`, and `decode.count` that decode, each of `decode.server`; a request's KV moves from one to the
/// other over RDMA (docs/serving.md, "Disaggregation").
struct Cluster {
  struct Group {
    const llm::Server* server = nullptr;
    int64_t count = 0;
  };
  const llm::Server* colocated = nullptr;
  Group prefill, decode;
  EngineSetup engine = ideal_engine();  // the serving engine every instance runs (--engine)
  bool disaggregated() const { return colocated == nullptr; }
};

/// Most iterations a run records for a Chrome trace: 2^22 (~40 B each in memory, ~230 B each of trace text: a 1 GB
/// file, about what Perfetto opens). A run that takes more is refused when it reaches them (ConfigError).
inline constexpr int64_t kMaxRecordedPasses = int64_t(1) << 22;

struct Workload {
  std::vector<Request> requests;  // in arrival order (closed loop: in the order the users send them)
  int64_t concurrency = 0;        // > 0: closed loop with this many users (arrivals set by the simulation)
  // > 0 with arrival times (an open loop, a trace): at most this many requests in flight; one due while all are is sent
  // when one finishes, and its latencies count from then (vLLM's benchmark_serving --max-concurrency: a semaphore
  // taken before the request is sent, its timer started after).
  int64_t max_concurrency = 0;
  bool record_passes = false;  // keep every iteration (SimResult::passes), for a Chrome trace, at most kMaxRecordedPasses
  // What a caller that reports neither may go without (accel sessions): every inter-token gap (SimResult::itl, and
  // RequestRecord::itl_max) and each request's share of the passes' energy (RequestRecord::energy_j); both left 0.
  bool record_itl = true;
  bool record_request_energy = true;
};

struct SimResult {
  std::vector<RequestRecord> requests;
  KvMemory memory;
  int64_t iterations = 0, preemptions = 0;
  // Token accounting: prompt tokens prefilled (recomputed ones included), decode tokens, tokens emitted.
  int64_t prefill_tokens = 0, recomputed_tokens = 0, decode_tokens = 0, emitted_tokens = 0;
  int64_t padded_decode_tokens = 0;               // static batching and multi-step: decode slots of requests already finished
  Time host_serial{};                             // engine host time added to the passes (serial, or beyond the GPU's)
  Time start{}, end{};                            // first arrival, last finish
  double requests_time_integral_s = 0;            // integral over time of the requests in the system (arrived, not finished)
  int64_t decode_shapes = 0, prefill_shapes = 0;  // shapes timed by the iteration model
  int64_t folded_passes = 0;                      // of the iterations, those timed in a fold (without the scheduler)
  Time busy{};                                    // time the engine ran passes
  Power board_power{};                            // of one GPU package (llm::Server::board_power; the decode side's)
  int64_t gpus = 0;                               // all instances
  std::vector<InstanceRecord> instances;          // per engine instance
  // KV written to its home (HBF on HBF kinds, HBM otherwise) per GPU, summed over instances: every token computed
  // (prompt chunks and decodes) x its KV bytes per GPU; and the HBF lifetime share of that rate (0 without HBF).
  double kv_write_bytes_per_gpu = 0;
  bool kv_in_hbf = false;
  double kv_lifetime_writes_fraction = 0;
  int64_t swaps_out = 0, swaps_in = 0;  // swap preemption: requests swapped out to host memory, and back in
  double swapped_bytes_per_gpu = 0;     // KV copied over the host link, both ways, per GPU
  int64_t kv_transfers = 0;             // disaggregated: prefill -> decode hand-offs
  double kv_transfer_bytes = 0;
  Time kv_transfer_time{};  // summed over the hand-offs
  double energy_j = 0;      // GPUs x board power x busy time: the energy of the passes (idle time not counted)
  bool prefix_caching = false;
  int64_t cached_tokens = 0, prefix_evictions = 0;  // prompt tokens served from the prefix cache; units evicted
  int64_t host_cached_tokens = 0;                   // of the cached tokens, from its host tier
  // What a cache that never evicts would serve (reusable_prefix_tokens): prompt tokens, the requests with any, and of
  // those the requests that found some of it cached.
  int64_t reusable_tokens = 0, requests_with_reusable = 0, requests_reusing = 0;
  /// Every inter-token gap of every request, as (gap in ps, how many) runs in the order they occurred (the decodes
  /// of one pass mostly share their gap, so the runs stay short).
  std::vector<std::pair<int64_t, int64_t>> itl;
  std::vector<PassRecord> passes;  // with Workload::record_passes
  double makespan_s() const { return to_s(end - start); }
};

/// Simulates `w` on `c` under its engine (its KV pool, CUDA graphs and host time; `p` as the engine's profile set it).
/// ConfigError (exit 2) for a request that can never be served (its KV exceeds an instance's memory).
SimResult simulate(const Cluster& c, const ServeParams& p, Workload w);
/// Simulates `w` on one colocated engine of `s` (the ideal engine).
SimResult simulate(const llm::Server& s, const ServeParams& p, Workload w);

}  // namespace bitline::serve
