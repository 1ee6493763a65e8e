// HBF memory system: presets, derived geometry, parameter sources, config errors.
#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "hbf/runtime.hpp"
#include "helpers.hpp"

namespace bitline::hbf {
namespace {

using test::small_system;
using test::system_of;
using test::tree_of;

TEST(HbfParams, CsiPresetGeometryMatchesSpec) {
  System s = system_of("csi");
  EXPECT_EQ(s.stacks(), 6);
  EXPECT_EQ(s.planes_per_stack(), 768);     // FlashAccel, Table 2: 8 dies x 96 planes
  EXPECT_EQ(s.megaplanes_per_die(), 3);     // FlashAccel, Hardware (megaplane design): 96 / 32
  EXPECT_EQ(s.megaplanes_per_stack(), 24);  // spec
  EXPECT_EQ(s.megaplanes(), 144);
  EXPECT_EQ(s.megapage(), KiB(128));  // FlashAccel, Hardware (megaplane design): 32 x 4 KB
  EXPECT_EQ(s.hyperpage(), MiB(18));
  EXPECT_EQ(s.flash_capacity(), GiB(6 * 192));  // FlashAccel, Table 2: 192 GB per stack, 1,152 GB per CSI GPU
  EXPECT_EQ(Bytes(s.blocks_per_plane() * s.pages_per_block() * s.page_size().raw()),
            MiB(256));  // FlashAccel, Evaluation setup: 256 MB per plane
  // FlashAccel, Hardware (SRAM): 24 MB plane SRAM + 8 MB base die = 32 MB per stack.
  EXPECT_EQ(s.hbf().sram.plane_sram.raw() * s.planes_per_stack() + s.hbf().sram.base_sram.raw(), MiB(32).raw());
  EXPECT_EQ(s.plane_sram_units(), 8);
  EXPECT_EQ(s.base_sram_units(), 64);
  // FlashAccel, Evaluation setup: 768 planes x 4 KB / 4 us ~= 786 GB/s per stack; with the command cycles of every read
  // (hbf.timing.t_command, 170 ns) the planes sense 768 x 4 KiB per 4.17 us = 754.4 GB/s, under the interface's nominal 768 GB/s.
  EXPECT_NEAR(double(4096 * 768) / to_s(s.hbf().timing.t_read), 786.432e9, 1e6);
  EXPECT_NEAR(s.stack_sense_bandwidth().raw(), 768 * 4096 / 4.17e-6, 1e6);
  // spec sizing rule: stack SRAM > 2 x peak bandwidth x tR.
  EXPECT_GT(double(MiB(32).raw()), 2 * s.hbf().timing.interface_bandwidth.raw() * to_s(s.hbf().timing.t_read));
  EXPECT_NEAR(s.hbm_capacity().raw(), 35.25e9, 1);  // assumption: 2/8 of 141 GB
  EXPECT_NEAR(s.hbm_bandwidth().raw(), 4.8e12, 1);
}

// The planes' cell is the NAND model's (configs/nand/xl-flash.yaml, loaded by the HBF presets): the figures the HBF
// uses are exactly today's spec numbers, and changing the `nand` section changes them.
TEST(HbfParams, CellFiguresComeFromTheNandModel) {
  const System s = system_of("csi");
  EXPECT_EQ(s.hbf().timing.t_read, parse_time("4us"));                                   // FlashAccel, Hardware / Table 2: XL-Flash
  EXPECT_EQ(s.hbf().timing.t_prog, parse_time("75us"));                                  // FlashAccel, Hardware / Table 2: XL-Flash
  EXPECT_EQ(s.hbf().timing.t_erase, default_params<nand::NandParams>().timing.t_erase);  // the NAND model's tBERS
  EXPECT_EQ(s.hbf().timing.t_erase, parse_time("3.5ms"));
  // Bit for bit the numbers the HBF had before it took them from the NAND model.
  EXPECT_EQ(s.hbf().energy.read, parse_energy_per_bit("8pJ/bit"));
  EXPECT_EQ(s.hbf().energy.program, parse_energy_per_bit("80pJ/bit"));
  EXPECT_EQ(s.hbf().energy.erase_block, parse_energy("577.5uJ"));  // 165 mW x 3.5 ms
  EXPECT_EQ(s.params().cell.timing.t_read_slc, s.hbf().timing.t_read);
  // One source of truth: the nand keys move the HBF.
  const System fast = system_of("csi", "nand:\n  timing:\n    t_read_slc: 2us\n    t_erase: 7ms\n  energy:\n    erase_power: 330mW\n");
  EXPECT_EQ(fast.hbf().timing.t_read, parse_time("2us"));
  EXPECT_EQ(fast.hbf().timing.t_erase, parse_time("7ms"));
  EXPECT_NEAR(fast.hbf().energy.erase_block.raw(), 4 * s.hbf().energy.erase_block.raw(), 1e-15);
  // A power term is spread over the page's bits: 32.768 mW x 4 us over 4 KiB = 4 pJ/bit more.
  const System powered = system_of("csi", "nand:\n  energy:\n    read_power: 32.768mW\n");
  EXPECT_NEAR(powered.hbf().energy.read.raw(), 12e-12, 1e-24);
  // The old HBF keys are gone (an error, not a silently ignored second copy).
  EXPECT_THROW(load_system_params(tree_of("csi", "hbf:\n  timing:\n    t_read: 2us\n")), ConfigError);
  EXPECT_THROW(load_system_params(tree_of("csi", "hbf:\n  energy:\n    read: 8pJ/bit\n")), ConfigError);
  // A cell that cannot sense or program is an error naming the nand key.
  try {
    load_system_params(tree_of("csi", "nand:\n  timing:\n    t_read_slc: 0us\n"));
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("nand.timing.t_read_slc"), std::string::npos) << e.what();
  }
}

TEST(HbfParams, ClAndH200Presets) {
  System cli = system_of("cli");
  EXPECT_EQ(cli.stacks(), 5);
  EXPECT_EQ(cli.megaplanes(), 120);
  EXPECT_NEAR(cli.hbm_capacity().raw(), 23.5e9, 1);
  EXPECT_NEAR(cli.hbm_bandwidth().raw(), 0.8e12, 1);
  // FlashAccel, Hardware (integration): CLI has 16.7% less HBF bandwidth than CSI.
  EXPECT_NEAR(1.0 - 5.0 / 6.0, 0.167, 0.001);
  System h200 = system_of("h200");
  EXPECT_EQ(h200.stacks(), 0);
  EXPECT_NEAR(h200.hbm_capacity().raw(), 141e9, 1);
  EXPECT_NEAR(h200.hbm_bandwidth().raw(), 4.8e12, 1);
  EXPECT_THROW(Runtime(h200, Mode::Timing), ConfigError);
}

TEST(HbfParams, EveryDefaultNamesItsSource) {
  std::vector<ParamRow> rows = describe_params<HbfParams>("hbf");
  for (auto& r : describe_params<HbmParams>("hbm")) rows.push_back(r);
  for (auto& r : describe_params<GpuParams>("gpu")) rows.push_back(r);
  ASSERT_GT(rows.size(), 20u);
  for (const auto& r : rows) {
    EXPECT_FALSE(r.desc.empty()) << r.path;
    bool ok = r.source.rfind("FlashAccel", 0) == 0 || r.source.rfind("assumption:", 0) == 0 || r.source == "bitline" ||
              r.source.rfind("datasheet:", 0) == 0;
    // The area model (hbf.area) cites what a clone can follow: a paper, a datasheet, a titled article or a URL.
    if (r.path.rfind("hbf.area.", 0) == 0)
      ok = r.source.rfind("assumption:", 0) == 0 || r.source.rfind("datasheet:", 0) == 0 || r.source.find("http") != std::string::npos ||
           r.source.find("arXiv") != std::string::npos || r.source.find(", '") != std::string::npos;
    EXPECT_TRUE(ok) << r.path << ": " << r.source;
  }
}

TEST(HbfParams, DealingOrderVisitsStacksFirstAndIsAPermutation) {
  System s = system_of("csi");
  std::set<MegaplaneId> seen;
  for (int64_t i = 0; i < s.megaplanes(); ++i) {
    MegaplaneId m = s.dealt(i);
    seen.insert(m);
    EXPECT_EQ(s.deal_index(m), i);
    EXPECT_EQ(s.stack_of(m), i % 6);      // consecutive megapages on different stacks
    EXPECT_EQ(s.die_of(m), (i / 6) % 8);  // then different dies
  }
  EXPECT_EQ(int64_t(seen.size()), s.megaplanes());
  EXPECT_EQ(s.dealt(s.megaplanes() + 5), s.dealt(5));
}

TEST(HbfParams, ImpossibleGeometryAndUnknownKeysAreErrors) {
  try {
    small_system(1, 1, 96, 5, 4, 4, "4KiB");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("hbf.geometry.planes_per_megaplane"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_system_params(tree_of("csi", "hbf:\n  timing:\n    t_raed: 4us\n")), ConfigError);
  EXPECT_THROW(load_system_params(tree_of("csi", "hbf:\n  runtime:\n    weight_layout: random\n")), ConfigError);
  EXPECT_THROW(load_system_params(tree_of("csi", "hbf:\n  timing:\n    t_read: 4\n")), ConfigError);  // no unit
  EXPECT_THROW(load_system_params(tree_of("csi", "hbf:\n  sram:\n    plane_sram: 1KiB\n")), ConfigError);
  EXPECT_THROW(make_weight_layout("random"), ConfigError);
}

TEST(HbfParams, PlaneLevelVariantHasOneMegaplanePerPlane) {
  System s = system_of("csi", "hbf:\n  geometry:\n    planes_per_megaplane: 1\n");
  EXPECT_EQ(s.megaplanes(), 4608);
  EXPECT_EQ(s.megapage(), KiB(4));
  EXPECT_EQ(s.plane_sram_units(), 8);
  EXPECT_EQ(s.base_sram_units(), 2048);
}

}  // namespace
}  // namespace bitline::hbf
