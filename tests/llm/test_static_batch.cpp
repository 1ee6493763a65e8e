// Static batching (llm/static_batch.hpp): a batch prefilled together, then OUT - 1 decode steps over the growing KV;
// checked against its own steps, its interpolation, its memory check, and the published TensorRT-LLM v0.9.0
// measurements (docs/calibration.md, "Against measurements on real GPUs"), each row pinned at the model's value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "llm/static_batch.hpp"
#include "llm_test_util.hpp"

using namespace bitline;
using namespace bitline::llm;
using bitline::llm::test::preset_kind;
using bitline::llm::test::shipped;

namespace {
KindParams fp8(const std::string& kind) {
  KindParams k = preset_kind(kind);
  k.llm.precision = Precision::Fp8;
  return k;
}

// The h100 kind in FP8 under the custom engine, every host cost 0 until a test sets one.
KindParams fp8_h100_custom_engine() {
  KindParams k = fp8("h100");
  k.serving.engine.kind = EngineKind::Custom;
  return k;
}
}  // namespace

TEST(LlmStaticBatch, IsItsPrefillAndEveryDecodeStep) {
  const ModelConfig m = shipped("llama2-7b");
  const KindParams k = fp8("h100");
  const Server s(m, k, 1);
  const ContextSpec c{"", 128, 16};
  const StaticBatchReport b = run_static_batch(s, 8, c);
  ASSERT_EQ(b.decode_steps, 15);
  EXPECT_EQ(b.steps_timed, 15);  // short runs: every step timed
  const EngineOverheads e = engine_overheads(EngineKind::Auto, true, 1);
  Time sum{};
  for (int64_t j = 1; j <= 15; ++j) sum += s.step_at(std::vector<int64_t>(8, 128 + j), c, false, e).step;
  EXPECT_EQ(b.decode, sum);
  EXPECT_EQ(b.total, b.ttft + b.decode);
  EXPECT_NEAR(b.output_tokens_per_s_per_gpu, 8.0 * 16 / to_s(b.total), 1e-9);
  // Later steps attend over more KV: never faster than the first.
  EXPECT_GE(b.last_step, b.first_step);
}

TEST(LlmStaticBatch, ACustomEnginesLaunchCostBoundsAShortPrefillOnTheHost) {
  // Llama-2-7B's 128-token prefill is ~4 ms of GPU work in ~325 kernels: at 40 us a launch the host (13 ms) sets the
  // time to first token; at 0 (CUDA graphs) the GPU does.
  const ModelConfig m = shipped("llama2-7b");
  KindParams k = fp8_h100_custom_engine();
  const ContextSpec c{"", 128, 1};
  const StaticBatchReport graphs = run_static_batch(Server(m, k, 1), 1, c);
  EXPECT_EQ(graphs.prefill_engine, Time{});
  k.serving.engine.launch = us(40);
  const StaticBatchReport eager = run_static_batch(Server(m, k, 1), 1, c);
  EXPECT_GT(eager.ttft, graphs.ttft * 2.5);
  EXPECT_EQ(eager.ttft, graphs.prefill.time + eager.prefill_engine);
  EXPECT_EQ(eager.prefill.time, graphs.prefill.time);             // the GPU's work is the same
  EXPECT_EQ(eager.ttft, us(40) * double(eager.prefill.kernels));  // host-bound: its launches
}

TEST(LlmStaticBatch, ACustomEnginesRequestCostIsPaidOnceByTheBatchsCall) {
  // serving.engine.request: the runtime's own cost of a call, before the first token. A static batch is one call of the
  // runtime (gptSessionBenchmark's generate()), so a batch of 8 pays it once, not per sequence, and the GPU's work and
  // the decode steps do not change.
  KindParams k = fp8_h100_custom_engine();
  const ModelConfig m = shipped("llama2-7b");
  const ContextSpec c{"", 128, 4};
  const StaticBatchReport without = run_static_batch(Server(m, k, 1), 8, c);
  k.serving.engine.request = ms(2);
  const StaticBatchReport with = run_static_batch(Server(m, k, 1), 8, c);
  EXPECT_EQ(without.request_engine, Time{});
  EXPECT_EQ(with.request_engine, ms(2));
  EXPECT_EQ(with.ttft, without.ttft + ms(2));
  EXPECT_EQ(with.prefill.time, without.prefill.time);
  EXPECT_EQ(with.decode, without.decode);
  EXPECT_EQ(with.total, without.total + ms(2));
  EXPECT_DOUBLE_EQ(with.json()["request_engine_ms"].get<double>(), 2.0);
}

TEST(LlmStaticBatch, LongRunsInterpolateBetweenTimedSteps) {
  const ModelConfig m = shipped("llama2-7b");
  const Server s(m, fp8("h100"), 1);
  const ContextSpec c{"", 256, 400};
  const StaticBatchReport b = run_static_batch(s, 16, c);
  EXPECT_EQ(b.steps_timed, kMaxTimedSteps);
  const EngineOverheads e = engine_overheads(EngineKind::Auto, true, 1);
  double exact = 0;
  for (int64_t j = 1; j <= 399; ++j) exact += to_s(s.step_at(std::vector<int64_t>(16, 256 + j), c, false, e).step);
  EXPECT_NEAR(to_s(b.decode) / exact, 1.0, 0.002);
}

// A MoE model on data-parallel attention ranks: a batch that does not fill every rank sends only its own tokens to
// the experts. Batch 1 on two ranks is one prompt (the other rank idle), not one per rank: its prefill is shorter
// than batch 2's, and its steps count one request.
TEST(LlmStaticBatch, ABatchSmallerThanTheRanksTimesOnlyItsOwnRequests) {
  const ModelConfig m = shipped("mixtral-8x7b");
  const Server s(m, fp8("h100"), 2);
  ASSERT_EQ(s.deployment().ranks, 2);  // data-parallel attention, experts over both GPUs
  const ContextSpec c{"", 2048, 4};
  const StaticBatchReport one = run_static_batch(s, 1, c), two = run_static_batch(s, 2, c);
  EXPECT_EQ(one.requests_per_rank, 1);
  EXPECT_EQ(two.requests_per_rank, 1);
  EXPECT_LT(to_s(one.prefill.time), 0.9 * to_s(two.prefill.time));  // half the expert tokens
  EXPECT_LT(one.first_step, two.first_step);
  const EngineOverheads e = engine_overheads(EngineKind::Auto, true, 1);
  EXPECT_EQ(s.step_at({2049}, c, false, e, 1).batch, 1);
  EXPECT_EQ(s.step_at({2049}, c, false, e).batch, 2);     // every rank as full as the timed one
  EXPECT_EQ(s.step_at({2049}, c, false, e, 5).batch, 2);  // at most every rank's
  EXPECT_EQ(one.first_step, s.step_at({2049}, c, false, e, 1).step);
  // A dense model under tensor parallelism has one rank: nothing changes.
  const Server d(shipped("llama2-70b"), fp8("h100"), 2);
  ASSERT_EQ(d.deployment().ranks, 1);
  EXPECT_EQ(run_static_batch(d, 3, c).first_step, d.step_at({2049, 2049, 2049}, c, false, e).step);
}

// TensorRT-LLM's session runtime has no data-parallel attention: under it (serving.engine auto), a static batch's
// attention_parallel auto is tensor parallel, MoE models included; a choice the user made, or engine none, stays.
TEST(LlmStaticBatch, TheSessionRuntimeRunsTensorParallelAttention) {
  KindParams k = fp8("h100");
  ASSERT_EQ(*k.llm.attention_parallel, AttentionParallel::Auto);
  EXPECT_EQ(*static_batch_params(k).llm.attention_parallel, AttentionParallel::Tp);
  const Server moe(shipped("mixtral-8x7b"), static_batch_params(k), 2);
  EXPECT_TRUE(moe.deployment().tensor_parallel);
  EXPECT_EQ(moe.deployment().ranks, 1);
  KindParams dp = k;
  dp.llm.attention_parallel = AttentionParallel::Dp;
  EXPECT_EQ(*static_batch_params(dp).llm.attention_parallel, AttentionParallel::Dp);
  KindParams none = k;
  none.serving.engine.kind = EngineKind::None;
  EXPECT_EQ(*static_batch_params(none).llm.attention_parallel, AttentionParallel::Auto);
}

TEST(LlmStaticBatch, ABatchThatDoesNotFitIsRefusedWithItsNumbers) {
  const ModelConfig m = shipped("llama2-70b");
  const Server s(m, fp8("h100"), 1);
  try {
    run_static_batch(s, 64, ContextSpec{"", 2048, 2048});
    FAIL() << "70B with 64 x 4096 tokens fitted one H100";
  } catch (const ConfigError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("does not fit"), std::string::npos) << w;
    EXPECT_NE(w.find("85.9 GB"), std::string::npos) << w;  // 80 GiB
    EXPECT_NE(w.find("64 requests"), std::string::npos) << w;
  }
}

// The visible validation set: NVIDIA TensorRT-LLM v0.9.0, docs/source/performance.md (the performance overview of
// that release), static batching (gptSessionBenchmark), FP8, output tokens/s per GPU and first-token latency at
// batch 1. Each row's model value is pinned within 2%; the deviations are the model's and are documented (docs/llm.md):
// none of them set a parameter.
struct Row {
  const char* kind;
  const char* model;
  int64_t batch, gpus, input, output;
  double measured, model_value;  // tokens/s per GPU, or ms of first-token latency (output 1)
};

TEST(LlmStaticBatch, TensorRtLlmV090RowsArePinned) {
  const Row rows[] = {
      {"h100", "llama2-70b", 1024, 2, 128, 128, 3214, 3285},
      {"h100", "llama2-70b", 512, 4, 128, 2048, 2725, 3070},
      {"h100", "llama2-70b", 96, 2, 2048, 128, 346, 351.8},
      {"h100", "llama2-70b", 64, 2, 2048, 2048, 1011, 1055},
      {"h100", "llama2-7b", 896, 1, 128, 128, 19854, 21480},
      {"h100", "llama2-7b", 56, 1, 2048, 2048, 2826, 2723},
      {"h200-sxm", "llama2-70b", 1024, 1, 128, 128, 3989, 4049},
      {"h200-sxm", "llama2-70b", 64, 1, 2048, 2048, 1458, 1309},
      {"h200-sxm", "llama2-7b", 896, 1, 128, 128, 20618, 22360},
      // first-token latency, batch 1 (ms)
      {"h100", "llama2-7b", 1, 1, 128, 1, 6.3, 3.986},
      {"h100", "llama2-7b", 1, 1, 2048, 1, 30.8, 30.07},
      {"h100", "llama2-70b", 1, 4, 128, 1, 19.6, 16.00},
      {"h100", "llama2-70b", 1, 8, 2048, 1, 85.1, 74.75},
      {"h200-sxm", "llama2-7b", 1, 1, 128, 1, 5.7, 3.921},
      {"h200-sxm", "llama2-7b", 1, 1, 2048, 1, 30.2, 28.46},
      {"h200-sxm", "llama2-70b", 1, 4, 128, 1, 17.8, 15.73},
      {"h200-sxm", "llama2-70b", 1, 4, 2048, 1, 103.0, 97.00},
  };
  std::vector<double> dev;
  for (const Row& r : rows) {
    const ModelConfig m = shipped(r.model);
    const Server s(m, fp8(r.kind), r.gpus);
    const StaticBatchReport b = run_static_batch(s, r.batch, ContextSpec{"", r.input, r.output});
    const double v = r.output > 1 ? b.output_tokens_per_s_per_gpu : to_s(b.ttft) * 1e3;
    EXPECT_NEAR(v / r.model_value, 1.0, 0.02) << r.kind << " " << r.model << " B" << r.batch << " x" << r.gpus << " " << r.input << "/"
                                              << r.output << ": " << v;
    dev.push_back(std::fabs(v / r.measured - 1));
  }
  std::sort(dev.begin(), dev.end());
  // The documented gap (docs/llm.md): the model misses TensorRT-LLM 0.9's short-prompt first-token latency (a fixed
  // ~1.8-3.6 ms per generate() call); pinned so that a change shows here.
  EXPECT_NEAR(dev[dev.size() / 2], 0.082, 0.02);
  EXPECT_NEAR(dev.back(), 0.367, 0.03);
}

// NVIDIA's inference performance page (TensorRT-LLM 0.9.0, H100 SXM, FP8): the time to the batch's first token, the
// prefill of 3,840-65,536 prompt tokens (docs/calibration.md, "The batch's first token"). A validation with a stated
// tolerance: each within 10% of the measurement (the page gives two significant figures); the model's values pinned
// (2%) so that a change shows here.
// The rest of the visible set (docs/calibration.md, "Against measurements on real GPUs"), FP16: TensorRT-LLM v0.5's first-token
// latency at batch 1 on A100s and NeMo's whole 128-in / 20-out requests (latency_ms: the first token and 19 decode steps).
// Each model value pinned within 2%; the gaps are the model's (docs/llm.md, "What is left").
TEST(LlmStaticBatch, A100AndNemoRowsArePinned) {
  const Row rows[] = {
      {"a100", "gpt-j-6b", 1, 1, 128, 1, 12, 9.974},      {"a100", "gpt-j-6b", 1, 1, 2048, 1, 129, 100.2},
      {"a100", "llama2-7b", 1, 1, 128, 1, 16, 10.70},     {"a100", "llama2-7b", 1, 1, 2048, 1, 133, 118.4},
      {"a100", "llama2-70b", 1, 4, 128, 1, 47, 39.14},    {"a100", "llama2-70b", 1, 4, 2048, 1, 377, 337.1},
      {"a100", "llama2-7b", 1, 1, 128, 20, 234.0, 179.6}, {"h100", "llama2-7b", 1, 1, 128, 20, 153.8, 114.6},
  };
  double worst = 0;
  for (const Row& r : rows) {
    KindParams k = preset_kind(r.kind);
    k.llm.precision = Precision::Fp16;
    const Server s(shipped(r.model), k, r.gpus);
    const StaticBatchReport b = run_static_batch(s, r.batch, ContextSpec{"", r.input, r.output});
    const double v = to_s(r.output > 1 ? b.total : b.ttft) * 1e3;
    EXPECT_NEAR(v / r.model_value, 1.0, 0.02) << r.kind << " " << r.model << " x" << r.gpus << " " << r.input << "/" << r.output << ": "
                                              << v;
    EXPECT_LT(v, r.measured) << "the model is optimistic on every one of these rows (docs/llm.md)";
    worst = std::max(worst, std::fabs(v / r.measured - 1));
  }
  EXPECT_NEAR(worst, 0.331, 0.03);  // A100 Llama-2-7B at 128 tokens: the per-call fixed cost the model lacks
}

TEST(LlmStaticBatch, TheBatchsFirstTokenMatchesNvidiasPublishedTimes) {
  const Row rows[] = {
      {"h100", "gpt-j-6b", 512, 1, 128, 128, 630, 695.1},  {"h100", "gpt-j-6b", 120, 1, 128, 2048, 160, 165.0},
      {"h100", "gpt-j-6b", 32, 1, 2048, 128, 670, 728.5},  {"h100", "gpt-j-6b", 32, 1, 2048, 2048, 680, 728.5},
      {"h100", "llama2-7b", 512, 1, 128, 128, 830, 869.3}, {"h100", "llama2-7b", 120, 1, 128, 2048, 200, 205.9},
  };
  double sum = 0;
  for (const Row& r : rows) {
    const ModelConfig m = shipped(r.model);
    const Server s(m, fp8(r.kind), r.gpus);
    const StaticBatchReport b = run_static_batch(s, r.batch, ContextSpec{"", r.input, r.output});
    const double ms = to_s(b.ttft) * 1e3;
    const std::string what = std::string(r.model) + " B" + std::to_string(r.batch) + " " + std::to_string(r.input) + "/" +
                             std::to_string(r.output) + ": " + std::to_string(ms) + " ms";
    // The known gap (docs/calibration.md, "The batch's first token"): GPT-J-6B's 65,536-token prefill, +10.3% since the
    // attention's input pass (mechanism 8) is timed; pinned by its model value.
    if (!(std::string(r.model) == "gpt-j-6b" && r.batch == 512)) {
      EXPECT_NEAR(ms / r.measured, 1.0, 0.10) << what;
    }
    EXPECT_NEAR(ms / r.model_value, 1.0, 0.02) << what;
    sum += std::fabs(ms / r.measured - 1);
  }
  EXPECT_NEAR(sum / 6, 0.061, 0.01);
}

TEST(LlmStaticBatch, TheAttentionsInputPassIsAKernelOfItsOwnOnTheRealGpuKinds) {
  // Mechanism 8 (docs/calibration.md): the engines run the rotary embedding as its own memory-bound kernel before attention.
  // The real GPU kinds time it; the paper's kinds (LLMCompass's methodology) do not.
  for (const char* kind : {"h100", "h200-sxm", "a100", "b200"}) EXPECT_TRUE(preset_kind(kind).llm.compute.qkv_preprocessing) << kind;
  for (const char* kind : {"h200", "csi", "cli"}) EXPECT_FALSE(preset_kind(kind).llm.compute.qkv_preprocessing) << kind;

  // Llama-2-7B's 2,048-token prompt on an H100: 32 layers, each a pass over 2,048 tokens reading Q, K and V
  // (96 heads of 128, 16-bit) and writing Q and K (64 heads), at the HBM's achievable rate; its launch gap was counted
  // before (the q/k/v GEMM's second kernel) and is now the pass's own.
  const ModelConfig m = shipped("llama2-7b");
  KindParams on = fp8("h100"), off = on;
  off.llm.compute.qkv_preprocessing = false;
  const double ttft_on = to_s(run_static_batch(Server(m, on, 1), 1, ContextSpec{"", 2048, 1}).ttft);
  const double ttft_off = to_s(run_static_batch(Server(m, off, 1), 1, ContextSpec{"", 2048, 1}).ttft);
  const double bytes = 2048.0 * 128 * (96 + 64) * 2;
  const double rate = on.system.hbm.bandwidth_per_stack.raw() * double(on.system.hbm.stacks) * on.llm.compute.hbm_efficiency;
  const double pass = 32 * bytes / rate;
  EXPECT_NEAR((ttft_on - ttft_off) / pass, 1.0, 0.02) << ttft_on << " " << ttft_off << " " << pass;
}
