// The firmware's page-level mapping for ordinary data.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "core/error.hpp"
#include "cosmos/firmware.hpp"
#include "ssd/compute_jobs.hpp"

namespace bitline::cosmos {
namespace {

struct Small {
  nand::NandParams nand = default_params<nand::NandParams>();
  ssd::SsdParams ssd = default_params<ssd::SsdParams>();
  Small() {
    ssd.channels = 2;
    ssd.dies_per_channel = 1;
    nand.geometry.planes_per_die = 2;  // 4 planes
    nand.geometry.blocks_per_plane = 4;
    nand.geometry.subblocks_per_block = 2;
    nand.geometry.wordlines_per_string = 4;  // 8 wordlines per block per plane
  }
};

TEST(OrdinaryMap, StripesOverPlanesThenFillsWordlines) {
  Small s;
  Firmware fw(s.nand, s.ssd);
  std::set<std::tuple<uint32_t, uint32_t>> die_planes;
  for (int lpn = 0; lpn < 4; ++lpn) {
    auto p = fw.map_ordinary(lpn, nand::ProgramMode::Slc);
    die_planes.insert({p.loc.die, p.loc.plane});
    EXPECT_EQ(p.loc.wordline, 0u);
  }
  EXPECT_EQ(die_planes.size(), 4u);  // four consecutive pages on four different planes
  auto p4 = fw.map_ordinary(4, nand::ProgramMode::Slc);
  EXPECT_EQ(p4.loc.wordline, 1u);
}

// Sequential writes (ssd::run_sequential_write) take their program operations' dies in the order in which this
// firmware's striping reaches them: the k-th program operation goes to the die of the k-th plane of a stripe, so a
// sequential write lands where the firmware puts ordinary data (channel first, then the die in the channel).
TEST(OrdinaryMap, SequentialWritesVisitTheDiesInTheStripingOrder) {
  for (auto [channels, dies] : {std::pair{2, 1}, std::pair{4, 3}, std::pair{8, 8}}) {
    Small s;
    s.ssd.channels = channels;
    s.ssd.dies_per_channel = dies;
    Firmware fw(s.nand, s.ssd);
    const int64_t d = channels * dies;
    for (int64_t op = 0; op < 3 * d; ++op)
      EXPECT_EQ(ssd::program_die(op, channels, dies), fw.plane_loc(op % d).die) << channels << "x" << dies << " op " << op;
  }
}

TEST(OrdinaryMap, TlcUsesThreePagesPerWordline) {
  Small s;
  Firmware fw(s.nand, s.ssd);
  for (int lpn = 0; lpn < 12; ++lpn) {
    auto p = fw.map_ordinary(lpn, nand::ProgramMode::Tlc);
    EXPECT_EQ(p.bit, uint32_t((lpn / 4) % 3));
    EXPECT_EQ(p.loc.wordline, 0u);
  }
  EXPECT_EQ(fw.map_ordinary(12, nand::ProgramMode::Tlc).loc.wordline, 1u);
}

TEST(OrdinaryMap, OverwriteMovesThePageAndLookupFollows) {
  Small s;
  Firmware fw(s.nand, s.ssd);
  auto a = fw.map_ordinary(7, nand::ProgramMode::Slc);
  auto b = fw.map_ordinary(7, nand::ProgramMode::Slc);
  EXPECT_FALSE(a.loc.die == b.loc.die && a.loc.plane == b.loc.plane && a.loc.wordline == b.loc.wordline &&
               a.loc.subblock == b.loc.subblock && a.loc.block == b.loc.block);
  auto l = fw.lookup_ordinary(7);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->loc.block, b.loc.block);
  EXPECT_EQ(l->loc.wordline, b.loc.wordline);
  EXPECT_EQ(fw.ordinary_pages(), 1);
  fw.trim_ordinary(7);
  EXPECT_FALSE(fw.lookup_ordinary(7).has_value());
}

TEST(OrdinaryMap, FullyInvalidBlockIsErasedAndReused) {
  Small s;
  Firmware fw(s.nand, s.ssd);
  const int per_block = 4 * 2 * 4;  // planes x sub-blocks x wordlines (SLC)
  for (int lpn = 0; lpn < per_block; ++lpn) fw.map_ordinary(lpn, nand::ProgramMode::Slc);
  EXPECT_EQ(fw.blocks_in_use(), 1);
  // The next write opens block 1 and marks block 0 full; overwriting all of block 0's pages frees it.
  for (int lpn = 0; lpn < per_block; ++lpn) fw.map_ordinary(lpn, nand::ProgramMode::Slc);
  EXPECT_EQ(fw.ordinary_blocks_erased(), 1);
  EXPECT_EQ(fw.blocks_in_use(), 1);
  EXPECT_EQ(fw.ordinary_pages(), per_block);
}

TEST(OrdinaryMap, RunsOutOfBlocksWithAClearError) {
  Small s;
  Firmware fw(s.nand, s.ssd);
  const int per_block = 4 * 2 * 4;
  for (int lpn = 0; lpn < 4 * per_block; ++lpn) fw.map_ordinary(lpn, nand::ProgramMode::Slc);
  try {
    fw.map_ordinary(4 * per_block, nand::ProgramMode::Slc);
    FAIL() << "expected ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("SSD too small"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bitline::cosmos
