#include "serve/engine_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/error.hpp"
#include "core/input.hpp"
#include "core/json_io.hpp"
#include "core/text.hpp"

#include <nlohmann/json.hpp>

namespace bitline::serve {

const Registry<EngineFamily>& engine_families() {
  static const Registry<EngineFamily> r(
      "engine family",
      {{"ideal", "kernels only: the serve section's scheduler and limits, all free memory for KV, no host time (the hardware alone)",
        EngineFamily::Ideal},
       {"vllm", "vLLM V1 (vllm serve): chunked prefill always on, CUDA graphs up to a batch size, optional async scheduling",
        EngineFamily::Vllm},
       {"vllm_v0", "vLLM V0 (v0.6): prefill-first scheduling, optional chunked prefill, multi-step scheduling", EngineFamily::VllmV0},
       {"sglang", "SGLang: prefill-first with chunked prefill, radix prefix cache, the overlap scheduler", EngineFamily::Sglang},
       {"tensorrt_llm", "TensorRT-LLM (trtllm-serve, NVIDIA NIM): in-flight batching, KV reserved per request, optional chunked context",
        EngineFamily::TensorRtLlm}});
  return r;
}

std::string_view family_name(EngineFamily f) {
  const auto& r = engine_families();
  for (size_t i = 0; i < r.size(); ++i)
    if (r.value(i) == f) return r.names()[i];
  return "?";
}

const char* to_string(KvPoolRule r) {
  switch (r) {
    case KvPoolRule::AllFree:
      return "all_free";
    case KvPoolRule::Utilization:
      return "gpu_memory_utilization";
    case KvPoolRule::StaticFraction:
      return "mem_fraction_static";
    case KvPoolRule::FreeFraction:
      return "free_gpu_memory_fraction";
  }
  return "?";
}

int64_t EngineSetup::graph_batch(int64_t n, bool has_prompt) const {
  if (graph_tokens <= 0 || n > graph_tokens || (has_prompt && graph_decode_only)) return 0;
  // The captured sizes: 1, 2, 4, then every multiple of 8 (vLLM's and SGLang's capture lists up to 256; vLLM V1
  // steps by 16 above 256, which the multiple of 8 approximates within 8 rows).
  if (n <= 1) return 1;
  if (n <= 2) return 2;
  if (n <= 4) return 4;
  return std::min<int64_t>((n + 7) / 8 * 8, std::max<int64_t>(graph_tokens, n));
}

Json EngineSetup::json() const {
  return {{"profile", profile},
          {"family", family_name(family)},
          {"version", version},
          {"kv_pool", to_string(kv_pool)},
          {"kv_fraction", kv_fraction},
          {"cuda_graph_max_tokens", graph_tokens},
          {"cuda_graph_decode_only", graph_decode_only},
          {"host",
           {{"schedule_us", to_us(host.schedule)},
            {"schedule_per_sequence_us", to_us(host.schedule_per_sequence)},
            {"output_us", to_us(host.output)},
            {"output_per_sequence_us", to_us(host.output_per_sequence)},
            {"request_us", to_us(host.request)},
            {"request_per_input_token_us", to_us(host.request_per_input_token)},
            {"launch_us", to_us(host.launch)},
            {"overlap_schedule", host.overlap_schedule},
            {"overlap_output", host.overlap_output}}}};
}

EngineSetup ideal_engine() {
  EngineSetup e;
  e.profile = "ideal";
  e.version = "-";
  return e;
}

namespace {

// The section a profile file holds, the keys of it that describe the profile rather than set an option, and the
// section of the host costs.
constexpr std::string_view kEngineSection = "engine", kHostSection = "host";
constexpr std::string_view kProfileKeys[] = {"family", "version", "description"};
bool is_profile_key(std::string_view k) { return std::find(std::begin(kProfileKeys), std::end(kProfileKeys), k) != std::end(kProfileKeys); }

// ---- the options of each family, under the engine's own names ----------------------------------------------------

/// engine.host: what the engine's host spends (every family but ideal gives all of them; the profile file cites each).
struct HostParams {
  Time schedule{}, schedule_per_sequence{}, output{}, output_per_sequence{}, request{}, request_per_input_token{}, launch{};
  template <class V>
  void visit(V& v) {
    constexpr const char* src = "the profile file (configs/engines/NAME.yaml) cites the measurement behind its value";
    v(schedule, {.name = "schedule",
                 .def = "0us",
                 .desc = "host time per scheduling: the scheduler and the preparation of the step's inputs (a multi-step "
                         "group pays it once); before the pass unless the engine overlaps scheduling",
                 .source = src,
                 .min = 0,
                 .max = 1});
    v(schedule_per_sequence, {.name = "schedule_per_sequence",
                              .def = "0us",
                              .desc = "host time per scheduling and sequence in the step (its block table, inputs)",
                              .source = src,
                              .min = 0,
                              .max = 0.1});
    v(output, {.name = "output",
               .def = "0us",
               .desc = "host time per scheduling after the pass: the sampled tokens' read-back, output processing, "
                       "detokenisation and streaming; beside the next pass when the engine processes outputs asynchronously",
               .source = src,
               .min = 0,
               .max = 1});
    v(output_per_sequence, {.name = "output_per_sequence",
                            .def = "0us",
                            .desc = "host time per scheduling and sequence for its outputs (detokenising and streaming them)",
                            .source = src,
                            .min = 0,
                            .max = 0.1});
    v(request, {.name = "request",
                .def = "0us",
                .desc = "host time per request before it can be scheduled: the API server's handling and tokenisation "
                        "(delays its first token, not the passes)",
                .source = src,
                .min = 0,
                .max = 10});
    v(request_per_input_token, {.name = "request_per_input_token",
                                .def = "0us",
                                .desc = "and per prompt token (tokenisation)",
                                .source = src,
                                .min = 0,
                                .max = 0.01});
    v(launch, {.name = "launch",
               .def = "0us",
               .desc = "host time per kernel launched outside a CUDA graph: an eager pass takes at least kernels x launch",
               .source = src,
               .min = 0,
               .max = 1e-3});
  }
  HostCosts costs() const {
    return {schedule, schedule_per_sequence, output, output_per_sequence, request, request_per_input_token, launch};
  }
};

/// vLLM V1 (`vllm serve`, vllm/engine/arg_utils.py and vllm/config).
struct VllmOptions {
  int64_t max_num_seqs = 0, max_num_batched_tokens = 0, block_size = 0, max_cudagraph_capture_size = 0;
  double gpu_memory_utilization = 0;
  bool enable_prefix_caching = false, async_scheduling = false, enforce_eager = false;
  template <class V>
  void visit(V& v) {
    v(max_num_seqs, {.name = "max_num_seqs",
                     .def = "0",
                     .desc = "most sequences in a step; 0 = vLLM's rule: 1024 on a GPU of 70 GiB or more that is not an "
                             "A100, 256 otherwise",
                     .source = "vLLM v0.11.0 EngineArgs._set_default_args (vllm/engine/arg_utils.py), OPENAI_API_SERVER",
                     .min = 0,
                     .max = 1 << 16});
    v(max_num_batched_tokens, {.name = "max_num_batched_tokens",
                               .def = "0",
                               .desc = "the step's token budget (decodes first, then prompt chunks); 0 = vLLM's rule: "
                                       "8192 on a GPU of 70 GiB or more that is not an A100, 2048 otherwise",
                               .source = "vLLM v0.11.0 EngineArgs._set_default_args (vllm/engine/arg_utils.py), OPENAI_API_SERVER",
                               .min = 0,
                               .max = 1 << 22});
    v(gpu_memory_utilization, {.name = "gpu_memory_utilization",
                               .def = "0.9",
                               .desc = "share of the GPU's memory the engine uses: weights, activation peak, non-torch "
                                       "memory and the KV cache",
                               .source = "vLLM v0.11.0 CacheConfig.gpu_memory_utilization = 0.9",
                               .min = 0.05,
                               .max = 1});
    v(block_size, {.name = "block_size",
                   .def = "16",
                   .desc = "tokens per KV block",
                   .source = "vLLM v0.11.0 CacheConfig.block_size default 16 on CUDA",
                   .min = 1,
                   .max = 1 << 16});
    v(enable_prefix_caching, {.name = "enable_prefix_caching",
                              .def = "true",
                              .desc = "automatic prefix caching (reuses the KV of a trace's shared prefixes)",
                              .source = "vLLM V1: prefix caching on by default (docs, \"Automatic Prefix Caching\")"});
    v(async_scheduling, {.name = "async_scheduling",
                         .def = "false",
                         .desc = "schedule the next step while the GPU computes this one",
                         .source = "vLLM v0.11.0 SchedulerConfig.async_scheduling = False (opt-in, --async-scheduling)"});
    v(max_cudagraph_capture_size, {.name = "max_cudagraph_capture_size",
                                   .def = "512",
                                   .desc = "steps of at most this many tokens replay a captured CUDA graph (padded to "
                                           "the next captured size); larger ones run eagerly",
                                   .source = "vLLM v0.11.0 CompilationConfig: capture sizes 1, 2, 4, 8, ... up to 512",
                                   .min = 0,
                                   .max = 1 << 16});
    v(enforce_eager, {.name = "enforce_eager",
                      .def = "false",
                      .desc = "no CUDA graphs: every step launched kernel by kernel",
                      .source = "vLLM v0.11.0 ModelConfig.enforce_eager = False"});
  }
};

/// vLLM V0 (v0.6.0: vllm/engine/arg_utils.py, vllm/core/scheduler.py).
struct VllmV0Options {
  int64_t max_num_seqs = 0, max_num_batched_tokens = 0, block_size = 0, num_scheduler_steps = 0;
  double gpu_memory_utilization = 0;
  bool enable_prefix_caching = false, enable_chunked_prefill = false, disable_async_output_proc = false, enforce_eager = false;
  template <class V>
  void visit(V& v) {
    v(max_num_seqs, {.name = "max_num_seqs",
                     .def = "256",
                     .desc = "most sequences in a step",
                     .source = "vLLM v0.6.0 EngineArgs.max_num_seqs = 256",
                     .min = 1,
                     .max = 1 << 16});
    v(max_num_batched_tokens, {.name = "max_num_batched_tokens",
                               .def = "8192",
                               .desc = "a step's token budget (a prefill step's prompts; with chunked prefill, decodes and "
                                       "chunks). vLLM's own default is max(max_model_len, 2048), 512 with chunked prefill: "
                                       "8192 for an 8K-context model",
                               .source = "vLLM v0.6.0 SchedulerConfig (vllm/config.py)",
                               .min = 1,
                               .max = 1 << 24});
    v(gpu_memory_utilization, {.name = "gpu_memory_utilization",
                               .def = "0.9",
                               .desc = "share of the GPU's memory the engine uses (weights, activations, KV cache)",
                               .source = "vLLM v0.6.0 EngineArgs.gpu_memory_utilization = 0.9",
                               .min = 0.05,
                               .max = 1});
    v(block_size, {.name = "block_size",
                   .def = "16",
                   .desc = "tokens per KV block",
                   .source = "vLLM v0.6.0 EngineArgs.block_size = 16",
                   .min = 1,
                   .max = 1 << 16});
    v(enable_prefix_caching, {.name = "enable_prefix_caching",
                              .def = "false",
                              .desc = "automatic prefix caching",
                              .source = "vLLM v0.6.0 EngineArgs.enable_prefix_caching = False"});
    v(enable_chunked_prefill, {.name = "enable_chunked_prefill",
                               .def = "false",
                               .desc = "chunked prefill (decodes first, prompt chunks in the rest of the budget) instead "
                                       "of prefill-first scheduling; not with num_scheduler_steps > 1",
                               .source = "vLLM v0.6.0: off unless the context exceeds 32K tokens (EngineArgs.create_engine_config)"});
    v(num_scheduler_steps, {.name = "num_scheduler_steps",
                            .def = "1",
                            .desc = "multi-step scheduling: decode steps per scheduling; new requests join at the group's "
                                    "boundaries and each group's tokens are streamed together",
                            .source = "vLLM v0.6.0 EngineArgs.num_scheduler_steps = 1 (the v0.6.0 performance post ran 10)",
                            .min = 1,
                            .max = 1024});
    v(disable_async_output_proc, {.name = "disable_async_output_proc",
                                  .def = "false",
                                  .desc = "process a step's outputs after it instead of beside the next step",
                                  .source = "vLLM v0.6.0 EngineArgs.disable_async_output_proc = False"});
    v(enforce_eager, {.name = "enforce_eager",
                      .def = "false",
                      .desc = "no CUDA graphs (V0 captures decode batches of up to 256 sequences)",
                      .source = "vLLM v0.6.0 EngineArgs.enforce_eager = False; _BATCH_SIZES_TO_CAPTURE up to 256 "
                                "(vllm/worker/model_runner.py)"});
  }
};

/// SGLang's schedule_policy: the order a prefill batch tries the waiting requests in (the two it had in v0.3-v0.4
/// besides random and dfs-weight, which are not modelled).
enum class SglangSchedulePolicy { Lpm, Fcfs };
const Registry<SglangSchedulePolicy>& sglang_schedule_policies() {
  static const Registry<SglangSchedulePolicy> r(
      "schedule_policy",
      {{"lpm", "longest prefix match: the waiting requests with the longest prefix in the radix cache first (the scheduler sglang-lpm)",
        SglangSchedulePolicy::Lpm},
       {"fcfs", "first come first served (the scheduler sglang)", SglangSchedulePolicy::Fcfs}});
  return r;
}

/// SGLang (python/sglang/srt/server_args.py).
struct SglangOptions {
  int64_t max_running_requests = 0, chunked_prefill_size = 0, page_size = 0, cuda_graph_max_bs = 0;
  double mem_fraction_static = 0;
  bool disable_radix_cache = false, disable_overlap_schedule = false, disable_cuda_graph = false;
  Choice<SglangSchedulePolicy, sglang_schedule_policies> schedule_policy;
  template <class V>
  void visit(V& v) {
    v(max_running_requests, {.name = "max_running_requests",
                             .def = "0",
                             .desc = "most requests running at once; 0 = SGLang's rule: the KV pool's tokens / 2, at most 4096",
                             .source = "SGLang ServerArgs.max_running_requests = None (the scheduler derives it)",
                             .min = 0,
                             .max = 1 << 16});
    v(chunked_prefill_size, {.name = "chunked_prefill_size",
                             .def = "8192",
                             .desc = "a prefill batch's token budget (longer prompts run alone in this model)",
                             .source = "SGLang ServerArgs.chunked_prefill_size = 8192",
                             .min = 1,
                             .max = 1 << 22});
    v(mem_fraction_static, {.name = "mem_fraction_static",
                            .def = "0",
                            .desc = "share of the GPU's memory for the weights and the KV pool; 0 = SGLang's rule by "
                                    "tensor-parallel size: 0.88 (1), 0.87 (2), 0.85 (4), 0.83 (8), 0.79 (16)",
                            .source = "SGLang ServerArgs.__post_init__ (python/sglang/srt/server_args.py)",
                            .min = 0,
                            .max = 1});
    v(page_size, {.name = "page_size",
                  .def = "1",
                  .desc = "tokens per KV page (the radix cache shares at token granularity)",
                  .source = "SGLang ServerArgs.page_size = 1",
                  .min = 1,
                  .max = 1 << 16});
    v(schedule_policy, {.name = "schedule_policy",
                        .def = "lpm",
                        .desc = "the order waiting requests are tried in: lpm (longest prefix in the radix cache first; first "
                                "come first served when more than 128 wait or the cache is off) or fcfs",
                        .source = "SGLang v0.3-v0.4 ServerArgs.schedule_policy = \"lpm\"; schedule_policy.py calc_priority"});
    v(disable_radix_cache, {.name = "disable_radix_cache",
                            .def = "false",
                            .desc = "no radix prefix cache",
                            .source = "SGLang ServerArgs.disable_radix_cache = False"});
    v(disable_overlap_schedule, {.name = "disable_overlap_schedule",
                                 .def = "false",
                                 .desc = "schedule and process outputs between passes instead of beside them",
                                 .source = "SGLang v0.4 ServerArgs.disable_overlap_schedule = False (the overlap scheduler)"});
    v(cuda_graph_max_bs, {.name = "cuda_graph_max_bs",
                          .def = "160",
                          .desc = "decode batches of at most this many requests replay a captured CUDA graph",
                          .source = "SGLang ServerArgs.cuda_graph_max_bs = 160",
                          .min = 0,
                          .max = 1 << 16});
    v(disable_cuda_graph,
      {.name = "disable_cuda_graph", .def = "false", .desc = "no CUDA graphs", .source = "SGLang ServerArgs.disable_cuda_graph = False"});
  }
};

/// TensorRT-LLM (trtllm-serve; tensorrt_llm/llmapi/llm_args.py).
struct TensorRtLlmOptions {
  int64_t max_batch_size = 0, max_num_tokens = 0, tokens_per_block = 0;
  double free_gpu_memory_fraction = 0;
  bool enable_chunked_context = false, enable_block_reuse = false, use_cuda_graph = false, disable_overlap_scheduler = false;
  template <class V>
  void visit(V& v) {
    v(max_batch_size, {.name = "max_batch_size",
                       .def = "256",
                       .desc = "most requests in flight",
                       .source = "TensorRT-LLM docs, trtllm-serve: --max_batch_size 256 by default",
                       .min = 1,
                       .max = 1 << 16});
    v(max_num_tokens, {.name = "max_num_tokens",
                       .def = "8192",
                       .desc = "most tokens one iteration processes",
                       .source = "TensorRT-LLM docs, trtllm-serve: --max_num_tokens 8192 by default",
                       .min = 1,
                       .max = 1 << 22});
    v(free_gpu_memory_fraction, {.name = "free_gpu_memory_fraction",
                                 .def = "0.9",
                                 .desc = "share of the memory left after the weights and the runtime for the KV cache",
                                 .source = "assumption: TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction, commonly "
                                           "documented as 0.9 (not found at a tag)",
                                 .min = 0.01,
                                 .max = 1});
    v(tokens_per_block, {.name = "tokens_per_block",
                         .def = "64",
                         .desc = "tokens per KV block",
                         .source = "TensorRT-LLM docs, features/long-sequence.md: tokens_per_block defaults to 64",
                         .min = 1,
                         .max = 1 << 16});
    v(enable_chunked_context, {.name = "enable_chunked_context",
                               .def = "false",
                               .desc = "chunked context: prompts cut to the token budget and batched with decodes; off: a "
                                       "request's KV for its whole context is reserved at admission (GUARANTEED_NO_EVICT)",
                               .source = "TensorRT-LLM enable_chunked_prefill = False; CapacitySchedulerPolicy "
                                         "GUARANTEED_NO_EVICT by default"});
    v(enable_block_reuse, {.name = "enable_block_reuse",
                           .def = "true",
                           .desc = "KV block reuse across requests (prefix caching)",
                           .source = "TensorRT-LLM KvCacheConfig.enable_block_reuse = True"});
    v(disable_overlap_scheduler, {.name = "disable_overlap_scheduler",
                                  .def = "false",
                                  .desc = "schedule and process outputs between iterations instead of beside them",
                                  .source = "TensorRT-LLM PyTorch backend: the overlap scheduler on by default since PR 4174 "
                                            "(docs, \"Overlap Scheduler\")"});
    v(use_cuda_graph, {.name = "use_cuda_graph",
                       .def = "true",
                       .desc = "decode batches replay a captured CUDA graph (up to max_batch_size)",
                       .source = "TensorRT-LLM: CUDA graphs on in the PyTorch backend's trtllm-serve configuration"});
  }
};

// ---- loading ------------------------------------------------------------------------------------------------------

/// Every key a family's options struct declares (for the check that a profile gives all of them).
class KeyLister {
 public:
  template <class T>
  void operator()(T&, const ParamInfo& info) {
    keys.emplace_back(info.name);
  }
  template <class P>
  void section(std::string_view, P&) {}
  void also_known(std::string_view) {}
  std::vector<std::string> keys;
};

template <class P>
std::vector<std::string> keys_of() {
  P p{};
  KeyLister l;
  p.visit(l);
  return l.keys;
}

/// A family's options and the host section, loaded together from the section `engine` (family and version and
/// description are read by the caller).
template <class Options>
struct Profile {
  Options options;
  HostParams host;
  template <class V>
  void visit(V& v) {
    for (std::string_view k : kProfileKeys) v.also_known(k);
    options.visit(v);
    v.section(kHostSection, host);
  }
};

std::string file_of(const ConfigTree& tree) {
  const ConfigNode* n = tree.at("engine.family");
  if (!n) return "the config";
  const std::string& o = n->origin;
  const size_t colon = o.rfind(':');
  return colon == std::string::npos ? o : o.substr(0, colon);
}

/// The options of the families other than `f` that `f` does not have (for "an option of another engine").
std::string owner_of(std::string_view key, EngineFamily f) {
  const auto has = [&](const std::vector<std::string>& ks) { return std::find(ks.begin(), ks.end(), key) != ks.end(); };
  std::vector<std::string> owners;
  const auto check = [&](EngineFamily g, const std::vector<std::string>& ks) {
    if (g != f && has(ks)) owners.emplace_back(family_name(g));
  };
  check(EngineFamily::Vllm, keys_of<VllmOptions>());
  check(EngineFamily::VllmV0, keys_of<VllmV0Options>());
  check(EngineFamily::Sglang, keys_of<SglangOptions>());
  check(EngineFamily::TensorRtLlm, keys_of<TensorRtLlmOptions>());
  std::string out;
  for (const auto& o : owners) out += (out.empty() ? "" : ", ") + o;
  return out;
}

/// Refuses keys of the section `engine` that family `f` does not read, naming the family that does, and keys of the
/// family (and host costs) that the profile leaves out.
void check_keys(const ConfigTree& tree, EngineFamily f, const std::vector<std::string>& keys) {
  const ConfigNode* sec = tree.at("engine");
  const std::string fam(family_name(f));
  for (const auto& [k, v] : sec->keys) {
    if (is_profile_key(k) || (k == kHostSection && f != EngineFamily::Ideal)) continue;
    if (std::find(keys.begin(), keys.end(), k) != keys.end()) continue;
    const std::string owner = owner_of(k, f);
    std::string known;
    for (const auto& x : keys) known += (known.empty() ? "" : ", ") + x;
    if (f != EngineFamily::Ideal) known += (known.empty() ? "" : ", ") + std::string("host");
    throw ConfigError(fmt::format("{}: engine.{}: {} (engine family {} takes {})", v.origin, k,
                                  owner.empty() ? "unknown option" : "an option of engine family " + owner + ", not of " + fam, fam,
                                  known.empty() ? "no options" : known));
  }
  std::vector<std::string> missing;
  for (const auto& k : keys)
    if (!sec->find(k)) missing.push_back("engine." + k);
  if (f != EngineFamily::Ideal)
    for (const auto& k : keys_of<HostParams>())
      if (!tree.at("engine.host." + k)) missing.push_back("engine.host." + k);
  if (f != EngineFamily::Ideal && !tree.at("engine.version")) missing.push_back("engine.version");
  if (!missing.empty())
    throw ConfigError(fmt::format(
        "engine profile {} (family {}): {} missing: {} (a profile gives every option of its family "
        "and every host cost, each with its source; bitline describe --engines shows the shipped ones)",
        file_of(tree), fam, missing.size() == 1 ? "a key is" : fmt::format("{} keys are", missing.size()), fmt::join(missing, ", ")));
}

/// The serve keys an engine other than ideal sets, refused when given by hand.
constexpr std::string_view kEngineSetKeys[] = {"scheduler", "max_num_seqs",   "max_num_batched_tokens", "block_tokens",
                                               "watermark", "prefix_caching", "scheduler_steps"};

void refuse_serve_keys(const ConfigTree& tree, std::string_view fam) {
  for (std::string_view k : kEngineSetKeys)
    if (const ConfigNode* n = tree.at("serve." + std::string(k)))
      throw ConfigError(
          fmt::format("{}: serve.{} = {}: engine family {} sets it from its own options (bitline describe "
                      "--engines); set the engine's option with --set engine.OPTION=VALUE, or choose the "
                      "scheduler and limits by hand with --engine ideal",
                      n->origin, k, text_brief(n->scalar), fam));
}

bool big_gpu(const EngineContext& c) {
  // vLLM's rule: device memory of at least 70 GiB and not an A100 (vllm/engine/arg_utils.py).
  return c.hbm_bytes_per_gpu >= 70.0 * 1024 * 1024 * 1024 && c.kind.find("a100") == std::string::npos;
}

template <class Options>
Profile<Options> load_profile(const ConfigTree& tree, EngineFamily f) {
  check_keys(tree, f, keys_of<Options>());
  return load_params<Profile<Options>>(tree, "engine");
}

}  // namespace

std::vector<std::string> shipped_engines() {
  std::vector<std::string> out;
  file_stems(default_preset_dir() / "engines", ".yaml", out);
  std::sort(out.begin(), out.end());
  return out;
}

std::filesystem::path engine_file(const std::string& engine) {
  const auto ends = [&](std::string_view s) {
    return engine.size() >= s.size() && engine.compare(engine.size() - s.size(), s.size(), s) == 0;
  };
  if (engine.find('/') != std::string::npos || ends(".yaml") || ends(".yml")) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(engine, ec))
      throw ConfigError(fmt::format("--engine {}: no such file (an engine profile's YAML file, or one of: {})",
                                    engine.size() <= 4096 ? engine : text_brief(engine), fmt::join(shipped_engines(), ", ")));
    return engine;
  }
  const auto names = shipped_engines();
  if (std::find(names.begin(), names.end(), engine) != names.end()) return default_preset_dir() / "engines" / (engine + ".yaml");
  std::vector<std::string_view> cands(names.begin(), names.end());
  const std::string_view near = closest_name(engine, cands);
  throw ConfigError(fmt::format("--engine {}: unknown engine (the profiles of {}: {}{}; or a profile's YAML path)", text_brief(engine),
                                (default_preset_dir() / "engines").string(), fmt::join(names, ", "),
                                near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
}

void load_engine_profile(ConfigTree& tree, const std::string& engine) {
  const std::filesystem::path f = engine_file(engine);
  ConfigTree only;
  only.load_file(f);
  for (const auto& [k, v] : only.root().keys)
    if (k != kEngineSection) throw ConfigError(fmt::format("{}: {}: an engine profile holds only the section engine", v.origin, k));
  if (!only.at("engine.family"))
    throw ConfigError(fmt::format("engine profile {}: engine.family is missing (one of {})", f.string(), engine_families().joined(", ")));
  tree.load_file(f);
}

EngineContext engine_context(const llm::KindParams& k) {
  const hbf::HbmParams& hbm = k.system.hbm;
  return {double(hbm.capacity_per_stack.raw()) * double(hbm.stacks), k.kind};
}

EngineSetup load_engine(const ConfigTree& tree, ServeParams& sp, const EngineContext& ctx) {
  const ConfigNode* sec = tree.at("engine");
  if (!sec || sec->kind == ConfigNode::Kind::Null) return ideal_engine();
  if (!sec->is_map()) throw ConfigError(fmt::format("{}: engine: expected a section (a map of keys)", sec->origin));
  const ConfigNode* fam = sec->find("family");
  if (!fam) throw ConfigError(fmt::format("{}: engine: no engine.family (one of {})", sec->origin, engine_families().joined(", ")));
  if (fam->kind != ConfigNode::Kind::Scalar) throw ConfigError(fmt::format("{}: engine.family: expected a name", fam->origin));
  const int64_t fi = engine_families().find(fam->scalar);
  if (fi < 0) {
    const std::string_view near = closest_name(fam->scalar, engine_families().names());
    throw ConfigError(fmt::format("{}: engine.family: '{}' is not one of {}{}", fam->origin, text_brief(fam->scalar),
                                  engine_families().joined(", "), near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
  }
  EngineSetup e;
  e.family = engine_families().value(size_t(fi));
  e.profile = file_of(tree);
  if (const ConfigNode* v = sec->find("version"); v && v->kind == ConfigNode::Kind::Scalar) e.version = v->scalar;
  if (e.family == EngineFamily::Ideal) {
    check_keys(tree, e.family, {});
    e.version = e.version.empty() ? "-" : e.version;
    return e;
  }
  refuse_serve_keys(tree, fam->scalar);
  switch (e.family) {
    case EngineFamily::Ideal:
      break;
    case EngineFamily::Vllm: {
      const auto p = load_profile<VllmOptions>(tree, e.family);
      const VllmOptions& o = p.options;
      e.host = p.host.costs();
      e.host.overlap_schedule = o.async_scheduling;
      e.host.overlap_output = true;  // the API server process detokenises and streams beside the engine core
      sp.scheduler = decltype(sp.scheduler)::named("chunked", "engine");
      sp.max_num_seqs = o.max_num_seqs > 0 ? o.max_num_seqs : big_gpu(ctx) ? 1024 : 256;
      sp.max_num_batched_tokens = o.max_num_batched_tokens > 0 ? o.max_num_batched_tokens : big_gpu(ctx) ? 8192 : 2048;
      sp.block_tokens = o.block_size;
      sp.watermark = 0;  // V1's KV cache manager keeps no watermark: it preempts when a step's blocks run out
      sp.prefix_caching = o.enable_prefix_caching;
      sp.scheduler_steps = 1;
      e.kv_pool = KvPoolRule::Utilization;
      e.kv_fraction = o.gpu_memory_utilization;
      e.graph_tokens = o.enforce_eager ? 0 : o.max_cudagraph_capture_size;
      e.graph_decode_only = false;  // piecewise CUDA graphs: mixed steps too
      break;
    }
    case EngineFamily::VllmV0: {
      const auto p = load_profile<VllmV0Options>(tree, e.family);
      const VllmV0Options& o = p.options;
      if (o.enable_chunked_prefill && o.num_scheduler_steps > 1)
        throw ConfigError(
            fmt::format("{}: engine.num_scheduler_steps = {} with engine.enable_chunked_prefill = true: vLLM v0.6 runs "
                        "multi-step scheduling without chunked prefill only",
                        tree.at("engine.num_scheduler_steps")->origin, o.num_scheduler_steps));
      e.host = p.host.costs();
      e.host.overlap_output = !o.disable_async_output_proc;
      sp.scheduler = decltype(sp.scheduler)::named(o.enable_chunked_prefill ? "chunked" : "vllm", "engine");
      sp.max_num_seqs = o.max_num_seqs;
      sp.max_num_batched_tokens = o.max_num_batched_tokens;
      sp.block_tokens = o.block_size;
      sp.watermark = 0.01;  // BlockSpaceManager watermark
      sp.prefix_caching = o.enable_prefix_caching;
      sp.scheduler_steps = o.num_scheduler_steps;
      e.kv_pool = KvPoolRule::Utilization;
      e.kv_fraction = o.gpu_memory_utilization;
      e.graph_tokens = o.enforce_eager ? 0 : 256;
      e.graph_decode_only = true;
      break;
    }
    case EngineFamily::Sglang: {
      const auto p = load_profile<SglangOptions>(tree, e.family);
      const SglangOptions& o = p.options;
      e.host = p.host.costs();
      e.host.overlap_schedule = e.host.overlap_output = !o.disable_overlap_schedule;
      // lpm needs the radix cache (SGLang turns it to fcfs without one)
      const bool lpm = *o.schedule_policy == SglangSchedulePolicy::Lpm && !o.disable_radix_cache;
      sp.scheduler = decltype(sp.scheduler)::named(lpm ? "sglang-lpm" : "sglang", "engine");
      sp.max_num_seqs = o.max_running_requests > 0 ? o.max_running_requests : 0;  // 0: set from the pool (kv_memory)
      sp.max_num_batched_tokens = o.chunked_prefill_size;
      sp.block_tokens = o.page_size;
      sp.watermark = 0;
      sp.prefix_caching = !o.disable_radix_cache;
      sp.scheduler_steps = 1;
      e.kv_pool = KvPoolRule::StaticFraction;
      e.kv_fraction = o.mem_fraction_static;  // 0: by tensor-parallel size (kv_memory)
      e.graph_tokens = o.disable_cuda_graph ? 0 : o.cuda_graph_max_bs;
      e.graph_decode_only = true;
      break;
    }
    case EngineFamily::TensorRtLlm: {
      const auto p = load_profile<TensorRtLlmOptions>(tree, e.family);
      const TensorRtLlmOptions& o = p.options;
      e.host = p.host.costs();
      e.host.overlap_schedule = e.host.overlap_output = !o.disable_overlap_scheduler;
      sp.scheduler = decltype(sp.scheduler)::named(o.enable_chunked_context ? "chunked" : "orca", "engine");
      sp.max_num_seqs = o.max_batch_size;
      sp.max_num_batched_tokens = o.max_num_tokens;
      sp.block_tokens = o.tokens_per_block;
      sp.watermark = 0;
      sp.prefix_caching = o.enable_block_reuse;
      sp.scheduler_steps = 1;
      e.kv_pool = KvPoolRule::FreeFraction;
      e.kv_fraction = o.free_gpu_memory_fraction;
      e.graph_tokens = o.use_cuda_graph ? o.max_batch_size : 0;
      e.graph_decode_only = true;
      break;
    }
  }
  return e;
}

void check_engine_section(const ConfigTree& tree) {
  if (!tree.at("engine")) return;
  ServeParams sp = default_params<ServeParams>();
  (void)load_engine(tree, sp, EngineContext{80e9, "h100"});
}

std::vector<ParamRow> describe_engine_section(const std::string& path) {
  std::vector<ParamRow> rows;
  ParamRow fam;
  fam.path = path + ".family";
  fam.type = "policy";
  fam.def = "ideal";
  fam.desc = "the engine whose options the section gives (--engine NAME loads configs/engines/NAME.yaml)";
  fam.source = "docs/serving.md, \"Engines\"";
  fam.range = engine_families().joined();
  fam.kind = std::string(engine_families().kind());
  for (size_t i = 0; i < engine_families().size(); ++i)
    fam.choices.push_back({std::string(engine_families().names()[i]), std::string(engine_families().descriptions()[i])});
  rows.push_back(fam);
  const auto add = [&](std::vector<ParamRow> rs, const char* family) {
    for (auto& r : rs) {
      r.desc = fmt::format("[{}] {}", family, r.desc);
      rows.push_back(std::move(r));
    }
  };
  add(describe_params<VllmOptions>(path), "vllm");
  add(describe_params<VllmV0Options>(path), "vllm_v0");
  add(describe_params<SglangOptions>(path), "sglang");
  add(describe_params<TensorRtLlmOptions>(path), "tensorrt_llm");
  add(describe_params<HostParams>(path + ".host"), "every family but ideal");
  return rows;
}

std::vector<EngineListing> list_engines() {
  std::vector<EngineListing> out;
  for (const auto& name : shipped_engines()) {
    EngineListing l;
    l.name = name;
    l.file = (default_preset_dir() / "engines" / (name + ".yaml")).string();
    ConfigTree t;
    t.load_file(l.file);
    const ConfigNode* sec = t.at("engine");
    if (!sec || !sec->is_map()) continue;
    const auto text = [&](std::string_view key) {
      const ConfigNode* n = sec->find(key);
      return n ? n->scalar : std::string();
    };
    l.family = text("family");
    l.version = text("version");
    l.description = text("description");
    for (const auto& [k, v] : sec->keys) {
      if (is_profile_key(k)) continue;
      if (v.kind == ConfigNode::Kind::Scalar) l.options.push_back({k, v.scalar});
      if (v.is_map())
        for (const auto& [k2, v2] : v.keys) l.options.push_back({k + "." + k2, v2.scalar});
    }
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace bitline::serve
