// Prefill and time to first token, and the time of a step by operator class
// (`accel run --breakdown`). See docs/llm.md ("Prefill and time to first token",
// "Breakdown by operator class").
//
// Prefill (disaggregated, FlashAccel, Evaluation setup: it runs on a prefill instance of the same GPUs
// and deployment; the decode evaluation counts only its KV arriving). A prompt
// of n tokens is processed in chunks of C tokens (serving.prefill.chunk; 0: one
// pass). A chunk at offset o is the decode operator graph (step.hpp) built for
// M = R x C token rows (R prompts per attention rank), with
//   projections  the graph's GEMMs at M rows (weights read once per chunk);
//   attention    causal: query i of the chunk sees o + i keys, so the FLOPs are
//                the FLOPs per (query, key) pair (GQA: the graph's; MLA: the plain, not the
//                absorbed, form) x R (C o + C (C + 1) / 2),
//                at the utilisation of C x (query heads per KV head) rows;
//                it reads the R o earlier tokens' KV once and writes R C tokens' KV;
//   head         the LM head for the last token of each prompt only.
// Each kernel takes max(math, bytes / bandwidth) plus the per-kernel overhead
// (compute and memory overlap as in the decode model); collectives as in
// decode, at M rows. Weights stream from the memory that holds them (HBF
// GPUs: flash at stacks x min(interface, sensing); otherwise HBM), the earlier
// chunks' KV and the activations from HBM (an HBM-less GPU: flash), the new KV
// is written to HBM (an HBM-less GPU: programmed to flash).
//
// Breakdown by operator class: every picosecond of a step is attributed once,
// to the math of its kernel (projection GEMMs, attention, norms/activations)
// when the math is longer than its transfers, else to what it transfers
// (weight reads, KV reads, KV writes), to the kernel overheads, to the
// collectives, or (HBF) to exposed sensing latency. For decode the fast step
// model times every layer (llm.sample_layers = 0) tile by tile.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/stats.hpp"
#include "core/units.hpp"
#include "llm/gpu.hpp"
#include "llm/memory.hpp"
#include "llm/model.hpp"
#include "llm/params.hpp"
#include "llm/step.hpp"
#include "llm/timing.hpp"

namespace bitline::llm {

enum class OpClass : uint8_t { Gemm, Attention, NormAct, Comm, WeightRead, KvRead, KvWrite, Overhead, FlashLatency };
inline constexpr size_t kOpClasses = 9;
/// JSON key of a class: projection_gemms, attention, norms_activations, collectives, weight_reads, kv_reads,
/// kv_writes, kernel_overhead, exposed_flash_latency.
const char* to_string(OpClass c);

/// Time by operator class.
struct ClassTimes {
  std::array<Time, kOpClasses> t{};
  Time& operator[](OpClass c) { return t[size_t(c)]; }
  Time operator[](OpClass c) const { return t[size_t(c)]; }
  Time total() const;
  ClassTimes& operator+=(const ClassTimes& o);
  /// {"projection_gemms": ms, ...}
  Json json_ms() const;
};

/// The class of an op's math: collectives; attention (it reads the KV); norms (its tensors are norms: RMSNorm,
/// LayerNorm, q/k norms); projection GEMMs (everything else that computes: q/k/v/o, FFN, experts, router, LM head,
/// MLA's absorbed products); the embedding lookup has no math (its time is a weight read).
OpClass math_class(const Op& op, const GpuWeights& w);

/// What the kernels of one math class (projection GEMMs, attention, norms, collectives, lookups) did in a step:
/// their time (math, transfers, launch overheads), FLOPs, bytes moved, and how much of the time was bound by math
/// (the kernel model) or by memory (transfers, sensing latency).
struct KernelClassStats {
  Time time{}, compute_bound{}, memory_bound{};
  double flops = 0, bytes = 0;
  KernelClassStats& operator+=(const KernelClassStats& o);
  /// {"time_ms", "flops", "bytes", "tflop_per_s", "gb_per_s", "bound": "compute" | "memory" | "-"}
  Json json() const;
};

/// A step by operator class: the embedding, every decoder layer, the head, and their sum; and by kernel class.
struct OpBreakdown {
  ClassTimes embedding, head, total;
  std::vector<ClassTimes> layers;
  std::array<KernelClassStats, kOpClasses> kernels{};  // indexed by the kernels' math class (math_class)
  void add(int32_t layer, const ClassTimes& c);
  /// {"total_ms": {...}, "embedding_ms": {...}, "head_ms": {...}, "layers_ms": [{...}, ...], "kernels": {CLASS: {...}}}
  Json json() const;
};

/// The decode step `g` by operator class: the fast step model with every layer timed, op by op.
/// (kv_write and kv_erase of the step, programmed outside the kernels, are not included.)
OpBreakdown decode_breakdown(const StepGraph& g, const GpuWeights& w, const GpuMemory& mem, const MemoryTiming& mt);

/// Where a prefill's bytes come from and go to.
struct PrefillMemory {
  Bandwidth weights{};   // the memory holding the weights
  Bandwidth kv_read{};   // earlier chunks' KV
  Bandwidth act{};       // activations (0: on chip, not timed)
  Bandwidth kv_write{};  // the new KV
};
/// The memories of a prefill on `sys` (see the file comment).
PrefillMemory prefill_memory(const hbf::System& sys);

/// FLOPs per (query, key) pair of a prefill attention op of `m` whose step graph counts `graph_pair_flops` per pair:
/// the graph's, but for MLA, whose prefill runs attention in the plain form over decompressed keys and values,
/// 2 h (qk_nope + qk_rope) + 2 h v_head per pair, not the absorbed form of decode (the latent's decompression is not
/// counted).
double prefill_pair_flops(const ModelConfig& m, const Deployment& d, double graph_pair_flops);

/// One layer's causal attention kernel over a chunk: `prompts` prompts' chunks of `tokens` queries after `offset`
/// cached tokens each. Its math is the kernel model's (GpuCompute::prefill_attention, `pair_flops` per pair, `rows`
/// query rows per KV head); its transfers are the earlier KV read and the chunk's KV written (`kv_token_layer_bytes`
/// a token) and `act_bytes` of activations, at the rates of `pm`. The kernel takes the larger of the two. The one
/// definition of a chunk's attention, for time_prefill and the serving simulation's iterations.
struct ChunkAttention {
  double math_ps = 0, read_ps = 0, write_ps = 0, act_ps = 0;
  double transfers_ps() const { return read_ps + write_ps + act_ps; }
  bool compute_bound() const { return math_ps >= transfers_ps() && math_ps > 0; }
  double time_ps() const { return compute_bound() ? math_ps : transfers_ps(); }
};
ChunkAttention chunk_attention(const GpuCompute& gpu, int64_t q_heads, const PrefillMemory& pm, int64_t prompts, int64_t offset,
                               int64_t tokens, double pair_flops, double rows, double kv_token_layer_bytes, double act_bytes);

struct PrefillReport {
  int64_t prompt_tokens = 0, requests_per_rank = 0, chunk_tokens = 0, chunks = 0;
  int64_t kernels = 0;  // kernels launched (collectives included), all chunks and the head
  Time time{};          // all chunks: the time to first token on an idle prefill instance (GPU time)
  double flops = 0;
  double weight_bytes = 0, kv_read_bytes = 0, kv_write_bytes = 0;  // per GPU, all chunks
  OpBreakdown breakdown;
  Json json() const;  // without the per-layer breakdown (OpBreakdown::json)
};

/// Prefill of `p.requests` prompts of `prompt` tokens per attention rank, in chunks of `p.chunk` tokens, on GPU 0.
/// `prompts_total`: the prompts of the pass over all attention ranks (0: p.requests on every rank; see build_step).
PrefillReport time_prefill(const ModelConfig& m, const Deployment& d, const GpuWeights& w, const GpuCompute& gpu, const Network& net,
                           const PrefillMemory& mem, int64_t prompt, const PrefillParams& p, double routing_skew,
                           int64_t prompts_total = 0);

/// Request-level latency of one request with `input` prompt and `output` generated tokens.
struct RequestLatency {
  Time ttft{};         // prefill of the prompt (first token)
  Time kv_transfer{};  // the prompt's KV from the prefill to the decode GPUs (RDMA), before the second token
  Time tpot{};         // time per output token: the decode step
  Time end_to_end{};   // ttft + kv_transfer + (output - 1) x tpot
  Json json() const;
};
RequestLatency request_latency(Time ttft, Time kv_transfer, Time step, int64_t output);

}  // namespace bitline::llm
