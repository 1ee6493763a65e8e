// Expert reads: the distinct experts a decode step reads on an expert-parallel
// GPU follow from the GLOBAL token count reaching it (every data-parallel
// rank's tokens), T = requests per rank x ranks, not one rank's:
// E_l (1 - (1 - k/E)^T) of its E_l experts (the closed form of
// expected_distinct_experts). Checked on the step graph and on the bytes the
// memory model reads, at batch 1 and at large batches, for data-parallel and
// tensor-parallel attention.
#include <gtest/gtest.h>

#include <cmath>

#include "llm/serving.hpp"
#include "llm_test_util.hpp"

using namespace bitline;
using namespace bitline::llm;
using bitline::llm::test::paper_context;
using bitline::llm::test::preset_kind;
using bitline::llm::test::shipped;

namespace {

double closed_form(double local, double E, double k, double T) { return local * (1.0 - std::pow(1.0 - k / E, T)); }

struct ExpertRead {
  double experts = 0;  // distinct local experts read per MoE layer (read_fraction x local experts)
  double tokens = 0;   // token-expert pairs computed on this GPU per MoE layer
  double bytes = 0;    // weight bytes the memory model reads for the first MoE layer's gate_up + down
  double bytes_all = 0;
};

ExpertRead expert_read(const Server& s, int64_t r) {
  const StepGraph g = s.graph(r, paper_context("long"));
  ExpertRead out;
  TilePlan plan;
  for (uint32_t i = 0; i < g.ops.size(); ++i) {
    const Op& o = g.ops[i];
    if (o.name != "L0.experts_gate_up" && o.name != "L0.experts_down") continue;
    out.experts = o.read_fraction * double(s.deployment().local_experts);
    out.tokens = g.routing.tokens_local;
    plan.clear();
    s.memory().append_ops(g, i, 1, plan);
    for (const StepTile& t : plan.tiles) out.bytes += double(t.hbm_bytes);
    out.bytes -= double(o.act_bytes.raw());  // the kernel's activations, read and written beside its weights
    for (uint32_t t = o.first_tensor; t < o.first_tensor + o.tensor_count; ++t) out.bytes_all += double(s.weights().tensors[t].bytes.raw());
  }
  return out;
}

}  // namespace

TEST(LlmExpertReads, DataParallelRanksAllSendTheirTokensToEveryExpertGpu) {
  const ModelConfig m = shipped("qwen3-235b");  // 128 experts, top-8; 16 per GPU on 8 GPUs
  const Server s(m, preset_kind("h200"), 8);
  ASSERT_EQ(s.deployment().ranks, 8);
  ASSERT_EQ(s.deployment().local_experts, 16);
  for (int64_t r : {1, 4, 256}) {
    const double T = double(r * 8);  // every rank's tokens reach GPU 0's experts
    const ExpertRead e = expert_read(s, r);
    EXPECT_NEAR(e.experts, closed_form(16, 128, 8, T), 1e-9) << r;
    EXPECT_NEAR(e.tokens, T * 8.0 * 16.0 / 128.0, 1e-9) << r;
    // The bytes read are that share of the GPU's expert weights (HBM: exact up to rounding).
    EXPECT_NEAR(e.bytes, e.bytes_all * e.experts / 16.0, 2.0) << r;
  }
  // Batch 1 per rank: 8 tokens in the step, 6.45 of 16 experts read, not the 1.0 one rank's token would touch.
  const ExpertRead one = expert_read(s, 1);
  EXPECT_NEAR(one.experts, 6.4527, 1e-3);
  EXPECT_GT(one.experts, 6.0 * closed_form(16, 128, 8, 1));
  // A large batch reads all of them.
  EXPECT_NEAR(expert_read(s, 256).experts, 16.0, 1e-9);
}

TEST(LlmExpertReads, TensorParallelAttentionCountsTheWholeSystemBatchOnce) {
  const ModelConfig m = shipped("qwen3-coder-480b");  // 160 experts, top-8; 20 per GPU on 8 GPUs
  KindParams k = preset_kind("h200");
  k.llm.attention_parallel = AttentionParallel::Tp;
  // TP8: one rank; a system batch of 1 is one token: k E_l / E = 1 expert per GPU.
  k.llm.tp_size = 8;
  const Server tp8(m, k, 8);
  ASSERT_EQ(tp8.deployment().ranks, 1);
  EXPECT_NEAR(expert_read(tp8, 1).experts, closed_form(20, 160, 8, 1), 1e-9);
  EXPECT_NEAR(expert_read(tp8, 1).experts, 1.0, 1e-9);
  EXPECT_NEAR(expert_read(tp8, 300).experts, closed_form(20, 160, 8, 300), 1e-9);
  // TP2: four ranks, each request's token reaches the experts once: T = 4 r.
  k.llm.tp_size = 2;
  const Server tp2(m, k, 8);
  ASSERT_EQ(tp2.deployment().ranks, 4);
  for (int64_t r : {1, 3, 200}) EXPECT_NEAR(expert_read(tp2, r).experts, closed_form(20, 160, 8, 4.0 * double(r)), 1e-9) << r;
}

// Issue 28: on HBF the prefetch queue comes from the static compute graph, which does not know the routing, so it
// reads every local expert (serving.expert_prefetch = static, the paper's configuration); router-driven prefetch
// reads only the experts the router picked (the same share as an HBM GPU) but cannot issue them before the first
// expert kernel starts (a gate tile: SramPrefetch waits there), so at batch 1 its step exposes more flash latency.
TEST(LlmExpertReads, StaticQueueReadsEveryLocalExpertRouterDrivenWaitsForTheRouter) {
  const ModelConfig m = shipped("qwen3-235b");
  KindParams stat = preset_kind("csi"), router = preset_kind("csi");
  router.serving.expert_prefetch = Choice<ExpertPrefetch, expert_prefetches>::named("router");
  const Server a(m, stat, 8), b(m, router, 8);
  auto flash_units = [](const Server& s, bool& gated) {
    const StepGraph g = s.graph(1, paper_context("long"));
    double units = 0;
    gated = false;
    TilePlan plan;
    for (uint32_t i = 0; i < g.ops.size(); ++i) {
      if (g.ops[i].name != "L0.experts_gate_up" && g.ops[i].name != "L0.experts_down") continue;
      plan.clear();
      s.memory().append_ops(g, i, 1, plan);
      for (const StepTile& t : plan.tiles) units += t.count, gated = gated || t.gate;
    }
    return units;
  };
  bool ga = false, gb = false;
  const double ua = flash_units(a, ga), ub = flash_units(b, gb);
  EXPECT_FALSE(ga);
  EXPECT_TRUE(gb);
  // 6.45 of 16 experts touched at 8 tokens (1 per rank): router-driven reads that share, static all 16.
  EXPECT_NEAR(ub / ua, 6.4527 / 16.0, 0.01);
  const StepReport sa = a.step(1, paper_context("long")), sb = b.step(1, paper_context("long"));
  EXPECT_GT(sb.breakdown.flash_latency, sa.breakdown.flash_latency);
}
