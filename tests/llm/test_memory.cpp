// Where weights and KV live on an HBF GPU: the weight placement is the HBF
// runtime's (store_weights), the KV placement follows GroupWrite's packing, and
// selective offload per layer caps the plane load at the mean.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/config.hpp"
#include "hbf/runtime.hpp"
#include "llm/serving.hpp"
#include "llm_test_util.hpp"

namespace fs = std::filesystem;
using namespace bitline;
using namespace bitline::llm;
using bitline::llm::test::paper_context;
using bitline::llm::test::paper_eval;
using bitline::llm::test::preset_kind;
using bitline::llm::test::shipped;

namespace {

// The GPU's weights stored by the HBF runtime: every tensor's megapages must be where GpuMemory says.
void check_weight_placement(const std::string& layout) {
  KindParams k = preset_kind("cli");
  k.system.hbf.runtime.weight_layout = hbf::WeightLayoutChoice::named(layout);
  const ModelConfig m = shipped("deepseek-v3");
  Server s(m, k, 8);
  const GpuWeights& w = s.weights();
  hbf::WeightSpec spec;
  spec.name = "w";
  std::vector<uint32_t> decl_pos(w.tensors.size());
  for (size_t j = 0; j < w.tensors.size(); ++j) {
    const GpuTensor& t = w.tensors[w.declaration[j]];
    spec.tensors.push_back(hbf::TensorSpec{t.name, t.bytes});
    decl_pos[w.declaration[j]] = uint32_t(j);
  }
  spec.execution_order = decl_pos;
  hbf::Runtime rt(s.system(), hbf::Mode::Timing, 1);
  const hbf::ObjectId id = rt.store_weights(spec);
  const auto units = rt.flash_units(id);  // in the object's unit order = declaration order
  int64_t u = 0;
  int64_t mismatches = 0;
  std::vector<int64_t> first_unit(w.tensors.size());
  for (size_t j = 0; j < w.tensors.size(); ++j) {
    first_unit[w.declaration[j]] = u;
    u += (w.tensors[w.declaration[j]].bytes.raw() + s.system().megapage().raw() - 1) / s.system().megapage().raw();
  }
  const auto& pos = s.memory().tensor_positions();
  for (size_t i = 0; i < w.tensors.size(); ++i)
    if (units[size_t(first_unit[i])].megaplane != s.system().dealt(pos[i])) ++mismatches;
  EXPECT_EQ(mismatches, 0) << layout;
  EXPECT_EQ(int64_t(units.size()), s.memory().weight_units());
}

}  // namespace

TEST(LlmMemory, WeightPlacementIsTheRuntimes) {
  check_weight_placement("execution");
  check_weight_placement("declaration");
}

TEST(LlmMemory, GroupWriteLaysEachRequestsLayerOnConsecutiveMegaplanes) {
  // The property the KV model builds on: GroupWrite packs a request's slices of a layer onto consecutive
  // megaplanes of the dealing order (except where a hyperpage is shared with another request).
  const KindParams k = preset_kind("csi");
  const hbf::System sys(k.system);
  hbf::Runtime rt(sys, hbf::Mode::Timing, 1);
  const Bytes token(2048);  // Qwen3-235B: one token's KV in one layer
  const int64_t tps = rt.tokens_per_slice(token), layers = 4, tokens = 9000;
  std::vector<hbf::ObjectId> ids;
  for (int r = 0; r < 5; ++r) {
    ids.push_back(rt.kv_create(fmt::format("r{}", r), uint32_t(layers), token));
    for (int64_t l = 0; l < layers; ++l) rt.kv_append_zeros(ids.back(), uint32_t(l), Bytes(tokens * token.raw()));
  }
  const hbf::GroupId g = rt.group_create(ids);
  rt.group_write(g, hbf::Remainder::Hold);
  int64_t pairs = 0, consecutive = 0;
  const int64_t K = sys.megaplanes();
  for (auto id : ids) {
    const auto u = rt.flash_units(id);
    for (size_t i = 1; i < u.size(); ++i, ++pairs)
      if ((sys.deal_index(u[i - 1].megaplane) + 1) % K == sys.deal_index(u[i].megaplane)) ++consecutive;
  }
  EXPECT_EQ(tps, 64);
  EXPECT_GT(double(consecutive) / double(pairs), 0.99);
}

// hbf.runtime.kv_span = fit (default): the KV model's per-layer loads are exactly where the runtime's GroupWrite
// puts the slices of requests created with their expected size (windows of W megaplanes, one after the other).
TEST(LlmMemory, KvModelIsWhereGroupWriteFitsEachRequest) {
  const KindParams k = preset_kind("csi");
  ASSERT_EQ(*k.system.hbf.runtime.kv_span, hbf::KvSpan::Fit);
  const ModelConfig m = shipped("qwen3-235b");
  Server s(m, k, 8);
  StepGraph g = s.graph(8, paper_context("long"));
  const int64_t tps = s.memory().tokens_per_slice(g.kv_token_layer_bytes), L = m.layers, K = s.system().megaplanes();
  ASSERT_EQ(tps, 64);
  // 8 requests of 9 full slices (+ 10 staged tokens) per layer: 8 x 9 x 94 = 47 hyperpages, all written.
  g.contexts.assign(8, 9 * tps + 10);
  g.kv_full_tokens = 10000;  // expected: 157 slices per layer, 14,758 in all -> windows of 58 megaplanes
  const int64_t w = s.system().kv_window(L * 157);
  EXPECT_EQ(w, 58);

  hbf::Runtime rt(s.system(), hbf::Mode::Timing, 1);
  const Bytes token(g.kv_token_layer_bytes);
  std::vector<hbf::ObjectId> ids;
  for (size_t i = 0; i < g.contexts.size(); ++i) {
    ids.push_back(rt.kv_create(fmt::format("r{}", i), uint32_t(L), token, Bytes(g.kv_full_tokens * token.raw() * L)));
    EXPECT_EQ(rt.kv_window(ids.back()), std::make_pair(int64_t(i) * w % K, w));
    for (int64_t l = 0; l < L; ++l) rt.kv_append_zeros(ids.back(), uint32_t(l), Bytes(g.contexts[i] * token.raw()));
  }
  const hbf::WriteReport wr = rt.group_write(rt.group_create(ids), hbf::Remainder::Hold);
  EXPECT_EQ(wr.held, 0);
  EXPECT_EQ(wr.spilled, 0);
  std::vector<std::vector<int64_t>> placed(size_t(L), std::vector<int64_t>(size_t(K), 0));
  for (auto id : ids) {
    const auto u = rt.flash_units(id);
    ASSERT_EQ(int64_t(u.size()), 9 * L);
    for (size_t j = 0; j < u.size(); ++j) ++placed[j / 9][size_t(s.system().deal_index(u[j].megaplane))];
    EXPECT_EQ(int64_t(rt.owned_blocks(id).size()), w);  // 846 slices: one block on each of its window's 58 megaplanes
  }
  for (int32_t l : {0, 1, 37, 93}) {
    std::vector<int64_t> model;
    EXPECT_EQ(s.memory().kv_loads(g, l, model), 8 * 9);
    EXPECT_EQ(model, placed[size_t(l)]) << "layer " << l;
  }
}

TEST(LlmMemory, SelectiveOffloadCapsEachLayerAtTheMean) {
  KindParams k = preset_kind("csi");
  const ModelConfig m = shipped("qwen3-235b");
  Server s(m, k, 8);
  const ContextSpec c = paper_context("long");
  const StepGraph g = s.graph(64, c);
  ASSERT_GT(g.replica_units_per_layer, 1000);  // HBM has room for the replicas
  for (int32_t layer : {0, 17, 93}) {
    const KvLayerStats st = s.memory().kv_layer_stats(g, layer);
    EXPECT_EQ(st.rounds, int64_t(std::ceil(st.mean_load)));  // no megaplane above the mean (rounded up)
    EXPECT_GE(st.max_load_before, st.rounds);
    EXPECT_EQ(st.flash_units + st.hbm_replicas, int64_t(std::llround(st.mean_load * double(s.memory().megaplanes()))));
  }
  // Scattered KV (no layout): balls into bins, the fullest megaplane well above the mean.
  k.serving.kv_layout = KvLayout::Scatter;
  Server sc(m, k, 8);
  const KvLayerStats st = sc.memory().kv_layer_stats(sc.graph(64, c), 3);
  EXPECT_GT(double(st.max_load_before), 1.1 * st.mean_load);
  EXPECT_EQ(st.hbm_replicas, 0);
}

// A step places each layer's KV once: the fast model's sampled layers carry their placement (the HBM replicas
// GroupArrange reads) in the step's timing, the same placement kv_layer_stats makes, and the layers it did not sample
// are marked unplaced (Server::arranged_bytes places those).
TEST(LlmMemory, TheTimingCarriesThePlacementOfTheLayersItSampled) {
  const KindParams k = preset_kind("csi");
  Server s(shipped("qwen3-235b"), k, 8);
  const StepGraph g = s.graph(64, paper_context("long"));
  const StepTiming st = time_step_fast(g, s.memory(), MemoryTiming::of(s.system()), 3);
  int64_t placed = 0, replicas = 0;
  for (size_t l = 0; l < st.kv_replicas.size(); ++l) {
    if (st.kv_replicas[l] < 0) continue;
    ++placed;
    replicas += st.kv_replicas[l];
    EXPECT_EQ(st.kv_replicas[l], s.memory().kv_layer_stats(g, int32_t(l)).hbm_replicas) << "layer " << l;
  }
  EXPECT_EQ(placed, 3);    // the first, middle and last of the run of attention layers
  EXPECT_GT(replicas, 0);  // (selective offload: replicas in HBM)
  EXPECT_EQ(st.kv_replicas.front(), s.memory().kv_layer_stats(g, 0).hbm_replicas);
  // Every layer timed: every layer placed.
  const StepTiming all = time_step_fast(g, s.memory(), MemoryTiming::of(s.system()), 0);
  ASSERT_EQ(int64_t(all.kv_replicas.size()), s.model().layers);
  for (int64_t r : all.kv_replicas) EXPECT_GE(r, 0);
}

// serving.kv_offload=fill: after the mean cap, the most loaded megaplanes keep moving to HBM while the replicas fit
// and HBM's transfer stays within the flash rounds left.
TEST(LlmMemory, FillOffloadGoesBelowTheMeanWhileHbmKeepsUp) {
  KindParams k = preset_kind("csi");
  const ModelConfig m = shipped("qwen3-235b");
  const ContextSpec c = paper_context("long");
  Server mean_srv(m, k, 8);
  k.serving.kv_offload = KvOffload::Fill;
  Server fill_srv(m, k, 8);
  const StepGraph g = fill_srv.graph(64, c);
  const hbf::System& sys = fill_srv.system();
  // One round: a hyperpage through the six stacks' interfaces, or tR if longer.
  const double t_round = std::max(4e-6, double(sys.megapage().raw()) * double(sys.megaplanes()) / (6 * 768e9));
  for (int32_t layer : {0, 50}) {
    const KvLayerStats a = mean_srv.memory().kv_layer_stats(g, layer), b = fill_srv.memory().kv_layer_stats(g, layer);
    EXPECT_EQ(a.flash_units + a.hbm_replicas, b.flash_units + b.hbm_replicas);  // the same slices, read from elsewhere
    EXPECT_LT(b.rounds, a.rounds);                                              // below the mean
    EXPECT_GT(b.hbm_replicas, a.hbm_replicas);
    EXPECT_LE(b.hbm_replicas, g.replica_units_per_layer);
    const double slice = 64.0 * 2048;  // 64 tokens x 2 KiB of KV per token and layer per GPU
    const double hbm_s = (double(b.staged_bytes) + double(b.hbm_replicas) * slice) / 4.8e12;
    EXPECT_LE(hbm_s, t_round * double(b.rounds) * (1 + 1e-9));
    // One round lower would need up to 144 more replicas: past the budget, or HBM slower than the rounds left.
    const double more = (double(b.staged_bytes) + double(b.hbm_replicas + 144) * slice) / 4.8e12;
    EXPECT_TRUE(b.hbm_replicas + 144 > g.replica_units_per_layer || more > t_round * double(b.rounds - 1))
        << b.hbm_replicas << " replicas of " << g.replica_units_per_layer << ", " << b.rounds << " rounds";
  }
  // No HBM left for replicas: nothing moves, in either mode.
  StepGraph g0 = g;
  g0.replica_units_per_layer = 0;
  const KvLayerStats z = fill_srv.memory().kv_layer_stats(g0, 7);
  EXPECT_EQ(z.hbm_replicas, 0);
  EXPECT_EQ(z.rounds, z.max_load_before);
}

// serving.hbm_weight_cache: that share of every weight kernel's megapages comes from HBM; the bytes are conserved
// and the cache is counted in HBM capacity.
TEST(LlmMemory, WeightCacheSplitsEveryKernelBetweenHbmAndFlash) {
  KindParams k = preset_kind("csi");
  const ModelConfig m = shipped("llama3.1-405b");
  const ContextSpec c = paper_context("agent");
  Server plain(m, k, 8);
  const double weights = double(plain.weights().total.raw());
  k.serving.hbm_weight_cache = Bytes(int64_t(weights / 4));
  Server cached(m, k, 8);
  const StepGraph g = cached.graph(8, c);
  auto bytes = [&](const Server& s) {
    TilePlan plan;
    s.memory().append_ops(g, 0, uint32_t(g.ops.size()), plan);
    double flash = 0, hbm = 0;
    for (const StepTile& t : plan.tiles) {
      if (t.part != Part::Weights) continue;
      hbm += double(t.hbm_bytes);
      for (uint32_t i = t.first; i < t.first + t.count; ++i) flash += plan.units[i].bytes;
    }
    return std::pair{flash, hbm};
  };
  const auto [f0, h0] = bytes(plain);
  const auto [f1, h1] = bytes(cached);
  EXPECT_NEAR(f1 + h1 - h0, f0, 1e-6 * f0);  // activations aside, the same weight bytes
  EXPECT_NEAR((h1 - h0) / f0, 0.25, 0.01);   // a quarter of them from HBM
  EXPECT_EQ(cached.capacity(8, c).weight_cache.raw(), int64_t(weights / 4));
  EXPECT_EQ(cached.capacity(8, c).hbm_used - plain.capacity(8, c).hbm_used, Bytes(int64_t(weights / 4)));
  // Faster: both memories stream weights at once.
  EXPECT_LT(cached.step(8, c).step, plain.step(8, c).step);
}

// serving.kv_layout=paged (the ablation's "without the KV layout"): PagedAttention blocks of 256 KiB (128 tokens of
// 2 KiB per layer on a Qwen3-235B GPU), each at a random page offset of a random megaplane: a block covers 2
// megapages when it starts on a megapage boundary (1 offset in 32) and 3 otherwise; the partial last block of a
// request (context mod 128 tokens) stays in HBM; nothing is replicated.
TEST(LlmMemory, PagedKvBlocksAreNotMegapageAligned) {
  KindParams k = preset_kind("csi");
  const ModelConfig m = shipped("qwen3-235b");
  k.serving.kv_layout = KvLayout::Paged;
  k.serving.kv_block_alignment = hbf::KvBlockAlign::Page;  // the unaligned option; the default pool is aligned (below)
  Server s(m, k, 8);
  StepGraph g = s.graph(64, paper_context("long"));
  ASSERT_EQ(g.kv_token_layer_bytes, 2048);
  EXPECT_EQ(s.memory().tokens_per_block(g.kv_token_layer_bytes), 128);
  g.contexts.assign(40, 10 * 128 + 7);  // 10 full blocks and 7 staged tokens per request
  const KvLayerStats st = s.memory().kv_layer_stats(g, 5);
  const int64_t blocks = 40 * 10;
  EXPECT_GE(st.flash_units, 2 * blocks);
  EXPECT_LE(st.flash_units, 3 * blocks);
  EXPECT_GT(st.flash_units, 2 * blocks + blocks * 9 / 10);  // ~31 in 32 blocks straddle a third megapage
  EXPECT_EQ(st.staged_bytes, 40 * 7 * 2048);
  EXPECT_EQ(st.hbm_replicas, 0);
  // The default block pool (kv_block_alignment = block): every 256 KiB block is exactly its 2 megapages.
  k.serving.kv_block_alignment = hbf::KvBlockAlign::Block;
  Server aligned(m, k, 8);
  EXPECT_EQ(aligned.memory().kv_layer_stats(g, 5).flash_units, 2 * blocks);
  // The same KV megapage-aligned (FlashAccel's slices of 64 tokens): 20 reads per request.
  k.serving.kv_layout = KvLayout::FlashAccel;
  Server f(m, k, 8);
  const KvLayerStats fs_ = f.memory().kv_layer_stats(g, 5);
  EXPECT_EQ(fs_.flash_units + fs_.hbm_replicas, 40 * 20);
  EXPECT_LT(fs_.rounds, st.rounds);
}

// GroupArrange's copy is charged in the step (kv_arrange): the replicas of the step's new KV (serving.kv_arrange =
// new_kv), or every replica (whole), read from flash and written to HBM; nothing without the FlashAccel KV layout.
TEST(LlmMemory, GroupArrangeCopyIsChargedInTheStep) {
  KindParams k = preset_kind("csi");
  const ModelConfig m = shipped("qwen3-235b");
  const ContextSpec c = paper_context("long");
  const StepReport a = Server(m, k, 8).step(256, c);
  k.serving.kv_arrange = KvArrange::Whole;
  const StepReport w = Server(m, k, 8).step(256, c);
  EXPECT_GT(a.breakdown.kv_arrange.raw(), 0);
  EXPECT_GT(w.breakdown.kv_arrange.raw(), 100 * a.breakdown.kv_arrange.raw());  // the new KV is a small share
  EXPECT_EQ(w.step.raw() - w.breakdown.kv_arrange.raw(), a.step.raw() - a.breakdown.kv_arrange.raw());
  EXPECT_EQ(w.breakdown.total().raw(), w.step.raw());
  k.serving.kv_layout = KvLayout::Paged;
  EXPECT_EQ(Server(m, k, 8).step(256, c).breakdown.kv_arrange.raw(), 0);
}
