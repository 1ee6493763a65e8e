// Capacity per GPU (Server::capacity): weights, KV, the activation workspace and
// the runtime reserve, each from its parameter, and where each is charged (HBM,
// HBF blocks, or SRAM on a GPU without HBM).
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "llm/serving.hpp"
#include "llm_test_util.hpp"

using namespace bitline;
using namespace bitline::llm;
using bitline::llm::test::paper_context;
using bitline::llm::test::preset_kind;
using bitline::llm::test::shipped;

TEST(LlmCapacity, HbmHoldsEachPartOnAnH200) {
  const ModelConfig m = shipped("qwen3-235b");
  KindParams k = preset_kind("h200");
  k.serving.capacity_context = CapacityContext::Full;  // the whole context reserved: the by-hand figures below
  const ContextSpec c = paper_context("long");
  const Server s(m, k, 8);
  const Capacity a = s.capacity(10, c);
  EXPECT_EQ(a.reserve, k.llm.runtime_reserve);
  EXPECT_FALSE(a.reserve_in_flash);
  EXPECT_EQ(a.hbm_used, a.weights + a.kv + a.reserve + a.workspace);
  EXPECT_EQ(a.kv.raw(), 10 * (c.input + c.output) * m.kv_bytes_per_token());  // data-parallel attention: whole KV heads
  // The workspace: workspace_buffers copies of the widest activation (activation_bytes each) + the logits
  // (logit_bytes each). Doubling the buffers adds exactly the activation part once more.
  KindParams k2 = k;
  k2.llm.workspace_buffers = 2 * k.llm.workspace_buffers;
  const Capacity b = Server(m, k2, 8).capacity(10, c);
  KindParams k0 = k;
  k0.llm.workspace_buffers = 0;
  const Capacity z = Server(m, k0, 8).capacity(10, c);  // logits only
  EXPECT_GT(z.workspace.raw(), 0);
  EXPECT_NEAR(double(b.workspace.raw() - z.workspace.raw()), 2.0 * double(a.workspace.raw() - z.workspace.raw()), 2.0);
  // Logits: 10 x 8 ranks tokens x the local vocabulary (151936 / 8 shards) x 4 bytes.
  EXPECT_NEAR(double(z.workspace.raw()), 80.0 * 18992 * 4, 1.0);
  KindParams kl = k0;
  kl.llm.logit_bytes = 2;
  EXPECT_NEAR(double(Server(m, kl, 8).capacity(10, c).workspace.raw()), 80.0 * 18992 * 2, 1.0);
  // The reserve is a parameter: no reserve, 2 GB more for KV.
  KindParams kr = k;
  kr.llm.runtime_reserve = Bytes{};
  EXPECT_EQ(Server(m, kr, 8).capacity(10, c).hbm_used + k.llm.runtime_reserve, a.hbm_used);
}

TEST(LlmCapacity, RealGpusHoldTheMemoryTheirCardsReport) {
  // NVIDIA's "80 GB", "141 GB" and "180 GB" are GiB: nvidia-smi reports 81,920 MiB on an A100 SXM4 80GB, 81,559 MiB
  // on an H100 80GB HBM3, 143,771 MiB on an H200 and 183,359 MiB on a B200 (each short of the GiB figure by less
  // than the 2 GB runtime reserve), not 80e9, 141e9 or 180e9 bytes.
  struct Card {
    const char* kind;
    int64_t gib, reported_mib;
  };
  for (const Card& c : {Card{"a100", 80, 81920}, Card{"h100", 80, 81559}, Card{"h200-sxm", 141, 143771}, Card{"b200", 180, 183359}}) {
    const KindParams k = preset_kind(c.kind);
    const int64_t hbm = k.system.hbm.capacity_per_stack.raw() * k.system.hbm.stacks;
    EXPECT_EQ(hbm, c.gib << 30) << c.kind;
    // What the card reports, to within the runtime reserve that the kind keeps back anyway.
    EXPECT_GE(hbm - (c.reported_mib << 20), 0) << c.kind;
    EXPECT_LT(hbm - (c.reported_mib << 20), k.llm.runtime_reserve.raw()) << c.kind;
  }
}

TEST(LlmCapacity, WithoutHbmTheReserveTakesHbfBlocks) {
  const ModelConfig m = shipped("qwen3-235b");
  const ContextSpec c = paper_context("long");
  KindParams k = preset_kind("hbf-only");
  ASSERT_EQ(k.system.hbm.stacks, 0);
  const Server s(m, k, 8);
  const Capacity a = s.capacity(4, c);
  EXPECT_TRUE(a.reserve_in_flash);
  EXPECT_EQ(a.reserve, k.llm.runtime_reserve);
  // 2 GB over 144 megaplanes (6 stacks x 24) is 13.9 MB each: one 32 MiB megablock per megaplane.
  const int64_t megaplanes = s.system().megaplanes(), megablock = s.system().megapage().raw() * s.system().pages_per_block();
  EXPECT_EQ(megaplanes, 144);
  EXPECT_EQ(a.reserve_blocks, (k.llm.runtime_reserve.raw() / megaplanes + megablock - 1) / megablock);
  EXPECT_EQ(a.reserve_blocks, 1);
  // The SRAM holds the workspace and the staging, not the reserve.
  EXPECT_EQ(a.hbm_used, a.workspace + a.staging);
  // Without a reserve the flash has that many blocks more per megaplane.
  KindParams k0 = k;
  k0.llm.runtime_reserve = Bytes{};
  const Capacity b = Server(m, k0, 8).capacity(4, c);
  EXPECT_EQ(b.reserve_blocks, 0);
  EXPECT_EQ(a.blocks_used, b.blocks_used + a.reserve_blocks);
  EXPECT_EQ(a.json()["runtime_reserve_in"], "hbf");
  // On CSI (with HBM) the reserve is HBM's, and no blocks are taken for it.
  const Capacity csi = Server(m, preset_kind("csi"), 8).capacity(4, c);
  EXPECT_FALSE(csi.reserve_in_flash);
  EXPECT_EQ(csi.reserve_blocks, 0);
  EXPECT_EQ(csi.json()["runtime_reserve_in"], "hbm");
}
