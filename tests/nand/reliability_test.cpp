// Reliability: errors injected into sensed cells at the modelled RBER, ESP data
// computing without errors at the worst condition, ECC and randomisation on
// normal reads.
#include <cmath>

#include "nand/error_model.hpp"
#include "nand_test_util.hpp"  // first: see the note there

namespace bitline::nand::test {
namespace {

/// |observed - expected| within `k` standard deviations of a Poisson count (the
/// counts below are sums of independent Bernoulli trials, whose variance is at
/// most their mean, so the Poisson band is conservative).
void expect_poisson(double observed, double expected, const std::string& what, double k = 5.0) {
  double band = k * std::sqrt(std::max(expected, 1.0));
  EXPECT_NEAR(observed, expected, band) << what << ": observed " << observed << ", expected " << expected;
  std::printf("[ stats    ] %s: observed %.0f, expected %.1f (5 sigma band +-%.1f)\n", what.c_str(), observed, expected, band);
}

struct Condition {
  int64_t pe;
  double days;
  double rber;  // hand-computed: 1e-5 (SLC) x pe_factor x retention_factor x 1.91 (no randomisation)
  int trials;
};

class SlcAnd36 : public ::testing::TestWithParam<Condition> {};

TEST_P(SlcAnd36, DisagreesWithTheReferenceAtTheModelledRate) {
  const Condition cond = GetParam();
  NandParams p = small_params(/*errors=*/true, 16384);
  p.reliability.initial_pe_cycles = cond.pe;
  p.reliability.retention_days = cond.days;
  Die die(p, 2024);
  Reference ref(size_t(p.geometry.page_bits()));
  Rng rng(8);
  const int n = 36;
  std::vector<uint32_t> wl;
  for (uint32_t w = 0; w < uint32_t(n); ++w) {
    program(die, ref, addr(0, 3, 1, w), random_page(rng, ref.bits(), 0.98), ProgramMode::Slc, /*randomize=*/false);
    wl.push_back(w);
  }
  const double r = die.page_rber(addr(0, 3, 1, 0));
  EXPECT_NEAR(r, cond.rber, cond.rber * 1e-9);
  // Zeros per bitline among the 36 operands.
  const size_t bits = ref.bits();
  std::vector<uint8_t> zeros(bits, 0);
  for (uint32_t w = 0; w < uint32_t(n); ++w) {
    BitVector pg = ref.page(0, 3, 1, w);
    for (size_t i = 0; i < bits; ++i) zeros[i] += !pg.get(i);
  }
  size_t n0 = 0, n1 = 0, n2 = 0;
  for (auto z : zeros) n0 += z == 0, n1 += z == 1, n2 += z == 2;
  MwsCmd c = intra_block(0, 3, 1, wl);
  const BitVector want = ref.sensed(c, 48);
  ASSERT_EQ(want.popcount(), n0);
  // Expected wrong result bits per sensing: a 1 is wrong if any of the 36 cells flips;
  // a 0 with exactly one zero operand is wrong if that cell flips and no other;
  // with >= 2 zeros at least two flips are needed (r^2, reported, bounded loosely).
  const double e_one = double(n0) * (1.0 - std::pow(1.0 - r, n)) * cond.trials;
  const double e_single = double(n1) * r * std::pow(1.0 - r, n - 1) * cond.trials;
  const double e_multi = double(n2) * r * r * cond.trials;  // leading term of the >= 2 zeros class
  const double e_flips = double(n) * double(bits) * r * cond.trials;
  uint64_t wrong_one = 0, wrong_single = 0, wrong_multi = 0, flips = 0, cells = 0;
  for (int t = 0; t < cond.trials; ++t) {
    CommandResult res = die.execute(c);
    flips += res.bit_errors;
    cells += res.cells_sensed;
    const BitVector& got = die.latch(0, Latch::C);
    BitVector diff = got;
    diff ^= want;
    for (size_t w = 0; w < diff.word_count(); ++w) {
      for (uint64_t m = diff.data()[w]; m; m &= m - 1) {
        size_t i = w * 64 + size_t(__builtin_ctzll(m));
        if (zeros[i] == 0)
          ++wrong_one;
        else if (zeros[i] == 1)
          ++wrong_single;
        else
          ++wrong_multi;
      }
    }
  }
  EXPECT_EQ(cells, uint64_t(n) * bits * uint64_t(cond.trials));
  std::string tag = std::to_string(cond.pe) + " P/E, " + std::to_string(int(cond.days)) + " days, r=" + std::to_string(r);
  expect_poisson(double(wrong_one + wrong_single), e_one + e_single, "wrong result bits (" + tag + ")");
  expect_poisson(double(wrong_one), e_one, "  wrong 1s (all operands 1)");
  expect_poisson(double(wrong_single), e_single, "  wrong 0s (one zero operand)");
  expect_poisson(double(flips), e_flips, "  flipped cells (CommandResult.bit_errors)");
  EXPECT_LE(double(wrong_multi), e_multi + 5 * std::sqrt(e_multi) + 3) << "bitlines with >= 2 zero operands";
  EXPECT_GT(wrong_one, 0u);
  EXPECT_EQ(die.stats().bit_errors, flips);
}

INSTANTIATE_TEST_SUITE_P(Conditions, SlcAnd36,
                         ::testing::Values(Condition{0, 0, 1.91e-5, 24},         // fresh: 1e-5 x 1.91
                                           Condition{3000, 30, 1.719e-4, 8},     // 1e-5 x 3 x 3 x 1.91
                                           Condition{10000, 365, 1.91e-3, 4}));  // 1e-5 x 10 x 10 x 1.91

TEST(Reliability, EspAndMatchesTheReferenceOverAGigabitAtTheWorstCondition) {
  NandParams p = small_params(/*errors=*/true, 16384);
  p.reliability.initial_pe_cycles = 10000;
  p.reliability.retention_days = 365;
  Die die(p, 77);
  Reference ref(size_t(p.geometry.page_bits()));
  Rng rng(21);
  std::vector<uint32_t> wl;
  for (uint32_t w = 0; w < 36; ++w) wl.push_back(w);
  // Four different operand sets (one per sub-block) so that the sensings do not repeat one AND.
  std::vector<BitVector> want;
  for (uint32_t sub = 0; sub < 4; ++sub) {
    for (uint32_t w : wl) program(die, ref, addr(0, 9, sub, w), random_page(rng, ref.bits(), 0.98), ProgramMode::Esp, /*randomize=*/false);
    want.push_back(ref.sensed(intra_block(0, 9, sub, wl), 48));
  }
  // RBER = 1.91e-3 (SLC, no randomisation, worst condition) x esp_factor(2.0) (flat beyond 1.9)
  //      = 1.91e-3 x 5.2e-10 = 9.9e-13: 1e-3 errors expected in 1e9 bits.
  const double r = die.page_rber(addr(0, 9, 0, 0));
  EXPECT_NEAR(r, 1.91e-3 * 5.2e-10, 1e-20);
  EXPECT_LT(r, 2.07e-12);
  EXPECT_GT(r, 0.0);
  uint64_t cells = 0, errors = 0, mismatched = 0, commands = 0;
  for (uint32_t k = 0; cells < 1'000'000'000ull; ++k) {
    uint32_t sub = k % 4;
    CommandResult res = die.execute(intra_block(0, 9, sub, wl));
    cells += res.cells_sensed;
    errors += res.bit_errors;
    mismatched += hamming(die.latch(0, Latch::C), want[sub]);
    ++commands;
  }
  std::printf("[ stats    ] ESP 36-operand AND: %llu commands, %llu cells sensed, %llu bit errors, %llu wrong result bits\n",
              (unsigned long long)commands, (unsigned long long)cells, (unsigned long long)errors, (unsigned long long)mismatched);
  EXPECT_GE(cells, 1'000'000'000ull);
  EXPECT_EQ(errors, 0u);
  EXPECT_EQ(mismatched, 0u);
  EXPECT_EQ(die.stats().cells_sensed, cells);
}

TEST(Reliability, InjectErrorsCountIsBinomial) {
  struct Case {
    double p;
    uint64_t n;
  };
  Rng rng(123);
  for (Case c :
       {Case{1e-3, 100'000'000}, Case{0.25, 400'000}, Case{0.5, 100'000}, Case{1e-9, 10'000'000'000ull}, Case{1e-6, 1'000'000'000}}) {
    uint64_t calls = 0, last = 0, sum_pos = 0;
    bool ordered = true, in_range = true;
    uint64_t n = inject_errors(rng, c.p, c.n, [&](uint64_t pos) {
      if (calls > 0 && pos <= last) ordered = false;
      if (pos >= c.n) in_range = false;
      last = pos;
      sum_pos += pos / 1024;
      ++calls;
    });
    EXPECT_EQ(n, calls);
    EXPECT_TRUE(ordered) << "positions strictly increasing";
    EXPECT_TRUE(in_range);
    double mean = c.p * double(c.n), sd = std::sqrt(mean * (1 - c.p));
    EXPECT_NEAR(double(n), mean, 5 * std::max(sd, 1.0)) << "p=" << c.p << " n=" << c.n;
    std::printf("[ stats    ] inject_errors p=%g n=%llu: %llu errors, expected %.1f\n", c.p, (unsigned long long)c.n, (unsigned long long)n,
                mean);
    if (n > 1000) {  // positions uniform: mean position ~ n/2 (in units of 1024 bits)
      double mpos = double(sum_pos) / double(n) * 1024.0;
      EXPECT_NEAR(mpos / double(c.n), 0.5, 5 * 0.29 / std::sqrt(double(n)) + 1e-3);
    }
  }
  int zero_calls = 0;
  EXPECT_EQ(inject_errors(rng, 0.0, 1000, [&](uint64_t) { ++zero_calls; }), 0u);
  EXPECT_EQ(inject_errors(rng, 0.1, 0, [&](uint64_t) { ++zero_calls; }), 0u);
  EXPECT_EQ(zero_calls, 0);
  // p = 1: every bit is an error.
  uint64_t all = inject_errors(rng, 1.0, 777, [](uint64_t) {});
  EXPECT_EQ(all, 777u);
}

TEST(Reliability, RberTableFactors) {
  ReliabilityParams rp = default_params<NandParams>().reliability;
  RberTableModel m(rp);
  auto rber = [&](ProgramMode mode, bool randomized, int64_t pe, double days, double ratio = 1.0) {
    return m.rber(CellCondition{mode, randomized, pe, days, ratio});
  };
  EXPECT_DOUBLE_EQ(rber(ProgramMode::Slc, true, 0, 0), 1e-5);
  EXPECT_NEAR(rber(ProgramMode::Slc, true, 10000, 365), 1e-3, 1e-15);  // 12 orders above UBER 1e-15
  EXPECT_NEAR(rber(ProgramMode::Slc, false, 0, 0) / rber(ProgramMode::Slc, true, 0, 0), 1.91, 1e-12);
  EXPECT_NEAR(rber(ProgramMode::Mlc, true, 0, 0) / rber(ProgramMode::Slc, true, 0, 0), 4.0, 1e-12);
  EXPECT_NEAR(rber(ProgramMode::Mlc, false, 0, 0) / rber(ProgramMode::Mlc, true, 0, 0), 4.92, 1e-12);
  EXPECT_NEAR(rber(ProgramMode::Slc, true, 3000, 0), 3e-5, 1e-15);
  EXPECT_NEAR(rber(ProgramMode::Slc, true, 0, 30), 3e-5, 1e-15);
  // Log-linear between points: 1000 P/E is 3^(1/3) x.
  EXPECT_NEAR(rber(ProgramMode::Slc, true, 1000, 0), 1e-5 * std::cbrt(3.0), 1e-15);
  EXPECT_GT(rber(ProgramMode::Slc, true, 10000, 365), rber(ProgramMode::Slc, true, 5000, 100));
  // ESP at the worst condition (10K P/E, 365 days): below the measured bound 2.07e-12 for tESP >= 1.9 tPROG.
  double prev = 1.0;
  for (double ratio : {1.9, 2.0, 2.2, 2.5, 3.04, 4.0, 10.0}) {
    double e = rber(ProgramMode::Esp, false, 10000, 365, ratio);
    EXPECT_LT(e, 2.07e-12) << "ratio " << ratio;
    EXPECT_GT(e, 0.0);
    EXPECT_LE(e, prev);
    prev = e;
  }
  // +60% tESP (1.0 -> 1.6 x tPROG) gives one order of magnitude lower RBER (spec, median block).
  EXPECT_NEAR(rber(ProgramMode::Esp, false, 10000, 365, 1.6) / rber(ProgramMode::Esp, false, 10000, 365, 1.0), 0.1, 1e-9);
  EXPECT_NEAR(rber(ProgramMode::Esp, false, 0, 0, 1.6) / rber(ProgramMode::Esp, false, 0, 0, 1.0), 0.1, 1e-9);
  // Without extra ISPP steps (ratio 1) ESP is plain SLC without randomisation.
  EXPECT_NEAR(rber(ProgramMode::Esp, false, 10000, 365, 1.0), 1.91e-3, 1e-15);
  EXPECT_DOUBLE_EQ(NoErrorModel().rber(CellCondition{ProgramMode::Slc, false, 10000, 365, 1.0}), 0.0);
}

TEST(Reliability, SetBlockConditionChangesThePageRber) {
  NandParams p = small_params(true, 1024);
  Die die(p, 1);
  BitVector v(size_t(p.geometry.page_bits()), true);
  die.execute(program_cmd(addr(0, 4, 0, 0), v, ProgramMode::Slc, true));
  die.execute(program_cmd(addr(0, 5, 0, 0), v, ProgramMode::Slc, false));
  EXPECT_NEAR(die.page_rber(addr(0, 4, 0, 0)), 1e-5, 1e-18);
  EXPECT_NEAR(die.page_rber(addr(0, 5, 0, 0)), 1.91e-5, 1e-18);
  die.set_block_condition(0, 4, 10000, 365);
  EXPECT_NEAR(die.page_rber(addr(0, 4, 0, 0)), 1e-3, 1e-15);
  EXPECT_NEAR(die.page_rber(addr(0, 5, 0, 0)), 1.91e-5, 1e-18);  // other blocks unchanged
  EXPECT_NEAR(die.page_rber(addr(0, 40, 0, 0)), 1e-5, 1e-18);    // untouched block: baseline SLC rate
}

TEST(Reliability, NormalReadsCorrectAndDerandomise) {
  NandParams p = small_params(/*errors=*/true, 16384);
  p.reliability.initial_pe_cycles = 10000;
  p.reliability.retention_days = 365;  // randomised SLC RBER 1e-3: ~16 errors per 2 KiB codeword, ECC corrects 72
  Die die(p, 5);
  Rng rng(6);
  const size_t bits = size_t(p.geometry.page_bits());
  std::vector<BitVector> data;
  for (uint32_t w = 0; w < 16; ++w) {
    data.push_back(random_page(rng, bits));
    die.execute(program_cmd(addr(1, 2, 0, w), data.back(), ProgramMode::Slc, /*randomize=*/true));
  }
  uint64_t raw = 0;
  for (uint32_t w = 0; w < 16; ++w) {
    PageRead pr = die.read_page(addr(1, 2, 0, w));
    EXPECT_EQ(pr.data, data[w].to_bytes()) << "wordline " << w;
    EXPECT_FALSE(pr.uncorrectable);
    EXPECT_EQ(pr.corrected_bits, pr.raw_bit_errors);
    raw += pr.raw_bit_errors;
  }
  expect_poisson(double(raw), 16.0 * double(bits) * 1e-3, "raw bit errors of 16 randomised 16 KiB reads at 1e-3");
  EXPECT_EQ(die.stats().ecc_corrected_bits, raw);
  EXPECT_EQ(die.stats().ecc_uncorrectable_pages, 0u);

  // Beyond the ECC capability (RBER 1e-2: ~164 errors per codeword > 72) a read is uncorrectable.
  NandParams bad = p;
  bad.reliability.rber_slc = 1e-4;
  Die weak(bad, 5);
  weak.execute(program_cmd(addr(0, 0, 0, 0), data[0], ProgramMode::Slc, true));
  PageRead pr = weak.read_page(addr(0, 0, 0, 0));
  EXPECT_TRUE(pr.uncorrectable);
  EXPECT_NE(pr.data, data[0].to_bytes());
  EXPECT_EQ(weak.stats().ecc_uncorrectable_pages, 1u);
}

TEST(Reliability, RandomisedDataSensedRawGivesTheScrambledBits) {
  NandParams p = small_params(false, 16384);
  Die die(p, 9);
  Rng rng(10);
  const size_t bits = size_t(p.geometry.page_bits());
  BitVector d = random_page(rng, bits, 0.9);
  die.execute(program_cmd(addr(0, 1, 0, 0), d, ProgramMode::Slc, /*randomize=*/true));
  die.execute(program_cmd(addr(0, 1, 0, 1), d, ProgramMode::Slc, /*randomize=*/true));
  die.execute(program_cmd(addr(0, 2, 0, 0), d, ProgramMode::Slc, /*randomize=*/false));
  // Raw MWS sensing of a randomised page: about half the bits differ from the data (keystream is random).
  die.execute(intra_block(0, 1, 0, {0}));
  BitVector raw0 = die.latch(0, Latch::C);
  size_t h = hamming(raw0, d);
  EXPECT_GT(h, bits * 45 / 100);
  EXPECT_LT(h, bits * 55 / 100);
  EXPECT_NEAR(double(raw0.popcount()) / double(bits), 0.5, 0.05);  // the scrambler whitens biased data
  // The scrambler depends on the address: the same data on another wordline senses differently.
  die.execute(intra_block(0, 1, 0, {1}));
  const BitVector raw1 = die.latch(0, Latch::C);
  EXPECT_GT(hamming(raw1, raw0), bits * 45 / 100);
  // An AND over randomised pages is the AND of the scrambled bits, not of the data (d AND d = d).
  die.execute(intra_block(0, 1, 0, {0, 1}));
  BitVector scrambled_and = raw0;
  scrambled_and &= raw1;
  EXPECT_EQ(die.latch(0, Latch::C), scrambled_and);
  EXPECT_GT(hamming(die.latch(0, Latch::C), d), bits / 2);
  // A non-randomised page senses as stored.
  die.execute(intra_block(0, 2, 0, {0}));
  EXPECT_EQ(die.latch(0, Latch::C), d);
  // Normal reads derandomise (error-free die: nothing to correct).
  PageRead pr = die.read_page(addr(0, 1, 0, 0));
  EXPECT_EQ(pr.data, d.to_bytes());
  EXPECT_EQ(pr.raw_bit_errors, 0u);
  EXPECT_EQ(die.read_page(addr(0, 1, 0, 1)).data, d.to_bytes());
  EXPECT_EQ(die.read_page(addr(0, 2, 0, 0)).data, d.to_bytes());
  // A raw read (READ + DATA-OUT without the controller) also returns the scrambled bits.
  die.execute(ReadCmd{addr(0, 1, 0, 0)});
  EXPECT_EQ(die.execute(DataOutCmd{0, 0, uint32_t(bits / 8)}).data, raw0.to_bytes());
}

}  // namespace
}  // namespace bitline::nand::test
