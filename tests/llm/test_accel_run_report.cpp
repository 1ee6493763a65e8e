// What `accel run` prints about the deployment search, the capacity per GPU part
// by part, the collectives by kind and the board power, and what `accel eval`
// prints about changed deployments.
#include <gtest/gtest.h>

#include <string>

#include "../support/run_bitline.hpp"

namespace {

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

}  // namespace

TEST(AccelRunReport, DeploymentCapacityCollectivesAndBoardPower) {
  const auto r = ::bitline::test::run_bitline("accel run --model qwen3-coder-480b --system h200x8 --context long --slo 100");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(has(r.out, "(tensor parallel 8 x 1 replica, experts over 8 GPUs)")) << r.out;
  EXPECT_TRUE(has(r.out, "deployment tp8 (not the preferred one); tried: dp -> a context of 10640 tokens cannot fit even at batch 1"))
      << r.out;
  // (serving.capacity_context = paged: KV held as written; with full the batches were 28, 46 and 55)
  EXPECT_TRUE(has(r.out, "; tp2 -> batch 28; tp4 -> batch 50; tp8 -> batch 61")) << r.out;
  EXPECT_TRUE(has(r.out, "activation workspace")) << r.out;
  EXPECT_TRUE(has(r.out, "runtime reserve 2.00 GB (HBM)")) << r.out;
  EXPECT_TRUE(has(r.out, "collectives per step (ms): all_reduce ")) << r.out;
  EXPECT_TRUE(has(r.out, "board power 700 W (GPU die 579 + HBM stacks 121 + HBF stacks 0 + HBF base dies 0)")) << r.out;

  const auto h = ::bitline::test::run_bitline("accel run --model qwen3-235b --system hbf-onlyx8 --context long --slo 100");
  ASSERT_EQ(h.rc, 0) << h.out;
  EXPECT_TRUE(has(h.out, "runtime reserve 2.00 GB (HBF, 1 block(s) per megaplane)")) << h.out;
  EXPECT_TRUE(has(h.out, "activation workspace")) << h.out;
  EXPECT_TRUE(has(h.out, "(SRAM)")) << h.out;
  EXPECT_TRUE(has(h.out, "HBF base dies 48)")) << h.out;
}
