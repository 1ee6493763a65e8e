// Determinism (seeded errors), the timing-only die, and memory proportional to
// the programmed pages.
#include "nand_test_util.hpp"  // first: see the note there

namespace bitline::nand::test {
namespace {

/// A mixed command stream: programs in every mode, MWS of every shape, reads,
/// XOR, latch copies, data-out, erases, and programs after the erase.
std::vector<Command> mixed_stream(const NandParams& p, uint64_t seed) {
  Rng rng(seed);
  const size_t bits = size_t(p.geometry.page_bits());
  std::vector<Command> s;
  for (uint32_t w = 0; w < 48; ++w) s.push_back(program_cmd(addr(0, 0, 0, w), random_page(rng, bits, 0.97), ProgramMode::Slc, false));
  for (uint32_t w = 0; w < 8; ++w) s.push_back(program_cmd(addr(0, 1, 2, w), random_page(rng, bits, 0.9), ProgramMode::Esp, false));
  for (uint32_t b = 2; b < 6; ++b) s.push_back(program_cmd(addr(0, b, 0, 0), random_page(rng, bits, 0.2), ProgramMode::Slc, true));
  for (uint32_t b = 0; b < 2; ++b) s.push_back(program_cmd(addr(1, b, 1, 5), random_page(rng, bits), ProgramMode::Slc, false));
  ProgramCmd mlc;
  mlc.addr = addr(0, 7, 0, 0);
  mlc.mode = ProgramMode::Mlc;
  for (int k = 0; k < 2; ++k) {
    auto b = random_page(rng, bits).to_bytes();
    mlc.data.insert(mlc.data.end(), b.begin(), b.end());
  }
  s.push_back(mlc);
  std::vector<uint32_t> all(48);
  for (uint32_t w = 0; w < 48; ++w) all[w] = w;
  for (int i = 0; i < 6; ++i) {
    s.push_back(intra_block(0, 0, 0, all));
    s.push_back(intra_block(0, 0, 0, {1, 2, 3}, Iscm{.inverse = true, .init_s = true, .init_c = false, .transfer = true}));
    s.push_back(mws(0, Iscm{}, {slot(2, 0, {0}), slot(3, 0, {0}), slot(4, 0, {0}), slot(5, 0, {0})}));
    s.push_back(mws(0, Iscm{.inverse = false, .init_s = false, .init_c = false, .transfer = true}, {slot(1, 2, {0, 1, 2, 3, 4, 5, 6, 7})}));
    s.push_back(XorCmd{0});
    s.push_back(LatchCopyCmd{0, Latch::C, Latch::D0});
    s.push_back(mws(1, Iscm{}, {slot(0, 1, {5}), slot(1, 1, {5})}));
    s.push_back(ReadCmd{addr(0, 7, 0, 0, 1)});
    s.push_back(DataOutCmd{0, 0, uint32_t(bits / 8)});
    s.push_back(DataOutCmd{1, 8, 64});
  }
  s.push_back(EraseCmd{0, 0});
  for (uint32_t w = 0; w < 4; ++w) s.push_back(program_cmd(addr(0, 0, 3, w), random_page(rng, bits), ProgramMode::Esp, false));
  s.push_back(intra_block(0, 0, 3, {0, 1, 2, 3}));
  s.push_back(DataOutCmd{0, 0, uint32_t(bits / 8)});
  return s;
}

NandParams noisy_params() {
  NandParams p = small_params(/*errors=*/true, 4096);
  p.reliability.initial_pe_cycles = 10000;
  p.reliability.retention_days = 365;
  return p;
}

TEST(Determinism, SameSeedSameResultsAndErrors) {
  NandParams p = noisy_params();
  auto stream = mixed_stream(p, 31);
  Die a(p, 1000), b(p, 1000), c(p, 1001);
  uint64_t total_errors = 0;
  bool seed_matters = false;
  for (const auto& cmd : stream) {
    CommandResult ra = a.execute(cmd), rb = b.execute(cmd), rc = c.execute(cmd);
    ASSERT_EQ(ra.bit_errors, rb.bit_errors) << describe(cmd);
    ASSERT_EQ(ra.data, rb.data) << describe(cmd);
    ASSERT_EQ(ra.latency, rb.latency);
    ASSERT_EQ(ra.energy.raw(), rb.energy.raw());
    for (uint32_t pl = 0; pl < 2; ++pl)
      for (Latch l : {Latch::S, Latch::C, Latch::D0}) ASSERT_EQ(a.latch(pl, l), b.latch(pl, l)) << describe(cmd);
    total_errors += ra.bit_errors;
    if (ra.bit_errors != rc.bit_errors || !(a.latch(0, Latch::S) == c.latch(0, Latch::S))) seed_matters = true;
  }
  EXPECT_GT(total_errors, 100u);  // the stream exercises error injection
  EXPECT_TRUE(seed_matters) << "a different seed gives different errors";
  EXPECT_EQ(die_stats(a), die_stats(b));
  // Normal reads with ECC are deterministic too.
  PageRead ra = a.read_page(addr(0, 2, 0, 0)), rb = b.read_page(addr(0, 2, 0, 0));
  EXPECT_EQ(ra.data, rb.data);
  EXPECT_EQ(ra.raw_bit_errors, rb.raw_bit_errors);
}

TEST(Determinism, TimingOnlyDieMatchesTheFunctionalDie) {
  NandParams p = noisy_params();
  auto stream = mixed_stream(p, 32);
  Die functional(p, 5), timing(p, 5, /*store_data=*/false);
  Die timing_nodata(p, 6, /*store_data=*/false);
  EXPECT_TRUE(functional.stores_data());
  EXPECT_FALSE(timing.stores_data());
  for (const auto& cmd : stream) {
    CommandResult f = functional.execute(cmd), t = timing.execute(cmd);
    // The timing die also accepts programs without data.
    Command light = cmd;
    if (auto* pc = std::get_if<ProgramCmd>(&light)) pc->data.clear();
    CommandResult n = timing_nodata.execute(light);
    ASSERT_EQ(f.latency, t.latency) << describe(cmd);
    ASSERT_EQ(f.energy.raw(), t.energy.raw()) << describe(cmd);
    ASSERT_EQ(f.cells_sensed, t.cells_sensed) << describe(cmd);
    ASSERT_EQ(f.latency, n.latency) << describe(cmd);
    ASSERT_EQ(f.energy.raw(), n.energy.raw()) << describe(cmd);
    EXPECT_TRUE(t.data.empty());
  }
  EXPECT_EQ(functional.stats().busy, timing.stats().busy);
  EXPECT_EQ(functional.stats().wordlines_sensed, timing.stats().wordlines_sensed);
  EXPECT_EQ(functional.stats().mws, timing.stats().mws);
  EXPECT_EQ(functional.programmed_pages(), timing.programmed_pages());
  EXPECT_EQ(die_stats(functional)["energy_j"]["total"], die_stats(timing)["energy_j"]["total"]);
  // read_page costs the same on both.
  PageRead rf = functional.read_page(addr(0, 2, 0, 0)), rt = timing.read_page(addr(0, 2, 0, 0));
  EXPECT_EQ(rf.latency, rt.latency);
  EXPECT_EQ(rf.energy.raw(), rt.energy.raw());
  EXPECT_TRUE(rt.data.empty());
  // State-dependent legality is enforced without data too.
  expect_command_error([&] { timing.execute(program_cmd(addr(0, 1, 2, 0), BitVector(size_t(p.geometry.page_bits())), ProgramMode::Esp)); },
                       "already programmed");
  expect_command_error([&] { timing.execute(intra_block(0, 7, 0, {0})); }, "holds mlc data");
  // A functional die needs the page contents.
  expect_command_error([&] { functional.execute(ProgramCmd{addr(0, 30, 0, 0), ProgramMode::Slc, true, {}}); }, "no data");
}

TEST(Memory, ProgrammedPagesCountAndEraseFrees) {
  NandParams p = small_params();
  Die die(p, 1);
  Rng rng(2);
  const size_t bits = size_t(p.geometry.page_bits());
  EXPECT_EQ(die.programmed_pages(), 0u);
  // Sensing and reading untouched blocks allocates nothing.
  die.execute(intra_block(0, 10, 0, {0, 1, 2}));
  die.execute(ReadCmd{addr(1, 11, 0, 0)});
  die.read_page(addr(0, 12, 0, 0));
  EXPECT_EQ(die.programmed_pages(), 0u);
  for (uint32_t w = 0; w < 10; ++w) die.execute(program_cmd(addr(0, 3, 1, w), random_page(rng, bits)));
  EXPECT_EQ(die.programmed_pages(), 10u);
  EXPECT_TRUE(die.is_programmed(addr(0, 3, 1, 9)));
  EXPECT_FALSE(die.is_programmed(addr(0, 3, 1, 10)));
  EXPECT_FALSE(die.is_programmed(addr(0, 3, 0, 9)));
  ProgramCmd tlc;
  tlc.addr = addr(1, 3, 0, 0);
  tlc.mode = ProgramMode::Tlc;
  tlc.data.assign(size_t(3 * p.geometry.page_size.raw()), 0xA5);
  die.execute(tlc);
  EXPECT_EQ(die.programmed_pages(), 13u);  // a TLC wordline holds 3 pages
  EXPECT_TRUE(die.is_programmed(addr(1, 3, 0, 0, 2)));
  for (uint32_t w = 0; w < 5; ++w) die.execute(program_cmd(addr(0, 4, 0, w), random_page(rng, bits)));
  EXPECT_EQ(die.programmed_pages(), 18u);
  die.execute(EraseCmd{0, 3});  // same block number on the other plane is untouched
  EXPECT_EQ(die.programmed_pages(), 8u);
  EXPECT_FALSE(die.is_programmed(addr(0, 3, 1, 0)));
  EXPECT_TRUE(die.is_programmed(addr(1, 3, 0, 0, 1)));
  // Erased pages sense as erased (all ones) and can be programmed again.
  die.execute(intra_block(0, 3, 1, {0, 1, 2}));
  EXPECT_EQ(die.latch(0, Latch::C).popcount(), bits);
  die.execute(EraseCmd{1, 3});
  die.execute(EraseCmd{0, 4});
  EXPECT_EQ(die.programmed_pages(), 0u);
  EXPECT_EQ(die_stats(die)["programmed_pages"], 0);
  // Erase counts toward wear: the block's P/E cycles grow (RBER grows with them on a noisy die).
  NandParams np = small_params(true);
  Die noisy(np, 1);
  noisy.execute(program_cmd(addr(0, 0, 0, 0), random_page(rng, bits), ProgramMode::Slc, true));
  double before = noisy.page_rber(addr(0, 0, 0, 0));
  for (int i = 0; i < 300; ++i) noisy.execute(EraseCmd{0, 0});
  noisy.execute(program_cmd(addr(0, 0, 0, 0), random_page(rng, bits), ProgramMode::Slc, true));
  EXPECT_GT(noisy.page_rber(addr(0, 0, 0, 0)), before);
}

}  // namespace
}  // namespace bitline::nand::test
