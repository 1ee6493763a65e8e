// The planner's AND of ORs (cosmos/planner, for bit-sliced range predicates): each OR of single-string terms in
// distinct blocks is one inter-block MWS, the factors AND in the S-latch, and an OR of such ANDs accumulates in C;
// the plans, and their results through the chip against the CPU.
#include "cosmos_test_util.hpp"

#include "core/rng.hpp"

namespace bitline::cosmos::test {
namespace {

class AndOfOrs : public ::testing::Test {
 protected:
  EvalConfig cfg_ = small_config(false);
  CosmosSsd ssd_{cfg_.nand, cfg_.ssd, cfg_.host, cfg_.cosmos, true, 1};
  std::map<std::string, BitVector> values_;
  Rng rng_{3};

  void SetUp() override {
    // Group g in two lanes (two blocks), each lane holding x0..x2; group h holding y0, y1.
    ssd_.declare_group("g", 3);
    ssd_.declare_group("h", 2);
    for (uint32_t lane : {0u, 1u})
      for (int i = 0; i < 3; ++i) put(fmt::format("g{}x{}", lane, i), "g", lane);
    for (int i = 0; i < 2; ++i) put(fmt::format("y{}", i), "h", 0);
  }
  void put(const std::string& name, const std::string& group, uint32_t lane) {
    BitVector v(2048 * 8);
    for (auto& w : v.words()) w = rng_.next() | rng_.next();  // 3/4 ones: ANDs of three stay non-trivial
    WriteOptions o;
    o.group = group;
    o.lane = lane;
    ssd_.write(name, v, o);
    values_[name] = v;
  }
  Plan plan(const std::string& e) { return plan_expression(parse_expr(e), ssd_.firmware(), ssd_.limits(System::Fc)); }
  void expect_computes(const std::string& e) {
    const ReadResult r = ssd_.read(e, System::Fc);
    EXPECT_EQ(r.results.at(0), evaluate(normalize(parse_expr(e)), values_)) << e;
  }
};

TEST_F(AndOfOrs, EachOrIsOneInterBlockSensingAndTheFactorsAndInS) {
  const std::string e = "AND(OR(AND(g0x0, g0x1), AND(g1x0, g1x2)), AND(y0, y1))";
  const Plan p = plan(e);
  ASSERT_EQ(p.ops.size(), 2u) << p.describe();
  EXPECT_EQ(p.ops[0].slots.size(), 2u);  // the OR: lanes 0 and 1 together
  EXPECT_TRUE(p.ops[0].iscm.init_s);
  EXPECT_FALSE(p.ops[0].iscm.transfer);
  EXPECT_EQ(p.ops[1].slots.size(), 1u);  // y0 AND y1: one string
  EXPECT_EQ(p.ops[1].wordlines(), 2);
  EXPECT_FALSE(p.ops[1].iscm.init_s);  // ANDed with what S holds
  EXPECT_TRUE(p.ops[1].iscm.transfer);
  expect_computes(e);
}

TEST_F(AndOfOrs, AnOrOfSuchProductsAccumulatesInC) {
  const std::string e = "OR(AND(OR(g0x0, g1x1), y0), AND(OR(g0x2, g1x0), y1))";
  const Plan p = plan(e);
  ASSERT_EQ(p.ops.size(), 4u) << p.describe();
  EXPECT_TRUE(p.ops[0].iscm.init_c);
  EXPECT_TRUE(p.ops[1].iscm.transfer);
  EXPECT_TRUE(p.ops[2].iscm.init_s);
  EXPECT_FALSE(p.ops[2].iscm.init_c);  // the second product adds to C
  EXPECT_TRUE(p.ops[3].iscm.transfer);
  expect_computes(e);
}

TEST_F(AndOfOrs, TermsInOneBlockCannotShareASensing) {
  // Two terms of lane 0 are in one block: not one inter-block MWS, and no other form the latches compute.
  expect_model_error([&] { plan("AND(OR(AND(g0x0, g0x1), g0x2), y0)"); }, {"cannot compute"});
  // More terms than blocks per sensing: the same.
  CosmosSsd ssd(cfg_.nand, cfg_.ssd, cfg_.host, cfg_.cosmos, false, 1);
  for (int lane = 0; lane < 5; ++lane) {
    WriteOptions o;
    o.group = "w";
    o.lane = uint32_t(lane);
    ssd.write(fmt::format("w{}", lane), 2048, o);
  }
  ssd.write("z", 2048, WriteOptions{});
  expect_model_error([&] { plan_expression(parse_expr("AND(OR(w0, w1, w2, w3, w4), z)"), ssd.firmware(), ssd.limits(System::Fc)); },
                     {"cannot compute"});
  EXPECT_NO_THROW(plan_expression(parse_expr("AND(OR(w0, w1, w2, w3), z)"), ssd.firmware(), ssd.limits(System::Fc)));
}

}  // namespace
}  // namespace bitline::cosmos::test
