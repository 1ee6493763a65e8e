// Query specs and scale factors `cosmos ssb` must refuse: a clear message naming the file, the key and the value,
// exit code 2 (through the CLI), ConfigError (through the loader).
#include "cosmos/ssb/query.hpp"
#include "cosmos_test_util.hpp"

#include "../support/run_bitline.hpp"
#include "../support/temp_dir_test.hpp"

namespace bitline::cosmos::ssb {
namespace {

void expect_config_error(const std::string& text, std::initializer_list<std::string> needles) {
  try {
    parse_predicate(text, "q.yaml:3", "where[0]");
    ADD_FAILURE() << "expected a ConfigError for: " << text;
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("q.yaml:3: where[0]"), std::string::npos) << m;
    for (const auto& n : needles) EXPECT_NE(m.find(n), std::string::npos) << "message: " << m << "\nexpected: " << n;
  }
}

TEST(SsbQuerySpec, PredicatesParseAsWritten) {
  const Predicate p = parse_predicate("lo_discount between 1 and 3", "f", "k");
  EXPECT_EQ(p.column->name, "lo_discount");
  EXPECT_EQ(p.op, CmpOp::Between);
  ASSERT_EQ(p.values.size(), 2u);
  EXPECT_EQ(p.values[1], Value(int64_t(3)));
  const Predicate q = parse_predicate("c_city in ('UNITED KI1', 'UNITED KI5')", "f", "k");
  EXPECT_EQ(q.op, CmpOp::In);
  EXPECT_TRUE(q.holds(Value(std::string("UNITED KI5"))));
  EXPECT_FALSE(q.holds(Value(std::string("UNITED KI2"))));
  // Text compares as text: MFGR#223 sorts after MFGR#2228.
  const Predicate b = parse_predicate("p_brand1 between 'MFGR#2221' and 'MFGR#2228'", "f", "k");
  EXPECT_FALSE(b.holds(Value(std::string("MFGR#223"))));
  EXPECT_TRUE(b.holds(Value(std::string("MFGR#2225"))));
}

TEST(SsbQuerySpec, BadPredicatesAreNamed) {
  expect_config_error("lo_quantityy < 25", {"unknown column 'lo_quantityy'", "did you mean 'lo_quantity'"});
  expect_config_error("lo_quantity ~ 25", {"unknown operator", "'~'"});
  expect_config_error("lo_quantity like 25", {"unknown operator", "'like'"});
  expect_config_error("lo_quantity < 99", {"99 is out of the range of lo_quantity [1, 50]"});
  expect_config_error("lo_quantity < -1", {"out of the range of lo_quantity"});
  expect_config_error("d_year = 2001", {"2001 is out of the range of d_year [1992, 1998]"});
  expect_config_error("d_yearmonthnum = 199213", {"199213 is not a value of d_yearmonthnum"});
  expect_config_error("c_region = 'ATLANTIS'", {"'ATLANTIS' is not a value of c_region", "AFRICA"});
  expect_config_error("c_region = 3", {"c_region is text"});
  expect_config_error("d_year = '1993'", {"d_year is a number"});
  expect_config_error("lo_discount between 5 and 3", {"lower bound is above the upper"});
  expect_config_error("lo_discount between 1", {"expected 'between A and B'"});
  expect_config_error("lo_discount between and 3", {"expected a constant"});
  expect_config_error("lo_discount in (1, 2", {"expected ',' or ')'"});
  expect_config_error("c_region = 'ASIA", {"without its closing quote"});
  expect_config_error("lo_discount = 1 and 2", {"unexpected text"});
  expect_config_error("lo_discount = 123456789012345678901", {"too long"});
}

class SsbCli : public bitline::test::TempDirTest {
 protected:
  SsbCli() : TempDirTest("bitline-ssb-") {}
  bitline::test::CliRun run_query(const std::string& body) {
    const auto f = write("q.yaml", "query: Qx\n" + body);
    return bitline::test::run_bitline("cosmos ssb --quiet --sf 0.001 --systems fc --query " + bitline::test::shell_quote(f.string()));
  }
};

TEST_F(SsbCli, BadQueryFilesExitWithTwoAndNameTheProblem) {
  struct Case {
    std::string body, needle;
  };
  const Case cases[] = {
      {"where: [lo_quantityy < 25]\nsum: lo_revenue\n", "unknown column 'lo_quantityy'"},
      {"where: [lo_quantity ~ 25]\nsum: lo_revenue\n", "unknown operator"},
      {"where: [lo_quantity < 99]\nsum: lo_revenue\n", "out of the range of lo_quantity"},
      {"where: [d_year = 1993]\nsum: lo_revenue * lo_discount * lo_quantity\n", "more than two measures"},
      {"where: [d_year = 1993]\nsum: d_year\n", "not a LINEORDER measure"},
      {"where: [d_year = 1993]\nsum: lo_revenue\ngroup_by: [lo_quantity]\n", "is a measure"},
      {"where: [d_year = 1993]\nsum: lo_revenue\norder_by: [c_city]\n", "neither a group_by column"},
      {"where: [d_year = 1993]\nsum: lo_revenue\nlimit: 3\n", "limit"},
      {"where: d_year\nsum: lo_revenue\n", "expected a list of predicates"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body);
    const auto r = run_query(c.body);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find(c.needle), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("q.yaml"), std::string::npos) << r.out;  // the file is named
  }
}

TEST_F(SsbCli, ScaleFactorsOutsideTheRangeExitWithTwo) {
  for (const std::string sf : {"0", "-1", "abc", "1e9", "nan", "inf", ""}) {
    SCOPED_TRACE(sf);
    const auto r = bitline::test::run_bitline("cosmos ssb --quiet --sf " + bitline::test::shell_quote(sf));
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("--sf"), std::string::npos) << r.out;
  }
  const auto r = bitline::test::run_bitline("cosmos ssb --quiet --sf 2 --reliability");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("--reliability"), std::string::npos) << r.out;
  const auto s = bitline::test::run_bitline("cosmos ssb --quiet --sf 0.001 --systems fc,gpu");
  EXPECT_EQ(s.rc, 2) << s.out;
  EXPECT_NE(s.out.find("'gpu'"), std::string::npos) << s.out;
}

TEST_F(SsbCli, AGoodRunWritesTheIssuesJsonNames) {
  const auto out = dir_ / "ssb.json";
  const auto r = bitline::test::run_bitline("cosmos ssb --quiet --sf 0.001 --host-repeat 1 --explain --json " +
                                            bitline::test::shell_quote(out.string()));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("filter F ="), std::string::npos);  // --explain prints the plans
  std::ifstream in(out);
  const Json j = Json::parse(in);
  ASSERT_EQ(j["queries"].size(), 13u);
  for (const auto& q : j["queries"]) {
    for (const char* k : {"name", "matches_reference", "answer", "systems", "flash_ops", "plan"}) EXPECT_TRUE(q.contains(k)) << k;
    for (const char* s : {"osp", "isp", "parabit", "fc", "roaring"}) {
      EXPECT_TRUE(q["systems"][s].contains("time_s")) << s;
      EXPECT_TRUE(q["systems"][s].contains("energy_j")) << s;
    }
    EXPECT_TRUE(q["matches_reference"].get<bool>());
  }
}

}  // namespace
}  // namespace bitline::cosmos::ssb
