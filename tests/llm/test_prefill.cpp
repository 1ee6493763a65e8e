// Prefill and time to first token (hand-checked FLOPs, bytes and times on a
// roofline GPU; chunked prefill), the breakdown by operator class of a decode
// step (it adds up to the step), and the request-level latency.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "llm/gpu.hpp"
#include "llm/prefill.hpp"
#include "llm/serving.hpp"
#include "llm_test_util.hpp"

using namespace bitline;
using namespace bitline::llm;
using bitline::llm::test::paper_context;
using bitline::llm::test::preset_kind;
using bitline::llm::test::shipped;

namespace {

// H = 64, 4 heads of 16 (MHA), 2 layers, FFN 128 (SwiGLU), vocabulary 256, BF16.
const ModelConfig& tiny() {
  static const ModelConfig m = shipped("tiny-test");
  return m;
}

struct OneGpu {
  Deployment d;
  GpuWeights w;
  GpuCompute gpu;
  Network net;
};

OneGpu one_gpu(const ModelConfig& m, double flops, double util_max = 1, Time overhead = Time{}) {
  KindParams k = preset_kind("h200");
  k.llm.compute.util_max = util_max;
  k.llm.compute.util_half_rows = 0;
  k.llm.compute.kernel_overhead = overhead;
  k.llm.compute.kernels = KernelModel::Curve;  // a plain roofline: F / (peak x util_max)
  const Deployment d = make_deployment(m, 1, k.llm);
  return OneGpu{d, gpu_weights(m, d), GpuCompute(flops, k.llm.compute), Network(k.llm.network)};
}

PrefillMemory bandwidth(double bytes_per_s) {
  const Bandwidth b(bytes_per_s);
  return PrefillMemory{b, b, b, b};
}

}  // namespace

// On a roofline GPU with unlimited bandwidth the prefill is its FLOPs at the peak: per token 2 x the layers'
// matrices, causal attention 4 d heads n (n + 1) / 2 per layer, and the LM head once (the last token).
TEST(LlmPrefill, FlopsAndTimeByHand) {
  const ModelConfig& m = tiny();
  const OneGpu s = one_gpu(m, 1e12);
  const int64_t n = 100;
  const PrefillReport r = time_prefill(m, s.d, s.w, s.gpu, s.net, bandwidth(1e30), n, PrefillParams{}, 0.0);
  const double H = 64, I = 128, V = 256, q = 4 * 16, kv = 2 * 16;
  const double matrices = H * (q + 2 * kv) + q * H + 3 * H * I;  // q, k, v, o, gate, up, down
  const double attention = 4.0 * 16 * 4 * double(n) * double(n + 1) / 2;
  const double flops = 2 * (2 * matrices * double(n) + attention) + 2 * H * V;
  EXPECT_DOUBLE_EQ(r.flops, flops);
  EXPECT_NEAR(to_s(r.time), flops / 1e12, 1e-9);
  EXPECT_EQ(r.chunks, 1);
  EXPECT_EQ(r.breakdown.layers.size(), 2u);
  EXPECT_EQ(r.time, r.breakdown.total.total());
  // KV: written once (2 layers x n tokens x 2 x 2 heads x 16 x 2 bytes), nothing earlier to read.
  EXPECT_DOUBLE_EQ(r.kv_write_bytes, 2.0 * n * 128);
  EXPECT_DOUBLE_EQ(r.kv_read_bytes, 0);
}

// Chunks of C tokens: the same FLOPs (the causal pairs add up), the weights read once per chunk, and chunk k reads
// the k C tokens of KV before it; with a slow memory each chunk pays the weights again.
TEST(LlmPrefill, ChunkedPrefillReadsWeightsPerChunk) {
  const ModelConfig& m = tiny();
  const OneGpu s = one_gpu(m, 1e12);
  const int64_t n = 20;
  const PrefillReport whole = time_prefill(m, s.d, s.w, s.gpu, s.net, bandwidth(1e30), n, PrefillParams{}, 0.0);
  const PrefillReport chunked = time_prefill(m, s.d, s.w, s.gpu, s.net, bandwidth(1e30), n, PrefillParams{.chunk = 7}, 0.0);
  EXPECT_EQ(chunked.chunks, 3);  // 7 + 7 + 6
  EXPECT_EQ(chunked.chunk_tokens, 7);
  EXPECT_NEAR(chunked.flops, whole.flops, 1e-9 * whole.flops);
  EXPECT_DOUBLE_EQ(chunked.kv_read_bytes, 2.0 * (0 + 7 + 14) * 128);  // per layer 128 B per token
  EXPECT_DOUBLE_EQ(chunked.kv_write_bytes, whole.kv_write_bytes);
  // Layer weights (q, k, v, o, gate, up, down, 2 norms) once per chunk; the LM head once; embedding rows per token.
  const double layer_bytes = double(m.layer_weight_bytes(0).raw()) * 2;
  const double head = 2.0 * (64 + 256 * 64), rows = 2.0 * 64 * n;
  EXPECT_DOUBLE_EQ(whole.weight_bytes, layer_bytes + head + rows);
  EXPECT_DOUBLE_EQ(chunked.weight_bytes, 3 * layer_bytes + head + rows);
  // Bandwidth-bound (a slow memory, a fast GPU): the chunked prefill pays two more passes over the layers'
  // weights and the earlier chunks' KV (activations and new KV are the same bytes either way).
  const OneGpu fast = one_gpu(m, 1e18);
  const PrefillReport w1 = time_prefill(m, fast.d, fast.w, fast.gpu, fast.net, bandwidth(1e9), n, PrefillParams{}, 0.0);
  const PrefillReport w3 = time_prefill(m, fast.d, fast.w, fast.gpu, fast.net, bandwidth(1e9), n, PrefillParams{.chunk = 7}, 0.0);
  EXPECT_NEAR(to_s(w3.time) - to_s(w1.time), (2 * layer_bytes + chunked.kv_read_bytes) / 1e9, 1e-9);
  EXPECT_GT(w3.breakdown.total[OpClass::WeightRead], w3.breakdown.total[OpClass::Gemm]);
  // A chunk larger than the prompt is the whole prompt; a prompt needs a token; passes are bounded.
  EXPECT_EQ(time_prefill(m, s.d, s.w, s.gpu, s.net, bandwidth(1e30), n, PrefillParams{.chunk = 1000}, 0.0).time, whole.time);
  EXPECT_THROW(time_prefill(m, s.d, s.w, s.gpu, s.net, bandwidth(1e30), 0, PrefillParams{}, 0.0), ConfigError);
  EXPECT_THROW(time_prefill(m, s.d, s.w, s.gpu, s.net, bandwidth(1e30), int64_t(1) << 30, PrefillParams{}, 0.0), ConfigError);
}

// The attention of chunk k grows with k (more keys); the closed-form sum over chunks agrees with summing one
// chunk at a time: a prompt of n tokens in chunks of 1 takes the same as the chunks timed one by one with
// prompts 1..n less the prompts 1..n-1 (each prompt's last chunk).
TEST(LlmPrefill, AttentionOfLaterChunksSeesMoreKeys) {
  const ModelConfig& m = tiny();
  const OneGpu s = one_gpu(m, 1e12, 0.5, Time{});
  const PrefillMemory mem = bandwidth(2e9);  // KV reads cross over from compute-bound to memory-bound
  const auto ttft = [&](int64_t n, int64_t chunk) {
    return time_prefill(m, s.d, s.w, s.gpu, s.net, mem, n, PrefillParams{.chunk = chunk}, 0.0);
  };
  for (int64_t n : {5, 17, 40}) {
    const PrefillReport all = ttft(n, 1), before = ttft(n - 1 > 0 ? n - 1 : 1, 1);
    Time attn_all = all.breakdown.total[OpClass::Attention] + all.breakdown.total[OpClass::KvRead] + all.breakdown.total[OpClass::KvWrite];
    Time attn_before =
        before.breakdown.total[OpClass::Attention] + before.breakdown.total[OpClass::KvRead] + before.breakdown.total[OpClass::KvWrite];
    // The last chunk's attention (offset n - 1) is the difference, and it is the largest.
    const Time last = attn_all - attn_before;
    EXPECT_GT(last.raw(), 0) << n;
    EXPECT_GE(last.raw() * n + 2 * n, attn_all.raw()) << n;  // (rounding: 1 ps per term)
  }
}

// The decode breakdown by operator class adds up to the step (every layer timed; the step samples 8 of them) plus
// its KV programming and erasing, and each layer's parts are there.
TEST(LlmPrefill, DecodeBreakdownAddsUpToTheStep) {
  for (const char* kind : {"h200", "csi"}) {
    const KindParams k = preset_kind(kind);
    const ModelConfig m = shipped("llama3.1-405b");
    Server s(m, k, 8);
    const ContextSpec c = paper_context("long");
    const StepGraph g = s.graph(20, c);
    const OpBreakdown b = decode_breakdown(g, s.weights(), s.memory(), MemoryTiming::of(s.system()));
    const StepTiming every = time_step_fast(g, s.memory(), MemoryTiming::of(s.system()), 0);
    EXPECT_EQ(b.total.total(), every.time) << kind;
    EXPECT_EQ(b.layers.size(), 126u);
    EXPECT_GT(b.layers[5][OpClass::WeightRead].raw(), 0) << kind;
    EXPECT_GT(b.layers[5][OpClass::KvRead].raw(), 0) << kind;
    EXPECT_GT(b.layers[5][OpClass::Comm].raw(), 0) << kind;  // tensor parallel all-reduces
    EXPECT_GT(b.embedding.total().raw(), 0);
    EXPECT_GT(b.head.total().raw(), 0);
    const StepReport r = s.step(20, c);
    EXPECT_NEAR(to_s(b.total.total() + r.breakdown.kv_write + r.breakdown.kv_erase), to_s(r.step), 0.005 * to_s(r.step)) << kind;
  }
}

TEST(LlmPrefill, RequestLatency) {
  const RequestLatency l = request_latency(ms(200), ms(20), ms(30), 101);
  EXPECT_EQ(l.end_to_end, ms(200) + ms(20) + ms(30) * 100.0);
  EXPECT_DOUBLE_EQ(l.json()["tpot_ms"].get<double>(), 30);
}

// Prefill on real systems: a 15K-token prompt of Llama-3.1-405B on 8 x H200 is compute-bound (FLOPs ~ 2 x 50.7 B
// weights per GPU x 15K tokens), and chunked prefill at 2K tokens costs little more on HBM, more on flash.
TEST(LlmPrefill, LlamaOnH200AndCsi) {
  const ModelConfig m = shipped("llama3.1-405b");
  for (const char* kind : {"h200", "csi"}) {
    const KindParams k = preset_kind(kind);
    Server s(m, k, 8);
    const GpuCompute gpu(k.system.gpu.bf16_flops, k.llm.compute);
    const Network net(k.llm.network);
    const PrefillMemory pm = prefill_memory(s.system());
    const PrefillReport whole = time_prefill(m, s.deployment(), s.weights(), gpu, net, pm, 15000, PrefillParams{}, 0.0);
    const PrefillReport chunked = time_prefill(m, s.deployment(), s.weights(), gpu, net, pm, 15000, PrefillParams{.chunk = 2048}, 0.0);
    EXPECT_NEAR(whole.flops, 2.0 * double(m.parameters()) / 8 * 15000, 0.1 * whole.flops) << kind;
    EXPECT_GT(whole.breakdown.total[OpClass::Gemm], whole.breakdown.total[OpClass::WeightRead] * 100.0) << kind;
    EXPECT_GT(to_s(whole.time), 1.5) << kind;  // > 1.5 s: ~1.6 PFLOP per GPU at <= 0.8 x 989 TFLOP/s
    EXPECT_LT(to_s(whole.time), 4.0) << kind;
    EXPECT_GT(chunked.time, whole.time) << kind;
    EXPECT_LT(to_s(chunked.time), 1.2 * to_s(whole.time)) << kind;
    // A prompt of 2^30 tokens in chunks: ~10^9 s of attention, refused (times are 64-bit picoseconds), not wrapped.
    try {
      time_prefill(m, s.deployment(), s.weights(), gpu, net, pm, int64_t(1) << 30, PrefillParams{.chunk = 4096}, 0.0);
      ADD_FAILURE() << "no error";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("would take more than 46 days"), std::string::npos) << e.what();
    }
  }
}

// Calibration: llm.compute.hbm_efficiency slows the timed HBM reads of a step (fast model and event simulation
// alike), but not the peak-bandwidth bound (memory_time_ms); the FlashAccel kinds keep the peak, the other kinds
// carry measured fractions.
TEST(LlmCalibration, HbmEfficiencyScalesTheTimedHbmReads) {
  const ModelConfig m = shipped("llama3.1-405b");
  const ContextSpec c = paper_context("agent");
  KindParams peak = preset_kind("h200");
  peak.llm.compute.gemm_tile_latency = Time{};  // no pipeline fill: a fixed time per weight-streaming GEMM that no bandwidth scales
  KindParams cal = peak;
  cal.llm.compute.hbm_efficiency = 0.5;
  Server a(m, peak, 8), b(m, cal, 8);
  const StepReport ra = a.step(16, c), rb = b.step(16, c);
  EXPECT_NEAR(to_s(rb.breakdown.weights + rb.breakdown.kv), 2 * to_s(ra.breakdown.weights + ra.breakdown.kv),
              0.01 * to_s(ra.breakdown.weights + ra.breakdown.kv));
  EXPECT_EQ(rb.memory_time, ra.memory_time);  // the bound stays at the peak
  EXPECT_EQ(rb.tdp, ra.tdp);
  const ValidationPoint v = validate_step(b, 4, c);  // the event simulation reads at the same rate
  EXPECT_LT(std::abs(v.error()), 0.01) << v.error();
  EXPECT_DOUBLE_EQ(preset_kind("h200").llm.compute.hbm_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(preset_kind("csi").llm.compute.hbm_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(preset_kind("a100").llm.compute.hbm_efficiency, 0.88);
  EXPECT_DOUBLE_EQ(preset_kind("h100").llm.compute.hbm_efficiency, 0.84);
  EXPECT_DOUBLE_EQ(preset_kind("b200").llm.compute.hbm_efficiency, 0.866);
  {
    // The fraction is of the datasheet's 7.7 TB/s; what the B200 streams is the measured 6,668.71 GB/s either way.
    const KindParams b200 = preset_kind("b200");
    const double peak = b200.system.hbm.bandwidth_per_stack.raw() * double(b200.system.hbm.stacks);
    EXPECT_DOUBLE_EQ(peak, 7.7e12);
    EXPECT_NEAR(peak * b200.llm.compute.hbm_efficiency, 6668.71e9, 1e9);
  }
  // Per-kernel overhead: measured on H100 (1.3 us with CUDA graphs) and B200 (2.0 us back to back); the others assume 2 us.
  EXPECT_EQ(preset_kind("h100").llm.compute.kernel_overhead, Time(1300000));
  EXPECT_EQ(preset_kind("b200").llm.compute.kernel_overhead, Time(2000000));
  EXPECT_EQ(preset_kind("h200").llm.compute.kernel_overhead, Time(2000000));
  // GEMM efficiency: the measured BF16 MAMF of each kind (docs/llm.md [5]); the paper's kinds keep 0.8 (H100/H200: 0.803).
  EXPECT_DOUBLE_EQ(preset_kind("a100").llm.compute.util_max, 0.869);
  EXPECT_DOUBLE_EQ(preset_kind("h100").llm.compute.util_max, 0.803);
  EXPECT_DOUBLE_EQ(preset_kind("b200").llm.compute.util_max, 0.776);
  EXPECT_DOUBLE_EQ(preset_kind("h200").llm.compute.util_max, 0.8);
  EXPECT_DOUBLE_EQ(preset_kind("csi").llm.compute.util_max, 0.8);
  // The prefill reads its weights at the achievable rate too.
  EXPECT_DOUBLE_EQ(prefill_memory(b.system()).weights.raw(), 0.5 * prefill_memory(a.system()).weights.raw());
}

// MLA prefill runs attention in the plain form: per (query, key) pair 2 h (qk_nope + qk_rope) + 2 h v_head FLOPs
// (DeepSeek-V3: 2 x 128 x 320), not decode's absorbed form over the 576-wide latent. The second difference of the
// FLOPs in the prompt length isolates the causal pairs' term (everything else is linear in the tokens).
TEST(LlmPrefill, MlaPrefillAttentionIsThePlainForm) {
  const ModelConfig m = shipped("deepseek-v3");
  const KindParams k = preset_kind("h200");
  Server s(m, k, 8);
  const GpuCompute gpu(k.system.gpu.bf16_flops, k.llm.compute);
  const Network net(k.llm.network);
  const auto flops = [&](int64_t n) {
    return time_prefill(m, s.deployment(), s.weights(), gpu, net, prefill_memory(s.system()), n, PrefillParams{}, 0.0).flops;
  };
  const double second = flops(102) - 2 * flops(101) + flops(100);
  EXPECT_NEAR(second, 61.0 * 2 * 128 * (192 + 128), 1e-6 * 61.0 * 2 * 128 * 320);
}
