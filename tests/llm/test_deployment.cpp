// The deployment search (llm/deployment.hpp): candidates in the order an operator
// would try them, the preferred deployment kept where it has a feasible batch,
// the smallest change that fits chosen where it has none, and the choice reported.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "llm/deployment.hpp"
#include "llm_test_util.hpp"

using namespace bitline;
using namespace bitline::llm;
using bitline::llm::test::paper_context;
using bitline::llm::test::preset_kind;
using bitline::llm::test::shipped;

namespace {

std::vector<std::string> labels(const std::vector<DeploymentCandidate>& c) {
  std::vector<std::string> out;
  for (const auto& x : c) out.push_back(x.label());
  return out;
}

}  // namespace

TEST(LlmDeployment, CandidatesStartWithTheSpecsTableThenGoByDistance) {
  const KindParams h200 = preset_kind("h200");
  // MoE: data-parallel attention preferred, then TP2, TP4, TP8 (divisors of the 8 GPUs of a node).
  EXPECT_EQ(labels(deployment_candidates(shipped("qwen3-coder-480b"), h200, 8)), (std::vector<std::string>{"dp", "tp2", "tp4", "tp8"}));
  // Dense: TP over the node preferred, then smaller groups.
  EXPECT_EQ(labels(deployment_candidates(shipped("llama3.1-405b"), h200, 8)), (std::vector<std::string>{"tp8", "tp4", "tp2", "dp"}));
  // 4 GPUs: degrees that divide both the node and the GPU count.
  EXPECT_EQ(labels(deployment_candidates(shipped("llama3.1-405b"), h200, 4)), (std::vector<std::string>{"tp4", "tp2", "dp"}));
  // 16 GPUs: the degree stays inside a node.
  EXPECT_EQ(labels(deployment_candidates(shipped("qwen3-235b"), h200, 16)), (std::vector<std::string>{"dp", "tp2", "tp4", "tp8"}));
  // A preferred degree in the middle: a tie in distance goes to the larger degree.
  KindParams tp2 = h200;
  tp2.llm.attention_parallel = AttentionParallel::Tp;
  tp2.llm.tp_size = 2;
  EXPECT_EQ(labels(deployment_candidates(shipped("qwen3-235b"), tp2, 8)), (std::vector<std::string>{"tp2", "tp4", "dp", "tp8"}));
  // fixed: the preferred one only, with the user's parameters untouched.
  KindParams fixed = h200;
  fixed.llm.deployment_search = DeploymentPolicy::Fixed;
  const auto f = deployment_candidates(shipped("qwen3-coder-480b"), fixed, 8);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].preferred);
  EXPECT_EQ(f[0].params.llm.attention_parallel.name(), "auto");
}

// llm.deployment_search=preferred: where the preferred deployment does not fit, the nearest degree that does.
TEST(LlmDeployment, TheBaselineOfQwen3CoderIsTheSmallestChangeThatFits) {
  const ModelConfig m = shipped("qwen3-coder-480b");
  KindParams h200 = preset_kind("h200");
  h200.llm.deployment_search = DeploymentPolicy::Preferred;
  DeploymentSearch ds(m, h200, 8);
  const PointResult p = ds.search(paper_context("long"), ms(100));
  ASSERT_TRUE(p.feasible) << p.reason;
  // Data-parallel attention replicates 137.8 GB of weights per GPU: no request fits; TP2 (4 ranks) is the first
  // degree that holds one.
  const Json& d = p.deployment;
  EXPECT_EQ(d["label"], "tp2");
  EXPECT_EQ(d["preferred"], false);
  EXPECT_EQ(d["attention"], "tensor_parallel");
  EXPECT_EQ(d["tp"], 2);
  EXPECT_EQ(d["attention_ranks"], 4);
  EXPECT_EQ(d["ep"], 8);
  EXPECT_EQ(d["experts_per_gpu"], 20);
  ASSERT_EQ(d["tried"].size(), 2u);
  EXPECT_EQ(d["tried"][0]["deployment"], "dp");
  EXPECT_EQ(d["tried"][0]["feasible"], false);
  EXPECT_NE(d["tried"][0]["reason"].get<std::string>().find("cannot fit even at batch 1"), std::string::npos);
  EXPECT_EQ(d["tried"][1]["batch"], p.step.batch);
  ASSERT_NE(ds.chosen(), nullptr);
  EXPECT_EQ(ds.chosen()->deployment().tp, 2);
  EXPECT_EQ(p.step.batch % 4, 0);  // 4 attention ranks with the same number of requests
  // The JSON of the point carries it.
  EXPECT_EQ(p.json()["deployment"]["label"], "tp2");

  // best: the feasible degree with the most tokens/s per GPU, at least as good as the smallest change.
  KindParams best = h200;
  best.llm.deployment_search = DeploymentPolicy::Best;
  DeploymentSearch db(m, best, 8);
  const PointResult b = db.search(paper_context("long"), ms(100));
  ASSERT_TRUE(b.feasible);
  EXPECT_GE(b.step.tokens_per_s_per_gpu, p.step.tokens_per_s_per_gpu);
  EXPECT_EQ(b.deployment["tried"].size(), 4u);
  for (const Json& t : b.deployment["tried"]) {
    if (t["feasible"].get<bool>()) {
      EXPECT_LE(t["tokens_per_s_per_gpu"].get<double>(), b.step.tokens_per_s_per_gpu);
    }
  }
}

// The default (preferred_or_fastest): where the preferred deployment does not fit, every degree is tried and the
// fastest feasible one is kept (Qwen3-Coder-480B on 8 x H200: TP8, whose batch is the largest of the three that fit).
TEST(LlmDeployment, TheDefaultBaselineOfQwen3CoderIsTheFastestThatFits) {
  const ModelConfig m = shipped("qwen3-coder-480b");
  const KindParams h200 = preset_kind("h200");
  ASSERT_EQ(*h200.llm.deployment_search, DeploymentPolicy::PreferredOrFastest);
  DeploymentSearch ds(m, h200, 8);
  const PointResult p = ds.search(paper_context("long"), ms(100));
  ASSERT_TRUE(p.feasible) << p.reason;
  const Json& d = p.deployment;
  EXPECT_EQ(d["preferred"], false);
  EXPECT_EQ(d["search"], "preferred_or_fastest");
  ASSERT_EQ(d["tried"].size(), 4u);
  EXPECT_EQ(d["tried"][0]["feasible"], false);
  int feasible = 0;
  for (const Json& t : d["tried"])
    if (t["feasible"].get<bool>()) {
      ++feasible;
      EXPECT_LE(t["tokens_per_s_per_gpu"].get<double>(), p.step.tokens_per_s_per_gpu) << t.dump();
    }
  EXPECT_EQ(feasible, 3);
  EXPECT_EQ(d["label"], "tp8");
  // Where the preferred deployment fits, it is kept without trying the others.
  const ModelConfig llama = shipped("llama3.1-405b");
  DeploymentSearch dl(llama, h200, 8);
  const PointResult l = dl.search(paper_context("agent"), ms(100));
  ASSERT_TRUE(l.feasible);
  EXPECT_EQ(l.deployment["preferred"], true);
  EXPECT_EQ(l.deployment["tried"].size(), 1u);
}

TEST(LlmDeployment, ThePreferredDeploymentIsKeptWhereItFits) {
  const KindParams h200 = preset_kind("h200"), csi = preset_kind("csi");
  for (const auto& [model, label] : std::vector<std::pair<std::string, std::string>>{{"qwen3-235b", "dp"}, {"llama3.1-405b", "tp8"}}) {
    const ModelConfig m = shipped(model);
    for (const KindParams* k : {&h200, &csi}) {
      DeploymentSearch ds(m, *k, 8);
      const PointResult p = ds.search(paper_context("agent"), ms(100));
      ASSERT_TRUE(p.feasible) << model << ": " << p.reason;
      EXPECT_EQ(p.deployment["label"], label) << model;
      EXPECT_EQ(p.deployment["preferred"], true);
      EXPECT_EQ(p.deployment["tried"].size(), 1u);  // nothing else was searched
    }
  }
}

TEST(LlmDeployment, NoFeasibleDeploymentGivesEveryReason) {
  // Llama-3.1-405B on 4 x CLI at 50 ms: no degree streams its weights within the SLO.
  const ModelConfig llama = shipped("llama3.1-405b"), qwen = shipped("qwen3-235b");  // outlive the searches
  DeploymentSearch ds(llama, preset_kind("cli"), 4);
  const PointResult p = ds.search(paper_context("long"), ms(50));
  EXPECT_FALSE(p.feasible);
  EXPECT_EQ(p.deployment["label"], "tp4");  // reported on the preferred deployment
  EXPECT_EQ(p.deployment["tried"].size(), 3u);
  EXPECT_NE(p.reason.find("no deployment has a feasible batch"), std::string::npos) << p.reason;
  EXPECT_NE(p.reason.find("tp2: no batch meets the SLO"), std::string::npos) << p.reason;
  // A preferred deployment that cannot be built (more GPUs than experts) is a reason, not an exception.
  DeploymentSearch big(qwen, preset_kind("csi"), 256);
  const PointResult q = big.search(paper_context("long"), ms(100));
  EXPECT_FALSE(q.feasible);
  EXPECT_NE(q.reason.find("128 experts cannot be spread over 256 GPUs"), std::string::npos) << q.reason;
  EXPECT_EQ(big.chosen(), nullptr);
}
