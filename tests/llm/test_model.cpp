// Models: parsing Hugging Face config.json, parameter counts and KV bytes per
// token against the published figures, and clear errors for bad descriptions.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "llm/model.hpp"
#include "llm_test_util.hpp"

namespace fs = std::filesystem;
using namespace bitline;
using namespace bitline::llm;
using bitline::llm::test::preset_kinds;
using bitline::llm::test::shipped;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_model(nlohmann::json::parse(text), "test.json", "test");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(LlmModel, ParameterCountsMatchThePublishedSizes) {
  struct Case {
    const char* name;
    double billions;
  };
  for (const Case& c : {Case{"qwen3-235b", 235}, Case{"qwen3-coder-480b", 480}, Case{"llama3.1-405b", 405}, Case{"deepseek-v3", 671}}) {
    const ModelConfig m = shipped(c.name);
    const double b = double(m.parameters()) * 1e-9;
    EXPECT_NEAR(b, c.billions, 0.01 * c.billions) << c.name << ": " << b << "B parameters";
  }
}

TEST(LlmModel, ActiveParametersOfTheMoeModels) {
  // Published active sizes: Qwen3-235B-A22B, Qwen3-Coder-480B-A35B, DeepSeek-V3 37B.
  EXPECT_NEAR(double(shipped("qwen3-235b").active_parameters()) * 1e-9, 22, 0.5);
  EXPECT_NEAR(double(shipped("qwen3-coder-480b").active_parameters()) * 1e-9, 35, 0.7);
  EXPECT_NEAR(double(shipped("deepseek-v3").active_parameters()) * 1e-9, 37, 0.8);
}

TEST(LlmModel, KvBytesPerTokenAreExactlyTheAppendixFigures) {
  EXPECT_EQ(shipped("qwen3-235b").kv_bytes_per_token(), 192512);
  EXPECT_EQ(shipped("qwen3-coder-480b").kv_bytes_per_token(), 253952);
  EXPECT_EQ(shipped("llama3.1-405b").kv_bytes_per_token(), 516096);
  EXPECT_EQ(shipped("deepseek-v3").kv_bytes_per_token(), 70272);
}

TEST(LlmModel, ShapesFromTheAppendix) {
  const ModelConfig q = shipped("qwen3-235b");
  EXPECT_EQ(q.layers, 94);
  EXPECT_EQ(q.moe_layers(), 94);
  EXPECT_EQ(q.experts, 128);
  EXPECT_EQ(q.top_k, 8);
  EXPECT_EQ(q.attention, AttentionKind::Gqa);
  const ModelConfig d = shipped("deepseek-v3");
  EXPECT_EQ(d.attention, AttentionKind::Mla);
  EXPECT_EQ(d.dense_layers(), 3);
  EXPECT_EQ(d.moe_layers(), 58);
  EXPECT_EQ(d.shared_experts, 1);
  EXPECT_TRUE(d.fp8);
  const ModelConfig l = shipped("llama3.1-405b");
  EXPECT_FALSE(l.is_moe());
  EXPECT_EQ(l.head_dim, 128);  // derived: 16384 / 128
  EXPECT_EQ(l.intermediate, 53248);
}

TEST(LlmModel, Fp8WeightsAreOneBytePlusBlockScales) {
  const ModelConfig d = shipped("deepseek-v3");
  // An expert's up projection: 2048 x 7168 FP8 weights + 16 x 56 FP32 scales.
  EXPECT_EQ(d.bytes_of(true, 2048, 7168).raw(), 2048 * 7168 + 4 * 16 * 56);
  // Embedding and LM head stay 16-bit: total bytes ~ 671e9 - 2 x 0.93e9 (1 B) + 2 x 0.93e9 (2 B) + scales.
  const double gb = double(d.total_weight_bytes().raw()) * 1e-9;
  EXPECT_GT(gb, 672);
  EXPECT_LT(gb, 676);
  // A BF16 model: 2 bytes per parameter.
  const ModelConfig q = shipped("qwen3-235b");
  EXPECT_EQ(q.total_weight_bytes().raw(), 2 * q.parameters());
}

TEST(LlmModel, TinyModelByHand) {
  const ModelConfig t = shipped("tiny-test");
  // Per layer: q 64x64, k 32x64, v 32x64, o 64x64, 2 norms of 64, gate/up 128x64, down 64x128.
  const int64_t layer = 64 * 64 + 32 * 64 + 32 * 64 + 64 * 64 + 2 * 64 + 3 * 128 * 64;
  EXPECT_EQ(t.parameters(), 2 * layer + 256 * 64 * 2 + 64);
  EXPECT_EQ(t.kv_bytes_per_token(), 2 * 2 * 16 * 2 * 2);  // K+V, 2 KV heads, dim 16, 2 bytes, 2 layers
  EXPECT_EQ(t.layer_weight_bytes(1).raw(), 2 * layer);
  // Qwen3-235B: a layer is 71.3M attention + 0.5M router + 128 x 3 x 4096 x 1536 expert weights, in BF16.
  EXPECT_EQ(shipped("qwen3-235b").layer_weight_bytes(5).raw(),
            2 * (4096 * 8192 * 2 + 4096 * 512 * 2 + 2 * 128 + 2 * 4096 + 128 * 4096 + 128 * 3 * 4096 * 1536LL));
}

TEST(LlmModel, BadDescriptionsNameTheFileAndTheField) {
  EXPECT_NE(
      error_of(R"({"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8})")
          .find("test.json: field 'hidden_size': missing"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"model_type": "llama", "hidden_size": "big", "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10})")
                .find("field 'hidden_size': expected an integer"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 0, "num_attention_heads": 4, "vocab_size": 10})")
                .find("field 'num_hidden_layers': 0 is below the minimum 1"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 3,
                         "vocab_size": 10, "intermediate_size": 8})")
          .find("field 'num_key_value_heads': 3 does not divide"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10,
                         "num_experts": 8, "moe_intermediate_size": 16})")
                .find("field 'num_experts_per_tok': missing"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10,
                         "intermediate_size": 8, "torch_dtype": "int4"})")
                .find("field 'torch_dtype': 'int4' is not one of"),
            std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("expected a JSON object"), std::string::npos);
}

// model_type picks the architecture from a table (llm::architectures()): a name it does not list is an error,
// not a silent "like Llama".
TEST(LlmModel, ModelTypeComesFromTheArchitectureTable) {
  const std::string body =
      R"("hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8)";
  const std::string unknown = error_of("{" + body + R"(, "model_type": "qwen3moe"})");
  EXPECT_NE(unknown.find("test.json: field 'model_type': 'qwen3moe' is not one of llama|qwen3|qwen3_moe"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("did you mean 'qwen3_moe'?"), std::string::npos) << unknown;
  EXPECT_NE(error_of("{" + body + "}").find("field 'model_type': missing (required: one of llama|"), std::string::npos);
  const std::string quant = error_of("{" + body + R"(, "model_type": "llama", "quantization_config": {"quant_method": "gptq"}})");
  EXPECT_NE(quant.find("field 'quant_method': 'gptq' is not one of fp8"), std::string::npos) << quant;
  // The architecture's features: Qwen3 has per-head q/k norms, Llama none.
  const auto tensors_named = [](const ModelConfig& m, const std::string& part) {
    int n = 0;
    for (const Tensor& t : m.tensors()) n += t.name.find(part) != std::string::npos;
    return n;
  };
  const ModelConfig q = parse_model(nlohmann::json::parse("{" + body + R"(, "model_type": "qwen3"})"), "q.json", "q");
  const ModelConfig l = parse_model(nlohmann::json::parse("{" + body + R"(, "model_type": "llama"})"), "l.json", "l");
  EXPECT_TRUE(q.qk_norm);
  EXPECT_FALSE(l.qk_norm);
  EXPECT_EQ(tensors_named(q, "q_norm"), 2);  // one per layer
  EXPECT_EQ(tensors_named(l, "q_norm"), 0);
  EXPECT_EQ(q.parameters() - l.parameters(), 2 * 2 * 16);  // q and k norm of head_dim 16, two layers
}

TEST(LlmModel, MalformedJsonAndUnknownModels) {
  const fs::path f = fs::temp_directory_path() / ("bitline-bad-model-" + std::to_string(::getpid()) + ".json");
  std::ofstream(f) << "{\"hidden_size\": 64,, }";
  try {
    load_model_file(f);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(f.string()), std::string::npos) << e.what();
  }
  fs::remove(f);
  try {
    load_model("no-such-model");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown model 'no-such-model'"), std::string::npos) << e.what();
  }
}
