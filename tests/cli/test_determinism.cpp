// Same inputs, same bytes: every subcommand that writes a result JSON is run
// twice (on small inputs) and the two files are compared byte for byte. Run
// metadata such as the wall time is printed, never written into the result.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../support/run_bitline.hpp"
#include "../support/temp_dir_test.hpp"

namespace fs = std::filesystem;

namespace {

class SameBytes : public ::bitline::test::TempDirTest {
 protected:
  SameBytes() : TempDirTest("bitline-det-") {}
  std::string slurp(const fs::path& p) const {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Runs `bitline ARGS --json A`, then `bitline ARGS2 --json B` (ARGS2: ARGS when empty), and compares A and B.
  void expect_same_bytes(const std::string& args, std::string args2 = "") {
    if (args2.empty()) args2 = args;
    const fs::path a = dir_ / "a.json", b = dir_ / "b.json";
    const auto ra = ::bitline::test::run_bitline(args + " --json " + ::bitline::test::shell_quote(a.string()));
    ASSERT_EQ(ra.rc, 0) << args << "\n" << ra.out;
    const auto rb = ::bitline::test::run_bitline(args2 + " --json " + ::bitline::test::shell_quote(b.string()));
    ASSERT_EQ(rb.rc, 0) << args2 << "\n" << rb.out;
    const std::string ja = slurp(a), jb = slurp(b);
    ASSERT_GT(ja.size(), 10u) << args;
    EXPECT_TRUE(ja == jb) << "bitline " << args << ": the two result files differ";
    EXPECT_EQ(ja.find("wall"), std::string::npos) << args << ": a wall time in the result";
    fs::remove(a);
    fs::remove(b);
  }
};

}  // namespace

TEST_F(SameBytes, Nand) {
  expect_same_bytes("nand demo");
  expect_same_bytes("nand rber");
}

TEST_F(SameBytes, Hbf) {
  expect_same_bytes("hbf info --preset csi");
  expect_same_bytes("hbf stream --preset csi --bytes 64MiB");
  expect_same_bytes("hbf write-bw --preset csi --bytes 64MiB");
  expect_same_bytes("hbf area --preset csi");
  expect_same_bytes("hbf area --preset csi --vary hbf.area.layers=96,232");
}

TEST_F(SameBytes, Cosmos) {
  expect_same_bytes("cosmos run --preset flash-cosmos");
  expect_same_bytes("cosmos run --preset flash-cosmos --system parabit --general-device");
  expect_same_bytes("cosmos run --preset flash-cosmos --system isp --general-device");
  expect_same_bytes("cosmos write-bw --preset flash-cosmos --bytes 16MiB");
  expect_same_bytes("cosmos reliability --preset flash-cosmos --set workload.users=80000 --months 1 --trials 2");
  expect_same_bytes("cosmos eval --preset flash-cosmos --quiet --experiment " + std::string(BITLINE_SOURCE_DIR) +
                    "/tests/mpi/cosmos-tiny.yaml");
  // Without the host engines (measured wall times, kept under systems.roaring / systems.row and `measured`).
  expect_same_bytes("cosmos ssb --preset flash-cosmos --quiet --sf 0.001 --systems osp,isp,parabit,fc");
}

TEST_F(SameBytes, Ssd) {
  const std::string d = std::string(BITLINE_SOURCE_DIR) + "/configs/ssd/";
  expect_same_bytes("ssd run --quiet --device " + d + "device.xml --workload " + d + "trace.xml");
}

TEST_F(SameBytes, AccelPoints) {
  expect_same_bytes("accel run --model qwen3-235b --system csix8 --context long --slo 100");
  expect_same_bytes("accel run --model qwen3-235b --system csix8 --context long --slo 100 --batch 16");
  const std::string sweep =
      "accel sweep --model qwen3-235b --system csix8 --context long --slo 100 --quiet --vary llm.compute.kernel_overhead=2us,3us";
  expect_same_bytes(sweep + " --threads 2", sweep + " --threads 1");
  expect_same_bytes("accel ablation");
  expect_same_bytes("accel validate --models qwen3-235b --systems csix8 --batch 8");
  expect_same_bytes("accel sessions --set sessions.sessions=20");
}

// Five threads on a 12-point matrix (2 models, 2 SLOs, an HBM and two HBF systems, each point's deployment search)
// split it unevenly (and on CI's two cores, more threads than cores): the same thread-independence the whole
// 128-point matrix has to keep, at a tenth of the test's time (AccelCli.EvalWritesTheWholeMatrix runs that one).
TEST_F(SameBytes, AccelEvalWithOneOrFiveThreads) {
  const std::string small = " --experiment " + std::string(BITLINE_SOURCE_DIR) + "/tests/mpi/accel-small.yaml";
  expect_same_bytes("accel eval --quiet --threads 5" + small, "accel eval --quiet --threads 1" + small);
}
