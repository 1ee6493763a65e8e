// `bitline hbf`: the subcommands, their JSON output and their errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../support/run_bitline.hpp"

namespace {

struct CliRun {
  int rc;
  std::string out;
};

CliRun run(const std::string& args) {
  const std::string cmd = std::string(BITLINE_BINARY) + " " + args + " 2>&1";
  CliRun r{0, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, ""};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  r.rc = pclose(p);
  bitline::test::expect_no_sanitizer_report(cmd, r.out);
  return r;
}

nlohmann::json load(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

std::filesystem::path tmp(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("bitline-hbf-cli-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d / name;
}

TEST(HbfCli, StreamWritesTheRequiredJson) {
  auto f = tmp("stream.json");
  CliRun r = run("hbf stream --preset csi --bytes 1GiB --json " + f.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = load(f);
  for (const char* k : {"seconds", "gb_per_s", "gb_per_s_per_stack", "plane_busy_fraction", "max_plane_load", "mean_plane_load"})
    ASSERT_TRUE(j.contains(k)) << k;
  EXPECT_NEAR(j["gb_per_s"].get<double>(), 6 * j["gb_per_s_per_stack"].get<double>(), 1e-6);
  EXPECT_GE(j["gb_per_s_per_stack"].get<double>(), 0.95 * 768);
  EXPECT_EQ(j["layout"], "execution");
  EXPECT_EQ(j["config"]["hbf"]["stacks"], 6);

  auto g = tmp("stream-decl.json");
  r = run("hbf stream --preset csi --bytes 1GiB --tensor 1MiB --layout declaration --no-prefetch --granularity plane --json " + g.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  auto k = load(g);
  EXPECT_EQ(k["layout"], "declaration");
  EXPECT_EQ(k["prefetch"], false);
  EXPECT_EQ(k["granularity"], "plane");
  EXPECT_EQ(k["config"]["hbf"]["runtime"]["weight_layout"], "declaration");
  EXPECT_LT(k["gb_per_s"].get<double>(), j["gb_per_s"].get<double>());
}

TEST(HbfCli, WriteBwOfACsiGpu) {
  auto f = tmp("write.json");
  CliRun r = run("hbf write-bw --preset csi --bytes 1GiB --json " + f.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = load(f);
  ASSERT_TRUE(j.contains("gb_per_s"));
  EXPECT_NEAR(j["gb_per_s"].get<double>() / 245.76, 1.0, 0.03);  // FlashAccel, Hardware (HBF stack): about 245.8 GB/s (4 KB = 4000 B)
}

TEST(HbfCli, ErrorsAreClear) {
  CliRun r = run("hbf stream --preset h200 --bytes 1GiB");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("no HBF"), std::string::npos) << r.out;
  r = run("hbf stream --preset csi --bytes 2TiB");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("does not fit"), std::string::npos) << r.out;
  r = run("hbf stream --preset csi --bytes lots");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("--bytes"), std::string::npos) << r.out;
  r = run("hbf stream --preset csi --set hbf.geometry.planes_per_megaplane=5");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.out.find("planes_per_megaplane"), std::string::npos) << r.out;
}

TEST(HbfCli, DescribeListsTheComponents) {
  CliRun r = run("describe hbf.timing");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("hbf.timing.interface_bandwidth"), std::string::npos) << r.out;
  // The planes' cell figures are the NAND model's, described once, under nand (HBF presets: nand/xl-flash).
  EXPECT_EQ(r.out.find("t_read"), std::string::npos) << r.out;
  r = run("describe hbf");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.find("hbf.energy"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("t_erase"), std::string::npos) << r.out;
  r = run("describe");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("nand.timing.t_read_slc"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nand.energy.read_energy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nand/xl-flash"), std::string::npos) << "the summary says where the HBF cell comes from: " << r.out;
  r = run("describe hbm");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("hbm.energy"), std::string::npos);
  r = run("hbf info --preset cli");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("120 megaplanes"), std::string::npos) << r.out;
}

}  // namespace
