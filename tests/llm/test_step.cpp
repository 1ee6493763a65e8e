// One decode step: expected distinct experts, the operator graph of a small
// model checked by hand (bytes moved, FLOPs, time under a roofline), the
// collectives' times, deployments and capacity limits.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "llm/gpu.hpp"
#include "llm/memory.hpp"
#include "llm/model.hpp"
#include "llm/serving.hpp"
#include "llm/step.hpp"
#include "llm/timing.hpp"
#include "llm_test_util.hpp"

namespace fs = std::filesystem;
using namespace bitline;
using namespace bitline::llm;
using bitline::llm::test::paper_context;
using bitline::llm::test::paper_eval;
using bitline::llm::test::preset_kinds;
using bitline::llm::test::shipped;

namespace {

LlmParams llm_defaults() { return default_params<LlmParams>(); }

// An HBM-only GPU with a plain roofline: peak FLOP/s, bandwidth, no latency, no overheads, utilisation 1.
KindParams roofline_gpu(double flops, double bytes_per_s) {
  KindParams k;
  k.kind = "h200";
  k.system.gpu = default_params<hbf::GpuParams>();
  k.system.gpu.bf16_flops = flops;
  k.system.hbm = default_params<hbf::HbmParams>();
  k.system.hbm.stacks = 1;
  k.system.hbm.bandwidth_per_stack = Bandwidth(bytes_per_s);
  k.system.hbm.latency = Time{};
  k.system.hbm.capacity_per_stack = GiB(64);
  k.system.hbf = default_params<hbf::HbfParams>();
  k.llm = llm_defaults();
  k.llm.compute.util_max = 1;
  k.llm.compute.util_half_rows = 0;
  k.llm.compute.kernel_overhead = Time{};
  k.llm.compute.kernels = KernelModel::Curve;  // F / peak: no tiles, no waves
  k.serving = default_params<ServingParams>();
  return k;
}

}  // namespace

TEST(LlmStep, ExpectedDistinctExpertsByHand) {
  // E = 4, top-1, 2 tokens: both pick the same expert with probability 1/4 -> 1/4 * 1 + 3/4 * 2 = 1.75.
  EXPECT_DOUBLE_EQ(expected_distinct_experts(4, 1, 2), 1.75);
  // One token touches exactly k experts.
  EXPECT_DOUBLE_EQ(expected_distinct_experts(4, 2, 1), 2.0);
  EXPECT_DOUBLE_EQ(expected_distinct_experts(128, 8, 1), 8.0);
  // E = 8, top-2, 3 tokens: an expert is missed by one token with probability 6/8 -> 8 (1 - (3/4)^3) = 4.625.
  EXPECT_DOUBLE_EQ(expected_distinct_experts(8, 2, 3), 4.625);
  // No tokens, no experts; many tokens, all experts.
  EXPECT_DOUBLE_EQ(expected_distinct_experts(8, 2, 0), 0.0);
  EXPECT_NEAR(expected_distinct_experts(128, 8, 2000), 128.0, 1e-9);
}

TEST(LlmStep, DistinctExpertsAgreeWithSampledRouting) {
  // Top-k without replacement, uniform: the formula is exact; check it against sampling.
  Rng rng(7);
  const int64_t E = 16, k = 3, T = 5, trials = 20000;
  double sum = 0;
  for (int64_t t = 0; t < trials; ++t) {
    std::set<int64_t> touched;
    for (int64_t tok = 0; tok < T; ++tok) {
      std::set<int64_t> mine;
      while (int64_t(mine.size()) < k) mine.insert(int64_t(rng.below(E)));
      touched.insert(mine.begin(), mine.end());
    }
    sum += double(touched.size());
  }
  EXPECT_NEAR(sum / double(trials), expected_distinct_experts(E, k, T), 0.03);
}

TEST(LlmStep, TinyModelDecodeStepByHand) {
  const ModelConfig m = shipped("tiny-test");
  const KindParams k = roofline_gpu(1e15, 1e9);  // memory-bound everywhere: 1 GB/s, 1 PFLOP/s
  Server s(m, k, 1);
  const StepGraph g = build_step(m, s.deployment(), s.weights(), GpuCompute(1e15, k.llm.compute), Network(k.llm.network), {100, 100}, 0.0);
  // FLOPs per layer: qkv 2*2*64*128, attention 4*200*4*16, o 2*2*64*64, gate_up 2*2*64*256, down 2*2*128*64; lm_head 2*2*64*256.
  const double layer = 32768 + 51200 + 16384 + 65536 + 32768;
  EXPECT_DOUBLE_EQ(g.flops, 2 * layer + 65536);
  // No collectives on one GPU.
  for (const Op& o : g.ops) EXPECT_FALSE(o.is_comm()) << o.name;
  // Bytes: weights read (2 embedding rows of 128 B, both layers' 73,984 B, final norm 128 B, LM head 32,768 B),
  // KV 2 layers x 200 tokens x 128 B, activations 16,896 B (embedding 256, per layer 4,864 + SiLU x up 1,536 (reads
  // gate and up, writes one: 2 x 3 x 128 x 2 B), final norm 512, LM head 1,280, sampling the FP32 logits 2,048).
  const double weights = 256 + 2 * 73984 + 128 + 32768, kv = 2 * 200 * 128, act = 256 + 2 * (4864 + 1536) + 512 + 1280 + 2048;
  const MemoryTiming mt = MemoryTiming::of(s.system());
  const StepTiming st = time_step_fast(g, s.memory(), mt, 0);
  EXPECT_DOUBLE_EQ(st.reads.hbm_bytes, weights + kv + act);
  // Memory-bound roofline: the step is the bytes over the bandwidth (each kernel's bytes rounded up to a picosecond).
  EXPECT_NEAR(to_s(st.time), (weights + kv + act) / 1e9, 40e-12);
  // (The activation and sampling kernels read no weights: their time is under compute.)
  EXPECT_NEAR(to_s(st.breakdown.weights + st.breakdown.kv + st.breakdown.compute), to_s(st.time), 1e-12);
  EXPECT_NEAR(to_s(st.breakdown.compute), (2 * 1536 + 2048) / 1e9, 1e-11);
  EXPECT_NEAR(to_s(st.breakdown.kv), (kv + 2 * 512) / 1e9, 1e-11);  // attention kernels: KV + their activations
  // Compute-bound roofline: 1 TB/s and 1 GFLOP/s: the step is the FLOPs over the peak.
  const KindParams c = roofline_gpu(1e9, 1e12);
  Server sc(m, c, 1);
  const StepGraph gc =
      build_step(m, sc.deployment(), sc.weights(), GpuCompute(1e9, c.llm.compute), Network(c.llm.network), {100, 100}, 0.0);
  const StepTiming stc = time_step_fast(gc, sc.memory(), MemoryTiming::of(sc.system()), 0);
  // Kernels without math (norms, embedding) are memory-bound: add their bytes at 1 TB/s.
  const double nomath = (256 + 256) + 2 * (128 + 512 + 128 + 512 + 1536) + (128 + 512) + 2048;
  EXPECT_NEAR(to_s(stc.time), g.flops / 1e9 + nomath / 1e12, 1e-10);
  // The same step timed by the event-driven simulation of the memory system agrees.
  EXPECT_EQ(time_step_event(s.system(), g, s.memory()).elapsed, st.time);
}

TEST(LlmStep, CollectiveTimes) {
  NetworkParams p = default_params<NetworkParams>();  // 450 GB/s NVLink, 50 GB/s RDMA, 5 us / 10 us latency
  const Network net(p);
  // Ring all-reduce of 1 MB on 8 GPUs: 2 * 7/8 * 1e6 B / 450 GB/s + 5 us.
  EXPECT_NEAR(to_s(net.all_reduce(Bytes(1000000), 8).time), 2 * 7.0 / 8 * 1e6 / 450e9 + 5e-6, 1e-11);
  // 16 GPUs on two nodes, hierarchical: the node part as above, plus 2 * 1/2 * (1 MB / 8) over RDMA, and the RDMA
  // latency (the ring, NCCL's default, is checked in test_collectives.cpp).
  p.all_reduce = AllReduceAlgorithm::Hierarchical;
  EXPECT_NEAR(to_s(Network(p).all_reduce(Bytes(1000000), 16).time), 2 * 7.0 / 8 * 1e6 / 450e9 + 1e6 / 8 / 50e9 + 10e-6, 1e-11);
  // All-gather moves half of an all-reduce.
  EXPECT_NEAR(to_s(net.all_gather(Bytes(1000000), 8).time), 7.0 / 8 * 1e6 / 450e9 + 5e-6, 1e-11);
  // All-to-all: the slower of the two link kinds.
  EXPECT_NEAR(to_s(net.all_to_all(Bytes(1000000), Bytes(500000), true).time), 500000 / 50e9 + 10e-6, 1e-11);
  EXPECT_NEAR(to_s(net.all_to_all(Bytes(1000000), Bytes(0), false).time), 1e6 / 450e9 + 5e-6, 1e-11);
  EXPECT_EQ(net.all_reduce(Bytes(1000000), 1).time, Time{});
}

TEST(LlmStep, DispatchFanOutByHand) {
  // 8 GPUs, 128 experts, top-8: a GPU (16 experts) is missed by a token with probability C(112,8)/C(128,8).
  const ModelConfig m = shipped("qwen3-235b");
  const Deployment d = make_deployment(m, 8, llm_defaults());
  EXPECT_FALSE(d.tensor_parallel);
  EXPECT_EQ(d.local_experts, 16);
  double miss = 1;
  for (int i = 0; i < 8; ++i) miss *= double(112 - i) / double(128 - i);
  const Routing r = routing_stats(m, d, 1000, 0);
  EXPECT_NEAR(r.remote_intra_per_token, 7 * (1 - miss), 1e-12);
  EXPECT_DOUBLE_EQ(r.remote_nodes_per_token, 0);
  EXPECT_NEAR(r.tokens_local, 1000 * 16 * 8.0 / 128, 1e-9);
  EXPECT_NEAR(r.experts_touched, 16 * (1 - std::pow(1 - 8.0 / 128, 1000)), 1e-9);
  // Skewed routing: the timed GPU holds the most popular experts, so it computes more.
  EXPECT_GT(routing_stats(m, d, 1000, 1.0).tokens_local, r.tokens_local);
}

TEST(LlmStep, DeploymentsFollowTheSpec) {
  const LlmParams p = llm_defaults();
  const Deployment llama = make_deployment(shipped("llama3.1-405b"), 16, p);
  EXPECT_TRUE(llama.tensor_parallel);
  EXPECT_EQ(llama.tp, 8);     // tensor parallel inside a node
  EXPECT_EQ(llama.ranks, 2);  // two replicas
  EXPECT_EQ(llama.kv_heads, 1);
  const Deployment ds = make_deployment(shipped("deepseek-v3"), 16, p);
  EXPECT_FALSE(ds.tensor_parallel);
  EXPECT_EQ(ds.local_experts, 16);
  EXPECT_THROW(make_deployment(shipped("qwen3-235b"), 256, p), ConfigError);    // more GPUs than experts
  EXPECT_THROW(make_deployment(shipped("llama3.1-405b"), 12, p), ConfigError);  // not whole TP groups
  // Smaller tensor-parallel groups (llm.tp_size): data-parallel ranks of TP attention, experts over all GPUs.
  LlmParams q = p;
  q.attention_parallel = AttentionParallel::Tp;
  q.tp_size = 2;
  const Deployment coder = make_deployment(shipped("qwen3-coder-480b"), 8, q);
  EXPECT_TRUE(coder.tensor_parallel);
  EXPECT_EQ(coder.tp, 2);
  EXPECT_EQ(coder.ranks, 4);
  EXPECT_EQ(coder.q_heads, 48);
  EXPECT_EQ(coder.kv_heads, 4);
  EXPECT_EQ(coder.ep, 8);
  q.tp_size = 3;
  EXPECT_THROW(make_deployment(shipped("qwen3-coder-480b"), 8, q), ConfigError);  // 8 GPUs are not groups of 3
  q.tp_size = 16;
  EXPECT_THROW(make_deployment(shipped("qwen3-coder-480b"), 8, q), ConfigError);  // larger than the system
}

TEST(LlmStep, GpuWeightsAreShardsOfTheModel) {
  const ModelConfig m = shipped("qwen3-235b");
  const Deployment d = make_deployment(m, 8, llm_defaults());
  const GpuWeights w = gpu_weights(m, d);
  // Attention replicated, 1/8 of the experts, 1/8 of embedding and LM head.
  int64_t attn = 0, experts = 0, vocab = 0, all_attn = 0, all_experts = 0, all_vocab = 0;
  for (const auto& t : w.tensors) {
    if (t.role == Role::ExpertGate || t.role == Role::ExpertUp || t.role == Role::ExpertDown)
      experts += t.bytes.raw();
    else if (t.role == Role::Embed || t.role == Role::LmHead)
      vocab += t.bytes.raw();
    else
      attn += t.bytes.raw();
  }
  for (const auto& t : m.tensors()) {
    const int64_t b = m.tensor_bytes(t).raw();
    if (t.role == Role::ExpertGate || t.role == Role::ExpertUp || t.role == Role::ExpertDown)
      all_experts += b;
    else if (t.role == Role::Embed || t.role == Role::LmHead)
      all_vocab += b;
    else
      all_attn += b;
  }
  EXPECT_EQ(attn, all_attn);
  EXPECT_EQ(experts * 8, all_experts);
  EXPECT_EQ(vocab * 8, all_vocab);
  // Declaration order is the names sorted (layers.10 before layers.2).
  EXPECT_LT(w.tensors[w.declaration[0]].name, w.tensors[w.declaration[1]].name);
}

TEST(LlmStep, CapacityLimits) {
  const KindParams h200 = [] {
    KindParams k;
    k.kind = "h200";
    k.system.gpu = default_params<hbf::GpuParams>();
    k.system.hbm = default_params<hbf::HbmParams>();
    k.system.hbf = default_params<hbf::HbfParams>();
    k.llm = default_params<LlmParams>();
    k.serving = default_params<ServingParams>();
    k.serving.capacity_context = CapacityContext::Full;  // the whole context reserved: the by-hand counts below
    return k;
  }();
  const ModelConfig llama = shipped("llama3.1-405b");
  Server s(llama, h200, 8);
  const ContextSpec agent = paper_context("agent");
  const int64_t n = s.max_requests(agent);
  const Capacity in = s.capacity(n, agent), out = s.capacity(n + 1, agent);
  EXPECT_TRUE(in.fits);
  EXPECT_FALSE(out.fits);
  EXPECT_EQ(out.limit, Exhausted::Hbm);
  // By hand: (141 GB - 101.5 GB of weights - 2 GB reserve - workspace) / (21,000 tokens x 64,512 B per GPU).
  const double per_request = 21000.0 * 516096 / 8;
  EXPECT_EQ(n, int64_t((141e9 - double(in.weights.raw()) - 2e9 - double(in.workspace.raw())) / per_request));

  // CSI: isolated megablocks bind before bytes. A request of 10,640 tokens has 126 layers x ceil(10640 / 256) =
  // 5,292 slices of 256 tokens.
  KindParams csi = h200;
  csi.kind = "csi";
  csi.system.hbm.capacity_per_stack = Bytes(5875000000);
  csi.system.hbf.stacks = 6;
  csi.system.cell = test::xl_flash_cell();
  hbf::use_cell(csi.system.hbf, csi.system.cell);
  const ContextSpec lng = paper_context("long");
  {
    // kv_span = all: a block on each of the 144 megaplanes per request.
    csi.system.hbf.runtime.kv_span = hbf::KvSpan::All;
    Server c(llama, csi, 8);
    const int64_t nc = c.max_requests(lng);
    EXPECT_EQ(c.capacity(nc + 1, lng).limit, Exhausted::FlashBlocks);
    const int64_t weight_blocks = (c.memory().weight_units_max_per_megaplane() + 255) / 256;
    EXPECT_EQ(nc, 256 - weight_blocks);
  }
  {
    // kv_span = fit: a window of ceil(5292 / 256) = 21 megaplanes, one block on each; windows follow each other, so
    // r requests put ceil(21 r / 144) blocks on the fullest megaplane.
    csi.system.hbf.runtime.kv_span = hbf::KvSpan::Fit;
    Server c(llama, csi, 8);
    EXPECT_EQ(c.system().kv_window(5292), 21);
    EXPECT_EQ(c.system().kv_megablocks(5292), 21);
    const int64_t nc = c.max_requests(lng);
    EXPECT_EQ(c.capacity(nc + 1, lng).limit, Exhausted::FlashBlocks);
    const int64_t weight_blocks = (c.memory().weight_units_max_per_megaplane() + 255) / 256;
    EXPECT_EQ(nc, (256 - weight_blocks) * 144 / 21);
  }
}
