// LLM model descriptions, read from Hugging Face `config.json` files
// (configs/models/NAME.json), and what follows from them: the weight tensors
// with their Hugging Face names and shapes, the parameter count, the weight
// bytes and the KV-cache bytes per token. See docs/llm.md ("Models").
//
// Supported: grouped-query attention (GQA; MHA when kv heads = heads),
// multi-head latent attention (MLA, DeepSeek-V2/V3: `kv_lora_rank`), dense
// SwiGLU FFNs, the classic families (GPT-2, OPT, GPT-NeoX, GPT-J: MHA, a
// non-gated GELU/ReLU FFN, biases, LayerNorm, learned or rotary positions,
// each with its own config.json keys), Falcon (multi-query / grouped attention, parallel attention and FFN),
// mixture-of-experts FFNs (routed experts with top-k routing,
// shared experts, leading dense layers, Qwen's `mlp_only_layers` and
// `decoder_sparse_step`), 16-bit weights and FP8 weights with block scales
// (`quantization_config.quant_method: fp8`). The KV cache is 16-bit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/registry.hpp"
#include "core/units.hpp"

namespace bitline::llm {

/// Most tokens of one request (input or output, `--context IN:OUT`, a trace's input_tokens/output_tokens): 2^30,
/// about 100x the longest context windows of today's models (1-10M tokens). Larger counts are refused where they
/// are read, naming the field.
inline constexpr int64_t kMaxContextTokens = int64_t(1) << 30;

/// Most weight tensors of a model (num_hidden_layers x (3 x experts + ~16)); the tensor list is built whole,
/// ~200 B a tensor. DeepSeek-V3 has about 47,000.
inline constexpr int64_t kMaxModelTensors = int64_t(1) << 20;

enum class AttentionKind { Gqa, Mla };

/// The config.json keys an architecture family spells its sizes with (Hugging Face's names differ by family:
/// GPT-2 and GPT-J write n_embd / n_layer / n_head / n_inner, OPT ffn_dim, ...).
struct ConfigKeys {
  const char* hidden = "hidden_size";
  const char* layers = "num_hidden_layers";
  const char* heads = "num_attention_heads";
  const char* intermediate = "intermediate_size";
  const char* activation = "hidden_act";
  const char* positions = nullptr;                // learned positions: the key of their count (n_positions, max_position_embeddings)
  const char* attention_bias = "attention_bias";  // true/false: biases of q, k, v and o (Llama, GPT-NeoX)
  const char* mlp_bias = "mlp_bias";              // true/false: biases of the FFN projections (Llama)
  const char* all_bias = nullptr;                 // true/false: every projection's bias (OPT enable_bias, Falcon bias)
  const char* parallel_residual = nullptr;        // true/false (GPT-NeoX use_parallel_residual)
  const char* rotary_fraction = nullptr;          // fraction of head_dim with rotary embeddings (GPT-NeoX rotary_pct)
  const char* rotary_dim = nullptr;               // dimensions with rotary embeddings (GPT-J rotary_dim)
  const char* embed_proj = nullptr;               // embedding width; project_in/out if not hidden (OPT word_embed_proj_dim)
  const char* pre_norm = nullptr;                 // true/false; false: norms after, no final norm (OPT do_layer_norm_before)
  const char* remove_final_norm = nullptr;        // true/false: no final norm (OPT _remove_final_layer_norm)
  const char* experts = nullptr;                  // routed experts (Mixtral num_local_experts); null: num_experts or n_routed_experts
  const char* moe_intermediate = "moe_intermediate_size";  // an expert's FFN size (Mixtral: intermediate_size)
};

/// The Hugging Face tensor names of a family (`{}` in `layer` is the layer index; a fused q/k/v projection is
/// split into its q, k and v parts, named NAME.weight[q] etc., because tensor parallelism shards it by head).
struct TensorNames {
  const char* embed = "model.embed_tokens";
  const char* positions = "";
  const char* layer = "model.layers.{}.";
  const char* attn_norm = "input_layernorm";
  const char* q = "self_attn.q_proj";
  const char* k = "self_attn.k_proj";
  const char* v = "self_attn.v_proj";
  const char* fused_qkv = nullptr;  // one tensor for q, k and v (GPT-2 c_attn, GPT-NeoX query_key_value)
  const char* o = "self_attn.o_proj";
  const char* ffn_norm = "post_attention_layernorm";
  const char* gate = "mlp.gate_proj";
  const char* up = "mlp.up_proj";
  const char* down = "mlp.down_proj";
  const char* final_norm = "model.norm";
  const char* project_in = "";   // embedding width -> hidden (OPT, when word_embed_proj_dim differs from hidden_size)
  const char* project_out = "";  // hidden -> embedding width, before the LM head
  const char* lm_head = "lm_head";
  const char* router = "mlp.gate";
  const char* expert = "mlp.experts.{}.";  // {} = the expert's index
  const char* expert_gate = "gate_proj";
  const char* expert_up = "up_proj";
  const char* expert_down = "down_proj";
};

/// What a Hugging Face `model_type` adds to the decoder that the fields describe
/// (GQA or MLA attention, dense or MoE FFN, sizes: read from the fields).
struct Architecture {
  bool qk_norm = false;                     // per-head RMSNorm of q and k before attention (Qwen3)
  bool gated_mlp = true;                    // gate and up projections (SwiGLU, 3 matrices); false: up, activation, down (2)
  bool layer_norm = false;                  // LayerNorm with weight and bias; false: RMSNorm (weight only)
  bool qkv_bias = false;                    // biases of q, k, v (Qwen2; GPT-2, OPT, GPT-NeoX)
  bool o_bias = false;                      // bias of the output projection
  bool mlp_bias = false;                    // biases of the FFN projections
  bool lm_head_bias = false;                // GPT-J
  bool ffn_norm = true;                     // a norm before the FFN (GPT-J: attention and FFN share the layer's one norm)
  bool final_norm = true;                   // a norm after the last layer (OPT: not with do_layer_norm_before false)
  bool parallel_residual = false;           // attention and FFN read the same input (GPT-J; GPT-NeoX: use_parallel_residual)
  bool mha_only = false;                    // classic families: kv heads = heads
  bool dense_family = false;                // no MoE or MLA fields are read (the classic families, Falcon)
  bool falcon_layout = false;               // Falcon: kv heads from new_decoder_architecture / multi_query / num_kv_heads,
                                            // the norms from parallel_attn / num_ln_in_parallel_attn (FalconConfig)
  bool tie_default = false;                 // tie_word_embeddings when the file does not say (the family's config class default)
  int64_t ffn_default_multiple = 0;         // > 0: the intermediate key may be null or absent, meaning this x hidden (GPT-2: 4)
  int64_t position_offset = 0;              // learned positions: rows = the positions key + this (OPT: 2)
  const char* default_activation = "silu";  // the family's config class default
  ConfigKeys keys{};
  TensorNames names{};
};
/// The architectures bitline models, by `model_type` (table in llm/model.cpp).
const Registry<Architecture>& architectures();
/// Activation functions bitline knows (`hidden_act` / `activation_function`; table in llm/model.cpp), by what they
/// compute. All cost the same (fused into the GEMM's epilogue or one element-wise kernel); an unlisted name is an error.
enum class Activation { Silu, Gelu, GeluTanh, QuickGelu, Relu };
const Registry<Activation>& activations();
/// Bytes per weight of each `torch_dtype` (table in llm/model.cpp).
const Registry<int64_t>& torch_dtypes();
/// `quantization_config.quant_method` (table in llm/model.cpp).
enum class QuantMethod { Fp8 };
const Registry<QuantMethod>& quant_methods();
/// llm.precision (table in llm/model.cpp): the model's own formats, or one format for every linear layer, its GEMM
/// inputs and the KV cache.
enum class Precision { Model, Bf16, Fp16, Fp8, Fp4 };
const Registry<Precision>& precisions();

/// What a weight tensor is for: decides how it is sharded and which operator reads it.
enum class Role : uint8_t {
  Embed,
  LmHead,
  FinalNorm,
  AttnNorm,
  FfnNorm,
  QProj,
  KProj,
  VProj,
  OProj,
  QNorm,
  KNorm,  // GQA (QNorm/KNorm: Qwen3)
  QAProj,
  QANorm,
  QBProj,
  KVAProj,
  KVANorm,
  KVBProj,   // MLA
  PosEmbed,  // learned position embeddings (GPT-2, OPT)
  DenseGate,
  DenseUp,
  DenseDown,  // dense FFN
  Router,
  ExpertGate,
  ExpertUp,
  ExpertDown,  // routed experts
  SharedGate,
  SharedUp,
  SharedDown,  // shared experts
  ProjIn,
  ProjOut,  // embedding width <-> hidden (OPT project_in / project_out)
};
std::string to_string(Role r);

/// One weight tensor of the checkpoint, shape [rows, cols] (Hugging Face [out, in]).
struct Tensor {
  std::string name;  // Hugging Face name, e.g. model.layers.3.mlp.experts.17.up_proj.weight
  Role role = Role::Embed;
  int32_t layer = -1;   // -1: not in a decoder layer
  int32_t expert = -1;  // routed expert index, else -1
  int64_t rows = 0, cols = 0;
  bool fp8 = false;   // stored in FP8 (1 byte per weight + one FP32 scale per block)
  bool bias = false;  // the bias of the weight tensor before it (same role): [out, 1] for a projection, [1, H] for a norm
  int64_t params() const { return rows * cols; }
};

struct ModelConfig {
  std::string name;    // file stem, e.g. "qwen3-235b"
  std::string origin;  // the file it came from (for messages)
  std::string model_type;
  bool qk_norm = false;                           // from the architecture (model_type): q_norm / k_norm tensors and kernel
  Architecture arch;                              // the family's structure (gated MLP, norms, biases, names)
  std::string activation;                         // hidden_act / activation_function (a name of activations(), as written)
  Activation activation_kind = Activation::Silu;  // what it computes
  int64_t positions = 0;                          // rows of the learned position embedding (0: rotary positions)
  double rotary_fraction = 1;                     // of head_dim that gets rotary embeddings (GPT-NeoX rotary_pct, GPT-J rotary_dim)

  int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, vocab = 0;
  int64_t embed_dim = 0;     // token embedding / LM head width if not hidden (OPT word_embed_proj_dim); 0: hidden
  int64_t intermediate = 0;  // dense FFN intermediate size (0 when every layer is MoE)
  bool tie_embeddings = false;

  // Mixture of experts (experts == 0: dense model).
  int64_t experts = 0, shared_experts = 0, top_k = 0, moe_intermediate = 0;
  std::vector<bool> moe_layer;  // per layer: true = MoE FFN, false = dense FFN

  // Attention. GQA uses heads, kv_heads, head_dim; MLA uses the fields below.
  AttentionKind attention = AttentionKind::Gqa;
  int64_t q_lora_rank = 0;  // 0: MLA without a low-rank query (q_proj directly)
  int64_t kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;

  // Storage.
  int64_t weight_bytes = 2;                        // bytes per 16-bit weight (torch_dtype)
  bool fp8 = false;                                // linear layers in FP8 (quantization_config)
  int64_t fp8_block_rows = 0, fp8_block_cols = 0;  // FP32 scale per block (0: per tensor)
  int64_t quant_bits = 8;                          // bits per quantized weight: 8 (FP8) or 4 (NVFP4: + an FP8 scale per 16)
  int64_t kv_value_bytes = 2;                      // 16-bit KV cache (FlashAccel, Evaluation setup: "KV bytes/token (16-bit)")

  // What the file asks for that the model does not do (sliding_window, ...): reported with every result.
  std::vector<std::string> warnings;

  bool is_moe() const { return experts > 0; }
  /// Linear layers in NVFP4 (4-bit weights and GEMM inputs).
  bool fp4() const { return fp8 && quant_bits == 4; }
  /// Width of the token embedding's rows and of the LM head's inputs (hidden unless the model projects them).
  int64_t embed_width() const { return embed_dim > 0 ? embed_dim : hidden; }
  /// project_in after the embedding and project_out before the LM head (OPT-350m).
  bool projects_embeddings() const { return embed_width() != hidden; }
  bool gated_mlp() const { return arch.gated_mlp; }
  /// Weight matrices of a dense FFN: 3 (gate, up, down) or 2 (up, down).
  int64_t mlp_matrices() const { return arch.gated_mlp ? 3 : 2; }
  int64_t moe_layers() const;
  int64_t dense_layers() const { return layers - moe_layers(); }

  /// KV-cache bytes one token adds in one layer (GQA: K and V of every KV head; MLA: latent + RoPE key).
  int64_t kv_bytes_per_token_layer() const;
  /// KV-cache bytes per token, all layers.
  int64_t kv_bytes_per_token() const { return kv_bytes_per_token_layer() * layers; }

  /// Every weight tensor of the checkpoint (embedding, [project_in], [positions], decoder layers, [final norm],
  /// [project_out], [LM head]), in execution order.
  std::vector<Tensor> tensors() const;
  /// Parameters (weights) of the model, counted from tensors().
  int64_t parameters() const;
  /// Parameters used for one token (shared weights + top-k routed experts per MoE layer).
  int64_t active_parameters() const;
  /// Bytes of one tensor as stored (FP8 tensors include their FP32 block scales).
  Bytes tensor_bytes(const Tensor& t) const;
  /// Bytes of `rows x cols` weights of a tensor kind (`t.fp8` decides the format).
  Bytes bytes_of(bool fp8_tensor, int64_t rows, int64_t cols) const;
  /// Bytes of all weights.
  Bytes total_weight_bytes() const;
  /// Bytes of the weights of decoder layer `layer` (all experts included).
  Bytes layer_weight_bytes(int64_t layer) const;
};

/// `m` in the format `p` (Precision::Model: unchanged): bf16/fp16 16-bit everywhere; fp8 FP8 linear layers (per-tensor
/// scales unless the model has its own blocks) and an FP8 KV cache; fp4 NVFP4 linear layers (4 bits + an FP8 scale per
/// 16 weights) and an FP8 KV cache. Embedding, norms, router and LM head stay 16-bit.
ModelConfig with_precision(ModelConfig m, Precision p);

/// Parses a Hugging Face config.json. `origin` names the file in messages; `name` is the model's name.
/// Throws ConfigError naming the file and the field for a missing field or a bad value.
ModelConfig parse_model(const nlohmann::json& j, const std::string& origin, const std::string& name);
/// Reads and parses a config.json file (ConfigError for I/O problems and malformed JSON, with the position).
ModelConfig load_model_file(const std::filesystem::path& file);
/// The folder of shipped models: <preset dir>/models.
std::filesystem::path models_dir();
/// Loads a model by name (models_dir()/NAME.json) or by path (anything ending in .json).
/// Unknown names: ConfigError listing the available models.
ModelConfig load_model(const std::string& name_or_path);
/// Whether load_model reads `name_or_path` as a config.json path (it ends in .json) rather than a name of configs/models/.
bool model_is_path(const std::string& name_or_path);
/// Names of the models in models_dir().
std::vector<std::string> available_models();

}  // namespace bitline::llm
