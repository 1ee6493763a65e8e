// Requests the Flash-Cosmos SSD must refuse, each with a ModelError that says
// what is wrong; and the CLI's `cosmos run --param` checks.
#include "cosmos_test_util.hpp"

#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include "../support/run_bitline.hpp"

namespace bitline::cosmos::test {
namespace {

class BadInput : public ::testing::Test {
 protected:
  EvalConfig cfg_ = paper_config();
  CosmosSsd ssd_{cfg_.nand, cfg_.ssd, cfg_.host, cfg_.cosmos, false, 1};

  void put(const std::string& name, int64_t bytes = 16384, const std::string& group = "", nand::ProgramMode mode = nand::ProgramMode::Esp) {
    WriteOptions o;
    o.group = group;
    o.mode = mode;
    ssd_.write(name, bytes, o);
  }
};

TEST_F(BadInput, UnknownOperandIsNamed) {
  put("a");
  for (System s : kAllSystems) {
    SCOPED_TRACE(to_string(s));
    expect_model_error([&] { ssd_.read("AND(a, ghost)", s); }, {"unknown operand", "ghost"});
  }
  expect_model_error([&] { plan_expression(parse_expr("OR(ghost2, a)"), ssd_.firmware(), PlanLimits{}); }, {"ghost2"});
}

TEST_F(BadInput, OperandsOfDifferentSizesCannotBeColocated) {
  put("a", 16384);
  put("b", 32768);
  expect_model_error([&] { ssd_.read("AND(a, b)", System::Fc); }, {"cannot be co-located", "'a'", "'b'"});
  expect_model_error([&] { ssd_.read("OR(a, b)", System::Osp); }, {"cannot be co-located"});
  // Nor can they share a group.
  put("c", 16384, "g");
  expect_model_error([&] { put("d", 8192, "g"); }, {"cannot be co-located", "'d'", "'g'"});
}

TEST_F(BadInput, SsdTooSmallForTheWorkload) {
  EvalConfig c = paper_config();
  c.nand.geometry.blocks_per_plane = 8;  // KCS needs a block per clique's adjacency vectors
  nand::validate(c.nand);
  CosmosSsd ssd(c.nand, c.ssd, c.host, c.cosmos, false, 1);
  expect_model_error([&] { prepare(ssd, Point{"kcs", "k", 8}, c.workload, System::Fc, 1); }, {"SSD too small", "blocks"});
  // BMI at 36 months: 1,080 vectors of 100 MB do not fit 8 blocks per plane either.
  CosmosSsd ssd2(c.nand, c.ssd, c.host, c.cosmos, false, 1);
  expect_model_error([&] { prepare(ssd2, Point{"bmi", "months", 36}, c.workload, System::Fc, 1); }, {"SSD too small"});
}

TEST_F(BadInput, DuplicateOperandName) {
  put("a");
  expect_model_error([&] { put("a"); }, {"'a'", "already exists"});
  expect_model_error([&] { put("a", 8192, "other"); }, {"already exists"});
}

TEST_F(BadInput, MultiLevelCellModesAreNotComputable) {
  expect_model_error([&] { put("m", 16384, "", nand::ProgramMode::Mlc); }, {"'m'", "SLC or ESP", "mlc"});
  expect_model_error([&] { put("t", 16384, "", nand::ProgramMode::Tlc); }, {"'t'", "tlc"});
  EXPECT_FALSE(ssd_.firmware().has("m"));
  EXPECT_FALSE(ssd_.firmware().has("t"));
}

TEST_F(BadInput, OneGroupHasOneProgramMode) {
  put("a", 16384, "g", nand::ProgramMode::Esp);
  expect_model_error([&] { put("b", 16384, "g", nand::ProgramMode::Slc); }, {"'b'", "one program mode"});
}

TEST_F(BadInput, FormsTheLatchesCannotCompute) {
  for (const char* n : {"a", "b", "c", "d"}) put(n);
  // The S-latch can hold only an AND of literals (or one inverse sensing) while C
  // holds the other side: an OR on each side of an XOR does not fit.
  expect_model_error([&] { ssd_.read("XOR(OR(a, b), OR(c, d))", System::Fc); }, {"cannot compute", "XOR(OR(a, b), OR(c, d))"});
  // An AND with a complement that is not stored: an inverse read would destroy S.
  expect_model_error([&] { ssd_.read("AND(a, NOT(b))", System::Fc); }, {"cannot compute", "inverted copies"});
  expect_model_error([&] { ssd_.read("AND(a, OR(b, c))", System::ParaBit); }, {"cannot compute"});
  // OSP and ISP compute anything on the host / in the controller.
  EXPECT_NO_THROW(ssd_.read("XOR(OR(a, b), OR(c, d))", System::Osp));
  EXPECT_NO_THROW(ssd_.read("AND(a, NOT(b))", System::Isp));
}

TEST_F(BadInput, UnknownSystemName) {
  expect_model_error([] { system_from("gpu"); }, {"unknown system", "'gpu'", "osp", "fc"});
  EXPECT_EQ(system_from("parabit"), System::ParaBit);
}

TEST_F(BadInput, MalformedRequests) {
  put("a");
  expect_model_error([&] { ssd_.read(std::vector<Expr>{}, System::Fc, false); }, {"no query"});
  expect_model_error([&] { put("", 16384); }, {"name"});
  expect_model_error([&] { put("z", 0); }, {"'z'", "positive"});
  expect_model_error([&] { ssd_.declare_group("g0", 0); }, {"'g0'"});
  expect_model_error([&] { prepare(ssd_, Point{"sorting", "n", 1}, cfg_.workload, System::Fc, 1); }, {"unknown workload", "sorting"});
  // A functional SSD needs the data.
  CosmosSsd f(cfg_.nand, cfg_.ssd, cfg_.host, cfg_.cosmos, true, 1);
  WriteOptions o;
  expect_model_error([&] { f.write("x", int64_t(16384), o); }, {"'x'", "needs the data"});
  // Parse errors name the position.
  try {
    parse_expr("AND(a, ");
    ADD_FAILURE() << "expected a parse error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("position"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_expr("XOR(a, b, c)"), std::invalid_argument);
  EXPECT_THROW(parse_expr("FOO(a)"), std::invalid_argument);
}

TEST_F(BadInput, ErasedGroupsAreForgotten) {
  Firmware fw(cfg_.nand, cfg_.ssd);
  WriteOptions o;
  o.group = "g";
  fw.write("a", 16384, o);
  EXPECT_EQ(fw.blocks_in_use(), 1);
  fw.erase_group("g");
  EXPECT_EQ(fw.blocks_in_use(), 0);
  EXPECT_FALSE(fw.has("a"));
  expect_model_error([&] { fw.erase_group("g-none"); }, {"'g-none'"});
  expect_model_error([&] { fw.operand("a"); }, {"unknown operand", "'a'"});
}

// ---- CLI ---------------------------------------------------------------------

using CliResult = ::bitline::test::CliRun;
CliResult run_cli(const std::string& args) { return ::bitline::test::run_bitline(args); }

TEST(CosmosCli, RunRejectsAParamOfAnotherWorkload) {
  CliResult r = run_cli("cosmos run --workload bmi --param weeks=3");
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("weeks=3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("months"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("system fc:"), std::string::npos) << "the point ran despite the error:\n" << r.out;
}

TEST(CosmosCli, RunRejectsANonIntegerParam) {
  CliResult r = run_cli("cosmos run --workload bmi --param months=x");
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("'x'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("integer"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("system fc:"), std::string::npos) << r.out;
}

TEST(CosmosCli, RunRejectsAnUnknownSystem) {
  CliResult r = run_cli("cosmos run --workload ims --system gpu");
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("gpu"), std::string::npos) << r.out;
}

TEST(CosmosWork, ThePapersEvaluationFitsItsBudgetAndHugePointsAreRefusedBeforeTheyRun) {
  // The work of a run is its operand pages (what OSP reads): the paper's largest point, KCS k = 64 (1,024 cliques x 65
  // vectors of 32 Mi bits = 256 pages of 16 KiB), is 17 M; its whole evaluation ~2.5e8, within 2^30.
  const WorkloadParams w = default_params<WorkloadParams>();
  const int64_t page = 16384;
  EXPECT_DOUBLE_EQ(operand_page_reads(Point{"kcs", "k", 64}, w, page), 1024.0 * 65 * 256);
  EXPECT_DOUBLE_EQ(operand_page_reads(Point{"bmi", "months", 1}, w, page), 30.0 * std::ceil(1e8 / 16384));
  const EvalMatrix paper = paper_matrix();
  EXPECT_NO_THROW(check_eval_work(paper, w, page));
  double total = 0;
  for (const Point& p : paper.points) total += operand_page_reads(p, w, page) * double(paper.systems.size());
  EXPECT_GT(total, 1e8);
  EXPECT_LT(total, kMaxEvalPageReads / 2);
  // 100 G users (a 72 s OSP run before) and an evaluation of many large points: refused, naming the point and keys.
  WorkloadParams big = w;
  big.users = 100'000'000'000;
  try {
    check_run_work(Point{"bmi", "months", 36}, big, page);
    ADD_FAILURE() << "not refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bmi months=36"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("workload.users"), std::string::npos) << e.what();
  }
  // Millions of tiny operands: within the page budget, but ~400 B each (4.3 M took 1.7 GB); refused past 2^22.
  WorkloadParams tiny = w;
  tiny.cliques = 65536;
  tiny.vertices = 8;
  EXPECT_NO_THROW(check_run_work(Point{"kcs", "k", 63}, tiny, page));  // 65,536 x 64 = 2^22 operands
  EXPECT_THROW(check_run_work(Point{"kcs", "k", 64}, tiny, page), ConfigError);
  EvalMatrix many = paper;
  for (int i = 0; i < 5; ++i) many.points.insert(many.points.end(), paper.points.begin(), paper.points.end());
  EXPECT_THROW(check_eval_work(many, w, page), ConfigError);
}

TEST(CosmosWork, AnSsdTooSmallForALaterPointIsFoundBeforeAnyPointRuns) {
  // 40 blocks a plane hold BMI at 1 and 3 months, not at 36: the evaluation used to run the points before it and then
  // fail; the placement of every job is now checked first, and the error names the point, the system and the key.
  EvalConfig c = paper_config();
  c.nand.geometry.blocks_per_plane = 40;
  EvalMatrix m;
  m.systems = {System::Osp, System::Fc};
  m.points = {Point{"bmi", "months", 1}, Point{"bmi", "months", 3}};
  EXPECT_NO_THROW(check_eval_placement(c, m, 2));
  m.points.push_back(Point{"bmi", "months", 36});
  for (const int threads : {1, 2, 3})  // the first failing job's error (osp before fc), on any number of threads
    try {
      check_eval_placement(c, m, threads);
      ADD_FAILURE() << "not refused";
    } catch (const ModelError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("bmi months=36 on osp: SSD too small"), std::string::npos) << threads << ": " << what;
      EXPECT_NE(what.find("nand.geometry.blocks_per_plane"), std::string::npos) << what;
    }
  // run_eval checks the same before its first job.
  EXPECT_THROW(run_eval(c, m, {}, 1), ModelError);
}

TEST(CosmosCli, AnOversizedRunIsRefusedBeforeItRuns) {
  // It ran for 72 s (and an evaluation 94 s before failing on a later point); now refused at once, exit 2.
  CliResult r = run_cli(
      "cosmos run --workload bmi --param months=36 --system osp --set workload.users=100000000000 --set "
      "nand.geometry.blocks_per_plane=10000 --set ssd.channels=64 --set ssd.dies_per_channel=16");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("pages of 16384 B"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("system osp:"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace bitline::cosmos::test
