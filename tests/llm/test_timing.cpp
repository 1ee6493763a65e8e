// Timing: the fast step model against hand-computed tile timings and against
// the event-driven memory simulation (hbf::simulate_reads), on small plans and
// on sampled decode steps of every model and system (acceptance: within 3%).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/config.hpp"
#include "llm/serving.hpp"
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
