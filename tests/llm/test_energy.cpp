// Energy both ways: the activity-based energy of a step (tokens_per_j) and the
// paper's way, tokens per joule at board power, the board power summed from
// its parts (GPU die, HBM stacks, HBF stacks' flash dies, HBF base dies), each
// from a parameter of the GPU kind's file; and the summary ratios vs the baseline.
#include <gtest/gtest.h>

#include "llm/experiment.hpp"
#include "llm/serving.hpp"
#include "llm_test_util.hpp"

using namespace bitline;
using namespace bitline::llm;
using bitline::llm::test::paper_context;
using bitline::llm::test::preset_kind;
using bitline::llm::test::shipped;

namespace {
constexpr double kHbmStack = 800e9 * 8 * 2.99e-12 + 1.0;  // H200 HBM3e stack at full bandwidth + static (W)
constexpr double kHbfStack = 768e9 * 8 * 8e-12;           // HBF flash dies at the stack's interface rate (W)
constexpr double kDie = 700 - 6 * kHbmStack;              // H200 TDP less its 6 HBM stacks
}  // namespace

TEST(LlmEnergy, BoardPowerIsTheSumOfItsParts) {
  const ModelConfig m = shipped("qwen3-235b");
  const ContextSpec c = paper_context("long");
  struct Case {
    const char* kind;
    double hbm, hbf;
  };
  for (const Case& k : {Case{"h200", 6, 0}, Case{"csi", 6, 6}, Case{"cli", 1, 5}, Case{"hbf-only", 0, 6}}) {
    const StepReport r = Server(m, preset_kind(k.kind), 8).step(8, c);
    EXPECT_NEAR(r.board_die.raw(), kDie, 1e-9) << k.kind;
    EXPECT_NEAR(r.board_hbm.raw(), k.hbm * kHbmStack, 1e-9) << k.kind;
    EXPECT_NEAR(r.board_hbf.raw(), k.hbf * kHbfStack, 1e-9) << k.kind;
    EXPECT_NEAR(r.board_base.raw(), k.hbf * 8.0, 1e-9) << k.kind;  // csi.yaml: hbf_base_die 8 W
    EXPECT_NEAR(r.tdp.raw(), kDie + k.hbm * kHbmStack + k.hbf * (kHbfStack + 8.0), 1e-9) << k.kind;
    EXPECT_NEAR(r.tokens_per_j_board, r.tokens_per_s_per_gpu / r.tdp.raw(), 1e-12) << k.kind;
    // The activity-based draw stays below the board power.
    EXPECT_LT(r.power, r.tdp) << k.kind;
    const Json j = r.json();
    EXPECT_NEAR(j["board_power_w"]["total"].get<double>(), r.tdp.raw(), 1e-9);
    EXPECT_NEAR(j["board_power_w"]["hbf_base_dies"].get<double>(), r.board_base.raw(), 1e-9);
  }
  EXPECT_NEAR(Server(m, preset_kind("h200"), 8).step(8, c).tdp.raw(), 700.0, 1e-9);  // the datasheet TDP, whole
  // The base die is a parameter.
  KindParams k = preset_kind("csi");
  k.llm.energy.hbf_base_die = Power(0.0);
  EXPECT_NEAR(Server(m, k, 8).step(8, c).board_base.raw(), 0.0, 1e-12);
}

TEST(LlmEnergy, SummaryReportsBothMethodsAgainstTheBaseline) {
  EvalExperiment e;
  e.systems = {"h200x8", "csix8"};
  e.baseline = "h200x8";
  e.slos_ms = {100};
  auto pt = [](const std::string& sys, double tps, double tpj, double board, int64_t gpus = 8) {
    PointResult p;
    p.gpus = gpus;
    p.model = "m";
    p.context = "long";
    p.system = sys;
    p.slo_ms = 100;
    p.feasible = true;
    p.step.tokens_per_s_per_gpu = tps;
    p.step.tokens_per_j = tpj;
    p.step.tdp = Power(board);
    p.step.tokens_per_j_board = tps / board;
    return p.json();
  };
  e.systems.push_back("csix16");
  Json points = Json::array({pt("h200x8", 1000, 3, 700), pt("csix8", 2500, 4, 1050), pt("csix16", 2000, 4, 1050, 16)});
  const Json s = eval_summary(points, e);
  EXPECT_NEAR(s["tokens_per_j_vs_h200x8"]["csix8@100"]["mean"].get<double>(), 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(s["board_power_vs_h200x8"]["csix8@100"]["mean"].get<double>(), 1.5, 1e-12);
  EXPECT_NEAR(s["tokens_per_j_board_vs_h200x8"]["csix8@100"]["mean"].get<double>(), 2.5 / 1.5, 1e-12);
  // The system's power: 16 GPUs draw twice what 8 of the same kind do; tokens/J is per GPU either way.
  EXPECT_NEAR(s["board_power_vs_h200x8"]["csix16@100"]["mean"].get<double>(), 3.0, 1e-12);
  EXPECT_NEAR(s["tokens_per_j_board_vs_h200x8"]["csix16@100"]["mean"].get<double>(), 2.0 / 1.5, 1e-12);
}
