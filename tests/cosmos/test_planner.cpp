// The expression planner (cosmos/planner): which sensings a bitwise expression
// over co-located operands compiles to, for Flash-Cosmos and ParaBit limits.
#include "cosmos_test_util.hpp"

#include <fmt/format.h>

#include <set>
#include <variant>

namespace bitline::cosmos::test {
namespace {

using Copies = WriteOptions::Copies;

constexpr PlanLimits kFc{48, 4};
constexpr PlanLimits kParaBit{1, 1};

/// A firmware on the paper's SSD; every operand is one 16 KiB page.
class PlannerTest : public ::testing::Test {
 protected:
  nand::NandParams nand_ = default_params<nand::NandParams>();
  ssd::SsdParams ssd_ = default_params<ssd::SsdParams>();
  Firmware fw_{nand_, ssd_};

  void put(const std::string& name, const std::string& group = "", Copies copies = Copies::Normal, uint32_t lane = 0) {
    WriteOptions o;
    o.group = group;
    o.copies = copies;
    o.lane = lane;
    fw_.write(name, 16384, o);
  }
  /// Writes n operands "<prefix>0".. into `group` (empty: one group each) and returns their names.
  std::vector<std::string> put_many(const std::string& prefix, int n, const std::string& group, Copies copies = Copies::Normal) {
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i) {
      names.push_back(fmt::format("{}{}", prefix, i));
      put(names.back(), group, copies);
    }
    return names;
  }
  Plan plan(const std::string& text, const PlanLimits& lim = kFc) {
    Plan p = plan_expression(parse_expr(text), fw_, lim);
    check_commands(p, lim);
    return p;
  }
  /// The resolved commands of every plan are legal die commands that match the plan.
  void check_commands(const Plan& p, const PlanLimits& lim) {
    for (int64_t page : {int64_t(0), int64_t(77)}) {
      ColumnCommands cc = resolve(p, fw_, page);
      ASSERT_EQ(cc.commands.size(), p.ops.size());
      PlaneLoc pl = fw_.plane_loc(page % fw_.planes());
      EXPECT_EQ(cc.die, pl.die);
      EXPECT_EQ(cc.plane, pl.plane);
      for (size_t i = 0; i < p.ops.size(); ++i) {
        const auto& c = cc.commands[i];
        EXPECT_NO_THROW(nand::check(c, nand_.geometry, nand_.command)) << nand::describe(c);
        if (p.ops[i].kind == OpPlan::Kind::Xor) {
          EXPECT_TRUE(std::holds_alternative<nand::XorCmd>(c));
          continue;
        }
        ASSERT_TRUE(std::holds_alternative<nand::MwsCmd>(c));
        const auto& m = std::get<nand::MwsCmd>(c);
        EXPECT_EQ(m.iscm, p.ops[i].iscm);
        ASSERT_EQ(m.slots.size(), p.ops[i].slots.size());
        EXPECT_LE(int(m.slots.size()), lim.blocks);
        std::set<std::pair<uint32_t, uint32_t>> strings;
        for (size_t s = 0; s < m.slots.size(); ++s) {
          EXPECT_EQ(m.slots[s].pbm.count(), p.ops[i].slots[s].offsets.size());
          EXPECT_LE(int(m.slots[s].pbm.count()), lim.wordlines);
          strings.insert({m.slots[s].block, m.slots[s].subblock});
        }
        // Inter-block MWS: every slot senses a different block.
        std::set<uint32_t> blocks;
        for (const auto& s : m.slots) blocks.insert(s.block);
        EXPECT_EQ(blocks.size(), m.slots.size());
      }
    }
  }
  static int sensings(const Plan& p) {
    int n = 0;
    for (const auto& op : p.ops) n += op.kind == OpPlan::Kind::Mws;
    return n;
  }
  static int xors(const Plan& p) {
    int n = 0;
    for (const auto& op : p.ops) n += op.kind == OpPlan::Kind::Xor;
    return n;
  }
};

std::string call(const std::string& op, const std::vector<std::string>& args) {
  std::string s = op + "(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + ")";
}

nand::Iscm iscm(bool inverse, bool init_s, bool init_c, bool transfer) { return nand::Iscm{inverse, init_s, init_c, transfer}; }

TEST_F(PlannerTest, AndOfOneToHundredOperandsInOneGroup) {
  for (int n = 1; n <= 100; ++n) {
    SCOPED_TRACE(n);
    fw_ = Firmware(nand_, ssd_);
    auto names = put_many("x", n, "g");
    Plan p = plan(call("AND", names));
    const int expect = (n + 47) / 48;
    ASSERT_EQ(int(p.ops.size()), expect);
    EXPECT_EQ(sensings(p), expect);
    EXPECT_FALSE(p.invert_output);
    int wls = 0;
    for (int i = 0; i < expect; ++i) {
      const OpPlan& op = p.ops[size_t(i)];
      EXPECT_EQ(op.kind, OpPlan::Kind::Mws);
      ASSERT_EQ(op.slots.size(), 1u);  // intra-block MWS
      EXPECT_EQ(op.slots[0].chunk, uint32_t(i));
      EXPECT_EQ(op.wordlines(), i + 1 < expect ? 48 : n - 48 * (expect - 1));
      // S accumulates across sensings; only the last moves S to C.
      EXPECT_EQ(op.iscm, iscm(false, i == 0, i == 0, i + 1 == expect));
      wls += op.wordlines();
    }
    EXPECT_EQ(wls, n);
  }
}

TEST_F(PlannerTest, AndAcrossGroupsAccumulatesInTheSLatch) {
  put_many("a", 3, "ga");
  put_many("b", 2, "gb");
  Plan p = plan("AND(a0, b0, a1, b1, a2)");
  ASSERT_EQ(sensings(p), 2);
  EXPECT_EQ(p.ops[0].wordlines() + p.ops[1].wordlines(), 5);
  EXPECT_EQ(p.ops[0].iscm, iscm(false, true, true, false));
  EXPECT_EQ(p.ops[1].iscm, iscm(false, false, false, true));
}

TEST_F(PlannerTest, OrOfFourGroupsIsOneInterBlockMws) {
  auto names = put_many("x", 4, "");
  Plan p = plan(call("OR", names));
  ASSERT_EQ(p.ops.size(), 1u);
  const OpPlan& op = p.ops[0];
  EXPECT_EQ(op.slots.size(), 4u);
  EXPECT_EQ(op.wordlines(), 1);
  EXPECT_EQ(op.iscm, iscm(false, true, true, true));
  std::set<uint32_t> pools;
  for (const auto& s : op.slots) pools.insert(s.pool);
  EXPECT_EQ(pools.size(), 4u);
  EXPECT_FALSE(p.invert_output);
}

TEST_F(PlannerTest, OrOfSixGroupsNeedsTwoSensingsUnderThePowerLimit) {
  auto names = put_many("x", 6, "");
  Plan p = plan(call("OR", names));
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_EQ(p.ops[0].slots.size(), 4u);
  EXPECT_EQ(p.ops[1].slots.size(), 2u);
  // C accumulates the OR: initialised once, S -> C after each sensing.
  EXPECT_EQ(p.ops[0].iscm, iscm(false, true, true, true));
  EXPECT_EQ(p.ops[1].iscm, iscm(false, true, false, true));
  // With a power limit of 6 blocks it is one sensing.
  Plan p6 = plan_expression(parse_expr(call("OR", names)), fw_, PlanLimits{48, 6});
  EXPECT_EQ(p6.ops.size(), 1u);
}

TEST_F(PlannerTest, OrWithinOneGroupUsesDeMorganOverInvertedCopies) {
  for (int n : {2, 4, 48, 49, 100}) {
    SCOPED_TRACE(n);
    fw_ = Firmware(nand_, ssd_);
    auto names = put_many("x", n, "g", Copies::Inverted);
    Plan p = plan(call("OR", names));
    const int expect = (n + 47) / 48;
    ASSERT_EQ(sensings(p), expect);
    EXPECT_FALSE(p.invert_output);
    for (size_t i = 0; i < p.ops.size(); ++i) {
      // NOT(AND(x')) in inverse mode, each chunk ORed into C.
      EXPECT_EQ(p.ops[i].iscm, iscm(true, true, i == 0, true));
      ASSERT_EQ(p.ops[i].slots.size(), 1u);
      EXPECT_TRUE(fw_.pool(p.ops[i].slots[0].pool).inverted);
    }
  }
}

TEST_F(PlannerTest, OrWithBothCopiesPicksTheFewestSensings) {
  // One group: De Morgan (1 inverse MWS) beats 4 sensings of the normal copies.
  auto g = put_many("g", 4, "grp", Copies::Both);
  Plan p = plan(call("OR", g));
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_TRUE(p.ops[0].iscm.inverse);
  EXPECT_EQ(p.ops[0].wordlines(), 4);
  // Four groups: one inter-block MWS of the normal copies beats 4 inverse reads.
  auto s = put_many("s", 4, "", Copies::Both);
  Plan q = plan(call("OR", s));
  ASSERT_EQ(q.ops.size(), 1u);
  EXPECT_FALSE(q.ops[0].iscm.inverse);
  EXPECT_EQ(q.ops[0].slots.size(), 4u);
}

TEST_F(PlannerTest, OrOfNormalCopiesInOneGroupIsOneSensingPerOperand) {
  // Without inverted copies the operands of one block cannot be ORed in one sensing.
  auto names = put_many("x", 5, "g");
  Plan p = plan(call("OR", names));
  EXPECT_EQ(sensings(p), 5);
  for (const auto& op : p.ops) EXPECT_TRUE(op.iscm.transfer);
}

TEST_F(PlannerTest, NotIsAnInverseRead) {
  put("x");
  Plan p = plan("NOT(x)");
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].iscm, iscm(true, true, true, true));
  EXPECT_EQ(p.ops[0].wordlines(), 1);
  EXPECT_FALSE(p.invert_output);
  EXPECT_FALSE(fw_.pool(p.ops[0].slots[0].pool).inverted);

  // With an inverted copy: a plain read of it.
  put("y", "", Copies::Inverted);
  Plan q = plan("NOT(y)");
  ASSERT_EQ(q.ops.size(), 1u);
  EXPECT_FALSE(q.ops[0].iscm.inverse);
  EXPECT_TRUE(fw_.pool(q.ops[0].slots[0].pool).inverted);
  // And y itself (only its complement stored): an inverse read of the complement.
  Plan r = plan("y");
  ASSERT_EQ(r.ops.size(), 1u);
  EXPECT_TRUE(r.ops[0].iscm.inverse);
  EXPECT_TRUE(fw_.pool(r.ops[0].slots[0].pool).inverted);
  // Double negation disappears.
  Plan s = plan("NOT(NOT(x))");
  ASSERT_EQ(s.ops.size(), 1u);
  EXPECT_FALSE(s.ops[0].iscm.inverse);
}

TEST_F(PlannerTest, NandIsOneInverseMws) {
  auto names = put_many("x", 3, "g");
  Plan p = plan(call("NAND", names));
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].iscm, iscm(true, true, true, true));
  EXPECT_EQ(p.ops[0].wordlines(), 3);
  EXPECT_FALSE(p.invert_output);
}

TEST_F(PlannerTest, NandBeyondOneSensingIsInvertedByTheController) {
  auto names = put_many("x", 60, "g");
  Plan p = plan(call("NAND", names));
  EXPECT_EQ(sensings(p), 2);
  EXPECT_TRUE(p.invert_output);
  for (const auto& op : p.ops) EXPECT_FALSE(op.iscm.inverse);
}

TEST_F(PlannerTest, NorOverInvertedCopiesIsAnAndOfTheComplements) {
  auto names = put_many("x", 3, "g", Copies::Inverted);
  Plan p = plan(call("NOR", names));
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].iscm, iscm(false, true, true, true));
  EXPECT_EQ(p.ops[0].wordlines(), 3);
  EXPECT_TRUE(fw_.pool(p.ops[0].slots[0].pool).inverted);
  EXPECT_FALSE(p.invert_output);
}

TEST_F(PlannerTest, NorOfGroupsIsOneInverseInterBlockMws) {
  auto names = put_many("x", 3, "");
  Plan p = plan(call("NOR", names));
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].iscm, iscm(true, true, true, true));
  EXPECT_EQ(p.ops[0].slots.size(), 3u);
  // Beyond the power limit: the OR in two sensings, inverted on the way out.
  auto more = put_many("y", 6, "");
  Plan q = plan(call("NOR", more));
  EXPECT_EQ(sensings(q), 2);
  EXPECT_TRUE(q.invert_output);
}

TEST_F(PlannerTest, XorUsesTheLatchXor) {
  put("a");
  put("b");
  Plan p = plan("XOR(a, b)");
  ASSERT_EQ(p.ops.size(), 3u);
  EXPECT_EQ(xors(p), 1);
  // One side into C, the other left in S, then C = S XOR C.
  EXPECT_EQ(p.ops[0].iscm, iscm(false, true, true, true));
  EXPECT_EQ(p.ops[1].iscm, iscm(false, true, false, false));
  EXPECT_EQ(p.ops[2].kind, OpPlan::Kind::Xor);
  EXPECT_FALSE(p.invert_output);

  Plan q = plan("XNOR(a, b)");
  EXPECT_EQ(xors(q), 1);
  EXPECT_EQ(sensings(q), 2);
  EXPECT_EQ(q.ops.back().kind, OpPlan::Kind::Xor);
  // The complement comes from an inverse read or from the controller, not from a third sensing.
  bool inverse = false;
  for (const auto& op : q.ops) inverse |= op.kind == OpPlan::Kind::Mws && op.iscm.inverse;
  EXPECT_NE(inverse, q.invert_output);
}

TEST_F(PlannerTest, XorOfAndTermsAccumulatesBothSides) {
  put_many("a", 3, "ga");
  put_many("b", 2, "gb");
  Plan p = plan("XOR(AND(a0, a1, a2), AND(b0, b1))");
  ASSERT_EQ(p.ops.size(), 3u);
  EXPECT_EQ(p.ops[0].wordlines() + p.ops[1].wordlines(), 5);
  EXPECT_EQ(p.ops[2].kind, OpPlan::Kind::Xor);
}

TEST_F(PlannerTest, KcsShapeIsOneMwsWithTwoSlotsUpToFortyEight) {
  for (int k : {8, 16, 32, 48, 64}) {
    SCOPED_TRACE(k);
    fw_ = Firmware(nand_, ssd_);
    fw_.declare_group("cliques", 1024);
    fw_.declare_group("adj", uint32_t(k));
    put("c0", "cliques");
    auto members = put_many("m", k, "adj");
    Plan p = plan(fmt::format("OR({}, c0)", call("AND", members)));
    if (k <= 48) {
      ASSERT_EQ(p.ops.size(), 1u);
      ASSERT_EQ(p.ops[0].slots.size(), 2u);
      EXPECT_EQ(p.ops[0].iscm, iscm(false, true, true, true));
      std::multiset<size_t> wl{p.ops[0].slots[0].offsets.size(), p.ops[0].slots[1].offsets.size()};
      EXPECT_EQ(wl, (std::multiset<size_t>{1, size_t(k)}));
    } else {
      // 64 members span two strings: the clique alone, then the AND in two sensings.
      EXPECT_EQ(sensings(p), 3);
      for (const auto& op : p.ops) EXPECT_EQ(op.slots.size(), 1u);
      EXPECT_TRUE(p.ops.back().iscm.transfer);
    }
    EXPECT_FALSE(p.invert_output);
  }
}

TEST_F(PlannerTest, ParaBitSensesOneWordlineOfOneBlockAtATime) {
  auto g = put_many("g", 10, "grp");
  auto s = put_many("s", 4, "");
  auto inv = put_many("i", 4, "ig", Copies::Inverted);
  fw_.declare_group("adj", 8);
  auto adj = put_many("m", 8, "adj");
  put("c0", "cliques");
  struct Case {
    std::string expr;
    int sensings;
  } cases[] = {{call("AND", g), 10}, {call("OR", s), 4}, {call("OR", inv), 4}, {fmt::format("OR({}, c0)", call("AND", adj)), 9},
               {"NOT(g0)", 1},       {"XOR(g0, s0)", 2}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expr);
    Plan p = plan(c.expr, kParaBit);
    EXPECT_EQ(sensings(p), c.sensings);
    for (const auto& op : p.ops) {
      if (op.kind != OpPlan::Kind::Mws) continue;
      EXPECT_EQ(op.slots.size(), 1u);
      EXPECT_EQ(op.wordlines(), 1);
    }
    // Flash-Cosmos never needs more sensings than ParaBit.
    EXPECT_LE(sensings(plan(c.expr)), c.sensings);
  }
}

TEST_F(PlannerTest, DescribeNamesTheSteps) {
  put("a");
  put("b");
  Plan p = plan("XOR(a, b)");
  std::string d = p.describe();
  EXPECT_NE(d.find("MWS"), std::string::npos) << d;
  EXPECT_NE(d.find("XOR"), std::string::npos) << d;
}

}  // namespace
}  // namespace bitline::cosmos::test
