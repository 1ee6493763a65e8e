#include "llm/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/input.hpp"
#include "core/json_io.hpp"

namespace bitline::llm {

std::string to_string(Role r) {
  switch (r) {
    case Role::Embed:
      return "embed";
    case Role::LmHead:
      return "lm_head";
    case Role::FinalNorm:
      return "final_norm";
    case Role::AttnNorm:
      return "attn_norm";
    case Role::FfnNorm:
      return "ffn_norm";
    case Role::QProj:
      return "q_proj";
    case Role::KProj:
      return "k_proj";
    case Role::VProj:
      return "v_proj";
    case Role::OProj:
      return "o_proj";
    case Role::QNorm:
      return "q_norm";
    case Role::KNorm:
      return "k_norm";
    case Role::QAProj:
      return "q_a_proj";
    case Role::QANorm:
      return "q_a_norm";
    case Role::QBProj:
      return "q_b_proj";
    case Role::KVAProj:
      return "kv_a_proj";
    case Role::KVANorm:
      return "kv_a_norm";
    case Role::KVBProj:
      return "kv_b_proj";
    case Role::PosEmbed:
      return "pos_embed";
    case Role::DenseGate:
      return "gate_proj";
    case Role::DenseUp:
      return "up_proj";
    case Role::DenseDown:
      return "down_proj";
    case Role::Router:
      return "router";
    case Role::ExpertGate:
      return "expert_gate";
    case Role::ExpertUp:
      return "expert_up";
    case Role::ExpertDown:
      return "expert_down";
    case Role::SharedGate:
      return "shared_gate";
    case Role::SharedUp:
      return "shared_up";
    case Role::SharedDown:
      return "shared_down";
    case Role::ProjIn:
      return "project_in";
    case Role::ProjOut:
      return "project_out";
  }
  return "?";
}

namespace {

using nlohmann::json;

/// Field access with messages that name the file and the field.
class Fields {
 public:
  Fields(const json& j, std::string origin) : j_(j), origin_(std::move(origin)) {}

  bool has(const char* k) const { return j_.contains(k) && !j_.at(k).is_null(); }

  [[noreturn]] void fail(const char* k, const std::string& why) const {
    throw ConfigError(fmt::format("{}: field '{}': {}", origin_, k, why));
  }

  int64_t integer(const char* k, int64_t min = 1) const {
    if (!has(k)) fail(k, "missing (required)");
    return integer_at(k, j_.at(k), min);
  }
  int64_t integer_or(const char* k, int64_t def, int64_t min = 0) const { return has(k) ? integer_at(k, j_.at(k), min) : def; }
  bool boolean_or(const char* k, bool def) const {
    if (!has(k)) return def;
    if (!j_.at(k).is_boolean()) fail(k, fmt::format("expected true or false, got {}", json_brief(j_.at(k))));
    return j_.at(k).get<bool>();
  }
  std::string string_or(const char* k, const std::string& def) const {
    if (!has(k)) return def;
    if (!j_.at(k).is_string()) fail(k, fmt::format("expected a string, got {}", json_brief(j_.at(k))));
    return j_.at(k).get<std::string>();
  }
  const json& at(const char* k) const { return j_.at(k); }
  /// A name looked up in `r` (required when `def` is null): its value, or an error naming the field and the choices.
  template <class T>
  const T& choice(const Registry<T>& r, const char* k, const char* def = nullptr) const {
    if (!has(k) && !def) fail(k, fmt::format("missing (required: one of {})", r.joined()));
    const std::string v = string_or(k, def ? def : "");
    const int64_t i = r.find(v);
    if (i < 0) fail(k, r.unknown_message(v));
    return r.value(size_t(i));
  }

 private:
  int64_t integer_at(const char* k, const json& v, int64_t min) const {
    const auto too_large = [&] {
      fail(k, fmt::format("{} is above the maximum {} (far beyond any published model)", json_brief(v), max_of(k)));
    };
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(max_of(k))) too_large();
    if (!v.is_number_integer() && !v.is_number_unsigned()) {
      if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::fabs(d) < 9e18 && d == std::trunc(d)) return check(k, int64_t(d), min);
        if (d > 9e18) too_large();
        if (d < -9e18) fail(k, fmt::format("{} is below the minimum {}", json_brief(v), min));
      }
      fail(k, fmt::format("expected an integer, got {}", json_brief(v)));
    }
    return check(k, v.get<int64_t>(), min);
  }
  int64_t check(const char* k, int64_t x, int64_t min) const {
    if (x < min) fail(k, fmt::format("{} is below the minimum {}", x, min));
    if (x > max_of(k)) fail(k, fmt::format("{} is above the maximum {} (far beyond any published model)", x, max_of(k)));
    return x;
  }
  // Largest accepted value of each integer field: far above every published model (in brackets) and small
  // enough that the tensor list, byte counts and step plans stay bounded (docs/commands.md, "Hardened inputs").
  static int64_t max_of(std::string_view k) {
    static constexpr std::pair<std::string_view, int64_t> caps[] = {
        {"hidden_size", int64_t(1) << 17},            // 16384 (Llama 3.1 405B)
        {"num_hidden_layers", 1024},                  // 126
        {"num_attention_heads", 1024},                // 128
        {"num_key_value_heads", 1024},                // 128
        {"head_dim", 4096},                           // 256
        {"vocab_size", int64_t(1) << 22},             // 256K
        {"intermediate_size", int64_t(1) << 20},      // 53248
        {"moe_intermediate_size", int64_t(1) << 20},  // 2560
        {"num_experts", 16384},                       // 384 (Kimi K2)
        {"num_local_experts", 16384},                 // 8 (Mixtral)
        {"n_routed_experts", 16384},
        {"num_experts_per_tok", 1024},         // 8
        {"n_shared_experts", 64},              // 1
        {"n_group", 16384},                    // 8
        {"topk_group", 16384},                 // 4
        {"sliding_window", int64_t(1) << 24},  // 4096 (Mistral)
        {"kv_lora_rank", int64_t(1) << 16},    // 512
        {"q_lora_rank", int64_t(1) << 16},     // 1536
        {"qk_nope_head_dim", 4096},            // 128
        {"qk_rope_head_dim", 4096},            // 64
        {"v_head_dim", 4096},                  // 128
        {"first_k_dense_replace", 1024},
        {"moe_layer_freq", 1024},
        {"decoder_sparse_step", 1024},
        // the classic families' spellings
        {"n_embd", int64_t(1) << 17},
        {"n_layer", 1024},
        {"n_head", 1024},
        {"n_inner", int64_t(1) << 20},
        {"ffn_dim", int64_t(1) << 20},
        {"n_positions", int64_t(1) << 24},              // 1024 (GPT-2)
        {"max_position_embeddings", int64_t(1) << 24},  // 2048 (OPT)
        {"rotary_dim", 4096},                           // 64 (GPT-J)
        {"word_embed_proj_dim", int64_t(1) << 17},      // 512 (OPT-350m)
        {"ffn_hidden_size", int64_t(1) << 20},          // 59392 (Falcon-180B)
        {"num_kv_heads", 1024},                         // 8 (Falcon-180B)
    };
    for (const auto& [name, max] : caps)
      if (name == k) return max;
    return int64_t(1) << 40;
  }
  const json& j_;
  std::string origin_;
};

}  // namespace

namespace {

// The classic decoder families: MHA, LayerNorm with bias, a non-gated FFN, biases, their own config keys and
// tensor names (Hugging Face's modeling_*.py and configuration_*.py of each family).
Architecture gpt2_family() {
  return Architecture{.gated_mlp = false,
                      .layer_norm = true,
                      .qkv_bias = true,
                      .o_bias = true,
                      .mlp_bias = true,
                      .mha_only = true,
                      .dense_family = true,
                      .tie_default = true,
                      .ffn_default_multiple = 4,
                      .default_activation = "gelu_new",
                      .keys = {.hidden = "n_embd",
                               .layers = "n_layer",
                               .heads = "n_head",
                               .intermediate = "n_inner",
                               .activation = "activation_function",
                               .positions = "n_positions",
                               .attention_bias = nullptr,
                               .mlp_bias = nullptr},
                      .names = {.embed = "transformer.wte",
                                .positions = "transformer.wpe",
                                .layer = "transformer.h.{}.",
                                .attn_norm = "ln_1",
                                .fused_qkv = "attn.c_attn",
                                .o = "attn.c_proj",
                                .ffn_norm = "ln_2",
                                .gate = "",
                                .up = "mlp.c_fc",
                                .down = "mlp.c_proj",
                                .final_norm = "transformer.ln_f"}};
}

Architecture opt_family() {
  return Architecture{.gated_mlp = false,
                      .layer_norm = true,
                      .qkv_bias = true,
                      .o_bias = true,
                      .mlp_bias = true,
                      .mha_only = true,
                      .dense_family = true,
                      .tie_default = true,
                      .position_offset = 2,  // OPTLearnedPositionalEmbedding: max_position_embeddings + 2 rows
                      .default_activation = "relu",
                      .keys = {.intermediate = "ffn_dim",
                               .activation = "activation_function",
                               .positions = "max_position_embeddings",
                               .attention_bias = nullptr,
                               .mlp_bias = nullptr,
                               .all_bias = "enable_bias",
                               .embed_proj = "word_embed_proj_dim",
                               .pre_norm = "do_layer_norm_before",
                               .remove_final_norm = "_remove_final_layer_norm"},
                      .names = {.embed = "model.decoder.embed_tokens",
                                .positions = "model.decoder.embed_positions",
                                .layer = "model.decoder.layers.{}.",
                                .attn_norm = "self_attn_layer_norm",
                                .o = "self_attn.out_proj",
                                .ffn_norm = "final_layer_norm",
                                .gate = "",
                                .up = "fc1",
                                .down = "fc2",
                                .final_norm = "model.decoder.final_layer_norm",
                                .project_in = "model.decoder.project_in",
                                .project_out = "model.decoder.project_out"}};
}

Architecture gpt_neox_family() {
  return Architecture{.gated_mlp = false,
                      .layer_norm = true,
                      .qkv_bias = true,
                      .o_bias = true,
                      .mlp_bias = true,
                      .parallel_residual = true,  // use_parallel_residual (default true) may turn it off
                      .mha_only = true,
                      .dense_family = true,
                      .default_activation = "gelu",
                      .keys = {.mlp_bias = nullptr, .parallel_residual = "use_parallel_residual", .rotary_fraction = "rotary_pct"},
                      .names = {.embed = "gpt_neox.embed_in",
                                .layer = "gpt_neox.layers.{}.",
                                .fused_qkv = "attention.query_key_value",
                                .o = "attention.dense",
                                .gate = "",
                                .up = "mlp.dense_h_to_4h",
                                .down = "mlp.dense_4h_to_h",
                                .final_norm = "gpt_neox.final_layer_norm",
                                .lm_head = "embed_out"}};
}

Architecture gptj_family() {
  return Architecture{.gated_mlp = false,
                      .layer_norm = true,
                      .mlp_bias = true,
                      .lm_head_bias = true,
                      .ffn_norm = false,
                      .parallel_residual = true,
                      .mha_only = true,
                      .dense_family = true,
                      .ffn_default_multiple = 4,
                      .default_activation = "gelu_new",
                      .keys = {.hidden = "n_embd",
                               .layers = "n_layer",
                               .heads = "n_head",
                               .intermediate = "n_inner",
                               .activation = "activation_function",
                               .attention_bias = nullptr,
                               .mlp_bias = nullptr,
                               .rotary_dim = "rotary_dim"},
                      .names = {.embed = "transformer.wte",
                                .layer = "transformer.h.{}.",
                                .attn_norm = "ln_1",
                                .q = "attn.q_proj",
                                .k = "attn.k_proj",
                                .v = "attn.v_proj",
                                .o = "attn.out_proj",
                                .ffn_norm = "",
                                .gate = "",
                                .up = "mlp.fc_in",
                                .down = "mlp.fc_out",
                                .final_norm = "transformer.ln_f"}};
}

// Falcon (TII; Hugging Face's configuration_falcon.py and modeling_falcon.py): a fused query_key_value projection
// whose KV heads follow new_decoder_architecture (num_kv_heads, default: the heads), else multi_query (one), else
// the heads; attention and FFN in parallel (parallel_attn, default true) behind one LayerNorm, or two (ln_attn,
// ln_mlp: num_ln_in_parallel_attn, default 2 with new_decoder_architecture); a non-gated GELU FFN of
// ffn_hidden_size (null or absent: 4 x hidden); biases on every projection only with `bias` (default false);
// rotary positions (alibi: ALiBi biases, no weights either way); embeddings tied by default.
Architecture falcon_family() {
  return Architecture{.gated_mlp = false,
                      .layer_norm = true,
                      .parallel_residual = true,
                      .dense_family = true,
                      .falcon_layout = true,
                      .tie_default = true,
                      .ffn_default_multiple = 4,
                      .default_activation = "gelu",
                      .keys = {.intermediate = "ffn_hidden_size",
                               .activation = "activation",
                               .attention_bias = nullptr,
                               .mlp_bias = nullptr,
                               .all_bias = "bias"},  // parallel_attn: read with the norms it places (falcon_attention)
                      .names = {.embed = "transformer.word_embeddings",
                                .layer = "transformer.h.{}.",
                                .attn_norm = "input_layernorm",
                                .fused_qkv = "self_attention.query_key_value",
                                .o = "self_attention.dense",
                                .ffn_norm = "post_attention_layernorm",
                                .gate = "",
                                .up = "mlp.dense_h_to_4h",
                                .down = "mlp.dense_4h_to_h",
                                .final_norm = "transformer.ln_f"}};
}

}  // namespace

const Registry<Architecture>& architectures() {
  static const Registry<Architecture> r(
      "model architecture",
      {{"llama", "Llama 3.x: grouped-query attention, RMSNorm, dense SwiGLU FFN", Architecture{}},
       {"qwen3", "Qwen3 dense: grouped-query attention with per-head q/k RMSNorm, dense SwiGLU FFN", Architecture{.qk_norm = true}},
       {"qwen3_moe",
        "Qwen3 MoE: grouped-query attention with per-head q/k RMSNorm, routed experts (mlp_only_layers, "
        "decoder_sparse_step)",
        Architecture{.qk_norm = true}},
       {"deepseek_v2", "DeepSeek-V2: multi-head latent attention, shared + routed experts, leading dense layers", Architecture{}},
       {"deepseek_v3", "DeepSeek-V3: multi-head latent attention, shared + routed experts, leading dense layers", Architecture{}},
       {"qwen2", "Qwen2 / Qwen2.5: grouped-query attention with q/k/v biases, RMSNorm, dense SwiGLU FFN", Architecture{.qkv_bias = true}},
       {"mistral", "Mistral: grouped-query attention, RMSNorm, dense SwiGLU FFN (sliding window not modelled)", Architecture{}},
       {"mixtral",
        "Mixtral: grouped-query attention, RMSNorm, every layer MoE with SwiGLU experts (num_local_experts, "
        "num_experts_per_tok; the experts' FFN size is intermediate_size), no shared experts",
        Architecture{.keys = {.experts = "num_local_experts", .moe_intermediate = "intermediate_size"},
                     .names = {.router = "block_sparse_moe.gate",
                               .expert = "block_sparse_moe.experts.{}.",
                               .expert_gate = "w1",
                               .expert_up = "w3",
                               .expert_down = "w2"}}},
       {"gpt2",
        "GPT-2: MHA (fused c_attn), LayerNorm, GELU FFN (c_fc, c_proj), biases, learned positions (n_positions), tied "
        "embeddings; keys n_embd/n_layer/n_head/n_inner/activation_function",
        gpt2_family()},
       {"opt",
        "OPT: MHA, LayerNorm (do_layer_norm_before false: after attention and FFN, no final norm), ReLU FFN (fc1, "
        "fc2), biases, learned positions (max_position_embeddings + 2), tied embeddings, project_in/out when "
        "word_embed_proj_dim differs from hidden_size; key ffn_dim",
        opt_family()},
       {"gpt_neox",
        "GPT-NeoX / Pythia: MHA (fused query_key_value), LayerNorm, GELU FFN, biases, partial rotary (rotary_pct), "
        "parallel residual (use_parallel_residual)",
        gpt_neox_family()},
       {"gptj",
        "GPT-J: MHA without biases, one LayerNorm per layer shared by attention and FFN (parallel), GELU FFN with "
        "biases, partial rotary (rotary_dim), LM head with bias; keys n_embd/n_layer/n_head/n_inner",
        gptj_family()},
       {"falcon",
        "Falcon: fused query_key_value with grouped (new_decoder_architecture, num_kv_heads) or multi-query "
        "attention, attention and FFN in parallel behind one or two LayerNorms, GELU FFN (ffn_hidden_size), biases "
        "only with `bias`, rotary, tied embeddings",
        falcon_family()}});
  return r;
}

const Registry<int>& activations() {
  static const Registry<int> r("activation function", {{"silu", "x sigmoid(x) (SwiGLU in a gated FFN)", 0},
                                                       {"swish", "= silu", 0},
                                                       {"gelu", "exact GELU (erf)", 0},
                                                       {"gelu_new", "GELU, tanh approximation (GPT-2, GPT-J)", 0},
                                                       {"gelu_fast", "GELU, tanh approximation", 0},
                                                       {"gelu_pytorch_tanh", "GELU, tanh approximation (PyTorch's)", 0},
                                                       {"quick_gelu", "x sigmoid(1.702 x)", 0},
                                                       {"relu", "max(0, x) (OPT)", 0}});
  return r;
}

const Registry<int64_t>& torch_dtypes() {
  static const Registry<int64_t> r(
      "weight dtype", {{"bfloat16", "2 bytes per weight", 2}, {"float16", "2 bytes per weight", 2}, {"float32", "4 bytes per weight", 4}});
  return r;
}

const Registry<QuantMethod>& quant_methods() {
  static const Registry<QuantMethod> r(
      "weight quantisation",
      {{"fp8", "FP8 linear layers (1 byte per weight) with an FP32 scale per weight_block_size block", QuantMethod::Fp8}});
  return r;
}

const Registry<Precision>& precisions() {
  static const Registry<Precision> r(
      "number format",
      {{"model", "the model's own: its torch_dtype, and FP8 linear layers where it has a quantization_config", Precision::Model},
       {"bf16", "16-bit (bfloat16) weights, activations and KV cache", Precision::Bf16},
       {"fp16", "16-bit (float16) weights, activations and KV cache (same bytes and rate as bf16)", Precision::Fp16},
       {"fp8", "FP8 (E4M3) linear layers and GEMM inputs, per-tensor scales, FP8 KV cache", Precision::Fp8},
       {"fp4", "NVFP4 linear layers and GEMM inputs (an FP8 scale per 16 values), FP8 KV cache; GPUs with FP4 tensor cores",
        Precision::Fp4}});
  return r;
}

ModelConfig with_precision(ModelConfig m, Precision p) {
  switch (p) {
    case Precision::Model:
      return m;
    case Precision::Bf16:
    case Precision::Fp16:
      m.fp8 = false;
      m.weight_bytes = 2;
      m.kv_value_bytes = 2;
      m.quant_bits = 8;
      return m;
    case Precision::Fp8:
      if (!m.fp8) m.fp8_block_rows = m.fp8_block_cols = 0;  // per-tensor scales (TensorRT-LLM / ModelOpt FP8)
      m.fp8 = true;
      m.quant_bits = 8;
      m.kv_value_bytes = 1;
      return m;
    case Precision::Fp4:
      m.fp8 = true;
      m.quant_bits = 4;
      m.kv_value_bytes = 1;
      return m;
  }
  throw std::logic_error("unhandled precision");
}

int64_t ModelConfig::moe_layers() const { return int64_t(std::count(moe_layer.begin(), moe_layer.end(), true)); }

int64_t ModelConfig::kv_bytes_per_token_layer() const {
  if (attention == AttentionKind::Mla) return (kv_lora_rank + qk_rope_head_dim) * kv_value_bytes;
  return 2 * kv_heads * head_dim * kv_value_bytes;
}

std::vector<Tensor> ModelConfig::tensors() const {
  std::vector<Tensor> out;
  const TensorNames& n = arch.names;
  auto add = [&](std::string name, Role role, int64_t layer, int64_t expert, int64_t rows, int64_t cols, bool quant) {
    out.push_back(Tensor{std::move(name), role, int32_t(layer), int32_t(expert), rows, cols, quant && fp8});
  };
  // A bias follows its weight, with the weight's role: [out, 1] for a projection, [1, H] for a norm (never FP8).
  auto bias = [&](std::string name, Role role, int64_t layer, int64_t rows, int64_t cols) {
    out.push_back(Tensor{std::move(name), role, int32_t(layer), -1, rows, cols, false, true});
  };
  auto norm = [&](const std::string& base, Role role, int64_t layer, int64_t width) {
    add(base + ".weight", role, layer, -1, 1, width, false);
    if (arch.layer_norm) bias(base + ".bias", role, layer, 1, width);
  };
  // A projection [rows, cols]; `part` names the q/k/v slice of a fused tensor.
  auto linear = [&](const std::string& base, const std::string& part, Role role, int64_t layer, int64_t rows, int64_t cols,
                    bool with_bias) {
    add(base + ".weight" + part, role, layer, -1, rows, cols, true);
    if (with_bias) bias(base + ".bias" + part, role, layer, rows, 1);
  };
  // The token embedding and the LM head are embed_width() wide; project_in / project_out (no bias) map that width
  // to and from hidden when they differ (OPT-350m).
  const int64_t embed = embed_width();
  add(std::string(n.embed) + ".weight", Role::Embed, -1, -1, vocab, embed, false);
  if (projects_embeddings()) add(std::string(n.project_in) + ".weight", Role::ProjIn, -1, -1, hidden, embed, true);
  if (positions > 0) add(std::string(n.positions) + ".weight", Role::PosEmbed, -1, -1, positions, hidden, false);
  for (int64_t l = 0; l < layers; ++l) {
    const std::string p = fmt::format(fmt::runtime(n.layer), l);
    norm(p + n.attn_norm, Role::AttnNorm, l, hidden);
    if (attention == AttentionKind::Gqa) {
      const bool fused = n.fused_qkv != nullptr;
      const std::string qn = p + (fused ? n.fused_qkv : n.q), kn = p + (fused ? n.fused_qkv : n.k), vn = p + (fused ? n.fused_qkv : n.v);
      linear(qn, fused ? "[q]" : "", Role::QProj, l, heads * head_dim, hidden, arch.qkv_bias);
      linear(kn, fused ? "[k]" : "", Role::KProj, l, kv_heads * head_dim, hidden, arch.qkv_bias);
      linear(vn, fused ? "[v]" : "", Role::VProj, l, kv_heads * head_dim, hidden, arch.qkv_bias);
      if (qk_norm) {
        add(p + "self_attn.q_norm.weight", Role::QNorm, l, -1, 1, head_dim, false);
        add(p + "self_attn.k_norm.weight", Role::KNorm, l, -1, 1, head_dim, false);
      }
      linear(p + n.o, "", Role::OProj, l, hidden, heads * head_dim, arch.o_bias);
    } else {
      // Execution order of MLA decode: the down projections (query, latent KV) together, their norms,
      // the query up projection, the latent up projection (absorbed into the query and the output), o_proj.
      const int64_t qk = qk_nope_head_dim + qk_rope_head_dim;
      if (q_lora_rank > 0)
        add(p + "self_attn.q_a_proj.weight", Role::QAProj, l, -1, q_lora_rank, hidden, true);
      else
        add(p + "self_attn.q_proj.weight", Role::QProj, l, -1, heads * qk, hidden, true);
      add(p + "self_attn.kv_a_proj_with_mqa.weight", Role::KVAProj, l, -1, kv_lora_rank + qk_rope_head_dim, hidden, true);
      if (q_lora_rank > 0) add(p + "self_attn.q_a_layernorm.weight", Role::QANorm, l, -1, 1, q_lora_rank, false);
      add(p + "self_attn.kv_a_layernorm.weight", Role::KVANorm, l, -1, 1, kv_lora_rank, false);
      if (q_lora_rank > 0) add(p + "self_attn.q_b_proj.weight", Role::QBProj, l, -1, heads * qk, q_lora_rank, true);
      add(p + "self_attn.kv_b_proj.weight", Role::KVBProj, l, -1, heads * (qk_nope_head_dim + v_head_dim), kv_lora_rank, true);
      add(p + "self_attn.o_proj.weight", Role::OProj, l, -1, hidden, heads * v_head_dim, true);
    }
    if (arch.ffn_norm) norm(p + n.ffn_norm, Role::FfnNorm, l, hidden);
    if (!moe_layer[size_t(l)]) {
      if (arch.gated_mlp) linear(p + n.gate, "", Role::DenseGate, l, intermediate, hidden, arch.mlp_bias);
      linear(p + n.up, "", Role::DenseUp, l, intermediate, hidden, arch.mlp_bias);
      linear(p + n.down, "", Role::DenseDown, l, hidden, intermediate, arch.mlp_bias);
    } else {
      add(p + n.router + ".weight", Role::Router, l, -1, experts, hidden, false);
      // Execution order of a grouped-GEMM MoE: gate and up of every expert, then down of every expert.
      for (int64_t e = 0; e < experts; ++e) {
        const std::string q = p + fmt::format(fmt::runtime(n.expert), e);
        add(q + n.expert_gate + ".weight", Role::ExpertGate, l, e, moe_intermediate, hidden, true);
        add(q + n.expert_up + ".weight", Role::ExpertUp, l, e, moe_intermediate, hidden, true);
      }
      for (int64_t e = 0; e < experts; ++e)
        add(p + fmt::format(fmt::runtime(n.expert), e) + n.expert_down + ".weight", Role::ExpertDown, l, e, hidden, moe_intermediate, true);
      if (shared_experts > 0) {
        const int64_t is = moe_intermediate * shared_experts;
        add(p + "mlp.shared_experts.gate_proj.weight", Role::SharedGate, l, -1, is, hidden, true);
        add(p + "mlp.shared_experts.up_proj.weight", Role::SharedUp, l, -1, is, hidden, true);
        add(p + "mlp.shared_experts.down_proj.weight", Role::SharedDown, l, -1, hidden, is, true);
      }
    }
  }
  if (arch.final_norm) norm(n.final_norm, Role::FinalNorm, -1, hidden);
  if (projects_embeddings()) add(std::string(n.project_out) + ".weight", Role::ProjOut, -1, -1, embed, hidden, true);
  if (!tie_embeddings) {
    add(std::string(n.lm_head) + ".weight", Role::LmHead, -1, -1, vocab, embed, false);
    if (arch.lm_head_bias) bias(std::string(n.lm_head) + ".bias", Role::LmHead, -1, vocab, 1);
  }
  return out;
}

int64_t ModelConfig::parameters() const {
  int64_t n = 0;
  for (const Tensor& t : tensors()) n += t.params();
  return n;
}

int64_t ModelConfig::active_parameters() const {
  int64_t n = 0;
  for (const Tensor& t : tensors()) {
    if (t.role == Role::ExpertGate || t.role == Role::ExpertUp || t.role == Role::ExpertDown) {
      if (t.expert < top_k) n += t.params();  // top-k experts of each MoE layer
    } else {
      n += t.params();
    }
  }
  return n;
}

Bytes ModelConfig::bytes_of(bool fp8_tensor, int64_t rows, int64_t cols) const {
  if (!fp8_tensor) return Bytes(rows * cols * weight_bytes);
  if (quant_bits == 4) return Bytes((rows * cols + 1) / 2 + (rows * cols + 15) / 16 + 4);  // NVFP4: FP8 scale per 16, FP32 global
  int64_t scales = 1;
  if (fp8_block_rows > 0 && fp8_block_cols > 0)
    scales = ((rows + fp8_block_rows - 1) / fp8_block_rows) * ((cols + fp8_block_cols - 1) / fp8_block_cols);
  return Bytes(rows * cols + 4 * scales);
}

Bytes ModelConfig::tensor_bytes(const Tensor& t) const { return bytes_of(t.fp8, t.rows, t.cols); }

Bytes ModelConfig::total_weight_bytes() const {
  Bytes b{};
  for (const Tensor& t : tensors()) b += tensor_bytes(t);
  return b;
}

Bytes ModelConfig::layer_weight_bytes(int64_t layer) const {
  Bytes b{};
  for (const Tensor& t : tensors())
    if (t.layer == layer) b += tensor_bytes(t);
  return b;
}

namespace {
/// Features of a config.json that change what inference does but are not modelled: each becomes a warning of the
/// model (printed and written with every result that uses it), never a silent difference.
void note_unmodelled(const Fields& f, ModelConfig& m) {
  // Optional fields that change no shape are still checked where given (null is "not set", as Hugging Face writes
  // it): a window or a position count of 0, -5 or "4k" is a broken file, not a default.
  f.integer_or("sliding_window", 0, 1);
  f.integer_or("max_position_embeddings", 0, 1);
  // Sliding-window attention (Mistral, Qwen with use_sliding_window, Gemma): a token attends to the last W tokens
  // only, so its KV reads (and, with a rolling cache, its KV capacity) stop growing past W. Modelled as full attention.
  const bool qwen_window = f.has("use_sliding_window");
  const bool window_on = qwen_window ? f.at("use_sliding_window").is_boolean() && f.at("use_sliding_window").get<bool>() : true;
  if (f.has("sliding_window") && window_on && f.at("sliding_window").is_number_integer() && f.at("sliding_window").get<int64_t>() > 0)
    m.warnings.push_back(
        fmt::format("sliding_window {} is not modelled: attention is timed and sized over the whole context, so "
                    "contexts longer than {} tokens overstate KV reads and KV capacity",
                    f.at("sliding_window").get<int64_t>(), f.at("sliding_window").get<int64_t>()));
  if (f.has("num_nextn_predict_layers") && f.at("num_nextn_predict_layers").is_number_integer() &&
      f.at("num_nextn_predict_layers").get<int64_t>() > 0)
    m.warnings.push_back(
        fmt::format("num_nextn_predict_layers {} (multi-token prediction modules) is not modelled: decode is one "
                    "token per step, the MTP module's weights are not counted",
                    f.at("num_nextn_predict_layers").get<int64_t>()));
  if (f.has("rope_scaling") && f.at("rope_scaling").is_object() && f.at("rope_scaling").contains("type") &&
      f.at("rope_scaling")["type"] == "dynamic")
    m.warnings.push_back("rope_scaling type dynamic is not modelled (it changes no shape; its per-step cost is not counted)");
}
}  // namespace

namespace {
/// Falcon's attention and norms (FalconConfig, FalconAttention, FalconDecoderLayer): the KV heads of the fused
/// projection, head_dim = hidden / heads, and where the LayerNorms are.
void falcon_attention(const Fields& f, ModelConfig& m) {
  if (m.hidden % m.heads != 0) f.fail("num_attention_heads", fmt::format("{} does not divide hidden_size ({})", m.heads, m.hidden));
  m.head_dim = m.hidden / m.heads;
  const bool new_arch = f.boolean_or("new_decoder_architecture", false);
  if (new_arch) {
    m.kv_heads = f.integer_or("num_kv_heads", m.heads, 1);
    if (m.kv_heads > m.heads) f.fail("num_kv_heads", fmt::format("{} exceeds num_attention_heads ({})", m.kv_heads, m.heads));
    if (m.heads % m.kv_heads != 0) f.fail("num_kv_heads", fmt::format("{} does not divide num_attention_heads ({})", m.kv_heads, m.heads));
  } else if (f.boolean_or("multi_query", true)) {
    m.kv_heads = 1;  // one K and one V head shared by every query head (Falcon-7B)
  } else {
    m.kv_heads = m.heads;  // the fused projection is 3 x hidden
    if (f.has("num_kv_heads") && f.integer("num_kv_heads") != m.heads)
      f.fail("num_kv_heads", fmt::format("{} KV heads need new_decoder_architecture: true (without it and without multi_query, "
                                         "Falcon's query_key_value is 3 x hidden_size, one KV head per head: {})",
                                         f.integer("num_kv_heads"), m.heads));
  }
  // The norms: parallel attention behind one LayerNorm (input_layernorm) or two (ln_attn, ln_mlp); sequential
  // attention and FFN behind input_layernorm and post_attention_layernorm.
  const int64_t norms = f.integer_or("num_ln_in_parallel_attn", new_arch ? 2 : 1, 1);
  if (norms > 2)
    f.fail("num_ln_in_parallel_attn", fmt::format("{}: Falcon has 1 or 2 LayerNorms before parallel attention and FFN", norms));
  m.arch.parallel_residual = f.boolean_or("parallel_attn", true);
  if (m.arch.parallel_residual && norms == 2) {
    m.arch.names.attn_norm = "ln_attn";
    m.arch.names.ffn_norm = "ln_mlp";
  } else {
    m.arch.ffn_norm = !m.arch.parallel_residual;
  }
  if (f.boolean_or("alibi", false)) m.rotary_fraction = 0;  // ALiBi biases in attention instead of rotary (no weights)
}
}  // namespace

ModelConfig parse_model(const json& j, const std::string& origin, const std::string& name) {
  if (!j.is_object()) throw ConfigError(fmt::format("{}: expected a JSON object (a Hugging Face config.json)", origin));
  Fields f(j, origin);
  ModelConfig m;
  m.name = name;
  m.origin = origin;
  // The family first: it decides which keys spell the sizes and what the decoder looks like. A file without a
  // model_type is an error (never a guess from the keys present: Llama keys fit several families).
  m.arch = f.choice(architectures(), "model_type");
  m.model_type = f.string_or("model_type", "");
  m.qk_norm = m.arch.qk_norm;
  const ConfigKeys& key = m.arch.keys;
  m.hidden = f.integer(key.hidden);
  m.layers = f.integer(key.layers);
  m.heads = f.integer(key.heads);
  if (m.arch.falcon_layout) {
    falcon_attention(f, m);
  } else if (m.arch.mha_only) {
    m.kv_heads = m.heads;  // multi-head attention: these families have no num_key_value_heads
    if (m.hidden % m.heads != 0) f.fail(key.heads, fmt::format("{} does not divide {} ({})", m.heads, key.hidden, m.hidden));
    m.head_dim = m.hidden / m.heads;
  } else {
    m.kv_heads = f.integer_or("num_key_value_heads", m.heads, 1);
    if (m.kv_heads > m.heads) f.fail("num_key_value_heads", fmt::format("{} exceeds num_attention_heads ({})", m.kv_heads, m.heads));
    if (m.heads % m.kv_heads != 0)
      f.fail("num_key_value_heads", fmt::format("{} does not divide num_attention_heads ({})", m.kv_heads, m.heads));
    m.head_dim = f.has("head_dim") ? f.integer("head_dim") : m.hidden / m.heads;
    if (!f.has("head_dim") && m.hidden % m.heads != 0)
      f.fail("head_dim", fmt::format("missing, and hidden_size {} is not a multiple of num_attention_heads {}", m.hidden, m.heads));
  }
  m.vocab = f.integer("vocab_size");
  m.tie_embeddings = f.boolean_or("tie_word_embeddings", m.arch.tie_default);
  // The activation: the family's config-class default when absent (Hugging Face writes it into every config.json
  // it saves); a name bitline does not list is an error naming the field.
  m.activation = f.string_or(key.activation, m.arch.default_activation);
  f.choice(activations(), key.activation, m.arch.default_activation);
  if (key.positions) m.positions = f.integer(key.positions) + m.arch.position_offset;
  // Biases and the family's own fields, where the family has a key for them.
  if (key.attention_bias) m.arch.qkv_bias = m.arch.o_bias = f.boolean_or(key.attention_bias, m.arch.qkv_bias);
  if (key.mlp_bias) m.arch.mlp_bias = f.boolean_or(key.mlp_bias, m.arch.mlp_bias);
  if (key.all_bias)
    m.arch.qkv_bias = m.arch.o_bias = m.arch.mlp_bias =
        f.boolean_or(key.all_bias, m.arch.qkv_bias);  // the family's default (OPT true, Falcon false)
  if (key.parallel_residual) m.arch.parallel_residual = f.boolean_or(key.parallel_residual, m.arch.parallel_residual);
  if (key.rotary_fraction && f.has(key.rotary_fraction)) {
    const json& v = f.at(key.rotary_fraction);
    if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 1)
      f.fail(key.rotary_fraction, fmt::format("expected a fraction in (0, 1], got {}", json_brief(v)));
    m.rotary_fraction = v.get<double>();
  }
  if (key.rotary_dim && f.has(key.rotary_dim)) {
    const int64_t d = f.integer(key.rotary_dim);
    if (d > m.head_dim) f.fail(key.rotary_dim, fmt::format("{} exceeds the head dimension ({})", d, m.head_dim));
    m.rotary_fraction = double(d) / double(m.head_dim);
  }
  // OPT: the embedding's width (null or absent: hidden_size; otherwise project_in / project_out), and the norms'
  // placement: post-LayerNorm layers (do_layer_norm_before false) have no final LayerNorm, nor do files with
  // _remove_final_layer_norm (OPTDecoder creates final_layer_norm only for do_layer_norm_before and not that).
  if (key.embed_proj) m.embed_dim = f.integer_or(key.embed_proj, m.hidden, 1);
  if (key.pre_norm && !f.boolean_or(key.pre_norm, true)) m.arch.final_norm = false;
  if (key.remove_final_norm && f.boolean_or(key.remove_final_norm, false)) m.arch.final_norm = false;
  // Storage format.
  m.weight_bytes = f.choice(torch_dtypes(), "torch_dtype", "bfloat16");
  if (f.has("quantization_config")) {
    const json& q = f.at("quantization_config");
    if (!q.is_object()) f.fail("quantization_config", "expected an object");
    Fields qf(q, origin + ": quantization_config");
    switch (qf.choice(quant_methods(), "quant_method")) {
      case QuantMethod::Fp8:
        m.fp8 = true;
        break;
    }
    // DeepSeek's FP8 checkpoints name their element format; both FP8 formats are one byte, anything else is not FP8.
    if (qf.has("fmt")) {
      const std::string fmt = qf.string_or("fmt", "");
      if (fmt != "e4m3" && fmt != "e5m2")
        f.fail("quantization_config", fmt::format("fmt \"{}\" is not an FP8 format (e4m3 or e5m2)", text_brief(fmt)));
    }
    if (qf.has("weight_block_size")) {
      const json& b = q.at("weight_block_size");
      if (!b.is_array() || b.size() != 2 || !b[0].is_number_integer() || !b[1].is_number_integer() || b[0].get<int64_t>() <= 0 ||
          b[1].get<int64_t>() <= 0)
        f.fail("quantization_config", "weight_block_size must be two positive integers, e.g. [128, 128]");
      m.fp8_block_rows = b[0].get<int64_t>();
      m.fp8_block_cols = b[1].get<int64_t>();
    }
  }

  // Attention (the classic families have no MLA or MoE fields).
  if (!m.arch.dense_family && f.has("kv_lora_rank")) {
    m.attention = AttentionKind::Mla;
    m.kv_lora_rank = f.integer("kv_lora_rank");
    m.q_lora_rank = f.integer_or("q_lora_rank", 0, 0);
    m.qk_nope_head_dim = f.integer("qk_nope_head_dim");
    m.qk_rope_head_dim = f.integer("qk_rope_head_dim");
    m.v_head_dim = f.integer("v_head_dim");
  }

  // FFN: mixture of experts or dense.
  // The experts' count: the family's key (Mixtral: num_local_experts), else num_experts or n_routed_experts.
  const char* experts_key = key.experts ? key.experts : f.has("n_routed_experts") ? "n_routed_experts" : "num_experts";
  if (!m.arch.dense_family && !key.experts && f.has("num_experts") && f.has("n_routed_experts"))
    f.fail("n_routed_experts", "both num_experts and n_routed_experts are given");
  m.experts = m.arch.dense_family ? 0 : f.integer_or(experts_key, 0, 0);
  // An explicit 0 beside the routing of a MoE (experts per token) is a MoE without experts, not a dense model:
  // refused as a single expert is (a dense config writes no expert keys, or 0 without num_experts_per_tok).
  if (!m.arch.dense_family && m.experts == 0 && f.has(experts_key) && f.has("num_experts_per_tok") &&
      f.integer_or("num_experts_per_tok", 0, 0) > 0)
    f.fail(experts_key, fmt::format("0 experts, but num_experts_per_tok is {} (a MoE needs experts; a dense model gives neither)",
                                    f.integer_or("num_experts_per_tok", 0, 0)));
  m.moe_layer.assign(size_t(m.layers), false);
  if (m.experts > 0) {
    m.top_k = f.integer("num_experts_per_tok");
    if (m.top_k > m.experts) f.fail("num_experts_per_tok", fmt::format("{} exceeds the number of experts ({})", m.top_k, m.experts));
    // Group-limited routing (DeepSeek-V3: 8 groups, each token's experts from the best 4): it changes which experts a
    // token reaches, not how many, so it is not timed; a group count that does not split the experts is a broken file.
    if (f.has("n_group")) {
      const int64_t groups = f.integer("n_group");
      if (m.experts % groups != 0) f.fail("n_group", fmt::format("{} groups do not split the {} experts evenly", groups, m.experts));
      const int64_t top = f.integer_or("topk_group", groups, 1);
      if (top > groups) f.fail("topk_group", fmt::format("{} exceeds the number of groups (n_group {})", top, groups));
    } else {
      f.integer_or("topk_group", 0, 1);
    }
    m.moe_intermediate = f.integer(key.moe_intermediate);
    m.shared_experts = f.integer_or("n_shared_experts", 0, 0);
    const int64_t first_dense = f.integer_or("first_k_dense_replace", 0, 0);
    if (first_dense >= m.layers)
      f.fail("first_k_dense_replace",
             fmt::format("{} leading dense layers of {} layers leave no MoE layer (at most {})", first_dense, m.layers, m.layers - 1));
    const int64_t freq = f.integer_or("moe_layer_freq", 1, 1);
    const int64_t step = f.integer_or("decoder_sparse_step", 1, 1);
    std::vector<int64_t> mlp_only;
    if (f.has("mlp_only_layers")) {
      const json& a = f.at("mlp_only_layers");
      if (!a.is_array()) f.fail("mlp_only_layers", "expected a list of layer indices");
      for (const auto& x : a) {
        if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() >= m.layers)
          f.fail("mlp_only_layers", fmt::format("{} is not a layer index in [0, {})", json_brief(x), m.layers));
        mlp_only.push_back(x.get<int64_t>());
      }
    }
    for (int64_t l = 0; l < m.layers; ++l) {
      bool moe = l >= first_dense && (l - first_dense) % freq == 0 && (l + 1) % step == 0;
      if (std::find(mlp_only.begin(), mlp_only.end(), l) != mlp_only.end()) moe = false;
      m.moe_layer[size_t(l)] = moe;
    }
  } else if (!m.arch.dense_family && f.has("num_experts_per_tok") && !f.has(experts_key)) {
    f.fail("num_experts_per_tok", "given, but the model has no experts (num_experts / n_routed_experts)");
  }
  // The tensor list (names, shapes) is built whole: about 200 B per tensor.
  const int64_t tensors = m.layers * (16 + 3 * m.experts);
  if (tensors > kMaxModelTensors)
    f.fail(m.experts > 0 ? experts_key : "num_hidden_layers",
           fmt::format("{} layers x {} experts make about {} weight tensors, more than the {} a model may have (DeepSeek-V3 has "
                       "about 47,000)",
                       m.layers, m.experts, tensors, kMaxModelTensors));
  if (m.arch.ffn_default_multiple > 0)  // GPT-2, GPT-J: n_inner null or absent = 4 x n_embd
    m.intermediate = f.integer_or(key.intermediate, m.arch.ffn_default_multiple * m.hidden, 1);
  else if (m.dense_layers() > 0)
    m.intermediate = f.integer(key.intermediate);
  else
    m.intermediate = f.integer_or(key.intermediate, 0, 0);
  note_unmodelled(f, m);
  return m;
}

ModelConfig load_model_file(const std::filesystem::path& file) {
  const json j = parse_input_json(read_input_file(file, kMaxModelFileBytes, "model description"), file.string());
  return parse_model(j, file.string(), file.stem().string());
}

std::filesystem::path models_dir() { return default_preset_dir() / "models"; }

std::vector<std::string> available_models() {
  std::vector<std::string> out;
  file_stems(models_dir(), ".json", out);
  std::sort(out.begin(), out.end());
  return out;
}

ModelConfig load_model(const std::string& name_or_path) {
  if (name_or_path.size() > 5 && name_or_path.ends_with(".json")) return load_model_file(name_or_path);
  const auto file = models_dir() / (name_or_path + ".json");
  if (!std::filesystem::exists(file)) {
    std::string known;
    for (const auto& n : available_models()) known += (known.empty() ? "" : ", ") + n;
    throw ConfigError(fmt::format("unknown model '{}' (known models: {}; or give a path to a config.json)", name_or_path,
                                  known.empty() ? "none found in " + models_dir().string() : known));
  }
  return load_model_file(file);
}

}  // namespace bitline::llm
