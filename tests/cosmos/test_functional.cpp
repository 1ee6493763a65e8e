// Functional mode of the Flash-Cosmos SSD: the dies store the data and every
// system's answer is checked against the CPU reference, on a small SSD
// (2 channels x 2 dies x 2 planes, 1 KiB pages).
#include "cosmos_test_util.hpp"

#include "core/rng.hpp"

#include <fmt/format.h>

#include <map>

namespace bitline::cosmos::test {
namespace {

using Copies = WriteOptions::Copies;

size_t hamming(const BitVector& a, const BitVector& b) {
  BitVector x = a;
  x ^= b;
  return x.popcount();
}

struct PointRun {
  ReadResult read;
  PreparedPoint prepared;
};

PointRun run_point(const EvalConfig& cfg, const Point& p, System s, bool functional, uint64_t seed) {
  CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, functional, seed);
  PointRun r;
  r.prepared = prepare(ssd, p, cfg.workload, s, seed);
  r.read = ssd.read(r.prepared.queries, s, r.prepared.popcount);
  return r;
}

void expect_exact(const PointRun& r) {
  ASSERT_EQ(r.read.results.size(), r.prepared.reference.size());
  ASSERT_EQ(r.read.popcounts.size(), r.prepared.reference.size());
  for (size_t i = 0; i < r.read.results.size(); ++i) {
    EXPECT_EQ(r.read.results[i].size(), r.prepared.reference[i].size());
    EXPECT_EQ(hamming(r.read.results[i], r.prepared.reference[i]), 0u) << "query " << i;
    EXPECT_EQ(r.read.popcounts[i], r.prepared.reference[i].popcount()) << "query " << i;
  }
}

std::string label(const Point& p, System s) { return fmt::format("{} {}={} on {}", p.workload, p.param, p.value, to_string(s)); }

TEST(Functional, ReducedWorkloadsStillSpanStringsBlocksAndColumns) {
  // What the functional checks below cover.
  EvalConfig cfg = small_config(false);
  cfg.workload = small_workload();
  auto pools_of = [&](const Point& p) {
    CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, false, 1);
    prepare(ssd, p, cfg.workload, System::Fc, 1);
    return ssd.firmware().pools();
  };
  auto bmi = pools_of({"bmi", "months", 2});
  ASSERT_EQ(bmi.size(), 1u);
  EXPECT_EQ(bmi[0].count, 60u);
  EXPECT_EQ(bmi[0].columns, 3);
  EXPECT_GE(bmi[0].blocks.size(), 2u);
  auto ims = pools_of({"ims", "images", 4200});
  ASSERT_EQ(ims.size(), 1u);
  EXPECT_EQ(ims[0].chunk_width, 3u);
  EXPECT_EQ(ims[0].columns, 66);
  EXPECT_GE(ims[0].blocks.size(), 2u);
  auto kcs = pools_of({"kcs", "k", 64});
  EXPECT_EQ(kcs.size(), size_t(cfg.workload.cliques + 1));
  for (const auto& p : kcs) EXPECT_EQ(p.columns, 3);
}

TEST(Functional, EveryWorkloadOnEverySystemMatchesTheCpuWithoutErrors) {
  EvalConfig cfg = small_config(false);
  cfg.workload = small_workload();
  for (const Point& p : small_points())
    for (System s : kAllSystems) {
      SCOPED_TRACE(label(p, s));
      PointRun r = run_point(cfg, p, s, true, 11);
      expect_exact(r);
      EXPECT_EQ(r.read.bit_errors, 0u);
      // The references are not degenerate: some result bits are set, some are not.
      for (const auto& ref : r.prepared.reference) {
        EXPECT_GT(ref.popcount(), 0u);
        EXPECT_LT(ref.popcount(), ref.size());
      }
    }
}

TEST(Functional, OspAndIspAreExactDespiteRawBitErrorsBecauseOfEcc) {
  EvalConfig cfg = small_config(true);
  cfg.workload = small_workload();
  uint64_t errors = 0;
  for (const Point& p : small_points())
    for (System s : {System::Osp, System::Isp}) {
      SCOPED_TRACE(label(p, s));
      PointRun r = run_point(cfg, p, s, true, 12);
      expect_exact(r);
      errors += r.read.bit_errors;
    }
  // Errors were injected (and corrected): ~1e-5 RBER over ~1e8 sensed cells.
  EXPECT_GT(errors, 0u);
}

TEST(Functional, FlashCosmosOnEspDataIsExactWithErrorsOn) {
  // ESP's RBER is ~1e-15: no error is expected in these few million cells.
  EvalConfig cfg = small_config(true);
  cfg.workload = small_workload();
  for (const Point& p : small_points()) {
    SCOPED_TRACE(label(p, System::Fc));
    PointRun r = run_point(cfg, p, System::Fc, true, 13);
    expect_exact(r);
  }
}

TEST(Functional, ParaBitOnRawSlcSeesErrorsWhenErrorsAreOn) {
  // No ECC and no randomisation: with an RBER of 1e-3 results are wrong.
  EvalConfig cfg = small_config(true);
  cfg.workload = small_workload();
  cfg.nand.reliability.rber_slc = 1e-3;
  Point p{"ims", "images", 10};
  PointRun r = run_point(cfg, p, System::ParaBit, true, 14);
  EXPECT_GT(r.read.bit_errors, 0u);
  EXPECT_GT(hamming(r.read.results[0], r.prepared.reference[0]), 0u);
}

TEST(Functional, FunctionalAndTimingOnlyModesGiveTheSameTimeAndEnergy) {
  EvalConfig cfg = small_config(true);
  cfg.workload = small_workload();
  for (const Point& p : small_points())
    for (System s : kAllSystems) {
      SCOPED_TRACE(label(p, s));
      PointRun f = run_point(cfg, p, s, true, 5);
      PointRun t = run_point(cfg, p, s, false, 5);
      EXPECT_TRUE(t.read.results.empty());
      EXPECT_EQ(f.read.timing.total, t.read.timing.total);
      EXPECT_EQ(f.read.energy.total().raw(), t.read.energy.total().raw());
      EXPECT_EQ(f.read.timing.sensings, t.read.timing.sensings);
      EXPECT_EQ(f.read.timing.events, t.read.timing.events);
      EXPECT_EQ(f.read.timing.channel_bytes, t.read.timing.channel_bytes);
      EXPECT_EQ(f.read.timing.pcie_bytes, t.read.timing.pcie_bytes);
      EXPECT_EQ(f.read.die_commands, t.read.die_commands);
      EXPECT_EQ(f.read.plan, t.read.plan);
      EXPECT_GT(t.read.timing.total.raw(), 0);
    }
}

TEST(Functional, SameSeedSameResults) {
  EvalConfig cfg = small_config(true);
  cfg.workload = small_workload();
  cfg.nand.reliability.rber_slc = 1e-3;  // ParaBit sees errors: they must repeat too
  Point p{"bmi", "months", 1};
  PointRun a = run_point(cfg, p, System::ParaBit, true, 21);
  PointRun b = run_point(cfg, p, System::ParaBit, true, 21);
  PointRun c = run_point(cfg, p, System::ParaBit, true, 22);
  ASSERT_EQ(a.read.results.size(), 1u);
  EXPECT_GT(a.read.bit_errors, 0u);
  EXPECT_EQ(a.read.bit_errors, b.read.bit_errors);
  EXPECT_TRUE(a.read.results[0] == b.read.results[0]);
  EXPECT_TRUE(a.prepared.reference[0] == b.prepared.reference[0]);
  EXPECT_EQ(a.read.timing.total, b.read.timing.total);
  // Another seed: other data.
  EXPECT_FALSE(a.prepared.reference[0] == c.prepared.reference[0]);
}

// ---- Arbitrary expressions on fc and parabit --------------------------------

BitVector random_vector(Rng& rng, size_t bits) {
  BitVector v(bits);
  for (auto& w : v.words()) w = rng.next();
  return v;
}

/// A random expression over `names`: nested AND/OR/NOT/XOR/NAND/NOR/XNOR.
std::string random_expr(Rng& rng, const std::vector<std::string>& names, int depth) {
  auto leaf = [&] {
    std::string n = names[rng.below(names.size())];
    return rng.chance(0.25) ? "NOT(" + n + ")" : n;
  };
  if (depth == 0 || rng.chance(0.25)) return leaf();
  static const char* kOps[] = {"AND", "OR", "NOT", "XOR", "NAND", "NOR", "XNOR"};
  std::string op = kOps[rng.below(7)];
  size_t arity = op == "NOT" ? 1 : (op == "XOR" || op == "XNOR") ? 2 : 2 + rng.below(std::min<size_t>(names.size(), 5) - 1);
  std::string s = op + "(";
  for (size_t i = 0; i < arity; ++i) {
    // Under AND/OR/NAND/NOR, mostly literals (the shapes the latches compute).
    bool literal_kid = (op != "XOR" && op != "XNOR" && op != "NOT") ? rng.chance(0.8) : rng.chance(0.4);
    s += (i ? ", " : "") + (literal_kid ? leaf() : random_expr(rng, names, depth - 1));
  }
  return s + ")";
}

struct ExprRig {
  std::unique_ptr<CosmosSsd> ssd;
  std::map<std::string, BitVector> values;
  std::vector<std::string> names;
};

/// 2..10 operands with random data, some grouped, some stored inverted or both.
ExprRig make_rig(const EvalConfig& cfg, Rng& rng, uint64_t seed) {
  ExprRig r;
  r.ssd = std::make_unique<CosmosSsd>(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, true, seed);
  const size_t bits = (9 * 1024 + 64) * 8;  // 10 pages (2 columns), the last one partial
  const size_t n = 2 + rng.below(9);
  for (size_t i = 0; i < n; ++i) {
    std::string name = fmt::format("v{}", i);
    WriteOptions o;
    o.mode = nand::ProgramMode::Esp;
    o.randomize = false;
    uint64_t g = rng.below(4);
    o.group = g == 3 ? "" : fmt::format("g{}", g);  // three shared groups, or a group of its own
    uint64_t c = rng.below(4);
    o.copies = c < 2 ? Copies::Normal : c == 2 ? Copies::Inverted : Copies::Both;
    BitVector v = random_vector(rng, bits);
    r.ssd->write(name, v, o);
    r.values.emplace(name, std::move(v));
    r.names.push_back(name);
  }
  return r;
}

TEST(Functional, ArbitraryExpressionsOnFcAndParaBitEqualTheCpu) {
  EvalConfig cfg = small_config(false);
  Rng rng(2024);
  std::map<System, int> computed, tried;
  for (int setup = 0; setup < 60; ++setup) {
    ExprRig rig = make_rig(cfg, rng, 100 + uint64_t(setup));
    for (int k = 0; k < 12; ++k) {
      std::string text = random_expr(rng, rig.names, 1 + int(rng.below(3)));
      Expr e = parse_expr(text);
      BitVector want = evaluate(e, rig.values);
      for (System s : {System::Fc, System::ParaBit}) {
        SCOPED_TRACE(fmt::format("{} on {} (setup {})", text, to_string(s), setup));
        ++tried[s];
        ReadResult r;
        try {
          r = rig.ssd->read({e}, s, true);
        } catch (const ModelError& err) {
          // Forms the latches cannot compute are refused with an explanation.
          EXPECT_NE(std::string(err.what()).find("cannot compute"), std::string::npos) << err.what();
          continue;
        }
        ++computed[s];
        ASSERT_EQ(r.results.size(), 1u);
        EXPECT_EQ(hamming(r.results[0], want), 0u) << "plan: " << r.plan;
        EXPECT_EQ(r.popcounts[0], want.popcount());
        EXPECT_EQ(r.bit_errors, 0u);
      }
    }
  }
  RecordProperty("fc_computed", fmt::format("{} of {}", computed[System::Fc], tried[System::Fc]));
  RecordProperty("parabit_computed", fmt::format("{} of {}", computed[System::ParaBit], tried[System::ParaBit]));
  // Most random forms are computable (the generator favours latch-friendly shapes).
  EXPECT_GT(computed[System::Fc], tried[System::Fc] / 2) << computed[System::Fc] << " of " << tried[System::Fc];
  EXPECT_GT(computed[System::ParaBit], tried[System::ParaBit] / 3) << computed[System::ParaBit] << " of " << tried[System::ParaBit];
  // ParaBit computes nothing Flash-Cosmos cannot.
  EXPECT_LE(computed[System::ParaBit], computed[System::Fc]);
}

TEST(Functional, EveryOperationOnFixedLayouts) {
  // Every operation on layouts that must be computable, on fc and parabit.
  EvalConfig cfg = small_config(false);
  CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, true, 7);
  Rng rng(77);
  const size_t bits = (9 * 1024 + 64) * 8;
  std::map<std::string, BitVector> values;
  auto put = [&](const std::string& name, const std::string& group, Copies copies) {
    WriteOptions o;
    o.group = group;
    o.copies = copies;
    BitVector v = random_vector(rng, bits);
    ssd.write(name, v, o);
    values.emplace(name, std::move(v));
  };
  for (int i = 0; i < 4; ++i) put(fmt::format("a{}", i), "ga", Copies::Normal);    // one block, normal
  for (int i = 0; i < 4; ++i) put(fmt::format("b{}", i), "", Copies::Normal);      // four blocks
  for (int i = 0; i < 4; ++i) put(fmt::format("c{}", i), "gc", Copies::Inverted);  // one block, inverted
  for (int i = 0; i < 3; ++i) put(fmt::format("d{}", i), "gd", Copies::Both);
  const char* exprs[] = {"AND(a0, a1, a2, a3)",
                         "OR(b0, b1, b2, b3)",
                         "OR(a0, a1, a2, a3)",
                         "OR(c0, c1, c2, c3)",
                         "OR(d0, d1, d2)",
                         "NOT(a0)",
                         "NOT(c0)",
                         "c1",
                         "NAND(a0, a1, a2)",
                         "NAND(a0, b0)",
                         "NOR(b0, b1, b2)",
                         "NOR(c0, c1, c2, c3)",
                         "NOR(b0, b1, b2, b3, a0, a1)",
                         "XOR(a0, b0)",
                         "XNOR(a0, b0)",
                         "XOR(AND(a0, a1), AND(b0, b1))",
                         "XOR(NOT(a0), c0)",
                         "OR(AND(a0, a1, a2), b0)",
                         "OR(AND(a0, a1), AND(b0, b1), b2)",
                         "AND(a0, NOT(c0), d0, NOT(d1))",
                         "XNOR(OR(b0, b1), a0)",
                         "XOR(XOR(a0, b0), b1)",
                         "NOT(XOR(a0, a1))",
                         "AND(a0, a0, a1)"};
  for (const char* text : exprs) {
    Expr e = parse_expr(text);
    BitVector want = evaluate(e, values);
    for (System s : {System::Fc, System::ParaBit}) {
      SCOPED_TRACE(fmt::format("{} on {}", text, to_string(s)));
      ReadResult r = ssd.read({e}, s, false);
      ASSERT_EQ(r.results.size(), 1u);
      EXPECT_EQ(hamming(r.results[0], want), 0u) << "plan: " << r.plan;
    }
  }
}

TEST(Functional, SeveralQueriesInOneReadKeepTheirOrder) {
  EvalConfig cfg = small_config(false);
  CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, true, 3);
  Rng rng(5);
  const size_t bits = 4 * 1024 * 8;
  std::map<std::string, BitVector> values;
  for (const char* n : {"x", "y", "z"}) {
    WriteOptions o;
    o.group = "g";
    o.copies = Copies::Both;
    BitVector v = random_vector(rng, bits);
    ssd.write(n, v, o);
    values.emplace(n, std::move(v));
  }
  std::vector<Expr> qs = {parse_expr("AND(x, y)"), parse_expr("OR(x, y, z)"), parse_expr("XOR(y, z)"), parse_expr("NOT(z)")};
  for (System s : kAllSystems) {
    SCOPED_TRACE(to_string(s));
    ReadResult r = ssd.read(qs, s, true);
    ASSERT_EQ(r.results.size(), qs.size());
    for (size_t i = 0; i < qs.size(); ++i) {
      BitVector want = evaluate(qs[i], values);
      EXPECT_EQ(hamming(r.results[i], want), 0u) << qs[i].to_string();
      EXPECT_EQ(r.popcounts[i], want.popcount());
    }
  }
}

}  // namespace
}  // namespace bitline::cosmos::test
