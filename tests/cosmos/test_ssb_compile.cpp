// The SSB query planner (cosmos/ssb/compile, index): predicate covers exhaustively against SQL's truth for small bit
// widths (every operator, every constant), the same predicates through the chip model on every system, sums and
// products against integer arithmetic, and the limits of every plan (inter-block MWS block count, wordlines).
#include "cosmos/ssb/answer.hpp"
#include "cosmos/ssb/compile.hpp"
#include "cosmos/ssb/index.hpp"
#include "cosmos_test_util.hpp"

#include <fmt/format.h>

#include <set>
#include <variant>

#include "core/rng.hpp"

namespace bitline::cosmos::ssb {
namespace {

using test::small_config;

bool covered(const std::vector<Cube>& cubes, uint32_t code) {
  return std::any_of(cubes.begin(), cubes.end(), [&](const Cube& c) { return c.contains(code); });
}

Predicate make(const Column& c, CmpOp op, std::vector<Value> v) {
  Predicate p;
  p.column = &c;
  p.op = op;
  p.values = std::move(v);
  return p;
}

/// Every predicate of one operator over a column's constants (between: every ordered pair; in: pairs and triples).
std::vector<Predicate> every_predicate(const Column& c, const std::vector<Value>& constants) {
  std::vector<Predicate> out;
  for (CmpOp op : {CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge})
    for (const auto& v : constants) out.push_back(make(c, op, {v}));
  for (size_t a = 0; a < constants.size(); ++a)
    for (size_t b = a; b < constants.size(); ++b) {
      out.push_back(make(c, CmpOp::Between, {constants[a], constants[b]}));
      out.push_back(make(c, CmpOp::In, {constants[a], constants[b]}));
      if (b + 2 < constants.size()) out.push_back(make(c, CmpOp::In, {constants[a], constants[b], constants[b + 2]}));
    }
  return out;
}

Column measure_column(int width, int64_t min, int64_t max) {
  Column c;
  c.name = fmt::format("m{}_{}_{}", width, min, max);
  c.measure = true;
  c.min = min;
  c.max = max;
  c.width = width;
  c.code = 4;
  return c;
}

TEST(SsbCover, IntervalCoverIsExactDisjointAndAtMostTwoPerBit) {
  for (int w = 1; w <= 7; ++w)
    for (uint64_t lo = 0; lo < (1u << w); ++lo)
      for (uint64_t hi = lo; hi < (1u << w); ++hi) {
        const auto cubes = interval_cover(lo, hi, w);
        ASSERT_LE(int(cubes.size()), std::max(1, 2 * (w - 1))) << w << " [" << lo << ", " << hi << "]";
        for (uint32_t x = 0; x < (1u << w); ++x) {
          int n = 0;
          for (const Cube& c : cubes) n += c.contains(x);
          ASSERT_EQ(n, x >= lo && x <= hi ? 1 : 0) << w << " [" << lo << ", " << hi << "] at " << x;
        }
      }
}

TEST(SsbCover, SetCoverCoversTheOnCodesWithinOnAndDontCare) {
  auto check = [](const std::vector<uint8_t>& flags, int w) {
    const auto cubes = set_cover(flags, w);
    for (uint32_t x = 0; x < flags.size(); ++x) {
      if (flags[x] == 1) {
        ASSERT_TRUE(covered(cubes, x)) << "misses " << x;
      }
      if (flags[x] == 0) {
        ASSERT_FALSE(covered(cubes, x)) << "takes " << x;
      }
    }
  };
  for (int w = 1; w <= 3; ++w) {  // every pattern of on / off / don't care
    const size_t n = size_t(1) << w;
    size_t patterns = 1;
    for (size_t i = 0; i < n; ++i) patterns *= 3;
    for (size_t p = 0; p < patterns; ++p) {
      std::vector<uint8_t> flags(n);
      for (size_t i = 0, x = p; i < n; ++i, x /= 3) flags[i] = uint8_t(x % 3);
      check(flags, w);
    }
  }
  Rng rng(5);
  for (int w = 4; w <= 10; ++w)
    for (int t = 0; t < 60; ++t) {
      std::vector<uint8_t> flags(size_t(1) << w);
      for (auto& f : flags) f = uint8_t(rng.below(3));
      check(flags, w);
    }
}

// Every operator and every constant on measures of 1..5 bits whose values fill or do not fill the field.
TEST(SsbCover, MeasurePredicatesEqualSqlForEveryOperatorAndConstant) {
  for (int w = 1; w <= 5; ++w)
    for (int64_t min : {0, 1})
      for (int64_t max : {(int64_t(1) << w) - 1, (int64_t(1) << w) - 2}) {
        if (max < min) continue;
        const Column c = measure_column(w, min, max);
        std::vector<Value> constants;
        for (int64_t v = min; v <= max; ++v) constants.emplace_back(v);
        for (const auto& p : every_predicate(c, constants)) {
          const auto cubes = predicate_cover(p);
          for (int64_t v = min; v <= max; ++v)
            ASSERT_EQ(covered(cubes, uint32_t(v)), p.holds(Value(v)))
                << c.name << " " << comparison_ops().names()[size_t(p.op)] << " " << to_string(p.values[0]) << " at " << v;
        }
      }
}

// Dictionary attributes (text compared as text, hierarchical codes with don't-cares), every operator and constant.
TEST(SsbCover, AttributePredicatesEqualSqlForEveryOperatorAndConstant) {
  for (const char* name : {"d_year", "c_region", "p_mfgr", "c_nation", "p_category", "d_weeknuminyear", "d_yearmonth"}) {
    SCOPED_TRACE(name);
    const Column& c = *find_column(name);
    for (const auto& p : every_predicate(c, c.values)) {
      const auto cubes = predicate_cover(p);
      for (size_t i = 0; i < c.values.size(); ++i) ASSERT_EQ(covered(cubes, c.codes[i]), p.holds(c.values[i])) << to_string(c.values[i]);
      // The equality-bitmap form, where the planner picks it, means the same rows.
      const Factor f = compile_predicate(p, CompileOptions{});
      for (size_t i = 0; i < c.values.size(); ++i) {
        const uint32_t code = c.codes[i] << c.lo_bit;
        const bool any = std::any_of(f.terms.begin(), f.terms.end(), [&](const Term& t) { return t.meaning.contains(code); });
        ASSERT_EQ(any, p.holds(c.values[i])) << to_string(c.values[i]);
      }
    }
  }
}

TEST(SsbCover, TheSpecificationsRangesCompileToFewTerms) {
  // Q1.1: lo_quantity < 25 on 6 bits, 0 a don't-care: 00xxxx | 010xxx | 011000.
  const Column& q = *find_column("lo_quantity");
  const auto c = predicate_cover(make(q, CmpOp::Lt, {Value(int64_t(25))}));
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], (Cube{0b110000, 0b000000}));
  EXPECT_EQ(c[1], (Cube{0b111000, 0b010000}));
  EXPECT_EQ(c[2], (Cube{0b111111, 0b011000}));
  // Q2.2's eight brands of one category: two cubes of the brand field.
  const Column& b = *find_column("p_brand1");
  EXPECT_EQ(predicate_cover(make(b, CmpOp::Between, {Value(std::string("MFGR#2221")), Value(std::string("MFGR#2228"))})).size(), 2u);
  // An equality on an equality-encoded attribute is one bitmap.
  const Factor r = compile_predicate(make(*find_column("c_region"), CmpOp::Eq, {Value(std::string("ASIA"))}), CompileOptions{});
  ASSERT_EQ(r.terms.size(), 1u);
  EXPECT_EQ(r.terms[0].literals(), 1);
  EXPECT_EQ(r.terms[0].eqs.size(), 1u);
}

/// A LINEORDER of random discounts and quantities only (the measure codes), `n` rows.
Data measure_rows(size_t n, uint64_t seed) {
  Data d;
  Rng r(seed);
  for (size_t i = 0; i < n; ++i) {
    d.lineorder.orderkey.push_back(uint32_t(i + 1));
    d.lineorder.discount.push_back(uint8_t(r.below(11)));
    d.lineorder.quantity.push_back(uint8_t(1 + r.below(50)));
  }
  return d;
}

/// A layout of the two measures with `lanes` lanes (fc) or one, with inverses where the system keeps them.
IndexLayout measure_layout(System s, int64_t rows, int lanes) {
  IndexLayout L;
  L.system = s;
  L.rows = rows;
  L.max_terms = lanes;
  L.lanes.assign(codes().size(), 0);
  L.bitmaps.assign(codes().size(), {});
  for (const char* name : {"lo_discount", "lo_quantity"}) {
    const Column& c = *find_column(name);
    L.lanes[size_t(c.code)] = s == System::Fc ? lanes : 1;
    for (int b = 0; b < c.width; ++b) L.bitmaps[size_t(c.code)].push_back(Bitmap{Bitmap::Kind::Slice, b, {}});
    if (s == System::Fc || s == System::ParaBit)
      for (int b = 0; b < c.width; ++b) L.bitmaps[size_t(c.code)].push_back(Bitmap{Bitmap::Kind::Inverse, b, {}});
  }
  return L;
}

// The predicates through the dies' bits: every operator and constant of lo_discount (4 bits, values 0..10) and AND
// of ranges of lo_discount and lo_quantity (AND of inter-block ORs), on every system, against the CPU.
TEST(SsbInFlash, PredicatesComputedByTheChipEqualTheCpu) {
  const size_t n = 4096;
  const Data d = measure_rows(n, 11);
  const Column& disc = *find_column("lo_discount");
  const Column& qty = *find_column("lo_quantity");
  std::vector<std::vector<Predicate>> filters;
  std::vector<Value> constants;
  for (int64_t v = disc.min; v <= disc.max; ++v) constants.emplace_back(v);
  for (auto& p : every_predicate(disc, constants)) filters.push_back({p});
  for (int64_t a : {0, 3, 7})
    for (int64_t q : {2, 25, 37, 50})
      filters.push_back({make(disc, CmpOp::Between, {Value(a), Value(a + 3)}), make(qty, CmpOp::Lt, {Value(q)})});
  const CompileOptions o{4, 8};
  for (System s : kAllSystems) {
    SCOPED_TRACE(to_string(s));
    const EvalConfig cfg = small_config(false);
    CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, true, 1);
    const IndexLayout L = measure_layout(s, int64_t(n), o.max_terms);
    const IndexData bits = build_bitmaps(d, L);
    write_index(ssd, L, &bits);
    std::vector<Expr> reads;
    std::vector<size_t> which;
    for (size_t i = 0; i < filters.size(); ++i) {
      const Filter f = compile_filter(filters[i], o);
      if (f.none || f.factors.empty()) continue;  // no row / every row: nothing to read
      reads.push_back(L.render(f.factors));
      which.push_back(i);
    }
    ASSERT_GT(reads.size(), 150u);
    const ReadResult rr = ssd.read(reads, s, true);
    for (size_t k = 0; k < reads.size(); ++k) {
      const auto& ps = filters[which[k]];
      for (size_t r = 0; r < n; ++r) {
        bool want = true;
        for (const auto& p : ps) want &= p.holds(Value(int64_t(p.column == &disc ? d.lineorder.discount[r] : d.lineorder.quantity[r])));
        ASSERT_EQ(rr.results[k].get(r), want) << ps[0].text << " " << comparison_ops().names()[size_t(ps[0].op)] << " row " << r;
      }
    }
  }
}

// SUM(A x B), SUM(A - B) and SUM(A) over a filter: the slice products counted by the host (flash aggregation) and
// the fetched slices (host aggregation), computed by the chip, against integer arithmetic over the rows.
TEST(SsbInFlash, SumsAndProductsEqualIntegerArithmetic) {
  const size_t n = 8192;
  const Data d = measure_rows(n, 12);
  const Column& disc = *find_column("lo_discount");
  const Column& qty = *find_column("lo_quantity");
  struct Case {
    std::vector<ProductTerm> sum;
    std::function<int64_t(int64_t, int64_t)> row;  // (discount, quantity) -> the row's term
  };
  const Case cases[] = {
      {{{1, {&disc, &qty}}}, [](int64_t a, int64_t b) { return a * b; }},
      {{{1, {&qty}}, {-1, {&disc}}}, [](int64_t a, int64_t b) { return b - a; }},
      {{{1, {&disc}}}, [](int64_t a, int64_t) { return a; }},
  };
  const CompileOptions o{4, 8};
  for (Aggregation agg : {Aggregation::Flash, Aggregation::Host})
    for (const auto& cs : cases) {
      QuerySpec q;
      q.name = "sum";
      q.where = {make(qty, CmpOp::Between, {Value(int64_t(5)), Value(int64_t(41))}), make(disc, CmpOp::Ne, {Value(int64_t(4))})};
      q.sum = cs.sum;
      const QueryPlan p = plan_query(q, agg, o);
      ASSERT_EQ(p.strategy, agg);
      const EvalConfig cfg = small_config(false);
      CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, true, 1);
      const IndexLayout L = plan_layout(System::Fc, {p}, int64_t(n), o);
      const IndexData bits = build_bitmaps(d, L);
      write_index(ssd, L, &bits);
      std::vector<Expr> reads;
      for (const auto& op : p.ops) reads.push_back(L.render(op.expr));
      const ReadResult rr = ssd.read(reads, System::Fc, true);
      const Answer a = assemble_answer(p, results_of(rr.results, int64_t(n)), int64_t(n));
      __int128 want = 0;
      int64_t rows = 0;
      for (size_t r = 0; r < n; ++r) {
        const int64_t dv = d.lineorder.discount[r], qv = d.lineorder.quantity[r];
        if (qv < 5 || qv > 41 || dv == 4) continue;
        want += cs.row(dv, qv);
        ++rows;
      }
      ASSERT_EQ(a.rows.size(), 1u);
      EXPECT_EQ(a.rows[0].count, rows);
      EXPECT_TRUE(a.rows[0].sum == want) << aggregations().names()[size_t(agg)] << " " << int64_t(a.rows[0].sum) << " != " << int64_t(want);
      EXPECT_EQ(a, reference_answer(d, q));
    }
}

/// Every read of every shipped query, planned for `s` on the paper's SSD with the planner limited to `blocks` per
/// sensing: each MWS within the limits (slots <= blocks in distinct blocks, at most 48 wordlines each), and legal.
void check_limits(System s, int blocks, Aggregation agg) {
  EvalConfig cfg = test::paper_config();
  cfg.nand.command.max_inter_block = blocks;
  const CompileOptions o{blocks, 8};
  std::vector<QuerySpec> qs = load_query_dir(std::string(BITLINE_SOURCE_DIR) + "/configs/ssb");
  std::vector<QueryPlan> plans;
  for (const auto& q : qs)
    if (agg == Aggregation::Host || q.name == "Q1.1" || q.name == "Q2.3" || q.name == "Q3.4") plans.push_back(plan_query(q, agg, o));
  CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, false, 1);
  const IndexLayout L = plan_layout(s, plans, 60000, o);
  write_index(ssd, L, nullptr);
  const PlanLimits lim = ssd.limits(s);
  int mws = 0, wide = 0;
  for (const auto& p : plans)
    for (const auto& op : p.ops) {
      const Plan plan = plan_expression(L.render(op.expr), ssd.firmware(), lim);
      const ColumnCommands cc = resolve(plan, ssd.firmware(), 0);
      for (size_t i = 0; i < plan.ops.size(); ++i) {
        const auto& x = plan.ops[i];
        if (x.kind != OpPlan::Kind::Mws) continue;
        ++mws;
        ASSERT_LE(int(x.slots.size()), lim.blocks) << p.spec->name;
        ASSERT_LE(x.wordlines(), lim.wordlines) << p.spec->name;
        wide += x.slots.size() > 1;
        std::set<uint32_t> blocks_sensed;
        for (const auto& sl : std::get<nand::MwsCmd>(cc.commands[i]).slots) blocks_sensed.insert(sl.block);
        ASSERT_EQ(blocks_sensed.size(), x.slots.size()) << p.spec->name << ": two slots in one block";
        ASSERT_NO_THROW(nand::check(cc.commands[i], cfg.nand.geometry, cfg.nand.command));
      }
    }
  EXPECT_GT(mws, 100);
  if (s == System::Fc && blocks > 1) {
    EXPECT_GT(wide, 0);  // the range predicates do use inter-block MWS
  }
  if (s == System::ParaBit) {
    EXPECT_EQ(wide, 0);
  }
}

TEST(SsbPlanLimits, EveryMwsStaysWithinTheInterBlockLimit) {
  for (int blocks : {4, 2, 1}) {
    SCOPED_TRACE(blocks);
    check_limits(System::Fc, blocks, Aggregation::Host);
    check_limits(System::Fc, blocks, Aggregation::Flash);
  }
  check_limits(System::ParaBit, 4, Aggregation::Host);
}

TEST(SsbPlanLimits, Q11FilterIsThreeSensingsPerPageColumn) {
  const QuerySpec q = load_query(std::string(BITLINE_SOURCE_DIR) + "/configs/ssb/q1.1.yaml");
  const CompileOptions o{4, 8};
  const QueryPlan p = plan_query(q, Aggregation::Host, o);
  ASSERT_EQ(p.ops[0].use, FlashOp::Use::Filter);
  EvalConfig cfg = test::paper_config();
  CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, false, 1);
  const IndexLayout L = plan_layout(System::Fc, {p}, 60000, o);
  write_index(ssd, L, nullptr);
  // d_year = 1993 (one equality bitmap), lo_discount in [1, 3] (2 terms), lo_quantity < 25 (3 terms): three MWS, the
  // ranges as inter-block MWS over the replicas of their slices (lanes), ANDed in the S-latch.
  const Plan plan = plan_expression(L.render(p.ops[0].expr), ssd.firmware(), ssd.limits(System::Fc));
  ASSERT_EQ(plan.ops.size(), 3u) << plan.describe();
  std::multiset<size_t> slots;
  for (const auto& x : plan.ops) slots.insert(x.slots.size());
  EXPECT_EQ(slots, (std::multiset<size_t>{1, 2, 3}));
  EXPECT_EQ(L.lanes[size_t(find_column("lo_quantity")->code)], 3);
  // 28 slice fetches follow: 24 of lo_extendedprice, 4 of lo_discount.
  EXPECT_EQ(p.ops.size(), 29u);
}

}  // namespace
}  // namespace bitline::cosmos::ssb
