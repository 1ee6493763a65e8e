// Reading a model description: a Hugging Face config.json (its family by model_type, the shapes by the family's keys),
// every field checked where it is read, and the files of configs/models/ by name.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/input.hpp"
#include "core/json_io.hpp"
#include "llm/model.hpp"

namespace bitline::llm {

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

/// The attention's shape: hidden size, layers, query and KV heads, head dimension (Falcon's by its own rules).
void attention_shape(const Fields& f, ModelConfig& m) {
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
}

/// The vocabulary, the activation, positions, biases, rotary embedding and the norms' placement, each by the family's
/// key.
void family_fields(const Fields& f, ModelConfig& m) {
  const ConfigKeys& key = m.arch.keys;
  m.vocab = f.integer("vocab_size");
  m.tie_embeddings = f.boolean_or("tie_word_embeddings", m.arch.tie_default);
  // The activation: the family's config-class default when absent (Hugging Face writes it into every config.json
  // it saves); a name bitline does not list is an error naming the field.
  m.activation = f.string_or(key.activation, m.arch.default_activation);
  m.activation_kind = f.choice(activations(), key.activation, m.arch.default_activation);
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
}

/// The storage format: torch_dtype, and FP8 quantization (DeepSeek's element format and block size).
void storage_format(const Fields& f, ModelConfig& m, const std::string& origin) {
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
}

/// Multi-head latent attention (DeepSeek's kv_lora_rank and head dimensions), where the family can have it.
void latent_attention(const Fields& f, ModelConfig& m) {
  if (!m.arch.dense_family && f.has("kv_lora_rank")) {
    m.attention = AttentionKind::Mla;
    m.kv_lora_rank = f.integer("kv_lora_rank");
    m.q_lora_rank = f.integer_or("q_lora_rank", 0, 0);
    m.qk_nope_head_dim = f.integer("qk_nope_head_dim");
    m.qk_rope_head_dim = f.integer("qk_rope_head_dim");
    m.v_head_dim = f.integer("v_head_dim");
  }
}

/// The FFN: a mixture of experts (count, routing, groups, shared experts, which layers) or dense. Returns the key that
/// named the experts' count.
const char* experts(const Fields& f, ModelConfig& m) {
  const ConfigKeys& key = m.arch.keys;
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
  return experts_key;
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
  attention_shape(f, m);
  family_fields(f, m);
  storage_format(f, m, origin);
  // Attention (the classic families have no MLA or MoE fields), then the FFN.
  latent_attention(f, m);
  const char* experts_key = experts(f, m);
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

bool model_is_path(const std::string& name_or_path) { return name_or_path.size() > 5 && name_or_path.ends_with(".json"); }

ModelConfig load_model(const std::string& name_or_path) {
  if (model_is_path(name_or_path)) return load_model_file(name_or_path);
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
