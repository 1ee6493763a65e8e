// Timing: the fast step model against hand-computed tile timings and against
// the event-driven memory simulation (hbf::simulate_reads), on small plans and
// on sampled decode steps of every model and system (acceptance: within 3%).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "core/config.hpp"
#include "llm/serving.hpp"
#include "llm/timing.hpp"
#include "llm_test_util.hpp"

namespace fs = std::filesystem;
using namespace bitline;
using namespace bitline::llm;
using bitline::llm::test::paper_context;
using bitline::llm::test::paper_eval;
using bitline::llm::test::preset_kind;
using bitline::llm::test::preset_kinds;
using bitline::llm::test::shipped;

namespace {

// 2 stacks x 1 die x 4 planes, M = 1: K = 8 megaplanes of 4 KiB pages; tR 4 us; an interface moves a page in 1 us.
hbf::SystemParams small_hbf() {
  hbf::SystemParams p;
  p.gpu = default_params<hbf::GpuParams>();
  p.hbm = default_params<hbf::HbmParams>();
  p.hbm.stacks = 1;
  p.hbm.bandwidth_per_stack = Bandwidth(4096e9);  // 1 MiB-ish pieces in ~0.26 us
  p.hbm.latency = Time{};
  p.hbf = default_params<hbf::HbfParams>();
  p.hbf.stacks = 2;
  p.hbf.geometry.dies_per_stack = 1;
  p.hbf.geometry.planes_per_die = 4;
  p.hbf.geometry.planes_per_megaplane = 1;
  p.hbf.timing.interface_bandwidth = Bandwidth(4096e6);
  p.cell = test::xl_flash_cell();
  hbf::use_cell(p.hbf, p.cell);
  // The cases below time the array and the interface alone; the per-read overheads have their own test.
  p.hbf.timing.t_command = Time{};
  p.hbf.timing.t_ecc_decode = Time{};
  p.hbf.timing.die_link_bandwidth = Bandwidth(1e30);
  return p;
}

// `tiles` tiles, each reading one page from every megaplane, each with `compute`.
TilePlan full_tiles(const hbf::System& sys, int tiles, Time compute) {
  TilePlan plan;
  for (int t = 0; t < tiles; ++t) {
    StepTile tile{uint32_t(plan.units.size()), 0, 0, compute, Part::Weights, 0};
    for (int64_t i = 0; i < sys.megaplanes(); ++i) plan.units.push_back(FlashUnit{sys.dealt(i), 4096}), ++tile.count;
    plan.tiles.push_back(tile);
  }
  return plan;
}

Time fast(const hbf::System& sys, const TilePlan& plan) {
  const MemoryTiming mt = MemoryTiming::of(sys);
  FastTimer t(mt);
  Breakdown b;
  ReadCounters r;
  t.run(plan, b, r);
  EXPECT_EQ(b.total(), t.now());  // the breakdown accounts for every picosecond
  return t.now();
}

Time event(const hbf::System& sys, const TilePlan& plan) {
  return hbf::simulate_reads(sys, to_read_plan(plan, sys.megapage().raw()), hbf::read_options(sys)).elapsed;
}

}  // namespace

TEST(LlmTiming, PrefetchedStreamByHand) {
  const hbf::System sys(small_hbf());
  // Prefetch: the first tile waits for tR, then each tile is its interface time (4 pages x 1 us per stack).
  const TilePlan plan = full_tiles(sys, 3, Time{});
  EXPECT_EQ(fast(sys, plan), us(4 + 3 * 4));
  EXPECT_EQ(event(sys, plan), us(4 + 3 * 4));
}

TEST(LlmTiming, OnDemandStreamByHand) {
  hbf::SystemParams p = small_hbf();
  p.hbf.runtime.prefetch = false;
  const hbf::System sys(p);
  // Without prefetch every tile senses (tR) and then transfers.
  const TilePlan plan = full_tiles(sys, 3, Time{});
  EXPECT_EQ(fast(sys, plan), us(3 * (4 + 4)));
  EXPECT_EQ(event(sys, plan), us(3 * (4 + 4)));
}

TEST(LlmTiming, ComputeOverlapsMemoryByHand) {
  const hbf::System sys(small_hbf());
  // 10 us of compute per tile hides the 4 us transfers: max, not sum.
  const TilePlan plan = full_tiles(sys, 3, us(10));
  EXPECT_EQ(fast(sys, plan), us(30));
  EXPECT_EQ(event(sys, plan), us(30));
}

TEST(LlmTiming, CollidingTileIsSensingBound) {
  const hbf::System sys(small_hbf());
  // 3 pages on one megaplane, nothing else: sensed one after the other (prefetched at once), the last transferred.
  TilePlan plan;
  plan.tiles.push_back(StepTile{0, 3, 0, Time{}, Part::Kv, 0});
  for (int i = 0; i < 3; ++i) plan.units.push_back(FlashUnit{0, 4096});
  EXPECT_EQ(fast(sys, plan), us(3 * 4 + 1));
  EXPECT_EQ(event(sys, plan), us(3 * 4 + 1));
}

// Issue 28: a megaplane's plane SRAM holds its own data only (the fast model used to pool a stack's plane SRAM). One
// plane-SRAM slot per megaplane, no base-die SRAM, distance 1: tile 0 computes for 100 us and reads nothing; tile 1
// reads two pages of megaplane 0. The first takes megaplane 0's slot and is sensed during tile 0; the second has no
// slot (the other three megaplanes' slots are theirs) and is read when tile 1 asks: tR (4 us) after it starts, then
// 1 us over the interface, while the first page's transfer hides under that sensing. Pooled, both would have been
// prefetched: 2 us after the start.
TEST(LlmTiming, PlaneSramHoldsItsOwnMegaplanesDataByHand) {
  hbf::SystemParams p = small_hbf();
  p.hbf.sram.plane_sram = KiB(4);
  p.hbf.sram.base_sram = Bytes(0);
  p.hbf.runtime.prefetch_distance = 1;
  const hbf::System sys(p);
  ASSERT_EQ(sys.plane_sram_units(), 1);
  TilePlan plan;
  plan.tiles.push_back(StepTile{0, 0, 0, us(100), Part::Compute, 0});
  plan.tiles.push_back(StepTile{0, 2, 0, Time{}, Part::Kv, 0});
  for (int i = 0; i < 2; ++i) plan.units.push_back(FlashUnit{sys.dealt(0), 4096});
  EXPECT_EQ(fast(sys, plan), us(100 + 4 + 1));
  EXPECT_EQ(event(sys, plan), us(100 + 4 + 1));
}

TEST(LlmTiming, HbmTileByHand) {
  hbf::SystemParams p = small_hbf();
  p.hbm.latency = ns(100);
  p.hbm.bandwidth_per_stack = Bandwidth(1e12);
  const hbf::System sys(p);
  TilePlan plan;
  plan.tiles.push_back(StepTile{0, 0, 1000000, us(0.5), Part::Weights, 0});
  // 1 MB at 1 TB/s + 100 ns.
  EXPECT_EQ(fast(sys, plan), us(1.1));
  EXPECT_EQ(event(sys, plan), us(1.1));
}

// Acceptance: the fast step model agrees within 3% with the event-driven memory simulation on sampled decode steps
// of every model and system (16 requests per rank, both contexts alternating; all layers timed by the event model).
TEST(LlmTiming, FastModelAgreesWithEventSimulationOnEveryModelAndSystem) {
  const auto kinds = preset_kinds();
  int checked = 0;
  double worst = 0;
  for (const auto& name : paper_eval().models) {
    const ModelConfig m = shipped(name);
    int i = 0;
    for (const auto& sys : paper_eval().systems) {
      const SystemName sn = parse_system(sys);
      const ContextSpec c = paper_eval().contexts[size_t(i++ % 2)];
      std::unique_ptr<Server> s;
      try {
        s = std::make_unique<Server>(m, kinds.at(sn.kind), sn.gpus);
      } catch (const ConfigError&) {
        continue;  // not deployable on this system
      }
      const int64_t r = std::min<int64_t>(16, std::max<int64_t>(1, s->max_requests(c)));
      const ValidationPoint v = validate_step(*s, r, c);
      EXPECT_LT(std::abs(v.error()), 0.03) << name << " on " << sys << ": fast " << v.fast_ms << " ms, event " << v.event_ms << " ms";
      worst = std::max(worst, std::abs(v.error()));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 32);
  std::cout << "largest |fast - event| / event over " << checked << " sampled steps: " << 100 * worst << "%\n";
}

TEST(LlmTiming, FastModelAgreesAtALargeBatch) {
  const auto kinds = preset_kinds();
  const ModelConfig m = shipped("qwen3-235b");
  Server s(m, kinds.at("csi"), 8);
  const ValidationPoint v = validate_step(s, 192, paper_context("long"));  // ~ the 100 ms batch
  EXPECT_LT(std::abs(v.error()), 0.03) << "fast " << v.fast_ms << " ms, event " << v.event_ms << " ms";
}

// Issue 28: the prefetch queue waits for SRAM slots (retried as SramRelease frees them) in the event model, and the
// fast model bounds its prefetch window by the same SRAM; the two agree within 3% at every prefetch distance from 1
// to 16, for the three KV layouts (Qwen3-235B on 8 x CSI, 32 requests per rank = batch 256, the long context: the
// case where the event model used to leave SRAM-less prefetches in flash, 187 vs 127 ms at distance 16).
// One test per KV layout (and router-driven expert prefetch, whose gate tiles both models hold the prefetch queue at),
// each over every prefetch distance: four tests that ctest runs side by side.
class LlmTimingLayouts : public ::testing::TestWithParam<const char*> {};

TEST_P(LlmTimingLayouts, FastAndEventAgreeAtEveryPrefetchDistance) {
  const ModelConfig m = shipped("qwen3-235b");
  double worst = 0;
  const std::string l = GetParam();
  for (int64_t d = 1; d <= 16; ++d) {
    KindParams k = preset_kind("csi");
    k.system.hbf.runtime.prefetch_distance = d;
    k.serving.kv_layout = Choice<KvLayout, kv_layouts>::named(l.substr(0, l.find('+')));
    if (l.find('+') != std::string::npos) k.serving.expert_prefetch = Choice<ExpertPrefetch, expert_prefetches>::named("router");
    Server s(m, k, 8);
    const ValidationPoint v = validate_step(s, 32, paper_context("long"));
    EXPECT_LT(std::abs(v.error()), 0.03) << l << " at distance " << d << ": fast " << v.fast_ms << " ms, event " << v.event_ms << " ms";
    // Every layer timed (no sampling), the two models of the SRAM queues agree far closer (measured <= 0.23%): a
    // wider gap is a queueing rule one of them lost (e.g. base-die SRAM taken by megaplane index, 2.9% at 15).
    EXPECT_LT(std::abs(v.fast_all_layers_ms / v.event_ms - 1), 0.005) << l << " at distance " << d << ", every layer timed";
    worst = std::max(worst, std::abs(v.error()));
  }
  std::cout << "largest |fast - event| / event over distances 1-16, " << l << ": " << 100 * worst << "%\n";
}

INSTANTIATE_TEST_SUITE_P(KvLayouts, LlmTimingLayouts, ::testing::Values("flashaccel", "scatter", "paged", "flashaccel+router"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string n = i.param;
                           for (char& c : n)
                             if (c == '+') c = '_';
                           return n;
                         });

namespace {
// small_hbf() with 4 planes per megaplane: 2 megaplanes (one per stack) of 16 KiB megapages; a 16 KiB megapage crosses
// an interface in 4 us.
hbf::SystemParams wide_megapage_hbf() {
  hbf::SystemParams p = small_hbf();
  p.hbf.geometry.planes_per_megaplane = 4;
  return p;
}

// The reads of one paged KV block of `block` bytes as the placement draws it (seeded), timed as one kernel's tile.
struct PagedBlockRead {
  int64_t offset = 0;
  std::vector<int64_t> pieces;
  Time fast{}, event{};
};
PagedBlockRead read_one_block(const hbf::System& sys, hbf::KvBlockAlign align, int64_t block, uint64_t seed) {
  const hbf::KvPlacement kv(sys, hbf::KvPolicy{hbf::KvLayout::Paged, hbf::KvOffload::Mean, seed, block, align});
  Rng rng = kv.paged_stream(0);
  const hbf::KvPlacement::PagedSpot at = kv.paged_pick(rng, block);
  PagedBlockRead r;
  r.offset = at.offset;
  TilePlan plan;
  plan.tiles.push_back(StepTile{0, 0, 0, Time{}, Part::Kv, 0});
  kv.paged_cut(at.offset, block, [&](int64_t b) {
    r.pieces.push_back(b);
    plan.units.push_back(FlashUnit{sys.dealt(at.megaplane), uint32_t(b)});
    ++plan.tiles[0].count;
  });
  r.fast = fast(sys, plan);
  r.event = event(sys, plan);
  return r;
}
}  // namespace

// Issue 28: a paged KV pool of fixed-size blocks cut from megablocks is aligned by construction: a 32 KiB block on
// 16 KiB megapages is exactly 2 reads (2 tR on its megaplane, then the last 16 KiB over the interface: 8 + 4 us),
// whatever the draw; the unaligned option (kv_block_alignment = page) starts it at a random 4 KiB page, so a draw at a
// nonzero offset costs 3 reads (3 tR + the last piece's transfer).
TEST(LlmTiming, BlockAlignedPagedBlockIsTwoReadsByHand) {
  const hbf::System sys(wide_megapage_hbf());
  ASSERT_EQ(sys.megapage().raw(), 16384);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const PagedBlockRead r = read_one_block(sys, hbf::KvBlockAlign::Block, 32768, seed);
    EXPECT_EQ(r.offset, 0);
    EXPECT_EQ(r.pieces, (std::vector<int64_t>{16384, 16384}));
    EXPECT_EQ(r.fast, us(2 * 4 + 4));
    EXPECT_EQ(r.event, us(2 * 4 + 4));
  }
  int unaligned = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const PagedBlockRead r = read_one_block(sys, hbf::KvBlockAlign::Page, 32768, seed);
    EXPECT_EQ(r.offset % 4096, 0);
    if (r.offset == 0) continue;
    ++unaligned;
    ASSERT_EQ(r.pieces.size(), 3u);
    EXPECT_EQ(r.pieces[0], 16384 - r.offset);
    EXPECT_EQ(r.pieces[2], r.offset);
    const Time last = Bytes(r.offset) / sys.hbf().timing.interface_bandwidth;
    EXPECT_EQ(r.fast, us(3 * 4) + last);
    EXPECT_EQ(r.event, us(3 * 4) + last);
  }
  EXPECT_GT(unaligned, 10);  // 3 of 4 draws start at a nonzero page
  // A block that does not divide the megapage (24 KiB on 16 KiB) starts at i x 24 KiB into its megablock: offsets 0 or
  // 8 KiB, never another page.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const PagedBlockRead r = read_one_block(sys, hbf::KvBlockAlign::Block, 24576, seed);
    EXPECT_TRUE(r.offset == 0 || r.offset == 8192) << r.offset;
  }
}

// Issue 28: a kernel's scattered reads queue per megaplane. 16 reads without prefetch: megaplane 0 holds 3 of the
// first 8, megaplane 4 (the other stack) 3 of the last 8, the others 2 each. In tiles of K = 8 megapages each tile
// waits for its busiest megaplane (3 tR + its last transfer: 13 us, twice: 26 us); queued as one kernel both busy
// megaplanes sense in parallel and each stack's interface drains what is ready (3 tR + 1 us = 13 us).
TEST(LlmTiming, KernelReadQueuesDrainMegaplanesInParallelByHand) {
  hbf::SystemParams p = small_hbf();
  p.hbf.runtime.prefetch = false;
  const hbf::System sys(p);
  const std::vector<uint32_t> mps = {0, 0, 0, 1, 2, 5, 6, 7, 4, 4, 4, 1, 2, 5, 6, 7};
  TilePlan tiles, kernel;
  kernel.tiles.push_back(StepTile{0, 16, 0, Time{}, Part::Kv, 0});
  for (int t = 0; t < 2; ++t) tiles.tiles.push_back(StepTile{uint32_t(8 * t), 8, 0, Time{}, Part::Kv, 0});
  for (uint32_t m : mps) {
    tiles.units.push_back(FlashUnit{m, 4096});
    kernel.units.push_back(FlashUnit{m, 4096});
  }
  EXPECT_EQ(fast(sys, tiles), us(26));
  EXPECT_EQ(event(sys, tiles), us(26));
  EXPECT_EQ(fast(sys, kernel), us(13));
  EXPECT_EQ(event(sys, kernel), us(13));
}

// The serving model builds those queues: with the scatter and paged layouts every attention kernel's flash reads are
// one tile (hbf.runtime.kv_read_queue = kernel), or tiles of K megapages (tile).
TEST(LlmTiming, ScatteredKvKernelIsOneQueue) {
  const ModelConfig m = shipped("qwen3-235b");
  for (const char* layout : {"scatter", "paged"}) {
    for (const char* queue : {"kernel", "tile"}) {
      KindParams k = preset_kind("csi");
      k.serving.kv_layout = Choice<KvLayout, kv_layouts>::named(layout);
      k.system.hbf.runtime.kv_read_queue = Choice<hbf::KvReadQueue, hbf::kv_read_queues>::named(queue);
      Server s(m, k, 8);
      const StepGraph g = s.graph(16, paper_context("long"));
      const TilePlan plan = full_plan(g, s.memory());
      std::map<uint32_t, int64_t> tiles, units;
      for (const StepTile& t : plan.tiles)
        if (t.part == Part::Kv) ++tiles[t.op], units[t.op] += t.count;
      ASSERT_FALSE(tiles.empty());
      for (const auto& [op, n] : tiles) {
        if (std::string(queue) == "kernel")
          EXPECT_EQ(n, 1) << layout << " op " << op;
        else
          EXPECT_EQ(n, (units[op] + s.system().megaplanes() - 1) / s.system().megaplanes()) << layout << " op " << op;
      }
    }
  }
}

// Issue 28: per-read overheads. With command cycles of 1 us (the megaplane is held 1 + 4 us per read), a die link
// that moves a 4 KiB page in 0.5 us and 1.5 us of ECC decode, a prefetched stream of 3 tiles (one page per megaplane,
// 4 us of interface per stack) is sensing-bound: 3 x 5 us, then the last page's 0.5 + 1.5 us and its stack's 4 us of
// transfers: 21 us (16 us without the overheads); on demand every tile costs 1 + 4 + 0.5 + 1.5 + 4 = 11 us.
TEST(LlmTiming, PerReadOverheadsByHand) {
  hbf::SystemParams p = small_hbf();
  p.hbf.timing.t_command = us(1);
  p.hbf.timing.die_link_bandwidth = Bandwidth(8192e6);
  p.hbf.timing.t_ecc_decode = us(1.5);
  const hbf::System sys(p);
  EXPECT_EQ(sys.t_sense(), us(5));
  EXPECT_EQ(sys.t_after_sense(4096), us(2));
  const TilePlan plan = full_tiles(sys, 3, Time{});
  EXPECT_EQ(fast(sys, plan), us(21));
  EXPECT_EQ(event(sys, plan), us(21));
  p.hbf.runtime.prefetch = false;
  const hbf::System demand(p);
  EXPECT_EQ(fast(demand, plan), us(33));
  EXPECT_EQ(event(demand, plan), us(33));
  // The stack's sensing rate comes out of the device: 4 planes x 4 KiB per 5 us, under the interface's 4.1 GB/s.
  EXPECT_NEAR(sys.stack_sense_bandwidth().raw(), 4 * 4096 / 5e-6, 1.0);
}
