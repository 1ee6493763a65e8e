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

const Registry<Activation>& activations() {
  static const Registry<Activation> r("activation function",
                                      {{"silu", "x sigmoid(x) (SwiGLU in a gated FFN)", Activation::Silu},
                                       {"swish", "= silu", Activation::Silu},
                                       {"gelu", "exact GELU (erf)", Activation::Gelu},
                                       {"gelu_new", "GELU, tanh approximation (GPT-2, GPT-J)", Activation::GeluTanh},
                                       {"gelu_fast", "GELU, tanh approximation", Activation::GeluTanh},
                                       {"gelu_pytorch_tanh", "GELU, tanh approximation (PyTorch's)", Activation::GeluTanh},
                                       {"quick_gelu", "x sigmoid(1.702 x)", Activation::QuickGelu},
                                       {"relu", "max(0, x) (OPT)", Activation::Relu}});
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

}  // namespace bitline::llm
