#include "llm/step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace bitline::llm {

std::string Deployment::describe() const {
  if (tensor_parallel)
    return fmt::format("tensor parallel {} x {} replica{}{}", tp, ranks, ranks > 1 ? "s" : "",
                       ep > 1 ? fmt::format(", experts over {} GPUs", ep) : "");
  return fmt::format("attention data parallel over {} GPUs{}", ranks,
                     ep > 1 ? fmt::format(", experts expert-parallel ({} per GPU per layer)", local_experts) : "");
}

const Registry<AttentionParallel>& attention_parallels() {
  static const Registry<AttentionParallel> r(
      "attention parallelism",
      {{"auto", "data parallel for MoE models (experts expert parallel), tensor parallel for dense models", AttentionParallel::Auto},
       {"dp", "data parallel: every GPU an attention rank with its own requests", AttentionParallel::Dp},
       {"tp", "tensor parallel inside groups of llm.tp_size GPUs (default: a node); the groups are data-parallel ranks",
        AttentionParallel::Tp}});
  return r;
}

namespace {
bool tensor_parallel(AttentionParallel mode, const ModelConfig& m) {
  switch (mode) {
    case AttentionParallel::Auto:
      return !m.is_moe();
    case AttentionParallel::Dp:
      return false;
    case AttentionParallel::Tp:
      return true;
  }
  throw std::logic_error("unhandled attention parallelism");
}
}  // namespace

Deployment make_deployment(const ModelConfig& m, int64_t gpus, const LlmParams& p) {
  if (gpus < 1) throw ConfigError(fmt::format("{} GPUs: need at least one", gpus));
  Deployment d;
  d.gpus = gpus;
  d.gpus_per_node = p.network.gpus_per_node;
  d.tensor_parallel = tensor_parallel(*p.attention_parallel, m);
  if (d.tensor_parallel) {
    d.tp = p.tp_size > 0 ? p.tp_size : std::min(gpus, d.gpus_per_node);
    if (d.tp > gpus) throw ConfigError(fmt::format("llm.tp_size: {} GPUs per tensor-parallel group, but only {} GPUs", d.tp, gpus));
    if (gpus % d.tp != 0)
      throw ConfigError(fmt::format("model {}: {} GPUs are not a whole number of tensor-parallel groups of {}", m.name, gpus, d.tp));
    if (m.heads % d.tp != 0)
      throw ConfigError(fmt::format("model {}: {} attention heads cannot be split over {} GPUs", m.name, m.heads, d.tp));
    if (m.attention == AttentionKind::Gqa && m.kv_heads % d.tp != 0 && d.tp % m.kv_heads != 0)
      throw ConfigError(fmt::format("model {}: {} KV heads cannot be split over {} GPUs", m.name, m.kv_heads, d.tp));
    if (m.dense_layers() > 0 && m.intermediate % d.tp != 0)
      throw ConfigError(fmt::format("model {}: FFN size {} cannot be split over {} GPUs", m.name, m.intermediate, d.tp));
    d.ranks = gpus / d.tp;
    d.q_heads = m.heads / d.tp;
    d.kv_heads = std::max<int64_t>(1, m.kv_heads / d.tp);
    d.vocab_shards = d.tp;
  } else {
    d.tp = 1;
    d.ranks = gpus;
    d.q_heads = m.heads;
    d.kv_heads = m.kv_heads;
    d.vocab_shards = gpus;
  }
  if (m.is_moe()) {
    if (m.experts < gpus) throw ConfigError(fmt::format("model {}: {} experts cannot be spread over {} GPUs", m.name, m.experts, gpus));
    d.ep = gpus;
    d.local_experts = (m.experts + gpus - 1) / gpus;
  }
  return d;
}

GpuWeights gpu_weights(const ModelConfig& m, const Deployment& d) {
  GpuWeights w;
  const auto all = m.tensors();
  const int64_t tp = d.tp;
  for (uint32_t i = 0; i < all.size(); ++i) {
    const Tensor& t = all[i];
    int64_t rows = t.rows, cols = t.cols;
    switch (t.role) {
      case Role::Embed:
      case Role::LmHead:
        rows = (t.rows + d.vocab_shards - 1) / d.vocab_shards;
        break;
      case Role::QProj:
      case Role::QBProj:
      case Role::KVBProj:
        rows = t.rows / m.heads * d.q_heads;
        break;
      case Role::KProj:
      case Role::VProj:
        rows = d.kv_heads * m.head_dim;
        break;
      case Role::OProj:
        if (!t.bias) cols = t.cols / m.heads * d.q_heads;  // a row-parallel layer's bias is held whole
        break;
      case Role::DenseGate:
      case Role::DenseUp:
      case Role::SharedGate:
      case Role::SharedUp:
        rows = t.rows / tp;
        break;
      case Role::DenseDown:
      case Role::SharedDown:
        if (!t.bias) cols = t.cols / tp;
        break;
      case Role::ExpertGate:
      case Role::ExpertUp:
      case Role::ExpertDown:
        if (t.expert >= d.local_experts) continue;  // held by another GPU
        break;
      default:
        break;
    }
    GpuTensor g{i, t.name, t.role, t.layer, t.expert, m.bytes_of(t.fp8, rows, cols), t.bias};
    w.total += g.bytes;
    w.tensors.push_back(std::move(g));
  }
  w.declaration.resize(w.tensors.size());
  std::iota(w.declaration.begin(), w.declaration.end(), 0u);
  std::sort(w.declaration.begin(), w.declaration.end(), [&](uint32_t a, uint32_t b) { return w.tensors[a].name < w.tensors[b].name; });
  return w;
}

double expected_distinct_experts(int64_t experts, int64_t top_k, double tokens) {
  if (experts <= 0 || tokens <= 0) return 0;
  return double(experts) * (1.0 - std::pow(1.0 - double(top_k) / double(experts), tokens));
}

namespace {
// P(a token's k experts, drawn uniformly without replacement from E, avoid a set of `n` experts).
double p_avoid(int64_t experts, int64_t k, int64_t n) {
  if (experts - n < k) return 0;
  double p = 1;
  for (int64_t i = 0; i < k; ++i) p *= double(experts - n - i) / double(experts - i);
  return p;
}
}  // namespace

Routing routing_stats(const ModelConfig& m, const Deployment& d, double tokens_total, double skew) {
  Routing r;
  if (!m.is_moe()) return r;
  const int64_t E = m.experts, k = m.top_k, local = d.local_experts;
  std::vector<double> pick(size_t(E), double(k) / double(E));  // P(a token picks expert e)
  if (skew > 0) {
    double sum = 0;
    for (int64_t e = 0; e < E; ++e) sum += std::pow(double(e + 1), -skew);
    for (int64_t e = 0; e < E; ++e) pick[size_t(e)] = std::min(1.0, double(k) * std::pow(double(e + 1), -skew) / sum);
  }
  for (int64_t e = 0; e < local; ++e) {
    r.experts_touched += 1.0 - std::pow(1.0 - pick[size_t(e)], tokens_total);
    r.tokens_local += tokens_total * pick[size_t(e)];
  }
  // Dispatch fan-out of a token (deduplicated per GPU inside the node, per node across nodes), uniform routing.
  const int64_t per_node = std::min(d.ep, d.gpus_per_node), nodes = (d.ep + d.gpus_per_node - 1) / d.gpus_per_node;
  r.remote_intra_per_token = double(per_node - 1) * (1.0 - p_avoid(E, k, local));
  r.remote_nodes_per_token = double(nodes - 1) * (1.0 - p_avoid(E, k, local * per_node));
  r.remote_gpus_per_token = double(d.ep - 1) * (1.0 - p_avoid(E, k, local));
  const double q = 1.0 - p_avoid(E, k, local), node_q = 1.0 - p_avoid(E, k, local * per_node);
  r.fanout = {r.remote_intra_per_token, r.remote_gpus_per_token - r.remote_intra_per_token, r.remote_nodes_per_token,
              node_q > 0 ? double(per_node - 1) * q / node_q : 0.0};
  return r;
}

std::vector<int64_t> steady_contexts(int64_t n, int64_t input, int64_t output) {
  std::vector<int64_t> c(static_cast<size_t>(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < n; ++i) c[size_t(i)] = input + int64_t(std::llround(double(output) * (double(i) + 0.5) / double(n)));
  return c;
}

namespace {

class Builder {
 public:
  Builder(const ModelConfig& m, const GpuWeights& w, const GpuCompute& gpu, StepGraph& g) : m_(m), w_(w), gpu_(gpu), g_(g) {}

  // Takes the next tensors of the weight object, which must have the given roles in order (each with its bias, if any).
  std::pair<uint32_t, uint32_t> take(std::initializer_list<Role> roles) {
    const uint32_t first = cursor_;
    for (Role r : roles) {
      if (cursor_ >= w_.tensors.size() || w_.tensors[cursor_].role != r || w_.tensors[cursor_].bias)
        throw ModelError(fmt::format("model {}: step graph expected tensor {} at position {}, found {}", m_.name, to_string(r), cursor_,
                                     cursor_ < w_.tensors.size() ? w_.tensors[cursor_].name : "the end"));
      ++cursor_;
      while (cursor_ < w_.tensors.size() && w_.tensors[cursor_].bias && w_.tensors[cursor_].role == r) ++cursor_;
    }
    return {first, cursor_ - first};
  }
  std::pair<uint32_t, uint32_t> take_run(Role a, Role b) {  // a run of tensors whose roles are a or b
    const uint32_t first = cursor_;
    while (cursor_ < w_.tensors.size() && (w_.tensors[cursor_].role == a || w_.tensors[cursor_].role == b)) ++cursor_;
    return {first, cursor_ - first};
  }

  Op& op(std::string name, int32_t layer, int64_t kernels, std::pair<uint32_t, uint32_t> tensors = {0, 0}) {
    Op o;
    o.name = std::move(name);
    o.layer = layer;
    o.kernels = kernels;
    o.first_tensor = tensors.first;
    o.tensor_count = tensors.second;
    g_.ops.push_back(std::move(o));
    return g_.ops.back();
  }
  // A GEMM with M rows, K inputs, N outputs.
  Op& gemm(std::string name, int32_t layer, int64_t kernels, std::pair<uint32_t, uint32_t> tensors, double M, double K, double N,
           bool fp8) {
    Op& o = op(std::move(name), layer, kernels, tensors);
    o.flops = 2.0 * M * K * N;
    o.rows = M;
    o.fp8 = fp8;
    o.fp4 = fp8 && m_.fp4();
    o.gemm = GemmShape{M, N, K, 1};
    o.act_bytes = Bytes(int64_t(M * (K + N) * 2.0));
    return o;
  }
  void comm(std::string name, int32_t layer, const Collective& c) {
    if (c.time.raw() <= 0) return;
    Op& o = op(std::move(name), layer, 0);
    o.comm = c;
  }
  // `ctx_sum`: the tokens of KV the step's requests hold (the sum of g.contexts).
  void finish(const Deployment& d, double ctx_sum) {
    if (cursor_ != w_.tensors.size())
      throw ModelError(fmt::format("model {}: step graph left tensor {} unread", m_.name, w_.tensors[cursor_].name));
    // The FP8 KV cache one attention op reads on this GPU (every layer's is the same size); 0 for a 16-bit cache.
    const double fp8_kv = m_.kv_value_bytes == 1 ? ctx_sum * double(g_.kv_token_layer_bytes) : 0.0;
    // Every layer repeats a handful of kernels: each distinct GEMM (shape, number format, weight bytes, rows) and
    // decode attention (its FLOPs) is timed once per step and reused, the same pure functions of the same inputs.
    struct GemmKey {
      GemmShape shape;
      MathType type;
      double bytes, rows;
      bool operator==(const GemmKey&) const = default;
    };
    std::vector<std::pair<GemmKey, GemmKernel>> gemms;
    std::vector<std::pair<std::tuple<double, double, double>, Time>> attentions;  // (FLOPs per token, FLOPs, rows) -> time
    for (Op& o : g_.ops) {
      if (o.gemm.k > 0) {
        double bytes = 0;
        for (uint32_t t = o.first_tensor; t < o.first_tensor + o.tensor_count; ++t) bytes += double(w_.tensors[t].bytes.raw());
        const MathType mt = o.fp4 ? MathType::Fp4 : o.fp8 ? MathType::Fp8 : MathType::Bf16;
        const GemmKey key{o.gemm, mt, bytes * o.read_fraction, o.rows};
        auto seen = std::find_if(gemms.begin(), gemms.end(), [&](const auto& x) { return x.first == key; });
        if (seen == gemms.end()) seen = gemms.insert(gemms.end(), {key, gpu_.gemm(key.shape, mt, key.bytes, key.rows)});
        o.compute = seen->second.math;
        o.weight_stream = seen->second.weight_stream;
      } else if (o.kv) {
        const auto key = std::make_tuple(o.attn_flops_per_token, o.flops, o.rows);
        auto seen = std::find_if(attentions.begin(), attentions.end(), [&](const auto& x) { return x.first == key; });
        if (seen == attentions.end()) {
          const double group = m_.attention == AttentionKind::Mla ? double(d.q_heads) : double(m_.heads / m_.kv_heads);
          const int64_t kv_heads = m_.attention == AttentionKind::Mla ? 1 : d.kv_heads;
          seen = attentions.insert(attentions.end(), {key, gpu_.decode_attention(g_.contexts, kv_heads, group, o.attn_flops_per_token,
                                                                                 o.flops, o.rows, fp8_kv)});
        }
        o.compute = seen->second;
      } else {
        o.compute = gpu_.time(o.flops, o.rows, o.fp8);
      }
      g_.flops += o.flops;
      g_.comm_nvlink += o.comm.nvlink;
      g_.comm_rdma += o.comm.rdma;
    }
  }

 private:
  const ModelConfig& m_;
  const GpuWeights& w_;
  const GpuCompute& gpu_;
  StepGraph& g_;
  uint32_t cursor_ = 0;
};

/// What the ops of a step are sized by: the model and deployment, the tokens through attention and dense layers on this
/// GPU (M) and in the whole step (T), the widths (H, the embedding's Ew), the query heads per GPU, the contexts' sum, the
/// MoE tokens per GPU and the routing.
struct StepShape {
  const ModelConfig& m;
  const Deployment& d;
  const GpuCompute& gpu;
  const Network& net;
  double M, T, H, Ew, qh, ctx_sum, moe_tokens_gpu;
  bool fp8;
  const Routing& rt;
};

/// The embedding (vocabulary parallel), [project_in to the hidden width], [learned positions].
void embed_ops(Builder& b, const StepShape& x) {
  const auto& [m, d, gpu, net, M, T, H, Ew, qh, ctx_sum, moe_tokens_gpu, fp8, rt] = x;
  Op& e = b.op("embed", -1, 1, b.take({Role::Embed}));
  const double looked_up = d.tensor_parallel ? M : T;
  e.embed_rows = int64_t(std::ceil(looked_up / double(d.vocab_shards)));
  e.embed_cols = m.embed_width();
  e.act_bytes = Bytes(int64_t(looked_up * Ew * 2));
  if (d.vocab_shards > 1) {
    if (d.tensor_parallel)
      b.comm("embed.all_reduce", -1, net.all_reduce(Bytes(int64_t(M * Ew * 2)), d.tp));
    else
      b.comm("embed.reduce_scatter", -1, net.reduce_scatter(Bytes(int64_t(T * Ew * 2)), d.gpus));
  }
  // OPT-350m: every GPU maps its M tokens' embeddings to the hidden width (project_in, held whole).
  if (m.projects_embeddings()) b.gemm("project_in", -1, 1, b.take({Role::ProjIn}), M, Ew, H, fp8);
  if (m.positions > 0) {  // learned positions (GPT-2, OPT): every GPU adds the rows of its M tokens
    Op& pe = b.op("pos_embed", -1, 1, b.take({Role::PosEmbed}));
    pe.embed_rows = int64_t(M);
    pe.embed_cols = m.hidden;
    pe.act_bytes = Bytes(int64_t(M * H * 4));
  }
}

/// A layer's multi-head or grouped-query attention: QKV, [QK norm], [RoPE and KV append], attention, o_proj.
void attention_ops(Builder& b, const StepShape& x, int32_t l, const std::string& p) {
  const auto& [m, d, gpu, net, M, T, H, Ew, qh, ctx_sum, moe_tokens_gpu, fp8, rt] = x;
  const double hd = double(m.head_dim), kvh = double(d.kv_heads);
  // The GEMM and the RoPE/KV-append kernel: the latter's launch alone, or (llm.compute.qkv_preprocessing) its own
  // memory-bound op below (qkv_preprocessing_bytes).
  const bool pass = gpu.params().qkv_preprocessing;
  b.gemm(p + "qkv", l, pass ? 1 : 2, b.take({Role::QProj, Role::KProj, Role::VProj}), M, H, (qh + 2 * kvh) * hd, fp8);
  if (m.qk_norm) b.op(p + "qk_norm", l, 1, b.take({Role::QNorm, Role::KNorm}));
  if (pass) b.op(p + "qkv_preprocessing", l, 1).act_bytes = Bytes(int64_t(qkv_preprocessing_bytes(M, qh, kvh, hd)));
  Op& a = b.op(p + "attention", l, 2);
  a.kv = true;
  a.flops = 4.0 * ctx_sum * qh * hd;
  a.attn_flops_per_token = 4.0 * hd;
  a.rows = double(m.heads / m.kv_heads);  // query heads sharing one KV head
  a.act_bytes = Bytes(int64_t(M * qh * hd * 4));
  b.gemm(p + "o_proj", l, 1, b.take({Role::OProj}), M, qh * hd, H, fp8);
}

/// A layer's multi-head latent attention (DeepSeek): the low-rank projections, the absorbed attention over the latent.
void latent_attention_ops(Builder& b, const StepShape& x, int32_t l, const std::string& p) {
  const auto& [m, d, gpu, net, M, T, H, Ew, qh, ctx_sum, moe_tokens_gpu, fp8, rt] = x;
  const double nope = double(m.qk_nope_head_dim), rope = double(m.qk_rope_head_dim), kvr = double(m.kv_lora_rank),
               vh = double(m.v_head_dim), ql = double(m.q_lora_rank);
  if (m.q_lora_rank > 0) {
    b.gemm(p + "qkv_a", l, 1, b.take({Role::QAProj, Role::KVAProj}), M, H, ql + kvr + rope, fp8);
    b.op(p + "qkv_a_norm", l, 1, b.take({Role::QANorm, Role::KVANorm}));
    b.gemm(p + "q_b", l, 2, b.take({Role::QBProj}), M, ql, qh * (nope + rope), fp8);
  } else {
    b.gemm(p + "qkv_a", l, 2, b.take({Role::QProj, Role::KVAProj}), M, H, qh * (nope + rope) + kvr + rope, fp8);
    b.op(p + "qkv_a_norm", l, 1, b.take({Role::KVANorm}));
  }
  // Absorbed attention: q_nope x W_UK (kv_b_proj's key half), attention over the latent, then x W_UV
  // (kv_b_proj's value half, still in L2: no second read).
  Op& k = b.gemm(p + "absorb_k", l, 1, b.take({Role::KVBProj}), M * qh, nope, kvr, fp8);
  k.rows = M;
  k.gemm = GemmShape{M, kvr, nope, qh};  // one product per head
  Op& a = b.op(p + "attention", l, 2);
  a.kv = true;
  a.flops = 2.0 * ctx_sum * qh * (kvr + rope) + 2.0 * ctx_sum * qh * kvr;
  a.attn_flops_per_token = 2.0 * (kvr + rope) + 2.0 * kvr;
  a.rows = qh;  // all heads share the latent KV
  a.act_bytes = Bytes(int64_t(M * qh * (kvr + rope) * 2 + M * qh * kvr * 2));
  Op& v = b.gemm(p + "absorb_v", l, 1, {0, 0}, M * qh, kvr, vh, fp8);
  v.rows = M;
  v.gemm = GemmShape{M, vh, kvr, qh};
  b.gemm(p + "o_proj", l, 1, b.take({Role::OProj}), M, qh * vh, H, fp8);
}

/// A layer's dense FFN: gate and up (or up alone), the activation, down, [the tensor-parallel all-reduce].
void dense_ffn_ops(Builder& b, const StepShape& x, int32_t l, const std::string& p) {
  const auto& [m, d, gpu, net, M, T, H, Ew, qh, ctx_sum, moe_tokens_gpu, fp8, rt] = x;
  const double I = double(m.intermediate) / double(d.tp);
  if (m.gated_mlp()) {
    b.gemm(p + "gate_up", l, 1, b.take({Role::DenseGate, Role::DenseUp}), M, H, 2 * I, fp8);
    b.op(p + "act", l, 1).act_bytes = Bytes(int64_t(M * 3 * I * 2));  // SiLU(gate) x up: reads both, writes one
  } else                                                              // GEMM + bias and activation (GELU / ReLU): one matrix
    b.gemm(p + "up", l, 2, b.take({Role::DenseUp}), M, H, I, fp8);
  b.gemm(p + "down", l, 1, b.take({Role::DenseDown}), M, I, H, fp8);
  if (d.tensor_parallel) b.comm(p + "ffn.all_reduce", l, net.all_reduce(Bytes(int64_t(M * H * 2)), d.tp));
}

/// A layer's mixture of experts: the router, dispatch, the routed experts as grouped GEMMs, [shared experts], combine.
void moe_ffn_ops(Builder& b, const StepShape& x, int32_t l, const std::string& p) {
  const auto& [m, d, gpu, net, M, T, H, Ew, qh, ctx_sum, moe_tokens_gpu, fp8, rt] = x;
  const double Ie = double(m.moe_intermediate), E = double(m.experts);
  b.gemm(p + "router", l, 2, b.take({Role::Router}), moe_tokens_gpu, H, E, false);
  const bool spans = d.ep > d.gpus_per_node;
  const Collective a2a = net.expert_all_to_all(moe_tokens_gpu, H * 2, rt.fanout, spans);  // llm.network.all_to_all
  b.comm(p + "dispatch", l, a2a);
  const double frac = d.local_experts > 0 ? rt.experts_touched / double(d.local_experts) : 0.0;
  const double per_expert = rt.experts_touched > 0 ? rt.tokens_local / rt.experts_touched : 0.0;
  Op& gu = b.gemm(p + "experts_gate_up", l, 1, b.take_run(Role::ExpertGate, Role::ExpertUp), rt.tokens_local, H, 2 * Ie, fp8);
  gu.rows = per_expert;
  gu.read_fraction = frac;
  gu.routed = 1;
  gu.gemm = GemmShape{per_expert, 2 * Ie, H, rt.experts_touched};  // a grouped GEMM over the experts touched
  b.op(p + "experts_act", l, 1).act_bytes = Bytes(int64_t(rt.tokens_local * 3 * Ie * 2));
  Op& dn = b.gemm(p + "experts_down", l, 1, b.take_run(Role::ExpertDown, Role::ExpertDown), rt.tokens_local, Ie, H, fp8);
  dn.rows = per_expert;
  dn.read_fraction = frac;
  dn.routed = 2;
  dn.gemm = GemmShape{per_expert, H, Ie, rt.experts_touched};
  if (m.shared_experts > 0) {
    const double Is = Ie * double(m.shared_experts) / double(d.tp);
    b.gemm(p + "shared_gate_up", l, 1, b.take({Role::SharedGate, Role::SharedUp}), moe_tokens_gpu, H, 2 * Is, fp8);
    b.op(p + "shared_act", l, 1).act_bytes = Bytes(int64_t(moe_tokens_gpu * 3 * Is * 2));
    b.gemm(p + "shared_down", l, 1, b.take({Role::SharedDown}), moe_tokens_gpu, Is, H, fp8);
  }
  b.comm(p + "combine", l, a2a);
  if (d.tensor_parallel) b.comm(p + "moe.all_gather", l, net.all_gather(Bytes(int64_t(M * H * 2)), d.tp));
}

/// The head: [final norm], [project_out to the embedding width], the vocabulary-parallel LM head, sampling.
void head_ops(Builder& b, const StepShape& x) {
  const auto& [m, d, gpu, net, M, T, H, Ew, qh, ctx_sum, moe_tokens_gpu, fp8, rt] = x;
  if (m.arch.final_norm) b.op("final_norm", -1, 1, b.take({Role::FinalNorm})).act_bytes = Bytes(int64_t(M * H * 4));
  // OPT-350m: every GPU maps its own M tokens back to the embedding width before they are gathered.
  if (m.projects_embeddings()) b.gemm("project_out", -1, 1, b.take({Role::ProjOut}), M, H, Ew, fp8);
  const double rows = d.tensor_parallel ? M : T;
  if (!d.tensor_parallel && d.vocab_shards > 1) b.comm("head.all_gather", -1, net.all_gather(Bytes(int64_t(T * Ew * 2)), d.gpus));
  const double vocab_local = std::ceil(double(m.vocab) / double(d.vocab_shards));
  if (!m.tie_embeddings) {
    b.gemm("lm_head", -1, 2, b.take({Role::LmHead}), rows, Ew, vocab_local, false);
  } else {
    b.gemm("lm_head", -1, 2, {0, 1}, rows, Ew, vocab_local, false);  // tied: reads the embedding table again
  }
  // Sampling reads the logits (FP32) of the local vocabulary.
  b.op("sample", -1, 1).act_bytes = Bytes(int64_t(rows * vocab_local * 4));
  if (d.vocab_shards > 1) b.comm("sample.all_gather", -1, net.all_gather(Bytes(int64_t(rows * 8)), d.tensor_parallel ? d.tp : d.gpus));
}

}  // namespace

StepGraph build_step(const ModelConfig& m, const Deployment& d, const GpuWeights& w, const GpuCompute& gpu, const Network& net,
                     std::vector<int64_t> contexts, double routing_skew, int64_t requests_total) {
  StepGraph g;
  g.contexts = std::move(contexts);
  const int64_t r = int64_t(g.contexts.size());
  g.requests_per_rank = r;
  g.requests_total = requests_total > 0 ? std::clamp(requests_total, r, r * d.ranks) : r * d.ranks;
  g.tokens_per_gpu = double(g.requests_total) / double(d.gpus);
  const double M = double(r);                 // tokens through attention and dense layers on this GPU
  const double T = double(g.requests_total);  // tokens in the whole step
  const double H = double(m.hidden);
  const double Ew = double(m.embed_width());  // the embedding's rows and the LM head's inputs (OPT-350m: < H)
  const bool fp8 = m.fp8;
  const bool mla = m.attention == AttentionKind::Mla;
  g.kv_token_layer_bytes = mla ? m.kv_bytes_per_token_layer() : 2 * d.kv_heads * m.head_dim * m.kv_value_bytes;
  double ctx_sum = 0;
  for (int64_t c : g.contexts) ctx_sum += double(c);
  const double qh = double(d.q_heads);

  // MoE tokens: with attention TP the tokens of a rank are split over its GPUs before dispatch.
  const double moe_tokens_gpu = d.tensor_parallel ? std::ceil(M / double(d.tp)) : M;
  // Expert reads follow the global token count: every data-parallel rank's tokens reach each expert-parallel
  // GPU (test_expert_reads.cpp checks E_l (1 - (1 - k/E)^T) at batch 1 and at large batches).
  g.routing = routing_stats(m, d, T, routing_skew);
  const Routing& rt = g.routing;

  Builder b(m, w, gpu, g);
  const StepShape x{m, d, gpu, net, M, T, H, Ew, qh, ctx_sum, moe_tokens_gpu, fp8, rt};
  auto segment = [&](int kind, int32_t layer, auto&& body) {
    Segment s;
    s.first_op = uint32_t(g.ops.size());
    s.layer = layer;
    s.kind = kind;
    body();
    s.op_count = uint32_t(g.ops.size()) - s.first_op;
    g.segments.push_back(s);
  };
  segment(0, -1, [&] { embed_ops(b, x); });
  for (int32_t l = 0; l < int32_t(m.layers); ++l) {
    const bool moe = m.moe_layer[size_t(l)];
    segment(moe ? 2 : 1, l, [&] {
      const std::string p = fmt::format("L{}.", l);
      b.op(p + "attn_norm", l, 1, b.take({Role::AttnNorm})).act_bytes = Bytes(int64_t(M * H * 4));
      if (!mla)
        attention_ops(b, x, l, p);
      else
        latent_attention_ops(b, x, l, p);
      // Parallel residual (GPT-J, GPT-NeoX): attention and FFN outputs are summed before one all-reduce.
      if (d.tensor_parallel && !m.arch.parallel_residual) b.comm(p + "attn.all_reduce", l, net.all_reduce(Bytes(int64_t(M * H * 2)), d.tp));
      if (m.arch.ffn_norm) b.op(p + "ffn_norm", l, 1, b.take({Role::FfnNorm})).act_bytes = Bytes(int64_t(M * H * 4));
      if (!moe)
        dense_ffn_ops(b, x, l, p);
      else
        moe_ffn_ops(b, x, l, p);
    });
  }
  segment(3, -1, [&] { head_ops(b, x); });
  b.finish(d, ctx_sum);
  return g;
}

}  // namespace bitline::llm
