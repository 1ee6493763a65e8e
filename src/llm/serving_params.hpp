// The config sections `serving` (capacity policy, KV layout, routing, the serving engine's host costs, prefill,
// endurance) and `sessions` (the multi-turn KV-reuse experiment).
#pragma once

#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/units.hpp"
#include "llm/param_kinds.hpp"

namespace bitline::llm {

/// serving.prefill: the prefill step model (llm/prefill.hpp). Prefill is disaggregated (spec): it runs on a
/// prefill instance of the same GPUs and deployment, and the decode evaluation counts only its KV arriving.
struct PrefillParams {
  int64_t chunk = 0;
  int64_t requests = 1;

  template <class V>
  void visit(V& v) {
    v(chunk, {.name = "chunk",
              .def = "0",
              .desc = "chunked prefill: tokens per forward pass (0 = the whole prompt in one pass); each chunk reads the "
                      "weights and the KV of the chunks before it",
              .source = "bitline: a deployment choice (vLLM / SGLang chunked prefill, typically 512-8192 tokens)",
              .min = 0,
              .max = int64_t(1) << 30});
    v(requests, {.name = "requests",
                 .def = "1",
                 .desc = "prompts prefilled together per attention rank (time to first token of the last of them)",
                 .source = "bitline: one request, the latency of an unloaded prefill instance",
                 .min = 1,
                 .max = 4096});
  }
};

/// The config section `serving`.
/// serving.engine_overhead: what the serving engine adds to the GPU's kernels (llm/serving.cpp).
struct EngineParams {
  Choice<EngineKind, engine_kinds> kind;
  Time launch{};        // kind custom: host time per kernel launch
  Time iteration{};     // kind custom: host time per iteration
  Time per_sequence{};  // kind custom: host time per iteration and sequence in it
  Time request{};       // kind custom: host time per request before it is scheduled

  template <class V>
  void visit(V& v) {
    v(kind, {.name = "kind",
             .def = "auto",
             .desc = "the serving engine whose host-side costs are added: per kernel launched without CUDA graphs, per "
                     "iteration (forward pass), per request; auto = the TensorRT-LLM session runtime for accel run "
                     "--static-batch (its gptSessionBenchmark), none elsewhere (the decode evaluation times kernels); "
                     "custom = the costs launch, iteration, per_sequence and request below",
             .source = "engine_kinds() in llm/serving.cpp lists each engine's values with their sources"});
    v(launch, {.name = "launch",
               .def = "0us",
               .desc = "kind custom only: host time per kernel launched (0: CUDA graphs, the GPU never waits on the "
                       "host); a pass of k kernels on t of GPU time takes max(t, k x launch). The other kinds have "
                       "their own values and refuse a non-zero one here",
               .source = "assumption: the user's measurement of their engine (e.g. 4-6 us per eager launch, the "
                         "tensorrt_llm_session kind's source)",
               .min = 0,
               .max = 1e-3});
    v(iteration, {.name = "iteration",
                  .def = "0us",
                  .desc = "kind custom only: host time added to every iteration (forward pass): scheduling, sampling, "
                          "the synchronisation that reads the sampled tokens. The other kinds have their own values and "
                          "refuse a non-zero one here",
                  .source = "assumption: the user's measurement of their engine",
                  .min = 0,
                  .max = 1});
    v(per_sequence, {.name = "per_sequence",
                     .def = "0us",
                     .desc = "kind custom only: host time added to an iteration for each sequence in it (preparing its "
                             "inputs, processing and detokenising its output). The other kinds have their own values "
                             "and refuse a non-zero one here",
                     .source = "assumption: the user's measurement of their engine (e.g. the sarathi_serve kind's 105 "
                               "us, Vidur's profile)",
                     .min = 0,
                     .max = 0.1});
    v(request, {.name = "request",
                .def = "0us",
                .desc = "kind custom only: host time per request before its prompt can be scheduled (tokenisation, the "
                        "runtime's set-up of the request); it delays the request's first token, not the GPU's passes. "
                        "accel run --static-batch: the batch is one call of the runtime, paid once. The other kinds "
                        "have their own values (none per request) and refuse a non-zero one here",
                .source = "assumption: the user's measurement of their engine",
                .min = 0,
                .max = 1});
  }
};

struct ServingParams {
  EngineParams engine;
  Choice<CapacityContext, capacity_contexts> capacity_context;
  double preemption_z = 0;
  Choice<ExpertPrefetch, expert_prefetches> expert_prefetch;
  Choice<KvLayout, kv_layouts> kv_layout;
  double routing_skew = 0;
  int64_t max_requests_per_rank = 0;
  Choice<StepModel, step_models> step_model;
  Bytes hbm_weight_cache{};
  Choice<KvOffload, kv_offloads> kv_offload;
  Bytes kv_block_bytes{};
  Choice<hbf::KvBlockAlign, hbf::kv_block_aligns> kv_block_alignment;
  Choice<KvArrange, kv_arranges> kv_arrange;
  double endurance_years = 5;
  int64_t seed = 1;
  PrefillParams prefill;

  template <class V>
  void visit(V& v) {
    v.section("prefill", prefill);
    v.section("engine", engine);
    v(capacity_context, {.name = "capacity_context",
                         .def = "paged",
                         .desc = "KV held per request in the capacity check: paged = the steady-state occupancy of a paged "
                                 "engine (each request holds what it has written; see preemption_z), full = every "
                                 "request reserves its whole context up front, mean = input + output / 2",
                         .source = "vLLM allocates KV blocks as tokens are written and preempts when they run out (Kwon "
                                   "et al., SOSP 2023, sec. 4.5); full: the paper's 405B example (~10 GB per request at "
                                   "15K/6K, the whole 21K tokens)"});
    v(preemption_z, {.name = "preemption_z",
                     .def = "2.326",
                     .desc = "capacity_context = paged: the batch's KV must fit at its mean plus z standard deviations "
                             "(requests at independent uniform points of their output; the sum is about normal), so "
                             "the engine runs out of blocks, and preempts, in a fraction 1 - Phi(z) of its steps",
                     .source = "assumption: 1% of steps (z = 2.326); vLLM's default preemption (recompute) makes rare "
                               "preemptions cheap",
                     .min = 0,
                     .max = 10});
    v(expert_prefetch, {.name = "expert_prefetch",
                        .def = "static",
                        .desc = "HBF: how a MoE layer's expert weights are prefetched: static = the prefetch queue "
                                "extracted from the static compute graph, which cannot know the routing, prefetches "
                                "every local expert; router = only the experts the router picked are read, their "
                                "prefetch issued once the router has run (its flash latency exposed)",
                        .source = "FlashAccel (arXiv 2607.10186), system software: SramPrefetch calls extracted from the "
                                  "compute graph into a queue in topological order; router is a bitline alternative"});
    v(kv_layout, {.name = "kv_layout",
                  .def = "flashaccel",
                  .desc = "KV placement on HBF",
                  .source = "FlashAccel, Data layout: FlashAccel KV layout vs PagedAttention"});
    v(routing_skew, {.name = "routing_skew",
                     .def = "0",
                     .desc = "MoE routing popularity: 0 = uniform top-k; s > 0 = Zipf(s) over experts (the GPU with the "
                             "hottest experts is timed)",
                     .source = "FlashAccel, Data layout: uniform by default, the routing distribution as a parameter",
                     .min = 0,
                     .max = 4});
    v(max_requests_per_rank, {.name = "max_requests_per_rank",
                              .def = "4096",
                              .desc = "upper end of the batch search, requests per attention rank",
                              .source = "bitline",
                              .min = 1,
                              .max = 1 << 20});
    v(step_model, {.name = "step_model",
                   .def = "fast",
                   .desc = "how a step's memory time is computed",
                   .source = "bitline: accel validate compares the two"});
    v(hbm_weight_cache, {.name = "hbm_weight_cache",
                         .def = "0B",
                         .desc = "HBF GPUs: HBM given to a copy of the weights (at most all of them); every weight kernel "
                                 "reads that fraction of its megapages from HBM while the rest streams from flash, so the two "
                                 "bandwidths add up for weights. Counted in HBM capacity; ignored on HBM-only GPUs",
                         .source = "assumption: off by default (spec roles: HBF holds the weights, HBM the small "
                                   "intermediate data); FlashAccel, Hardware (integration): CSI's 'bandwidth adds up (4.8 + 4.6 TB/s)'",
                         .min = 0});
    v(kv_offload, {.name = "kv_offload",
                   .def = "mean",
                   .desc = "how far selective offload (GroupArrange) of each layer's KV to HBM goes",
                   .source = "FlashAccel, Data layout: 'until no plane exceeds the average'; fill is a bitline extension"});
    v(kv_block_bytes, {.name = "kv_block_bytes",
                       .def = "256KiB",
                       .desc = "kv_layout = paged: bytes of one PagedAttention KV block (one layer's KV of "
                               "kv_block_bytes / bytes-per-token tokens), placed as kv_block_alignment says",
                       .source = "FlashAccel, Data layout: PagedAttention KV blocks of 256 KB in the paper",
                       .min = 4096,
                       .max = double(int64_t(1) << 30)});
    v(kv_block_alignment, {.name = "kv_block_alignment",
                           .def = "block",
                           .desc = "kv_layout = paged: where a KV block starts in flash: block = a pool of fixed-size "
                                   "blocks cut from megablocks (aligned by construction), page = at any 4 KiB page",
                           .source = "vLLM's block pool: preallocated fixed-size blocks (Kwon et al., 'Efficient Memory "
                                     "Management for Large Language Model Serving with PagedAttention', SOSP 2023, sec. 4); "
                                     "page keeps the earlier unaligned placement"});
    v(kv_arrange,
      {.name = "kv_arrange",
       .def = "new_kv",
       .desc = "what GroupArrange copies to HBM in each step (charged in the step, kv_arrange)",
       .source = "FlashAccel, Data layout: selective offload after the write phase, its cost amortised over the steps that reuse the "
                 "unified KV cache; whole is the bound of a cache rebuilt every step"});
    v(endurance_years, {.name = "endurance_years",
                        .def = "5",
                        .desc = "service life for the write/endurance accounting",
                        .source = "FlashAccel, Endurance discussion: 1M P/E cycles over 5 years",
                        .min = 0.01,
                        .max = 100});
    v(seed,
      {.name = "seed", .def = "1", .desc = "seed of the KV placement (request cursors, scattered blocks)", .source = "bitline", .min = 0});
  }
};

/// The config section `sessions`: multi-turn KV reuse.
struct SessionParams {
  std::string model;
  int64_t sessions = 0;
  double arrival_per_s = 0;
  int64_t turns_min = 0, turns_max = 0;
  int64_t first_input = 0, new_input = 0, output = 0;
  double user_tokens_per_s = 0;
  int64_t decoding = 0;
  Time think_time{};
  Choice<ThinkTime, think_times> think_time_distribution;
  Time think_time_p90{};
  Time think_time_max{};
  int64_t block_tokens = 0;
  int64_t seed = 1;

  template <class V>
  void visit(V& v) {
    v(model, {.name = "model",
              .def = "\"\"",
              .desc = "model whose KV the sessions keep (empty: the experiment file's model)",
              .source = "bitline"});
    v(sessions,
      {.name = "sessions", .def = "3000", .desc = "synthetic trace: number of sessions", .source = "bitline", .min = 1, .max = 1 << 24});
    v(arrival_per_s, {.name = "arrival_per_s",
                      .def = "0.5",
                      .desc = "synthetic trace: sessions started per second (Poisson); the offered load, with think_time and "
                              "turns_min/turns_max (flashaccel-sessions.yaml sweeps it)",
                      .source = "assumption: ~1,200 sessions alive at once, enough to overflow HBM but not HBF (used only "
                                "with sessions.decoding = 0)",
                      .min = 1e-6,
                      .max = 1e6});
    v(turns_min, {.name = "turns_min",
                  .def = "2",
                  .desc = "synthetic trace: fewest turns of a session (uniform)",
                  .source = "assumption: agentic sessions of 2-6 turns",
                  .min = 1,
                  .max = 10000});
    v(turns_max, {.name = "turns_max",
                  .def = "6",
                  .desc = "synthetic trace: most turns of a session (uniform)",
                  .source = "assumption: agentic sessions of 2-6 turns",
                  .min = 1,
                  .max = 10000});
    v(first_input, {.name = "first_input",
                    .def = "2750",
                    .desc = "synthetic trace: mean prompt tokens of a session's first turn",
                    .source = "assumption: with 2-6 turns, 1K new input and 6K output per turn the mean prompt is then ~15K "
                              "(FlashAccel, Evaluation setup: agentic 15K/6K)",
                    .min = 1});
    v(new_input, {.name = "new_input",
                  .def = "1000",
                  .desc = "synthetic trace: mean new tokens a later turn adds to the history (tool results, user message)",
                  .source = "assumption: see first_input",
                  .min = 0});
    v(output, {.name = "output",
               .def = "6000",
               .desc = "synthetic trace: mean output tokens per turn",
               .source = "FlashAccel, Evaluation setup: agentic setting, 6K output tokens",
               .min = 1});
    v(user_tokens_per_s, {.name = "user_tokens_per_s",
                          .def = "10",
                          .desc = "synthetic trace: decode speed seen by a user",
                          .source = "FlashAccel, Evaluation setup: 100 ms decode-step SLO = ~10 tokens/s/user",
                          .min = 1e-3});
    v(decoding, {.name = "decoding",
                 .def = "128",
                 .desc = "synthetic trace: the offered load as requests decoding at once (Little's law: sessions started per "
                         "second = decoding x user_tokens_per_s / (mean turns x mean output)); 0 = sessions.arrival_per_s "
                         "sets the load",
                 .source = "assumption: within every experiment system's decode batch at the 100 ms SLO (accel eval, "
                           "Qwen3-235B agent 15K/6K: 144 on 8 x H200, 416 on 16 x H200, 632 on 8 x CLI, 816 on 8 x CSI)",
                 .min = 0,
                 .max = 1 << 20});
    v(think_time, {.name = "think_time",
                   .def = "1.6s",
                   .desc = "synthetic trace: the gap between a turn's end and the next turn: its median (lognormal) or "
                           "mean (exponential); part of the offered load",
                   .source = "public measurement: 783 k inter-turn gaps of 127 k agentic sessions of a production "
                             "Qwen3-Coder trace, median 1.6 s, p90 44 s, mean 37 s (tool calls plus paused sessions; "
                             "gitea.gahow.org/gahow/agentic-kvc, commit 41232f49, figs/f3a_inter_turn_gap)",
                   .min = 0,
                   .max = 1e6});
    v(think_time_distribution,
      {.name = "think_time_distribution",
       .def = "lognormal",
       .desc = "synthetic trace: lognormal = heavy-tailed, through the median think_time and think_time_p90; "
               "exponential = memoryless with mean think_time",
       .source = "public measurement: the agentic trace's gaps are heavy-tailed (p90 / median = 27, mean 23 x the median; "
                 "see think_time); exponential is bitline's earlier assumption"});
    v(think_time_p90, {.name = "think_time_p90",
                       .def = "44s",
                       .desc = "synthetic trace, lognormal: the 90th percentile of the think time (sigma = ln(p90 / "
                               "median) / 1.2816)",
                       .source = "public measurement: see think_time (p90 44 s)",
                       .min = 0,
                       .max = 1e6});
    v(think_time_max, {.name = "think_time_max",
                       .def = "86400s",
                       .desc = "synthetic trace: the longest think time; a longer draw is cut to it (a session idle for a day "
                               "has long lost its KV at any load; the lognormal's tail would otherwise give gaps of months)",
                       .source = "assumption",
                       .min = 0,
                       .max = 1e7});
    v(block_tokens, {.name = "block_tokens",
                     .def = "512",
                     .desc = "Mooncake traces: prompt tokens per hash id (the prefix cache's block)",
                     .source = "Mooncake FAST'25 trace release: one hash id per 512-token block",
                     .min = 1,
                     .max = 1 << 20});
    v(seed, {.name = "seed", .def = "1", .desc = "seed of the synthetic trace", .source = "bitline", .min = 0});
  }
};

}  // namespace bitline::llm
