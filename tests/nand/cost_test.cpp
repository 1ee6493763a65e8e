// Timing and energy of die commands against values computed by hand from the
// defaults (nand/params.hpp):
//   tR(SLC, ESP) 22.5 us, tR(MLC) 50 us, tR(TLC) 70 us; tPROG 200/500/700 us;
//   tESP = 2 x 200 us = 400 us; tBERS 3.5 ms; latch op 1 us; channel 1.2 GB/s;
//   read/program power 82.5 mW, erase 165 mW, latch 20 mW, I/O 5 pJ/bit;
//   tMWS/tR: wordlines [[1,1],[8,1.01],[48,1.033]], blocks [[1,1],[2,1.033],[8,1.033],[32,1.363]];
//   MWS power/read power: wordlines [[1,1],[48,0.9]], blocks [[1,1],[2,1.34],[4,1.8],[8,2.72],[32,8.24]].
// Time is integer picoseconds, so latencies compare exactly.
#include <numeric>

#include "nand_test_util.hpp"  // first: see the note there

namespace bitline::nand::test {
namespace {

constexpr double kRelTol = 1e-9;
#define EXPECT_ENERGY(e, joules_) EXPECT_NEAR((e).raw(), (joules_), std::abs(joules_) * kRelTol)

// E_read = 82.5 mW x 22.5 us = 1.85625 uJ.
constexpr double kReadEnergy = 0.0825 * 22.5e-6;

class Cost : public ::testing::Test {
 protected:
  Cost() : p_(small_params(false, 16384)), die_(p_, 7), rng_(11) {}
  BitVector rnd() { return random_page(rng_, size_t(p_.geometry.page_bits())); }
  CommandResult prog(uint32_t block, uint32_t wl, ProgramMode mode) {
    ProgramCmd c;
    c.addr = addr(0, block, 0, wl);
    c.mode = mode;
    c.randomize = mode != ProgramMode::Esp;
    for (int k = 0; k < bits_per_cell(mode); ++k) {
      auto b = rnd().to_bytes();
      c.data.insert(c.data.end(), b.begin(), b.end());
    }
    return die_.execute(c);
  }
  NandParams p_;
  Die die_;
  Rng rng_;
};

TEST_F(Cost, ReadProgramEraseLatchAndDataOut) {
  // Programs: SLC 200 us x 82.5 mW = 16.5 uJ; MLC 500 us -> 41.25 uJ; TLC 700 us -> 57.75 uJ;
  // ESP 2 x 200 us = 400 us -> 33 uJ.
  CommandResult slc = prog(0, 0, ProgramMode::Slc), mlc = prog(1, 0, ProgramMode::Mlc), tlc = prog(2, 0, ProgramMode::Tlc),
                esp = prog(3, 0, ProgramMode::Esp);
  EXPECT_EQ(slc.latency, us(200));
  EXPECT_ENERGY(slc.energy, 16.5e-6);
  EXPECT_EQ(mlc.latency, us(500));
  EXPECT_ENERGY(mlc.energy, 41.25e-6);
  EXPECT_EQ(tlc.latency, us(700));
  EXPECT_ENERGY(tlc.energy, 57.75e-6);
  EXPECT_EQ(esp.latency, us(400));
  EXPECT_ENERGY(esp.energy, 33e-6);
  // Reads: SLC and ESP tR = 22.5 us (22'500'000 ps), 1.85625 uJ; MLC 50 us (4.125 uJ); TLC 70 us (5.775 uJ).
  CommandResult r = die_.execute(ReadCmd{addr(0, 0, 0, 0)});
  EXPECT_EQ(r.latency.raw(), 22'500'000);
  EXPECT_ENERGY(r.energy, kReadEnergy);
  EXPECT_EQ(die_.execute(ReadCmd{addr(0, 3, 0, 0)}).latency, us(22.5));
  CommandResult rm = die_.execute(ReadCmd{addr(0, 1, 0, 0, 1)});
  EXPECT_EQ(rm.latency, us(50));
  EXPECT_ENERGY(rm.energy, 4.125e-6);
  CommandResult rt = die_.execute(ReadCmd{addr(0, 2, 0, 0, 2)});
  EXPECT_EQ(rt.latency, us(70));
  EXPECT_ENERGY(rt.energy, 5.775e-6);
  // A plain (single-wordline) MWS costs exactly a read; so does an inverse read.
  CommandResult one = die_.execute(single_wordline(0, WordlineRef{0, 0, 0}, Iscm{}));
  EXPECT_EQ(one.latency, us(22.5));
  EXPECT_ENERGY(one.energy, kReadEnergy);
  CommandResult inv = die_.execute(single_wordline(0, WordlineRef{0, 0, 0}, Iscm{.inverse = true}));
  EXPECT_EQ(inv.latency, us(22.5));
  // Erase: 3.5 ms x 165 mW = 577.5 uJ.
  CommandResult e = die_.execute(EraseCmd{0, 2});
  EXPECT_EQ(e.latency, ms(3.5));
  EXPECT_ENERGY(e.energy, 577.5e-6);
  // XOR and latch copy: 1 us x 20 mW = 20 nJ.
  for (const Command& c : {Command{XorCmd{0}}, Command{LatchCopyCmd{0, Latch::C, Latch::D0}}}) {
    CommandResult l = die_.execute(c);
    EXPECT_EQ(l.latency, us(1));
    EXPECT_ENERGY(l.energy, 20e-9);
  }
  // Data-out of 16 KiB at 1.2 GB/s: 16384 / 1.2e9 s = 13.6533333 us, rounded up to 13'653'334 ps;
  // energy 16384 x 8 bits x 5 pJ = 655.36 nJ.
  CommandResult d = die_.execute(DataOutCmd{0, 0, 16384});
  EXPECT_EQ(d.latency.raw(), 13'653'334);
  EXPECT_ENERGY(d.energy, 655.36e-9);
  // 1 KiB: 853.333 ns -> 853'334 ps, 40.96 nJ.
  CommandResult d1 = die_.execute(DataOutCmd{0, 1024, 1024});
  EXPECT_EQ(d1.latency.raw(), 853'334);
  EXPECT_ENERGY(d1.energy, 40.96e-9);
  // A controller page read = read + data-out of the page.
  PageRead pr = die_.read_page(addr(0, 0, 0, 0));
  EXPECT_EQ(pr.latency.raw(), 22'500'000 + 13'653'334);
  EXPECT_ENERGY(pr.energy, kReadEnergy + 655.36e-9);
  // Stats accumulate the same numbers.
  EXPECT_EQ(die_.stats().programs_by_mode[int(ProgramMode::Esp)], 1u);
  EXPECT_EQ(die_.stats().erases, 1u);
}

// Per-bit energies (nand.energy.read_energy / program_energy, 0 by default): added per bit of every page sensed
// or programmed, on top of power x time; an MWS scales the sum by its power factor.
TEST_F(Cost, PerBitEnergiesAddToPowerTimesTime) {
  EnergyParams e = p_.energy;
  const CostModel plain(p_.timing, e, KiB(4));
  EXPECT_ENERGY(plain.sense(ProgramMode::Slc, 1, 1).energy, kReadEnergy);  // default 0: unchanged
  e.read_energy = pJ_per_bit(2);
  e.program_energy = pJ_per_bit(10);
  const CostModel cm(p_.timing, e, KiB(4));
  const double bits = 4096 * 8;
  EXPECT_ENERGY(cm.sense(ProgramMode::Slc, 1, 1).energy, kReadEnergy + 2e-12 * bits);
  EXPECT_EQ(cm.sense(ProgramMode::Slc, 1, 1).latency, plain.sense(ProgramMode::Slc, 1, 1).latency);
  // A 4-block MWS: (82.5 mW x 1.033 tR + 2 pJ x bits) x 1.8.
  EXPECT_ENERGY(cm.sense(ProgramMode::Slc, 1, 4).energy, (0.0825 * 22.5e-6 * 1.033 + 2e-12 * bits) * 1.8);
  // TLC programs the 3 pages of a wordline: 3 x the page bits.
  EXPECT_ENERGY(cm.program(ProgramMode::Tlc).energy, 0.0825 * 700e-6 + 10e-12 * bits * 3);
  EXPECT_ENERGY(cm.program(ProgramMode::Slc).energy, 0.0825 * 200e-6 + 10e-12 * bits);
  EXPECT_ENERGY(cm.erase().energy, 0.165 * 3.5e-3);  // no per-bit term
}

TEST_F(Cost, MwsLatencyFactorReproducesTheMeasuredPoints) {
  const CostModel& cm = die_.cost();
  EXPECT_DOUBLE_EQ(cm.mws_latency_factor(48, 1), 1.033);  // all 48 wordlines of a string
  EXPECT_DOUBLE_EQ(cm.mws_latency_factor(1, 32), 1.363);  // 32 blocks
  EXPECT_DOUBLE_EQ(cm.mws_latency_factor(1, 4), 1.033);   // ~1.033 up to 4 blocks
  EXPECT_DOUBLE_EQ(cm.mws_latency_factor(1, 1), 1.0);
  for (int w = 1; w <= 8; ++w) EXPECT_LE(cm.mws_latency_factor(w, 1), 1.01 + 1e-12) << w;
  double prev = 0;
  for (int w = 1; w <= 48; ++w) {
    double f = cm.mws_latency_factor(w, 1);
    EXPECT_GE(f, prev);  // more wordlines never sense faster
    prev = f;
    for (int b = 1; b <= 4; ++b) EXPECT_LE(cm.mws_latency_factor(w, b), 1.033 + 1e-12) << w << " WLs, " << b << " blocks";
  }
  // Precharge grows beyond ~8 blocks: 16 blocks = 1.033 + 0.33 x 8/24 = 1.143.
  EXPECT_NEAR(cm.mws_latency_factor(1, 16), 1.143, 1e-12);
  EXPECT_GT(cm.mws_latency_factor(1, 9), 1.033);
}

TEST_F(Cost, ExecutedMwsLatencyAndEnergy) {
  for (uint32_t w = 0; w < 48; ++w) prog(20, w, ProgramMode::Esp);
  std::vector<uint32_t> all(48);
  std::iota(all.begin(), all.end(), 0u);
  // 48 wordlines: 1.033 x 22.5 us = 23.2425 us; energy 82.5 mW x 0.9 x 23.2425 us = 1.725755625 uJ.
  CommandResult r48 = die_.execute(intra_block(0, 20, 0, all));
  EXPECT_EQ(r48.latency.raw(), 23'242'500);
  EXPECT_ENERGY(r48.energy, 1.725755625e-6);
  EXPECT_LT(r48.energy.raw(), kReadEnergy);
  // 8 wordlines: 1.01 x 22.5 us = 22.725 us (<= 1.01 tR); power factor 1 - 0.1 x 7/47.
  CommandResult r8 = die_.execute(intra_block(0, 20, 0, {0, 5, 10, 15, 20, 25, 30, 47}));
  EXPECT_EQ(r8.latency.raw(), 22'725'000);
  EXPECT_LE(double(r8.latency.raw()), 1.01 * 22.5e6);
  EXPECT_ENERGY(r8.energy, 0.0825 * 22.725e-6 * (1.0 - 0.1 * 7.0 / 47.0));
  // Intra-block MWS draws less energy than a read, for every wordline count 2..48.
  for (int n = 2; n <= 48; ++n) {
    std::vector<uint32_t> wl(all.begin(), all.begin() + n);
    CommandResult r = die_.execute(intra_block(0, 20, 0, wl));
    EXPECT_LT(r.energy.raw(), kReadEnergy) << n << " wordlines";
    EXPECT_LT(r.energy / r.latency, p_.energy.read_power) << n << " wordlines";  // lower average power too
    EXPECT_LE(r.latency, us(22.5 * 1.033));
  }
  // Inter-block: 2 blocks +34% power (110.55 mW), 4 blocks +80% (148.5 mW), both at 1.033 tR.
  for (uint32_t b = 21; b < 25; ++b) prog(b, 0, ProgramMode::Esp);
  CommandResult two = die_.execute(mws(0, Iscm{}, {slot(21, 0, {0}), slot(22, 0, {0})}));
  EXPECT_EQ(two.latency.raw(), 23'242'500);
  EXPECT_ENERGY(two.energy, 0.11055 * 23.2425e-6);
  EXPECT_NEAR((two.energy / two.latency).raw() / 0.0825, 1.34, 1e-9);
  CommandResult four = die_.execute(mws(0, Iscm{}, {slot(21, 0, {0}), slot(22, 0, {0}), slot(23, 0, {0}), slot(24, 0, {0})}));
  EXPECT_EQ(four.latency.raw(), 23'242'500);
  EXPECT_ENERGY(four.energy, 0.1485 * 23.2425e-6);  // 3.45151125 uJ
  EXPECT_NEAR((four.energy / four.latency).raw() / 0.0825, 1.80, 1e-9);
  // 4-block MWS vs 4 separate reads (4 x 1.85625 = 7.425 uJ): 1 - 3.45151125 / 7.425 = 53.5% less.
  Energy reads{};
  for (uint32_t b = 21; b < 25; ++b) reads += die_.execute(ReadCmd{addr(0, b, 0, 0)}).energy;
  EXPECT_ENERGY(reads, 4 * kReadEnergy);
  double saving = 1.0 - four.energy.raw() / reads.raw();
  EXPECT_NEAR(saving, 0.53515, 1e-4);
  // Mixed: 4 blocks with 48 wordlines each still within 1.033 tR; power 0.9 x 1.8.
  for (uint32_t b = 21; b < 25; ++b)
    for (uint32_t w = 1; w < 48; ++w) prog(b, w, ProgramMode::Esp);
  CommandResult mixed = die_.execute(mws(0, Iscm{}, {slot(21, 0, all), slot(22, 0, all), slot(23, 0, all), slot(24, 0, all)}));
  EXPECT_EQ(mixed.latency.raw(), 23'242'500);
  EXPECT_ENERGY(mixed.energy, 0.0825 * 0.9 * 1.8 * 23.2425e-6);
}

TEST_F(Cost, ThirtyTwoBlockMwsOnAWidenedDie) {
  // Default limits reject it (power limit 4, CONT chains 4)...
  MwsCmd c = mws(0, Iscm{}, {});
  for (uint32_t b = 0; b < 32; ++b) c.slots.push_back(slot(b, 0, {b % 48}));
  expect_command_error([&] { die_.execute(c); }, "more than the 4 that CONT may chain");
  // ...a die configured for it senses 32 blocks at 1.363 x 22.5 us = 30.6675 us, 8.24 x read power:
  // 82.5 mW x 8.24 x 30.6675 us = 20.8477665 uJ.
  NandParams p = p_;
  p.command.max_inter_block = 32;
  p.command.max_mws_slots = 32;
  validate(p);
  Die wide(p, 7);
  Reference ref(size_t(p.geometry.page_bits()));
  Rng rng(3);
  BitVector want(ref.bits(), false);
  for (uint32_t b = 0; b < 32; ++b) {
    BitVector v = random_page(rng, ref.bits(), 0.02);
    want |= v;
    program(wide, ref, addr(0, b, 0, b % 48), v, ProgramMode::Esp);
  }
  CommandResult r = wide.execute_bytes(encode(c, p.geometry));
  EXPECT_EQ(r.latency.raw(), 30'667'500);
  EXPECT_ENERGY(r.energy, 20.8477665e-6);
  EXPECT_EQ(wide.latch(0, Latch::C), want);  // and it computes the 32-way OR
  EXPECT_EQ(r.cells_sensed, 32u * uint64_t(p.geometry.page_bits()));
}

TEST_F(Cost, ParaBitVersusOneMws) {
  // 36 operands: ParaBit senses 36 times (36 x 22.5 = 810 us); FC one MWS of 36 wordlines:
  // 1.01 + 0.023 x 28/40 = 1.0261 tR = 23.08725 us.
  std::vector<WordlineRef> ops;
  std::vector<uint32_t> wl;
  for (uint32_t w = 0; w < 36; ++w) {
    prog(30, w, ProgramMode::Esp);
    ops.push_back(WordlineRef{30, 0, w});
    wl.push_back(w);
  }
  Time serial{};
  for (const auto& c : parabit_and(0, ops)) serial += die_.execute(c).latency;
  EXPECT_EQ(serial, us(810));
  BitVector parabit = die_.latch(0, Latch::C);
  CommandResult fc = die_.execute(intra_block(0, 30, 0, wl));
  EXPECT_EQ(fc.latency.raw(), 23'087'250);
  EXPECT_EQ(die_.latch(0, Latch::C), parabit);
}

TEST_F(Cost, StatsJsonTotals) {
  prog(0, 0, ProgramMode::Slc);
  die_.execute(ReadCmd{addr(0, 0, 0, 0)});
  die_.execute(EraseCmd{0, 0});
  Json j = die_stats(die_);
  EXPECT_EQ(j["commands"]["program"], 1);
  EXPECT_EQ(j["commands"]["read"], 1);
  EXPECT_EQ(j["commands"]["erase"], 1);
  EXPECT_NEAR(j["energy_j"]["total"].get<double>(), 16.5e-6 + kReadEnergy + 577.5e-6, 1e-15);
  EXPECT_NEAR(j["busy_s"].get<double>(), 200e-6 + 22.5e-6 + 3.5e-3, 1e-15);
}

}  // namespace
}  // namespace bitline::nand::test
