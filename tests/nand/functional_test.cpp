// Functional tests of the die's in-flash computation against a CPU reference,
// on an error-free die (nand.reliability.model = none) with random data.
#include <algorithm>
#include <numeric>

#include "nand_test_util.hpp"  // first: see the note there

namespace bitline::nand::test {
namespace {

constexpr Iscm kPlain{};  // normal mode, both inits, transfer: C = sensed
constexpr Iscm kInverse{.inverse = true, .init_s = true, .init_c = true, .transfer = true};

class Functional : public ::testing::Test {
 protected:
  Functional() : p_(small_params()), die_(p_, 42), ref_(size_t(p_.geometry.page_bits())), rng_(1234) {}

  BitVector C() const { return die_.latch(0, Latch::C); }
  BitVector S() const { return die_.latch(0, Latch::S); }
  BitVector rnd(double p1 = 0.5) { return random_page(rng_, ref_.bits(), p1); }
  /// Fills wordlines [0, n) of (plane 0, block, sub) with random data.
  void fill(uint32_t block, uint32_t sub, int n, double p1 = 0.5) {
    for (int w = 0; w < n; ++w) program(die_, ref_, addr(0, block, sub, uint32_t(w)), rnd(p1));
  }
  std::vector<uint32_t> random_subset(int n, int of) {
    std::vector<uint32_t> all(static_cast<size_t>(of));
    std::iota(all.begin(), all.end(), 0u);
    for (size_t i = 0; i < all.size(); ++i) std::swap(all[i], all[i + rng_.below(all.size() - i)]);
    all.resize(size_t(n));
    return all;
  }
  int wls() const { return int(p_.geometry.wordlines_per_string); }

  NandParams p_;
  Die die_;
  Reference ref_;
  Rng rng_;
};

TEST_F(Functional, AndOverEveryWordlineCount) {
  // Block 0: unbiased data (checks small counts); block 1: bits 1 with p = 0.5^(1/48)
  // so that even the AND of all 48 wordlines is about half ones.
  fill(0, 0, 48);
  fill(1, 0, 48, 0.9857);
  for (uint32_t block : {0u, 1u}) {
    for (int n = 1; n <= 48; ++n) {
      auto wl = random_subset(n, wls());
      MwsCmd c = intra_block(0, block, 0, wl);
      BitVector want = ref_.sensed(c, wls());
      die_.execute(c);
      ASSERT_EQ(C(), want) << "block " << block << ", " << n << " wordlines";
      ASSERT_EQ(S(), want);
      if (block == 1 && n == 48) {
        EXPECT_GT(want.popcount(), want.size() / 4);  // non-trivial result
      }
    }
  }
}

TEST_F(Functional, AndSelectsTheAddressedSubBlockAndTreatsErasedPagesAsOnes) {
  fill(2, 0, 6);
  fill(2, 3, 6);
  // Wordlines 6..9 of sub-block 0 are erased: they conduct (1) and do not change the AND.
  for (uint32_t sub : {0u, 3u}) {
    MwsCmd c = intra_block(0, 2, sub, {0, 2, 5, 6, 9});
    die_.execute(c);
    EXPECT_EQ(C(), ref_.sensed(c, wls())) << "sub-block " << sub;
  }
  MwsCmd erased = intra_block(0, 2, 1, {0, 1, 2});
  die_.execute(erased);
  EXPECT_EQ(C().popcount(), C().size());
  MwsCmd untouched = intra_block(0, 40, 0, {7});
  die_.execute(untouched);
  EXPECT_EQ(C().popcount(), C().size());
}

TEST_F(Functional, OrOverOneToFourBlocks) {
  for (uint32_t b = 0; b < 8; ++b) fill(b, 0, 4);
  for (int trial = 0; trial < 5; ++trial) {
    for (int k = 1; k <= 4; ++k) {
      auto blocks = random_subset(k, 8);
      std::vector<MwsSlot> slots;
      BitVector want(ref_.bits(), false);
      for (auto b : blocks) {
        uint32_t w = uint32_t(rng_.below(4));
        slots.push_back(slot(b, 0, {w}));
        want |= ref_.page(0, b, 0, w);
      }
      die_.execute(mws(0, kPlain, slots));
      ASSERT_EQ(C(), want) << k << " blocks";
    }
  }
}

TEST_F(Functional, OrOfAndsAcrossBlocks) {
  for (uint32_t b = 0; b < 4; ++b) fill(b, 1, 48, 0.95);
  for (int trial = 0; trial < 20; ++trial) {
    int k = 1 + int(rng_.below(4));
    auto blocks = random_subset(k, 4);
    std::vector<MwsSlot> slots;
    for (auto b : blocks) slots.push_back(slot(b, 1, random_subset(1 + int(rng_.below(48)), wls())));
    MwsCmd c = mws(0, kPlain, slots);
    // Reference written out explicitly: OR over blocks of AND over the block's wordlines.
    BitVector want(ref_.bits(), false);
    for (const auto& s : slots) {
      BitVector a(ref_.bits(), true);
      for (int w = 0; w < 48; ++w)
        if (s.pbm[size_t(w)]) a &= ref_.page(0, s.block, 1, uint32_t(w));
      want |= a;
    }
    die_.execute(c);
    ASSERT_EQ(C(), want) << describe(c);
  }
}

TEST_F(Functional, NotNandNorThroughInverseSensing) {
  for (uint32_t b = 0; b < 4; ++b) fill(b, 0, 8, 0.8);
  // NOT: inverse read of one wordline.
  die_.execute(single_wordline(0, WordlineRef{3, 0, 5}, kInverse));
  EXPECT_EQ(C(), ~ref_.page(0, 3, 0, 5));
  EXPECT_EQ(S(), ~ref_.page(0, 3, 0, 5));
  // NAND: inverse intra-block MWS.
  MwsCmd nand = intra_block(0, 1, 0, {0, 1, 2, 3, 4, 5, 6, 7}, kInverse);
  die_.execute(nand);
  EXPECT_EQ(C(), ~ref_.sensed(nand, wls()));
  // NOR: inverse inter-block MWS with one wordline per block.
  MwsCmd nor = mws(0, kInverse, {slot(0, 0, {1}), slot(1, 0, {2}), slot(2, 0, {3}), slot(3, 0, {4})});
  die_.execute(nor);
  BitVector o = ref_.page(0, 0, 0, 1);
  o |= ref_.page(0, 1, 0, 2);
  o |= ref_.page(0, 2, 0, 3);
  o |= ref_.page(0, 3, 0, 4);
  EXPECT_EQ(C(), ~o);
  // Inverse sensing of an erased wordline: it conducts, so NOT gives zeros.
  die_.execute(single_wordline(0, WordlineRef{9, 0, 0}, kInverse));
  EXPECT_EQ(C().popcount(), 0u);
}

TEST_F(Functional, XorAndXnorBetweenLatches) {
  fill(0, 0, 2);
  fill(5, 2, 1);
  const BitVector a = ref_.page(0, 0, 0, 0), b = ref_.page(0, 5, 2, 0);
  // A into C (and S); then B into S only (init S, keep C, no transfer); XOR: C = S ^ C.
  auto load_a = [&] { die_.execute(single_wordline(0, WordlineRef{0, 0, 0}, kPlain)); };
  load_a();
  die_.execute(single_wordline(0, WordlineRef{5, 2, 0}, Iscm{.inverse = false, .init_s = true, .init_c = false, .transfer = false}));
  EXPECT_EQ(C(), a);  // C untouched without init and transfer
  EXPECT_EQ(S(), b);
  die_.execute(XorCmd{0});
  BitVector x = a;
  x ^= b;
  EXPECT_EQ(C(), x);
  EXPECT_EQ(S(), b);  // XOR leaves S alone
  // XNOR: inverse sensing of B into S, then XOR.
  load_a();
  die_.execute(single_wordline(0, WordlineRef{5, 2, 0}, Iscm{.inverse = true, .init_s = true, .init_c = false, .transfer = false}));
  EXPECT_EQ(S(), ~b);
  die_.execute(XorCmd{0});
  EXPECT_EQ(C(), ~x);
  // XOR of a latch with itself (S == C after a plain read) clears C.
  load_a();
  die_.execute(XorCmd{0});
  EXPECT_EQ(C().popcount(), 0u);
}

TEST_F(Functional, OrInsideOneBlockThroughInvertedStorage) {
  // Store NOT A, NOT B, NOT C in one block; one inverse intra-block MWS gives A + B + C (De Morgan).
  for (int trial = 0; trial < 3; ++trial) {
    BitVector a = rnd(0.2), b = rnd(0.2), c = rnd(0.2);
    uint32_t blk = uint32_t(10 + trial);
    program(die_, ref_, addr(0, blk, 0, 0), ~a);
    program(die_, ref_, addr(0, blk, 0, 17), ~b);
    program(die_, ref_, addr(0, blk, 0, 47), ~c);
    die_.execute(intra_block(0, blk, 0, {0, 17, 47}, kInverse));
    BitVector want = a;
    want |= b;
    want |= c;
    EXPECT_EQ(C(), want);
  }
  // More operands than the 4-block inter-block limit: OR of 40 operands in one sensing.
  std::vector<uint32_t> wl;
  BitVector want(ref_.bits(), false);
  for (uint32_t w = 0; w < 40; ++w) {
    BitVector v = rnd(0.02);
    want |= v;
    program(die_, ref_, addr(0, 20, 1, w), ~v);
    wl.push_back(w);
  }
  die_.execute(intra_block(0, 20, 1, wl, kInverse));
  EXPECT_EQ(C(), want);
  EXPECT_LT(want.popcount(), want.size());
}

TEST_F(Functional, ParaBitSerialAndOr) {
  for (uint32_t b = 0; b < 3; ++b) fill(b, b, 12, 0.9);
  for (int n = 1; n <= 12; ++n) {
    std::vector<WordlineRef> ops;
    BitVector and_ref(ref_.bits(), true);
    for (int i = 0; i < n; ++i) {
      uint32_t b = uint32_t(rng_.below(3)), w = uint32_t(rng_.below(12));
      ops.push_back(WordlineRef{b, b, w});
      and_ref &= ref_.page(0, b, b, w);
    }
    // ParaBit AND: one full sensing per operand, S accumulates.
    auto seq = parabit_and(0, ops);
    ASSERT_EQ(seq.size(), size_t(n));
    Time t{};
    for (const auto& c : seq) t += die_.execute(c).latency;
    EXPECT_EQ(C(), and_ref) << n << " operands";
    EXPECT_EQ(t, p_.timing.t_read_slc * double(n));  // latency grows linearly: n x tR
    // ParaBit OR.
    BitVector want_or(ref_.bits(), false);
    for (const auto& o : ops) want_or |= ref_.page(0, o.block, o.subblock, o.wordline);
    for (const auto& c : parabit_or(0, ops)) die_.execute(c);
    EXPECT_EQ(C(), want_or) << n << " operands";
  }
}

TEST_F(Functional, AndOf96OperandsAcrossTwoBlocksAccumulatesInS) {
  fill(30, 0, 48, 0.993);
  fill(31, 2, 48, 0.993);
  std::vector<uint32_t> all(48);
  std::iota(all.begin(), all.end(), 0u);
  // First MWS initialises S and C and does not transfer; the second keeps S (S = S AND sensed) and transfers.
  die_.execute(intra_block(0, 30, 0, all, Iscm{.inverse = false, .init_s = true, .init_c = true, .transfer = false}));
  EXPECT_EQ(C().popcount(), 0u);
  die_.execute(intra_block(0, 31, 2, all, Iscm{.inverse = false, .init_s = false, .init_c = false, .transfer = true}));
  BitVector want(ref_.bits(), true);
  for (uint32_t w = 0; w < 48; ++w) want &= ref_.page(0, 30, 0, w), want &= ref_.page(0, 31, 2, w);
  EXPECT_EQ(C(), want);
  EXPECT_GT(want.popcount(), 0u);
  // Re-initialising S in the second command would lose the first block's AND.
  die_.execute(intra_block(0, 30, 0, all, Iscm{.inverse = false, .init_s = true, .init_c = true, .transfer = false}));
  die_.execute(intra_block(0, 31, 2, all, Iscm{.inverse = false, .init_s = true, .init_c = false, .transfer = true}));
  BitVector second(ref_.bits(), true);
  for (uint32_t w = 0; w < 48; ++w) second &= ref_.page(0, 31, 2, w);
  EXPECT_EQ(C(), second);
  EXPECT_NE(C(), want);
}

TEST_F(Functional, OrAccumulatesThroughTheCLatch) {
  // OR over 8 blocks (above the 4-block limit) in two inter-block MWS; and an OR of ANDs of 3 blocks' full strings.
  for (uint32_t b = 0; b < 8; ++b) fill(b, 0, 2, 0.1);
  std::vector<MwsSlot> first, second;
  BitVector want(ref_.bits(), false);
  for (uint32_t b = 0; b < 8; ++b) {
    (b < 4 ? first : second).push_back(slot(b, 0, {1}));
    want |= ref_.page(0, b, 0, 1);
  }
  die_.execute(mws(0, Iscm{.inverse = false, .init_s = true, .init_c = true, .transfer = true}, first));
  die_.execute(mws(0, Iscm{.inverse = false, .init_s = true, .init_c = false, .transfer = true}, second));
  EXPECT_EQ(C(), want);
  EXPECT_EQ(S(), ref_.sensed(mws(0, kPlain, second), wls()));

  for (uint32_t b = 40; b < 43; ++b) fill(b, 0, 48, 0.985);
  std::vector<uint32_t> all(48);
  std::iota(all.begin(), all.end(), 0u);
  BitVector ors(ref_.bits(), false);
  for (uint32_t b = 40; b < 43; ++b) {
    MwsCmd c = intra_block(0, b, 0, all, Iscm{.inverse = false, .init_s = true, .init_c = b == 40, .transfer = true});
    ors |= ref_.sensed(c, wls());
    die_.execute(c);
  }
  EXPECT_EQ(C(), ors);
}

// The spec's example: four blocks, four pages each, C and D stored inverted;
// command 1 computes (C1+C3).(D2+D4), command 2 computes A1+(B1.B2.B3.B4).
//
// Naming: an MWS computes OR over blocks of AND within a block, so the only
// reading of the operand names that lets each expression be ONE command is
// "letter = block, digit = page (wordline)": B1.B2.B3.B4 is the AND of the four
// pages of block B (intra-block), A1 + (...) ORs in block A (inter-block); and
// with C, D stored inverted, an inverse MWS over {C: pages 1,3} and
// {D: pages 2,4} senses C1'C3' + D2'D4' and latches its NOT = (C1+C3).(D2+D4).
// (Reading "Xi = page X of block Bi" would need an AND across blocks, which no
// single MWS computes.) The four blocks are die blocks 4..7, pages 1..4 are
// wordlines 0..3.
//
// Transfer flag (die.hpp semantics): command 1 (inverse, init S, init C) leaves
// S = R1 and C = 0. Command 2 (no inits) evaluates S = S AND sensed = R1.R2.
// Only command 2 may transfer: C = 0 OR R1.R2. If command 1 also transferred,
// C would already hold R1 and command 2's transfer would give C = R1 OR R1.R2 = R1.
class SpecExample : public Functional {
 protected:
  static constexpr uint32_t A = 4, B = 5, Cb = 6, D = 7;
  void SetUp() override {
    for (uint32_t blk : {A, B, Cb, D})
      for (uint32_t page = 0; page < 4; ++page) {
        BitVector v = rnd(blk == B ? 0.85 : 0.5);
        logical_[blk][page] = v;
        program(die_, ref_, addr(0, blk, 0, page), (blk == Cb || blk == D) ? ~v : v);  // C and D stored inverted
      }
    auto& L = logical_;
    r1_ = L[Cb][0];
    r1_ |= L[Cb][2];
    BitVector d = L[D][1];
    d |= L[D][3];
    r1_ &= d;  // (C1+C3).(D2+D4)
    BitVector b = L[B][0];
    for (int i = 1; i < 4; ++i) b &= L[B][size_t(i)];
    r2_ = L[A][0];
    r2_ |= b;  // A1+(B1.B2.B3.B4)
    both_ = r1_;
    both_ &= r2_;
    ASSERT_GT(both_.popcount(), 0u);
    ASSERT_NE(both_, r1_);
    ASSERT_NE(both_, r2_);
  }
  MwsCmd cmd1(Iscm f) const { return mws(0, f, {slot(Cb, 0, {0, 2}), slot(D, 0, {1, 3})}); }
  MwsCmd cmd2(Iscm f) const { return mws(0, f, {slot(A, 0, {0}), slot(B, 0, {0, 1, 2, 3})}); }

  BitVector logical_[8][4];
  BitVector r1_, r2_, both_;
};

TEST_F(SpecExample, InverseCommandFirstAccumulatesBothResults) {
  die_.execute(cmd1(Iscm{.inverse = true, .init_s = true, .init_c = true, .transfer = false}));
  EXPECT_EQ(S(), r1_);
  EXPECT_EQ(C().popcount(), 0u);
  die_.execute(cmd2(Iscm{.inverse = false, .init_s = false, .init_c = false, .transfer = true}));
  EXPECT_EQ(S(), both_);
  EXPECT_EQ(C(), both_);  // (C1+C3).(D2+D4) . (A1+(B1.B2.B3.B4))
  // Through the byte interface too.
  Die other(p_, 42);
  Reference unused(ref_.bits());
  for (uint32_t blk : {A, B, Cb, D})
    for (uint32_t page = 0; page < 4; ++page)
      program(other, unused, addr(0, blk, 0, page), (blk == Cb || blk == D) ? ~logical_[blk][page] : logical_[blk][page]);
  other.execute_bytes(encode(cmd1(Iscm{.inverse = true, .init_s = true, .init_c = true, .transfer = false}), p_.geometry));
  other.execute_bytes(encode(cmd2(Iscm{.inverse = false, .init_s = false, .init_c = false, .transfer = true}), p_.geometry));
  EXPECT_EQ(other.latch(0, Latch::C), both_);
}

TEST_F(SpecExample, TransferOnTheFirstCommandWouldKeepOnlyTheFirstResult) {
  die_.execute(cmd1(Iscm{.inverse = true, .init_s = true, .init_c = true, .transfer = true}));
  die_.execute(cmd2(Iscm{.inverse = false, .init_s = false, .init_c = false, .transfer = true}));
  EXPECT_EQ(S(), both_);
  EXPECT_EQ(C(), r1_);  // R1 OR (R1.R2) = R1
}

TEST_F(SpecExample, InverseCommandSecondLosesTheEarlierResult) {
  die_.execute(cmd2(Iscm{.inverse = false, .init_s = true, .init_c = true, .transfer = false}));
  EXPECT_EQ(S(), r2_);
  // An inverse read that keeps S (to AND with the earlier result) is illegal...
  expect_command_error([&] { die_.execute(cmd1(Iscm{.inverse = true, .init_s = false, .init_c = false, .transfer = true})); },
                       "inverse-read mode must initialise the S-latch");
  EXPECT_EQ(S(), r2_);  // a rejected command changes nothing
  EXPECT_EQ(C().popcount(), 0u);
  // ...so it must re-initialise S, and the earlier result is gone: S = C = R1 only.
  die_.execute(cmd1(Iscm{.inverse = true, .init_s = true, .init_c = false, .transfer = true}));
  EXPECT_EQ(S(), r1_);
  EXPECT_EQ(C(), r1_);
  EXPECT_NE(C(), both_);
  // Had the first command transferred R2 to C, the second transfer ORs instead of ANDs: C = R2 + R1.
  die_.execute(cmd2(Iscm{.inverse = false, .init_s = true, .init_c = true, .transfer = true}));
  die_.execute(cmd1(Iscm{.inverse = true, .init_s = true, .init_c = false, .transfer = true}));
  BitVector r1_or_r2 = r1_;
  r1_or_r2 |= r2_;
  EXPECT_EQ(S(), r1_);
  EXPECT_EQ(C(), r1_or_r2);
}

TEST_F(Functional, DataOutReturnsTheCacheLatch) {
  fill(0, 0, 1);
  die_.execute(single_wordline(0, WordlineRef{0, 0, 0}, kPlain));
  auto bytes = ref_.page(0, 0, 0, 0).to_bytes();
  CommandResult all = die_.execute(DataOutCmd{0, 0, uint32_t(bytes.size())});
  EXPECT_EQ(all.data, bytes);
  CommandResult part = die_.execute(DataOutCmd{0, 100, 37});
  EXPECT_EQ(part.data, std::vector<uint8_t>(bytes.begin() + 100, bytes.begin() + 137));
}

TEST_F(Functional, LatchCopyAndPlanesAreIndependent) {
  fill(0, 0, 2);
  program(die_, ref_, addr(1, 0, 0, 0), rnd());
  die_.execute(single_wordline(0, WordlineRef{0, 0, 1}, kPlain));
  die_.execute(single_wordline(1, WordlineRef{0, 0, 0}, kPlain));
  EXPECT_EQ(C(), ref_.page(0, 0, 0, 1));
  EXPECT_EQ(die_.latch(1, Latch::C), ref_.page(1, 0, 0, 0));
  die_.execute(LatchCopyCmd{0, Latch::C, data_latch(2)});
  EXPECT_EQ(die_.latch(0, data_latch(2)), ref_.page(0, 0, 0, 1));
  die_.execute(single_wordline(0, WordlineRef{0, 0, 0}, kPlain));
  die_.execute(LatchCopyCmd{0, data_latch(2), Latch::S});
  EXPECT_EQ(S(), ref_.page(0, 0, 0, 1));
  EXPECT_EQ(C(), ref_.page(0, 0, 0, 0));
}

TEST_F(Functional, MlcPagesReadBackThroughNormalReads) {
  BitVector lo = rnd(), hi = rnd();
  ProgramCmd c;
  c.addr = addr(0, 50, 1, 3);
  c.mode = ProgramMode::Mlc;
  c.randomize = false;
  c.data = lo.to_bytes();
  auto h = hi.to_bytes();
  c.data.insert(c.data.end(), h.begin(), h.end());
  die_.execute(c);
  EXPECT_EQ(die_.read_page(addr(0, 50, 1, 3, 0)).data, lo.to_bytes());
  EXPECT_EQ(die_.read_page(addr(0, 50, 1, 3, 1)).data, hi.to_bytes());
}

}  // namespace
}  // namespace bitline::nand::test
