// Weight layouts: execution order vs declaration order, dealing, capacity.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "hbf/experiments.hpp"
#include "hbf/runtime.hpp"
#include "helpers.hpp"

namespace bitline::hbf {
namespace {

using test::small_system;
using test::system_of;

WeightSpec spec_of(std::vector<int64_t> bytes, std::vector<uint32_t> exec = {}) {
  WeightSpec w;
  w.name = "w";
  for (size_t i = 0; i < bytes.size(); ++i) w.tensors.push_back({fmt::format("t{}", i), Bytes(bytes[i])});
  w.execution_order = std::move(exec);
  return w;
}

TEST(HbfLayout, TwelveMiBExpertOccupies3072Planes) {
  // FlashAccel, Data layout: a 12 MB weight matrix spread one page per plane occupies 3,072 planes.
  System s = system_of("csi");
  Runtime rt(s, Mode::Timing);
  ObjectId id = rt.store_weights(spec_of({MiB(12).raw()}));
  auto units = rt.flash_units(id);
  ASSERT_EQ(units.size(), 96u);  // 12 MiB / 128 KiB megapages
  std::set<int64_t> planes;
  std::vector<int> per_stack(6, 0);
  for (const auto& u : units) {
    for (int64_t lane = 0; lane < s.lanes(); ++lane) planes.insert(s.plane_of(u.megaplane, lane));
    ++per_stack[size_t(s.stack_of(u.megaplane))];
  }
  EXPECT_EQ(planes.size(), 3072u);
  for (int n : per_stack) EXPECT_EQ(n, 16);  // dealt evenly over the 6 stacks
}

TEST(HbfLayout, PlaneLevelDesignPutsTheExpertOnePagePerPlane) {
  System s = system_of("csi", "hbf:\n  geometry:\n    planes_per_megaplane: 1\n");
  Runtime rt(s, Mode::Timing);
  auto units = rt.flash_units(rt.store_weights(spec_of({MiB(12).raw()})));
  std::set<MegaplaneId> planes;
  for (const auto& u : units) planes.insert(u.megaplane);
  EXPECT_EQ(units.size(), 3072u);
  EXPECT_EQ(planes.size(), 3072u);
}

TEST(HbfLayout, ExecutionOrderDealsRoundRobinAndContinues) {
  System s = small_system(1, 1, 3, 1, 8, 8, "4KiB");  // K = 3 megaplanes of one plane
  Runtime rt(s, Mode::Timing);
  // Tensors of 2, 1, 3 pages, executed in the order 2, 0, 1.
  WeightSpec w = spec_of({KiB(8).raw(), KiB(4).raw(), KiB(12).raw()}, {2, 0, 1});
  ObjectId id = rt.store_weights(w);
  auto units = rt.flash_units(id);  // in declaration (mapping) order: t0 (2), t1 (1), t2 (3)
  // Dealing stream: t2 -> dealt(0..2), t0 -> dealt(3..4), t1 -> dealt(5).
  EXPECT_EQ(units[3].megaplane, s.dealt(0));
  EXPECT_EQ(units[4].megaplane, s.dealt(1));
  EXPECT_EQ(units[5].megaplane, s.dealt(2));
  EXPECT_EQ(units[0].megaplane, s.dealt(3));
  EXPECT_EQ(units[1].megaplane, s.dealt(4));
  EXPECT_EQ(units[2].megaplane, s.dealt(5));
  // The next object continues from the megaplane after the last one used.
  ObjectId id2 = rt.store_weights(spec_of({KiB(4).raw()}));
  EXPECT_EQ(rt.flash_units(id2)[0].megaplane, s.dealt(6));
  // Isolation: the two objects share no block.
  for (auto a : rt.owned_blocks(id))
    for (auto b : rt.owned_blocks(id2)) EXPECT_FALSE(a == b);
}

// The paper's example: declaration order A, D, B, C; a step reads A, B, C.
// Execution order puts A, B, C next to each other: maximum plane load 2;
// declaration order leaves D between them: maximum plane load 3 (-33%).
TEST(HbfLayout, DeclarationOrderExampleHasLoadThreeExecutionTwo) {
  System s = small_system(1, 1, 3, 1, 8, 8, "4KiB");
  const int64_t two_pages = KiB(8).raw();
  WeightSpec w = spec_of({two_pages, two_pages, two_pages, two_pages}, {0, 2, 3, 1});  // declared A, D, B, C
  for (std::string layout : {"execution", "declaration"}) {
    Runtime rt(s, Mode::Timing);
    auto policy = make_weight_layout(layout);
    ObjectId id = rt.store_weights(w, {}, policy.get());
    auto units = rt.flash_units(id);
    std::vector<int> load(3, 0);
    for (size_t t : {0, 2, 3})  // A, B, C
      for (size_t u = 2 * t; u < 2 * t + 2; ++u) ++load[units[u].megaplane];
    EXPECT_EQ(*std::max_element(load.begin(), load.end()), layout == "execution" ? 2 : 3) << layout;
  }
}

TEST(HbfLayout, ObjectLargerThanFlashDoesNotFit) {
  System s = small_system(1, 1, 2, 1, 2, 2, "4KiB");  // 2 x 2 x 2 pages = 32 KiB
  Runtime rt(s, Mode::Timing);
  try {
    rt.store_weights(spec_of({KiB(36).raw()}));
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rt.flash().free_blocks(), 4);  // nothing was allocated
}

TEST(HbfLayout, LayoutThatDoesNotFitAlthoughEnoughIsFree) {
  // K = 3 megaplanes of 2 blocks x 2 pages. A 1-page object takes a whole block of
  // megaplane dealt(0) (blocks are never shared): 10 pages stay free, but dealing
  // 9 pages from dealt(1) puts 3 on dealt(0), which has only 2 left.
  System s = small_system(1, 1, 3, 1, 2, 2, "4KiB");
  Runtime rt(s, Mode::Timing);
  rt.store_weights(spec_of({KiB(4).raw()}));
  try {
    rt.store_weights(spec_of({KiB(36).raw()}));
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("does not fit"), std::string::npos) << m;
    EXPECT_NE(m.find(s.name(s.dealt(0))), std::string::npos) << m;
    EXPECT_NE(m.find("10 of 12 megapages free"), std::string::npos) << m;
  }
  EXPECT_NO_THROW(rt.store_weights(spec_of({KiB(32).raw()})));  // 8 pages: 3, 3, 2
}

TEST(HbfLayout, SyntheticWeightsAreDeclaredInCheckpointOrder) {
  WeightSpec w = synthetic_weights(Bytes(12 * 3 + 2), Bytes(3));  // 13 tensors, the last of 2 bytes
  ASSERT_EQ(w.tensors.size(), 13u);
  EXPECT_EQ(w.tensors[0].name, "experts.0");
  EXPECT_EQ(w.tensors[1].name, "experts.1");
  EXPECT_EQ(w.tensors[2].name, "experts.10");
  EXPECT_EQ(w.tensors[3].name, "experts.11");
  EXPECT_EQ(w.tensors[4].name, "experts.12");
  EXPECT_EQ(w.tensors[5].name, "experts.2");
  EXPECT_EQ(w.tensors[4].bytes, Bytes(2));
  auto exec = w.resolved_execution_order();
  for (size_t i = 0; i < exec.size(); ++i) EXPECT_EQ(w.tensors[exec[i]].name, "experts." + std::to_string(i));
  WeightSpec bad = w;
  bad.execution_order[1] = bad.execution_order[0];
  EXPECT_THROW(bad.resolved_execution_order(), ModelError);
}

}  // namespace
}  // namespace bitline::hbf

namespace bitline::hbf {
namespace {

TEST(HbfKvLayout, EveryRegisteredLayoutHasItsClassAndAPlacementHoldsIt) {
  // Each name of serving.kv_layout gives a class that says it is that layout; a placement built with the policy holds
  // that class (the runtime and the serving model ask it, never the enum). Only the paged layout cuts KV into blocks.
  const System sys = test::small_system(2, 2, 4, 2, 64, 16, "4KiB");  // 8 megaplanes of 8 KiB megapages
  const auto& r = kv_layouts();
  for (size_t i = 0; i < r.size(); ++i) {
    const KvLayout k = r.value(i);
    EXPECT_EQ(kv_layout_policy(k).kind(), k) << r.names()[i];
    KvPolicy p;
    p.layout = k;
    const KvPlacement placement(sys, p);
    EXPECT_EQ(&placement.layout(), &kv_layout_policy(k)) << r.names()[i];
    EXPECT_EQ(placement.layout().whole_blocks(), k == KvLayout::Paged) << r.names()[i];
  }
}

TEST(HbfKvLayout, EachLayoutsReadsAreItsLoads) {
  // place() with a sink emits, per megaplane, exactly the reads its loads count, in tiles that cover them all.
  const System sys = test::small_system(2, 2, 4, 2, 64, 16, "4KiB");  // 8 megaplanes of 8 KiB megapages
  struct Count final : KvReadSink {
    std::vector<int64_t> reads;
    int64_t tiles = 0, in_tile = 0, empty_tiles = 0;
    void read(int64_t d, int64_t) override { ++reads[size_t(d)], ++in_tile; }
    void end_tile() override { ++tiles, empty_tiles += in_tile == 0 ? 1 : 0, in_tile = 0; }
  };
  const std::vector<int64_t> contexts = {5000, 12000, 700, 30000};
  for (KvLayout k : {KvLayout::FlashAccel, KvLayout::Scatter, KvLayout::Paged}) {
    KvPolicy p;
    p.layout = k;
    const KvPlacement placement(sys, p);
    LayerKv kv;
    kv.contexts = contexts;
    kv.token_bytes = 512;
    kv.tokens_per_slice = sys.megapage().raw() / kv.token_bytes;
    kv.block_tokens = p.block_bytes / kv.token_bytes;
    kv.streams = 4;
    kv.layer = 2;
    kv.replica_budget = 0;
    std::vector<int64_t> loads;
    Count sink;
    sink.reads.assign(size_t(placement.megaplanes()), 0);
    KvTiling tiling;
    tiling.queue = 7;
    const LayerReads r = placement.layout().place(placement, kv, loads, &sink, tiling);
    EXPECT_EQ(sink.reads, loads) << int(k);
    int64_t total = 0;
    for (int64_t l : loads) total += l;
    EXPECT_EQ(total, r.flash_reads) << int(k);
    EXPECT_GT(r.flash_reads, 0) << int(k);
    EXPECT_LE(r.flash_reads, placement.layout().max_reads(placement, kv)) << int(k);
    EXPECT_GT(sink.tiles, 0) << int(k);
    EXPECT_EQ(sink.empty_tiles, 0) << int(k);
    EXPECT_EQ(sink.in_tile, 0) << int(k);  // the last tile is closed
  }
}

}  // namespace
}  // namespace bitline::hbf
