// The classic decoder families (GPT-2, OPT, GPT-NeoX, GPT-J) from their own
// config.json keys: parameter counts against the published totals, the
// non-gated FFN, biases, LayerNorm and learned positions in the tensors, the
// weight bytes, the FLOPs and the step graph; and the errors for families and
// activations bitline does not know.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "llm/gpu.hpp"
#include "llm/model.hpp"
#include "llm/step.hpp"
#include "llm_test_util.hpp"

using namespace bitline;
using namespace bitline::llm;
using bitline::llm::test::shipped;

namespace {

ModelConfig parse(const std::string& text, const std::string& name = "m") {
  return parse_model(nlohmann::json::parse(text), name + ".json", name);
}

std::string error_of(const std::string& text) {
  try {
    parse(text, "test");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

int count_named(const ModelConfig& m, const std::string& part) {
  int n = 0;
  for (const Tensor& t : m.tensors()) n += t.name.find(part) != std::string::npos;
  return n;
}

const Op* find_op(const StepGraph& g, const std::string& name) {
  for (const Op& o : g.ops)
    if (o.name == name) return &o;
  return nullptr;
}

// A GPT-2 of H = 64, 4 heads, 2 layers, n_inner null (4H = 256), 100 tokens of vocabulary, 32 positions.
const char* kTinyGpt2 = R"({"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2, "n_inner": null,
                            "n_positions": 32, "vocab_size": 100, "activation_function": "gelu_new", "torch_dtype": "float16"})";

}  // namespace

// Published totals: GPT-2 XL 1.558B (the Hugging Face count of openai-community/gpt2-xl: 1,557,611,200),
// GPT-J-6B 6,053,381,344 (EleutherAI model card), GPT-NeoX-20B 20,554,567,680 (Black et al. 2022, Table 1 and
// the model card), OPT-66B "66B" (Zhang et al. 2022, Table 1).
TEST(LlmArch, ParameterCountsMatchThePublishedTotals) {
  EXPECT_EQ(shipped("gpt2-xl").parameters(), 1557611200);                                     // exact
  EXPECT_EQ(shipped("gpt-neox-20b").parameters(), 20554567680);                               // exact
  EXPECT_NEAR(double(shipped("gpt-j-6b").parameters()), 6053381344.0, 0.001 * 6053381344.0);  // 6,050,882,784 (0.04% under)
  EXPECT_NEAR(double(shipped("opt-66b").parameters()) * 1e-9, 66.0, 0.01 * 66.0);             // 65.7B ("66B" is rounded)
  // Llama 2 (the Hugging Face counts of meta-llama/Llama-2-{7b,70b}-hf), the gated family beside them.
  EXPECT_EQ(shipped("llama2-7b").parameters(), 6738415616);
  EXPECT_EQ(shipped("llama2-70b").parameters(), 68976648192);
  // Mixtral-8x7B: 46.7B, 12.9B active (Jiang et al. 2024); the experts' FFN size is intermediate_size.
  const ModelConfig x = shipped("mixtral-8x7b");
  EXPECT_EQ(x.parameters(), 46702792704);  // the Hugging Face count
  EXPECT_NEAR(double(x.active_parameters()) * 1e-9, 12.9, 0.1);
  EXPECT_EQ(x.experts, 8);
  EXPECT_EQ(x.top_k, 2);
  EXPECT_EQ(x.moe_intermediate, 14336);
  EXPECT_EQ(x.moe_layers(), 32);
  EXPECT_EQ(count_named(x, "model.layers.0.block_sparse_moe.experts.7.w2.weight"), 1);
}

TEST(LlmArch, ClassicFamiliesAreMhaWithANonGatedFfn) {
  for (const char* name : {"gpt2-xl", "gpt-j-6b", "gpt-neox-20b", "opt-66b"}) {
    const ModelConfig m = shipped(name);
    EXPECT_EQ(m.kv_heads, m.heads) << name;
    EXPECT_FALSE(m.gated_mlp()) << name;
    EXPECT_EQ(m.mlp_matrices(), 2) << name;
    EXPECT_FALSE(m.is_moe()) << name;
    EXPECT_EQ(m.attention, AttentionKind::Gqa) << name;
    EXPECT_EQ(count_named(m, "gate"), 0) << name;
  }
  for (const char* name : {"llama3.1-405b", "qwen3-235b"}) EXPECT_TRUE(shipped(name).gated_mlp()) << name;
  const ModelConfig g = shipped("gpt2-xl");
  EXPECT_EQ(g.intermediate, 4 * 1600);  // n_inner null
  EXPECT_EQ(g.positions, 1024);
  EXPECT_TRUE(g.tie_embeddings);  // GPT2Config's default
  EXPECT_EQ(g.activation, "gelu_new");
  EXPECT_EQ(shipped("opt-66b").positions, 2050);  // max_position_embeddings + 2
  EXPECT_TRUE(shipped("opt-66b").tie_embeddings);
  EXPECT_EQ(shipped("gpt-neox-20b").positions, 0);  // rotary
  EXPECT_DOUBLE_EQ(shipped("gpt-neox-20b").rotary_fraction, 0.25);
  EXPECT_DOUBLE_EQ(shipped("gpt-j-6b").rotary_fraction, 64.0 / 256.0);
  EXPECT_TRUE(shipped("gpt-neox-20b").arch.parallel_residual);
  EXPECT_FALSE(shipped("gpt-j-6b").arch.ffn_norm);                        // one LayerNorm per layer
  EXPECT_EQ(count_named(shipped("gpt-j-6b"), "transformer.h.0.ln_"), 2);  // ln_1 weight and bias
  EXPECT_EQ(count_named(shipped("gpt-j-6b"), "lm_head.bias"), 1);
}

TEST(LlmArch, TinyGpt2ByHand) {
  const ModelConfig m = parse(kTinyGpt2, "tiny-gpt2");
  const int64_t H = 64, I = 256;
  const int64_t layer = 2 * 2 * H /* ln_1, ln_2 */ + 3 * (H * H + H) /* c_attn q, k, v */ + H * H + H /* c_proj */ + H * I + I /* c_fc */ +
                        I * H + H /* mlp.c_proj */;
  EXPECT_EQ(layer, 12 * H * H + 13 * H);
  EXPECT_EQ(m.parameters(), 100 * H + 32 * H + 2 * layer + 2 * H);  // wte, wpe, layers, ln_f (LM head tied)
  EXPECT_EQ(m.layer_weight_bytes(1).raw(), 2 * layer);              // float16
  EXPECT_EQ(m.kv_bytes_per_token(), 2 * H * 2 * 2);                 // K+V of 4 heads x 16, 2 bytes, 2 layers
  // Hugging Face names; the fused c_attn is split into its q, k, v parts.
  EXPECT_EQ(count_named(m, "transformer.h.1.attn.c_attn.weight[k]"), 1);
  EXPECT_EQ(count_named(m, "transformer.h.1.attn.c_attn.bias[v]"), 1);
  EXPECT_EQ(count_named(m, "transformer.wpe.weight"), 1);
  EXPECT_EQ(count_named(m, "lm_head"), 0);

  // One GPU, 3 requests: the FFN is one GEMM of 2 M H I FLOPs (GELU in its epilogue) and the down projection.
  KindParams k = bitline::llm::test::preset_kind("h200");
  const Deployment d = make_deployment(m, 1, k.llm);
  const GpuWeights w = gpu_weights(m, d);
  EXPECT_EQ(w.total.raw(), 2 * m.parameters());
  const StepGraph g = build_step(m, d, w, GpuCompute(1e15, k.llm.compute), Network(k.llm.network), {10, 20, 30}, 0.0);
  const double M = 3;
  ASSERT_NE(find_op(g, "L0.up"), nullptr);
  EXPECT_EQ(find_op(g, "L0.gate_up"), nullptr);
  EXPECT_DOUBLE_EQ(find_op(g, "L0.up")->flops, 2 * M * H * I);
  EXPECT_EQ(find_op(g, "L0.up")->tensor_count, 2u);  // c_fc weight and bias
  EXPECT_DOUBLE_EQ(find_op(g, "L1.down")->flops, 2 * M * I * H);
  ASSERT_NE(find_op(g, "pos_embed"), nullptr);
  EXPECT_EQ(find_op(g, "pos_embed")->embed_rows, 3);
  EXPECT_EQ(find_op(g, "L0.attn_norm")->tensor_count, 2u);  // LayerNorm weight and bias
  // FLOPs of a step: 2 x the layers' matrices per token, attention 4 d heads sum(ctx) per layer, the tied LM head.
  const double matrices = 2 * (4 * H * H + 2 * H * I);
  EXPECT_DOUBLE_EQ(g.flops, 2 * M * matrices + 2 * 4.0 * 60 * 4 * 16 + 2 * M * H * 100);
  // Every tensor is read by exactly one op (biases with their weights).
  uint32_t read = 0;
  for (const Op& o : g.ops) read += o.tensor_count;
  EXPECT_EQ(read, uint32_t(w.tensors.size()) + 1);  // + the tied LM head reading the embedding again
}

TEST(LlmArch, TensorParallelShardsBiasesLikeTheirWeights) {
  const ModelConfig m = shipped("gpt-neox-20b");
  KindParams k = bitline::llm::test::preset_kind("h200");
  const Deployment d = make_deployment(m, 8, k.llm);
  ASSERT_TRUE(d.tensor_parallel);
  const GpuWeights w = gpu_weights(m, d);
  const int64_t H = 6144, I = 24576, V = 50432;
  // Per GPU: column-parallel q/k/v and h_to_4h with their biases split, row-parallel dense and 4h_to_h split with
  // their biases whole, norms whole, embedding and LM head split by vocabulary.
  const int64_t layer = 2 * 2 * H + (3 * H * H + 3 * H) / 8 + H * H / 8 + H + (H * I + I) / 8 + I * H / 8 + H;
  EXPECT_EQ(w.total.raw(), 2 * (44 * layer + 2 * (V / 8) * H + 2 * H));
  // Parallel residual: one all-reduce per layer (attention and FFN summed), not two.
  const StepGraph g = build_step(m, d, w, GpuCompute(1e15, k.llm.compute), Network(k.llm.network), {100}, 0.0);
  EXPECT_EQ(find_op(g, "L3.attn.all_reduce"), nullptr);
  EXPECT_NE(find_op(g, "L3.ffn.all_reduce"), nullptr);
  const StepGraph o = build_step(shipped("opt-66b"), make_deployment(shipped("opt-66b"), 8, k.llm),
                                 gpu_weights(shipped("opt-66b"), make_deployment(shipped("opt-66b"), 8, k.llm)),
                                 GpuCompute(1e15, k.llm.compute), Network(k.llm.network), {100}, 0.0);
  EXPECT_NE(find_op(o, "L3.attn.all_reduce"), nullptr);
}

// A family bitline does not know, an activation it does not know, or a family's field in another family's
// spelling is an error naming the file and the field, never a fallback.
TEST(LlmArch, UnknownFamiliesActivationsAndKeysAreErrors) {
  std::string e = error_of(R"({"model_type": "bloom", "hidden_size": 64, "n_layer": 2, "n_head": 4, "vocab_size": 10})");
  EXPECT_NE(e.find("test.json: field 'model_type': 'bloom' is not one of"), std::string::npos) << e;
  e = error_of(R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 8, "vocab_size": 10,
                   "activation_function": "swiglu_v9"})");
  EXPECT_NE(e.find("test.json: field 'activation_function': 'swiglu_v9' is not one of"), std::string::npos) << e;
  e = error_of(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                   "vocab_size": 10, "intermediate_size": 8, "hidden_act": "mish"})");
  EXPECT_NE(e.find("test.json: field 'hidden_act': 'mish' is not one of"), std::string::npos) << e;
  // GPT-2 spells the width n_embd: a GPT-2 file written with Llama keys names the missing GPT-2 key.
  e = error_of(R"({"model_type": "gpt2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10})");
  EXPECT_NE(e.find("test.json: field 'n_embd': missing"), std::string::npos) << e;
  // A Llama-key file without model_type is not taken for Llama (SwiGLU): model_type is required.
  e = error_of(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8,
                   "hidden_act": "gelu"})");
  EXPECT_NE(e.find("test.json: field 'model_type': missing (required: one of"), std::string::npos) << e;
  // OPT's embedding width and norm placement: a positive integer within its bound, true or false.
  const std::string opt = R"("model_type": "opt", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                             "vocab_size": 10, "ffn_dim": 256, "max_position_embeddings": 16)";
  e = error_of("{" + opt + R"(, "word_embed_proj_dim": 0})");
  EXPECT_NE(e.find("test.json: field 'word_embed_proj_dim': 0 is below the minimum 1"), std::string::npos) << e;
  e = error_of("{" + opt + R"(, "word_embed_proj_dim": 1e9})");
  EXPECT_NE(e.find("test.json: field 'word_embed_proj_dim': 1000000000 is above the maximum 131072"), std::string::npos) << e;
  e = error_of("{" + opt + R"(, "word_embed_proj_dim": "32"})");
  EXPECT_NE(e.find("test.json: field 'word_embed_proj_dim': expected an integer"), std::string::npos) << e;
  e = error_of("{" + opt + R"(, "do_layer_norm_before": "false"})");
  EXPECT_NE(e.find("test.json: field 'do_layer_norm_before': expected true or false"), std::string::npos) << e;
  e = error_of("{" + opt + R"(, "_remove_final_layer_norm": 1})");
  EXPECT_NE(e.find("test.json: field '_remove_final_layer_norm': expected true or false"), std::string::npos) << e;
  e = error_of(R"({"model_type": "gpt_neox", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10,
                   "intermediate_size": 256, "rotary_pct": 1.5})");
  EXPECT_NE(e.find("field 'rotary_pct': expected a fraction in (0, 1]"), std::string::npos) << e;
  e = error_of(R"({"model_type": "gptj", "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 10, "rotary_dim": 32})");
  EXPECT_NE(e.find("field 'rotary_dim': 32 exceeds the head dimension (16)"), std::string::npos) << e;
  e = error_of(R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 5, "n_positions": 8, "vocab_size": 10})");
  EXPECT_NE(e.find("field 'n_head': 5 does not divide n_embd (64)"), std::string::npos) << e;
  // The activation is optional where the family's config class has a default (GPT-2: gelu_new, OPT: relu).
  EXPECT_EQ(parse(R"({"model_type": "opt", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10,
                      "ffn_dim": 256, "max_position_embeddings": 16})")
                .activation,
            "relu");
}

// The same sizes as a gated (Llama) and a non-gated (GPT-NeoX) model: the FFN weights are 2/3, and so are its
// FLOPs and its bytes per step.
TEST(LlmArch, NonGatedFfnFlowsThroughBytesFlopsAndTheStep) {
  const std::string sizes =
      R"("hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 1024,
         "tie_word_embeddings": false, "attention_bias": false)";
  const ModelConfig gated = parse("{" + sizes + R"(, "model_type": "llama"})", "gated");
  const ModelConfig plain = parse("{" + sizes + R"(, "model_type": "gpt_neox", "use_parallel_residual": false})", "plain");
  const int64_t ffn = 256 * 1024;
  // gated: gate, up, down; plain: up + bias, down + bias, and LayerNorm biases (2 per layer).
  EXPECT_EQ(gated.layer_weight_bytes(0).raw() - 2 * 3 * ffn,
            plain.layer_weight_bytes(0).raw() - 2 * 2 * ffn - 2 * (1024 + 256) - 2 * 2 * 256);
  KindParams k = bitline::llm::test::preset_kind("h200");
  const auto flops_of = [&](const ModelConfig& m) {
    const Deployment d = make_deployment(m, 1, k.llm);
    const GpuWeights w = gpu_weights(m, d);
    const StepGraph g = build_step(m, d, w, GpuCompute(1e15, k.llm.compute), Network(k.llm.network), {1}, 0.0);
    double ffn_flops = 0;
    for (const Op& o : g.ops)
      if (o.name.find(".up") != std::string::npos || o.name.find(".gate_up") != std::string::npos ||
          o.name.find(".down") != std::string::npos)
        ffn_flops += o.flops;
    return ffn_flops;
  };
  EXPECT_DOUBLE_EQ(flops_of(gated), 2 * 2 * 3.0 * ffn);
  EXPECT_DOUBLE_EQ(flops_of(plain), 2 * 2 * 2.0 * ffn);
}

// facebook/opt-350m (its published config.json's fields): word_embed_proj_dim 512 < hidden_size 1024, so the
// embedding (tied LM head) is 512 wide, project_in (512 -> 1024) follows it and project_out (1024 -> 512) precedes
// the LM head; do_layer_norm_before false (post-LayerNorm layers) means no final LayerNorm. The Hugging Face count:
// 331,196,416 = embed 50272 x 512 + positions 2050 x 1024 + project_in/out 2 x 512 x 1024 + 24 x 12,596,224.
namespace {

const char* kOpt350m = R"({"_remove_final_layer_norm": false, "activation_dropout": 0.0, "activation_function": "relu",
  "architectures": ["OPTForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 2, "do_layer_norm_before": false,
  "dropout": 0.1, "eos_token_id": 2, "ffn_dim": 4096, "hidden_size": 1024, "init_std": 0.02, "layerdrop": 0.0,
  "max_position_embeddings": 2048, "model_type": "opt", "num_attention_heads": 16, "num_hidden_layers": 24,
  "pad_token_id": 1, "prefix": "</s>", "torch_dtype": "float16", "use_cache": true, "vocab_size": 50272,
  "word_embed_proj_dim": 512})";

// `text` with its one `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

}  // namespace

TEST(LlmArch, Opt350mParameterCountMatchesThePublishedTotal) {
  const ModelConfig m = parse(kOpt350m, "opt-350m");
  EXPECT_EQ(m.embed_width(), 512);
  EXPECT_TRUE(m.projects_embeddings());
  EXPECT_FALSE(m.arch.final_norm);
  const int64_t H = 1024, E = 512, I = 4096, V = 50272;
  const int64_t layer = 2 * 2 * H + 4 * (H * H + H) + (H * I + I) + (I * H + H);
  EXPECT_EQ(layer, 12596224);
  EXPECT_EQ(m.parameters(), V * E + 2050 * H + 2 * E * H + 24 * layer);
  EXPECT_EQ(m.parameters(), 331196416);  // exact (the Hugging Face count of facebook/opt-350m)
  EXPECT_EQ(m.total_weight_bytes().raw(), 2 * 331196416);
  EXPECT_EQ(m.kv_bytes_per_token(), 2 * 1024 * 24 * 2);
  // Families without the field, and OPT files whose word_embed_proj_dim equals hidden_size, project nothing.
  EXPECT_FALSE(shipped("opt-66b").projects_embeddings());
  EXPECT_TRUE(shipped("opt-66b").arch.final_norm);
  EXPECT_EQ(shipped("gpt2-xl").embed_width(), 1600);
}

TEST(LlmArch, Opt350mHasProjectInAndOutAndNoFinalNorm) {
  const ModelConfig m = parse(kOpt350m, "opt-350m");
  const std::vector<Tensor> ts = m.tensors();
  const auto find = [&](const std::string& name) -> const Tensor* {
    for (const Tensor& t : ts)
      if (t.name == name) return &t;
    return nullptr;
  };
  const Tensor* embed = find("model.decoder.embed_tokens.weight");
  const Tensor* in = find("model.decoder.project_in.weight");
  const Tensor* out = find("model.decoder.project_out.weight");
  ASSERT_NE(embed, nullptr);
  ASSERT_NE(in, nullptr);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(embed->rows, 50272);  // [vocab, word_embed_proj_dim]
  EXPECT_EQ(embed->cols, 512);
  EXPECT_EQ(in->role, Role::ProjIn);  // Linear(512 -> 1024, bias=False): [out, in]
  EXPECT_EQ(in->rows, 1024);
  EXPECT_EQ(in->cols, 512);
  EXPECT_EQ(out->role, Role::ProjOut);  // Linear(1024 -> 512, bias=False)
  EXPECT_EQ(out->rows, 512);
  EXPECT_EQ(out->cols, 1024);
  EXPECT_EQ(count_named(m, "project_in.bias") + count_named(m, "project_out.bias"), 0);
  EXPECT_EQ(to_string(Role::ProjIn), "project_in");
  EXPECT_EQ(to_string(Role::ProjOut), "project_out");
  // Execution order: embedding, project_in, positions, the layers, project_out (LM head tied).
  EXPECT_EQ(ts[0].role, Role::Embed);
  EXPECT_EQ(ts[1].role, Role::ProjIn);
  EXPECT_EQ(ts[2].role, Role::PosEmbed);
  EXPECT_EQ(ts[2].cols, 1024);  // positions are hidden_size wide
  EXPECT_EQ(ts.back().role, Role::ProjOut);
  // No final LayerNorm (do_layer_norm_before false); the per-layer LayerNorms remain.
  EXPECT_EQ(find("model.decoder.final_layer_norm.weight"), nullptr);
  EXPECT_EQ(count_named(m, "model.decoder.final_layer_norm"), 0);
  EXPECT_EQ(count_named(m, "model.decoder.layers.23.final_layer_norm."), 2);  // weight and bias
  EXPECT_EQ(count_named(m, "model.decoder.layers.23.self_attn_layer_norm."), 2);
  for (const Tensor& t : ts) EXPECT_NE(t.role, Role::FinalNorm) << t.name;
  // An untied LM head is [vocab, word_embed_proj_dim].
  const ModelConfig u = parse(replaced(kOpt350m, R"("use_cache": true)", R"("tie_word_embeddings": false)"), "opt-350m-untied");
  EXPECT_EQ(u.tensors().back().name, "lm_head.weight");
  EXPECT_EQ(u.tensors().back().cols, 512);
  EXPECT_EQ(u.parameters(), 331196416 + 50272 * 512);
  // do_layer_norm_before true keeps the final LayerNorm, unless _remove_final_layer_norm removes it.
  const std::string pre = replaced(kOpt350m, R"("do_layer_norm_before": false)", R"("do_layer_norm_before": true)");
  EXPECT_EQ(count_named(parse(pre), "model.decoder.final_layer_norm"), 2);
  EXPECT_EQ(parse(pre).parameters(), 331196416 + 2 * 1024);
  const std::string removed = replaced(pre, R"("_remove_final_layer_norm": false)", R"("_remove_final_layer_norm": true)");
  EXPECT_EQ(count_named(parse(removed), "model.decoder.final_layer_norm"), 0);
  // An OPT file without word_embed_proj_dim (or with null: Hugging Face's default) projects nothing.
  const std::string plain = replaced(kOpt350m, R"("word_embed_proj_dim": 512)", R"("word_embed_proj_dim": null)");
  EXPECT_FALSE(parse(plain).projects_embeddings());
  EXPECT_EQ(count_named(parse(plain), "project_"), 0);
}

// The step of OPT-350m: the embedding lookup reads 512-wide rows, project_in and project_out are GEMMs of
// 2 M 512 1024 FLOPs each that read their weights, and the tied LM head is a GEMM over 512 inputs.
TEST(LlmArch, Opt350mProjectionsAndNarrowLmHeadInTheStep) {
  const ModelConfig m = parse(kOpt350m, "opt-350m");
  KindParams k = bitline::llm::test::preset_kind("h200");
  const Deployment d = make_deployment(m, 1, k.llm);
  const GpuWeights w = gpu_weights(m, d);
  EXPECT_EQ(w.total.raw(), 2 * m.parameters());
  const StepGraph g = build_step(m, d, w, GpuCompute(1e15, k.llm.compute), Network(k.llm.network), {10, 20, 30}, 0.0);
  const double M = 3, H = 1024, E = 512, V = 50272, I = 4096;
  const Op* embed = find_op(g, "embed");
  const Op* in = find_op(g, "project_in");
  const Op* out = find_op(g, "project_out");
  const Op* head = find_op(g, "lm_head");
  ASSERT_NE(embed, nullptr);
  ASSERT_NE(in, nullptr);
  ASSERT_NE(out, nullptr);
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(embed->embed_rows, 3);
  EXPECT_EQ(embed->embed_cols, 512);
  EXPECT_EQ(find_op(g, "pos_embed")->embed_cols, 1024);
  EXPECT_EQ(find_op(g, "final_norm"), nullptr);
  EXPECT_DOUBLE_EQ(in->flops, 2 * M * E * H);
  EXPECT_DOUBLE_EQ(out->flops, 2 * M * H * E);
  EXPECT_DOUBLE_EQ(head->flops, 2 * M * E * V);
  ASSERT_EQ(in->tensor_count, 1u);
  ASSERT_EQ(out->tensor_count, 1u);
  EXPECT_EQ(w.tensors[in->first_tensor].role, Role::ProjIn);
  EXPECT_EQ(w.tensors[in->first_tensor].bytes.raw(), 2 * 512 * 1024);
  EXPECT_EQ(w.tensors[out->first_tensor].role, Role::ProjOut);
  EXPECT_EQ(w.tensors[out->first_tensor].bytes.raw(), 2 * 512 * 1024);
  // FLOPs of the step: the layers' matrices, attention (4 d heads sum(ctx)), the projections and the tied head.
  const double matrices = 4 * H * H + 2 * H * I;
  EXPECT_DOUBLE_EQ(g.flops, 24 * 2 * M * matrices + 24 * 4.0 * 60 * 16 * 64 + 2 * (2 * M * E * H) + 2 * M * E * V);
  // Every tensor is read by exactly one op (biases with their weights), the tied LM head reads the embedding again.
  uint32_t read = 0;
  for (const Op& o : g.ops) read += o.tensor_count;
  EXPECT_EQ(read, uint32_t(w.tensors.size()) + 1);
  // Tensor parallel over 8 GPUs: the projections are held whole, the embedding split by vocabulary.
  const Deployment d8 = make_deployment(m, 8, k.llm);
  ASSERT_TRUE(d8.tensor_parallel);
  const GpuWeights w8 = gpu_weights(m, d8);
  int64_t projections = 0, embedding = 0;
  for (const GpuTensor& t : w8.tensors) {
    if (t.role == Role::ProjIn || t.role == Role::ProjOut) projections += t.bytes.raw();
    if (t.role == Role::Embed) embedding += t.bytes.raw();
  }
  EXPECT_EQ(projections, 2 * (2 * 512 * 1024));
  EXPECT_EQ(embedding, 2 * (50272 / 8) * 512);
}

// Falcon (Hugging Face's FalconConfig / modeling_falcon.py): the KV heads of the fused query_key_value follow
// new_decoder_architecture (num_kv_heads), else multi_query (one), else the heads; parallel attention and FFN sit
// behind one LayerNorm (input_layernorm) or two (ln_attn, ln_mlp; the default with new_decoder_architecture);
// biases only with `bias`; embeddings tied by default. Falcon-180B by hand: per layer the fused projection
// H x (232 + 2 x 8) x 64, dense H x H, h_to_4h and 4h_to_h H x 4H, two LayerNorms (weight and bias).
TEST(LlmArch, FalconKvHeadsNormsAndParameterCount) {
  const ModelConfig f = shipped("falcon-180b");
  const int64_t H = 14848, I = 4 * H, V = 65024;
  EXPECT_EQ(f.kv_heads, 8);
  EXPECT_EQ(f.head_dim, 64);
  EXPECT_EQ(f.intermediate, I);  // ffn_hidden_size absent: 4 x hidden
  EXPECT_TRUE(f.tie_embeddings);
  EXPECT_TRUE(f.arch.parallel_residual);
  EXPECT_TRUE(f.arch.ffn_norm);  // ln_mlp beside ln_attn
  EXPECT_FALSE(f.gated_mlp());
  EXPECT_EQ(f.activation, "gelu");
  const int64_t layer = H * (232 + 2 * 8) * 64 + H * H + 2 * H * I + 2 * 2 * H;
  EXPECT_EQ(f.parameters(), 80 * layer + V * H + 2 * H);          // layers, the tied embedding, ln_f
  EXPECT_NEAR(double(f.parameters()) * 1e-9, 180.0, 0.01 * 180);  // "180B" (178.6B)
  EXPECT_EQ(count_named(f, "transformer.h.79.ln_attn."), 2);
  EXPECT_EQ(count_named(f, "transformer.h.79.ln_mlp."), 2);
  EXPECT_EQ(count_named(f, "transformer.h.0.self_attention.query_key_value.weight[k]"), 1);
  EXPECT_EQ(count_named(f, ".bias[") + count_named(f, "dense.bias") + count_named(f, "lm_head"), 0);
  EXPECT_EQ(f.kv_bytes_per_token(), 2 * 8 * 64 * 2 * 80);

  // Falcon-7B's layout: multi-query (one KV head) behind one LayerNorm; `bias` adds every projection's bias.
  const std::string small = R"("model_type": "falcon", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
                               "vocab_size": 10)";
  const ModelConfig mq = parse("{" + small + "}");
  EXPECT_EQ(mq.kv_heads, 1);
  EXPECT_FALSE(mq.arch.ffn_norm);
  EXPECT_EQ(count_named(mq, "transformer.h.1.input_layernorm."), 2);
  EXPECT_EQ(mq.parameters(), 2 * (64 * (4 + 2) * 16 + 64 * 64 + 2 * 64 * 256 + 2 * 64) + 10 * 64 + 2 * 64);
  const ModelConfig biased = parse("{" + small + R"(, "bias": true})");
  EXPECT_EQ(biased.parameters() - mq.parameters(), 2 * ((4 + 2) * 16 + 64 + 256 + 64));
  // Neither multi_query nor the new architecture: one KV head per head; sequential attention and FFN: two norms.
  const ModelConfig mha = parse("{" + small + R"(, "multi_query": false, "parallel_attn": false})");
  EXPECT_EQ(mha.kv_heads, 4);
  EXPECT_FALSE(mha.arch.parallel_residual);
  EXPECT_TRUE(mha.arch.ffn_norm);
  EXPECT_EQ(count_named(mha, "transformer.h.0.post_attention_layernorm."), 2);
  // The new architecture with one LayerNorm, and without num_kv_heads (one KV head per head).
  const ModelConfig one = parse("{" + small + R"(, "new_decoder_architecture": true, "num_ln_in_parallel_attn": 1})");
  EXPECT_EQ(one.kv_heads, 4);
  EXPECT_FALSE(one.arch.ffn_norm);
  EXPECT_EQ(parse("{" + small + R"(, "ffn_hidden_size": 100})").intermediate, 100);

  // Errors name the field.
  std::string e = error_of("{" + small + R"(, "multi_query": false, "num_kv_heads": 2})");
  EXPECT_NE(e.find("test.json: field 'num_kv_heads': 2 KV heads need new_decoder_architecture: true"), std::string::npos) << e;
  e = error_of("{" + small + R"(, "new_decoder_architecture": true, "num_kv_heads": 3})");
  EXPECT_NE(e.find("field 'num_kv_heads': 3 does not divide num_attention_heads (4)"), std::string::npos) << e;
  e = error_of("{" + small + R"(, "new_decoder_architecture": true, "num_kv_heads": 8})");
  EXPECT_NE(e.find("field 'num_kv_heads': 8 exceeds num_attention_heads (4)"), std::string::npos) << e;
  e = error_of("{" + small + R"(, "num_ln_in_parallel_attn": 3})");
  EXPECT_NE(e.find("field 'num_ln_in_parallel_attn': 3: Falcon has 1 or 2 LayerNorms"), std::string::npos) << e;
  e = error_of(R"({"model_type": "falcon", "hidden_size": 64, "num_attention_heads": 5, "num_hidden_layers": 2, "vocab_size": 10})");
  EXPECT_NE(e.find("field 'num_attention_heads': 5 does not divide hidden_size (64)"), std::string::npos) << e;
  e = error_of("{" + small + R"(, "bias": "no"})");
  EXPECT_NE(e.find("field 'bias': expected true or false"), std::string::npos) << e;
  e = error_of("{" + small + R"(, "ffn_hidden_size": 1e12})");
  EXPECT_NE(e.find("field 'ffn_hidden_size': 1000000000000 is above the maximum 1048576"), std::string::npos) << e;
  e = error_of("{" + small + R"(, "activation": "mish"})");
  EXPECT_NE(e.find("field 'activation': 'mish' is not one of"), std::string::npos) << e;
}

// Falcon-180B over 8 GPUs: 29 query heads and one KV head per GPU, and one all-reduce per layer (attention and
// FFN in parallel, summed before it).
TEST(LlmArch, FalconTensorParallelStep) {
  const ModelConfig m = shipped("falcon-180b");
  KindParams k = bitline::llm::test::preset_kind("h100");
  const Deployment d = make_deployment(m, 8, k.llm);
  ASSERT_TRUE(d.tensor_parallel);
  const StepGraph g = build_step(m, d, gpu_weights(m, d), GpuCompute(1e15, k.llm.compute), Network(k.llm.network), {100}, 0.0);
  EXPECT_EQ(find_op(g, "L5.attn.all_reduce"), nullptr);
  EXPECT_NE(find_op(g, "L5.ffn.all_reduce"), nullptr);
  EXPECT_EQ(m.heads / 8, 29);
  EXPECT_EQ(m.kv_heads / 8, 1);
}

// Mistral-7B-v0.1 (mistralai's config.json): 7,241,732,096 parameters (the Hugging Face count), 8 KV heads; its
// 4,096-token sliding window is not modelled and says so.
TEST(LlmArch, Mistral7bParameterCountAndWindowWarning) {
  const ModelConfig m = shipped("mistral-7b");
  EXPECT_EQ(m.parameters(), 7241732096);
  EXPECT_EQ(m.kv_heads, 8);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("sliding_window 4096 is not modelled"), std::string::npos) << m.warnings[0];
}
