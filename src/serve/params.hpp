// Parameters of the request-level serving simulation (config section `serve`, `bitline describe serve`): the
// scheduler and its limits, the PagedAttention block manager, and the memoisation of iteration times.
// docs/serving.md explains them; every default names its source.
#pragma once

#include <cstdint>
#include <memory>

#include "core/params.hpp"
#include "core/registry.hpp"
#include "core/units.hpp"

namespace bitline::serve {

struct ServeParams;
class Scheduler;
/// serve.scheduler: the policies (serve/scheduler.hpp), one file each in serve/schedulers/, by name (the table in
/// serve/scheduler.cpp).
using SchedulerFactory = std::unique_ptr<Scheduler> (*)(const ServeParams&);
const Registry<SchedulerFactory>& schedulers();
/// serve.preemption (table in serve/scheduler.cpp).
enum class PreemptionMode { Recompute, Swap };
const Registry<PreemptionMode>& preemption_modes();
/// serve.kv_transfer (table in serve/simulator.cpp): the link a disaggregated request's KV crosses.
enum class KvTransferLink { Rdma, Nvlink };
const Registry<KvTransferLink>& kv_transfer_links();

struct ServeParams {
  Choice<SchedulerFactory, schedulers> scheduler;
  int64_t max_num_seqs = 0;
  int64_t max_num_batched_tokens = 0;
  int64_t block_tokens = 0;
  double watermark = 0;
  int64_t buckets_per_octave = 0;
  int64_t exact_below = 0;
  int64_t scheduler_steps = 1;
  bool prefix_caching = false;
  Choice<PreemptionMode, preemption_modes> preemption;
  Bytes swap_space{};
  Bytes prefix_host_cache{};
  Bandwidth host_link{};
  Choice<KvTransferLink, kv_transfer_links> kv_transfer;

  template <class V>
  void visit(V& v) {
    v(scheduler, {.name = "scheduler",
                  .def = "vllm",
                  .desc = "how the engine forms each iteration's batch (docs/serving.md, \"Schedulers\")",
                  .source = "vLLM V0 scheduler (vllm/core/scheduler.py), Sarathi-Serve (Agrawal et al., OSDI 2024), Orca (Yu et "
                            "al., OSDI 2022), TensorRT-LLM gptSession static batching, SGLang's scheduler "
                            "(python/sglang/srt/managers/scheduler.py); an engine profile other than ideal chooses it"});
    v(max_num_seqs, {.name = "max_num_seqs",
                     .def = "256",
                     .desc = "most requests running at once (in the batch, prefilling or decoding)",
                     .source = "assumption: vLLM's long-standing EngineArgs default max_num_seqs = 256 (vllm/engine/arg_utils.py)",
                     .min = 1,
                     .max = 1 << 16});
    v(max_num_batched_tokens,
      {.name = "max_num_batched_tokens",
       .def = "8192",
       .desc = "most tokens one iteration processes (prompt tokens plus one per decode): the vllm scheduler's limit on "
               "a prefill pass (a longer prompt runs alone in its pass) and the chunked scheduler's budget per pass "
               "(longer prompts are split); static batches prefill together whatever their size",
       .source = "assumption: a common vLLM setting (its V1 OpenAI-server default on large GPUs, vllm/engine/arg_utils.py); "
                 "Sarathi-Serve (OSDI 2024) uses token budgets of 512-2048",
       .min = 1,
       .max = 1 << 22});
    v(scheduler_steps, {.name = "scheduler_steps",
                        .def = "1",
                        .desc = "multi-step scheduling (scheduler vllm only): decode passes run in groups of this many steps, scheduled "
                                "once; waiting requests join at a group's boundary, and a request's tokens of a group are streamed "
                                "together at its end (a request that finishes inside the group rides along to its end)",
                        .source = "vLLM v0.6.0 --num-scheduler-steps (PR 7000; the v0.6.0 performance post ran 10): schedule once, run n "
                                  "forward steps; a batch with a prefill runs one step",
                        .min = 1,
                        .max = 1024});
    v(block_tokens, {.name = "block_tokens",
                     .def = "16",
                     .desc = "tokens per PagedAttention KV block (every layer's KV of those tokens)",
                     .source = "vLLM default block_size = 16 (Kwon et al., SOSP 2023, PagedAttention)",
                     .min = 1,
                     .max = 1 << 16});
    v(watermark, {.name = "watermark",
                  .def = "0.01",
                  .desc = "fraction of the KV blocks a new prefill must leave free (decodes may use them), so running "
                          "requests are not preempted as soon as one is admitted",
                  .source = "vLLM V0 BlockSpaceManager watermark = 0.01 (vllm/core/block_manager.py)",
                  .min = 0,
                  .max = 0.5});
    v(prefix_caching, {.name = "prefix_caching",
                       .def = "false",
                       .desc = "automatic prefix caching: a finished request's KV stays in its blocks, keyed by its prefix (a "
                               "trace's: a session's earlier turns, Mooncake's hash ids), for later requests that start with the "
                               "same tokens, least recently used evicted first (docs/serving.md, \"Prefix caching\"); needs a "
                               "trace with prefixes",
                       .source = "vLLM automatic prefix caching (vLLM docs, \"Automatic Prefix Caching\"; on by default in vLLM V1); "
                                 "off here so that a run offers no reuse unless asked"});
    v(preemption, {.name = "preemption",
                   .def = "recompute",
                   .desc = "what a preempted request loses: recompute (its KV freed, prefilled again when readmitted) or swap "
                           "(its KV copied to host memory over host_link, back when blocks free up; recompute when the host is full)",
                   .source = "vLLM V0 PreemptionMode (vllm/core/scheduler.py): RECOMPUTE the default for single sequences, SWAP "
                             "for beam search and on request"});
    v(swap_space, {.name = "swap_space",
                   .def = "4GiB",
                   .desc = "host memory per GPU for swapped-out KV (preemption = swap)",
                   .source = "vLLM EngineArgs swap_space = 4 GiB per GPU (vllm/engine/arg_utils.py)",
                   .min = 0,
                   .max = 1e14});
    v(prefix_host_cache, {.name = "prefix_host_cache",
                          .def = "0B",
                          .desc = "host memory per GPU for a second prefix-cache tier (prefix_caching): units evicted from the "
                                  "GPU move there, LRU, and a request whose cached head continues there copies them back over "
                                  "host_link instead of prefilling them (0: no host tier)",
                          .source = "assumption: off by default; vLLM's KV offloading to CPU memory (LMCache, vLLM V1 "
                                    "kv_offloading) and Mooncake's store keep such a tier",
                          .min = 0,
                          .max = 1e14});
    v(host_link, {.name = "host_link",
                  .def = "64GB/s",
                  .desc = "GPU <-> host memory bandwidth per GPU and direction, for swapping KV (each GPU moves its share)",
                  .source = "datasheet: PCIe Gen5 x16, 128 GB/s bidirectional on H100/H200 SXM (NVIDIA H100 and H200 "
                            "datasheets); a100.yaml sets PCIe Gen4's 32 GB/s",
                  .min = 1e6,
                  .max = 1e15});
    v(kv_transfer, {.name = "kv_transfer",
                    .def = "rdma",
                    .desc = "disaggregation: the link a prompt's KV crosses from the prefill to the decode instance: rdma "
                            "(llm.network.rdma per GPU, instances on different nodes) or nvlink (llm.network.nvlink per GPU, "
                            "the two instances in one NVLink domain of llm.network.gpus_per_node GPUs)",
                    .source = "DistServe (Zhong et al., OSDI 2024): KV over NVLink when prefill and decode share a node, "
                              "over the network otherwise; Mooncake (FAST 2025): RDMA between nodes"});
    v(buckets_per_octave, {.name = "buckets_per_octave",
                           .def = "16",
                           .desc = "memoised iteration times: batch sizes and token counts above exact_below are timed at "
                                   "geometric grid points, this many per doubling, and interpolated linearly between them "
                                   "(0: every shape timed exactly)",
                           .source = "bitline: docs/serving.md, \"Iteration time\" (the bucketed and exact runs are compared "
                                     "by a test)",
                           .min = 0,
                           .max = 1024});
    v(exact_below, {.name = "exact_below",
                    .def = "64",
                    .desc = "batch sizes and token counts up to this are timed exactly (no bucketing)",
                    .source = "bitline",
                    .min = 1,
                    .max = 1 << 20});
  }
};

}  // namespace bitline::serve
