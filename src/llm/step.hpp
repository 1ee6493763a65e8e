// One decode step of a model on one GPU of a deployment: how the model is
// spread over the GPUs (Deployment), the weights this GPU holds (GpuWeights),
// and the operator graph of the step (StepGraph): for every kernel its FLOPs,
// the weight tensors it reads, whether it reads the layer's KV cache, and the
// collectives between kernels. The memory system turns the graph into reads
// (memory.hpp) and timing.hpp times it. See docs/llm.md ("One decode step").
//
// Parallelism (spec): attention data parallel + experts expert parallel for
// MoE models (every GPU is an attention rank with its own requests and holds
// E/G routed experts per layer); tensor parallel for dense models (inside a
// node; nodes are replicas). Embedding and LM head are vocabulary parallel.
// The GPU timed is GPU 0, which holds experts 0..E/G-1 (the most popular
// ones when routing is skewed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "llm/gpu.hpp"
#include "llm/model.hpp"
#include "llm/params.hpp"

namespace bitline::llm {

struct Deployment {
  int64_t gpus = 1;
  int64_t gpus_per_node = 8;
  bool tensor_parallel = false;       // attention and dense FFN tensor parallel
  int64_t tp = 1;                     // tensor-parallel degree (1: data parallel)
  int64_t ranks = 1;                  // attention ranks (gpus / tp), each with its own requests
  int64_t ep = 1;                     // expert-parallel degree (MoE: all GPUs)
  int64_t local_experts = 0;          // routed experts per MoE layer on the timed GPU
  int64_t vocab_shards = 1;           // embedding / LM head split
  int64_t q_heads = 0, kv_heads = 0;  // attention heads on one GPU (KV heads replicated when tp > kv heads)
  std::string describe() const;
};

/// Chooses the deployment of `m` on `gpus` GPUs (llm.attention_parallel); ConfigError when impossible.
Deployment make_deployment(const ModelConfig& m, int64_t gpus, const LlmParams& p);

struct GpuTensor {
  uint32_t model_tensor = 0;  // index into ModelConfig::tensors()
  std::string name;
  Role role = Role::Embed;
  int32_t layer = -1, expert = -1;
  Bytes bytes{};
  bool bias = false;  // the bias of the tensor before it (read by the same kernel)
};

/// The weights one GPU holds, in execution order, as one weight object.
struct GpuWeights {
  std::vector<GpuTensor> tensors;
  /// Indices into `tensors` sorted by name: the checkpoint's declaration order (safetensors).
  std::vector<uint32_t> declaration;
  Bytes total{};
};
GpuWeights gpu_weights(const ModelConfig& m, const Deployment& d);

/// What a piece of step time is attributed to (the critical-path breakdown).
enum class Part : uint8_t { Weights, Kv, Compute, Comm, Overhead };

struct Op {
  std::string name;
  int32_t layer = -1;
  int64_t kernels = 0;
  double flops = 0;
  double rows = 1;   // M of the utilisation curve (kernels = curve)
  bool fp8 = false;  // low-precision math: FP8, or FP4 with `fp4`
  bool fp4 = false;
  GemmShape gemm{};                             // a GEMM's shape (k = 0: not a GEMM); its math from GpuCompute::gemm
  double attn_flops_per_token = 0;              // decode attention: FLOPs per (KV token, query head)
  Time compute{};                               // GPU time of the kernels' math (without the per-kernel overhead)
  bool weight_stream = false;                   // a GEMM whose time is its weight-streaming floor (GemmKernel::weight_stream)
  uint32_t first_tensor = 0, tensor_count = 0;  // weights read: a range of GpuWeights::tensors
  double read_fraction = 1;                     // of the range (routed experts touched by the batch)
  int8_t routed = 0;                            // routed-expert kernel: 1 the first after the router, 2 a later one
  bool kv = false;                              // reads this layer's KV cache
  int64_t embed_rows = 0;                       // rows of the embedding table read
  int64_t embed_cols = 0;                       // weights per row read (the table's width)
  Bytes act_bytes{};                            // activations read and written (HBM)
  Collective comm{};                            // a collective (no math, no reads)
  bool is_comm() const { return comm.time.raw() > 0; }
  /// The launches the op makes: its kernels, or one for a collective.
  int64_t launches() const { return is_comm() ? 1 : kernels; }
};

/// A run of ops: the embedding, one decoder layer, or the head. Layers of the same kind have the same shape.
struct Segment {
  uint32_t first_op = 0, op_count = 0;
  int32_t layer = -1;
  int kind = 0;  // 0 embedding, 1 dense layer, 2 MoE layer, 3 head
};

struct Routing {
  double experts_touched = 0;                                    // expected distinct local experts touched per MoE layer
  double tokens_local = 0;                                       // token-expert pairs computed on this GPU per MoE layer
  double remote_gpus_per_token = 0, remote_nodes_per_token = 0;  // dispatch fan-out (deduplicated)
  double remote_intra_per_token = 0;
  ExpertFanout fanout;  // the same, for the all-to-all algorithms (llm/collectives.hpp)
};

struct StepGraph {
  std::vector<Op> ops;
  std::vector<Segment> segments;
  std::vector<int64_t> contexts;  // tokens of KV per request of this GPU's attention rank
  int64_t requests_per_rank = 0, requests_total = 0;
  double tokens_per_gpu = 0;         // decode tokens per step per GPU (requests_total / gpus)
  int64_t kv_token_layer_bytes = 0;  // KV bytes per token per layer held by this GPU
  double flops = 0;
  Bytes comm_nvlink{}, comm_rdma{};
  Routing routing;
  /// HBM megapages left for selective-offload replicas of each layer's KV (set by the caller; HBF only).
  int64_t replica_units_per_layer = 0;
  /// Tokens of KV a request holds when it finishes (prompt + output): sizes its window of megaplanes under
  /// hbf.runtime.kv_span = fit (set by the caller; 0: the largest of `contexts`).
  int64_t kv_full_tokens = 0;
};

/// Expected number of distinct experts among `experts` touched by `tokens` tokens routing top-k
/// uniformly: E (1 - (1 - k/E)^T).
double expected_distinct_experts(int64_t experts, int64_t top_k, double tokens);

/// Routing statistics for the timed GPU (skew 0: uniform; > 0: Zipf popularity).
Routing routing_stats(const ModelConfig& m, const Deployment& d, double tokens_total, double skew);

/// Bytes of the attention's input pass (llm.compute.qkv_preprocessing) over `tokens` tokens: the rotary embedding reads
/// Q, K and V and writes Q and K back, 16-bit (the KV cache write is the attention op's).
inline double qkv_preprocessing_bytes(double tokens, double q_heads, double kv_heads, double head_dim) {
  return tokens * head_dim * ((q_heads + 2 * kv_heads) + (q_heads + kv_heads)) * 2;
}

/// The operator graph of one decode step on GPU 0. `contexts`: KV tokens of each request of its attention rank.
/// `requests_total`: the requests of the whole step over all attention ranks (0: every rank holds as many as GPU 0's,
/// contexts x ranks; a static batch that does not fill every rank gives fewer, at least GPU 0's own). It sets the
/// tokens the experts receive from all ranks; GPU 0's attention and dense layers see its own rank's.
StepGraph build_step(const ModelConfig& m, const Deployment& d, const GpuWeights& w, const GpuCompute& gpu, const Network& net,
                     std::vector<int64_t> contexts, double routing_skew, int64_t requests_total = 0);

/// Contexts of `n` requests in steady state: input + output * (i + 0.5) / n (requests evenly spread over their decode).
std::vector<int64_t> steady_contexts(int64_t n, int64_t input, int64_t output);

}  // namespace bitline::llm
